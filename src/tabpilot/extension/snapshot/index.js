// @ts-check
// The snapshot engine, as the service worker uses it.
//
// ── Calling convention ──────────────────────────────────────────────────────────────────────────────
// The engine runs inside the page. `pageAgentSource()` is an expression that installs the agent in the
// current JavaScript world (once per document; later evaluations return the installed agent) and
// evaluates to it. Run it in an isolated world of the frame; always the same worldName, so the agent
// (and with it the ref ↔ element maps) survives between calls (Page.createIsolatedWorld with a name
// that exists returns that world's context again; a navigation gives a fresh world and fresh maps):
//
//   const { executionContextId } = await cdp("Page.createIsolatedWorld", { frameId, worldName: "tabpilot" });
//   const { result, exceptionDetails } = await cdp("Runtime.evaluate", {
//     expression: snapshotExpression({ mode: "full", maxTokens: 12000, refStart: tab.nextRef }),
//     contextId: executionContextId, returnByValue: true, awaitPromise: false,
//   });
//   // result.value: SnapshotResult (below) or {error: {reason, message}, nextRef}
//   tab.nextRef = Math.max(tab.nextRef, result.value.nextRef);
//
// Options (all optional): mode "full" (default) | "interactive"; maxTokens (default 12000, 0 = no cap);
// rootRef "@eN" (subtree of that element; for a heading: its section); viewportOnly; urls (link URLs);
// refStart (first number for new refs: pass the tab's counter so refs are never reused in the tab).
//
// SnapshotResult: {text, refCount, nextRef, truncated: null | {omittedTokens, omittedLines, shownTokens,
//   totalTokens, sections, notice…}, frames: [{ref: "eN", name, src}], hosts, url, title,
//   stats: {walkMs, renderMs, elements, lines, chars, tokens, totalTokens}}
// hosts > 0: the walk met custom elements without an open shadow root, or built-in hosts (div, span,
// section…) that show something with no content of their own. `takeHosts()` gives them; for each
// whose DOM.describeNode lists a closed shadow root, DOM.resolveNode that root in this world and call the
// agent's `adoptRoot(root)` on the host; then snapshot again (the walk goes into adopted roots).
// Before a snapshot, tell the agent about click listeners (the page's world is out of its reach):
// `listenRoots()` gives the nodes to read (the whole document the first time, then what was added since;
// null: nothing new), the backend node ids of DOMDebugger.getEventListeners(node, depth -1) on each, as
// the page's main world sees it (page/listeners.js) → `unheard(ids)` → the new ones, resolved in this
// world, → `heard(ids, nodes)`. An element with its own listener is a target; one on the document, its
// root or body makes links without href targets.
//
// Other calls, same world:
//   findExpression(text, opts)   → {text, matches, nextRef, frames, hosts}: matching lines with refs and context
//   resolveExpression("@e12")     → the element (returnByValue: false gives its objectId) or null
//   statusExpression("@e12")      → "live" | "stale" | "unknown" (unknown: not this document's ref; try the
//                                   tab's other frames, and if none knows it and N < tab.nextRef: stale)
//   locateExpression("@e12")      → {x, y, width, height} in the top viewport's CSS pixels, or null
// Errors for rootRef: {error: {reason: "ref_not_found" | "ref_stale" | "element_not_visible", message}}.
//
// Frames: same-origin iframes are walked inline. A cross-origin iframe becomes one placeholder line
// `[iframe "title" @eN]` and an entry in `frames`; snapshot that frame in its own isolated world (its
// frameId: DOM.describeNode on the iframe's objectId from resolveExpression), with refStart = the tab's
// counter after the parent, and splice its text in with `spliceFrames`. Refs then continue one numbering
// per tab, and `refsIn(frameText)` says which refs belong to which frame.
// ─────────────────────────────────────────────────────────────────────────────────────────────────────
import { walkDocument } from "./walk.js";
import {
  estimateTokens,
  truncationNotice,
  layoutSnapshot,
  finishSnapshot,
  findInLayout,
  renderSnapshot,
} from "./render.js";
import { installAgent } from "./agent.js";
import { explicitName, iconName, labelText } from "./names.js";

export { estimateTokens, truncationNotice, renderSnapshot, layoutSnapshot, finishSnapshot, findInLayout };

/** The global symbol the agent is installed under (Symbol.for, non-enumerable). */
export const AGENT_KEY = "tabpilot.snapshot";
export const DEFAULT_MAX_TOKENS = 12000;

/** @type {string | null} */
let source = null;

/** Small stable hash, so that a changed engine replaces an installed older one. @param {string} s */
function hash(s) {
  let h = 5381;
  for (let i = 0; i < s.length; i++) h = ((h * 33) ^ s.charCodeAt(i)) >>> 0;
  return h.toString(36);
}

/** The expression that installs (once per document) and evaluates to the in-page agent. */
export function pageAgentSource() {
  if (source === null) {
    const parts = [estimateTokens, truncationNotice, layoutSnapshot, finishSnapshot, findInLayout, labelText, explicitName, iconName, walkDocument]
      .map((f) => `const ${f.name} = ${f.toString()};`)
      .join("\n");
    const install = installAgent.toString();
    source = `(() => {\n${parts}\nreturn (${install})(${JSON.stringify(hash(parts + install))});\n})()`;
  }
  return source;
}

/** @param {object} [opts] */
export function snapshotExpression(opts = {}) {
  return `${pageAgentSource()}.snapshot(${JSON.stringify(opts)})`;
}
/** @param {string} text @param {object} [opts] */
export function findExpression(text, opts = {}) {
  return `${pageAgentSource()}.find(${JSON.stringify(text)}, ${JSON.stringify(opts)})`;
}
/** @param {string | number} ref */
export function resolveExpression(ref) {
  return `${pageAgentSource()}.resolve(${JSON.stringify(ref)})`;
}
/** @param {string | number} ref */
export function statusExpression(ref) {
  return `${pageAgentSource()}.status(${JSON.stringify(ref)})`;
}
/** @param {string | number} ref */
export function locateExpression(ref) {
  return `${pageAgentSource()}.locate(${JSON.stringify(ref)})`;
}

/**
 * "@e12", "e12", "12", 12 → 12; anything else → null.
 * @param {unknown} ref
 */
export function parseRef(ref) {
  if (typeof ref === "number") return Number.isInteger(ref) && ref > 0 ? ref : null;
  if (typeof ref !== "string") return null;
  const m = /^@*e?(\d+)$/i.exec(ref.trim());
  return m ? +m[1] : null;
}

/** The ref numbers that appear in a snapshot text, in order of appearance. @param {string} text */
export function refsIn(text) {
  /** @type {number[]} */
  const out = [];
  for (const m of text.matchAll(/@e(\d+)\b/g)) out.push(+m[1]);
  return out;
}

/**
 * Replaces the placeholder line of each cross-origin frame with that frame's snapshot text.
 * Placeholders without a text stay as they are (the frame could not be read).
 * @param {string} text the parent's snapshot text
 * @param {Record<string, string>} frameTexts frame ref ("eN" or "@eN") → that frame's snapshot text
 */
export function spliceFrames(text, frameTexts) {
  /** @type {Map<number, string>} */
  const byRef = new Map();
  for (const [ref, t] of Object.entries(frameTexts)) {
    const n = parseRef(ref);
    if (n != null && typeof t === "string") byRef.set(n, t);
  }
  if (!byRef.size) return text;
  return text
    .split("\n")
    .map((line) => {
      const m = /^(\s*)\[iframe((?: "(?:[^"\\]|\\.)*")?) @e(\d+)\]$/.exec(line);
      if (!m) return line;
      const inner = byRef.get(+m[3]);
      if (inner == null) return line;
      const indent = m[1];
      const body = inner === "" ? [] : inner.split("\n").map((l) => indent + l);
      return [`${indent}--- iframe${m[2]} @e${m[3]}`, ...body, `${indent}--- /iframe`].join("\n");
    })
    .join("\n");
}
