// @ts-check
// What an agent points at: a ref from a snapshot (@e12), a CSS selector (piercing open shadow roots),
// or text (text="Save" exact, text=save anywhere in the element's text, any case). resolveTarget makes
// ONE attempt to find the element in the tab, in every frame; the actionability routine retries.
import { RpcError } from "../link/protocol.js";
import { AGENT } from "../browser/frames.js";
import { refNumber } from "./refs.js";
import { explicitName, iconName, labelText } from "../snapshot/names.js";

/**
 * @typedef {{kind: "ref", ref: string} | {kind: "css", selector: string} | {kind: "text", text: string, exact: boolean}} Target
 * @typedef {import("../browser/frames.js").FrameHandle} FrameHandle
 * @typedef {{frame: FrameHandle, objectId: string, ref: string | null, label: string}} ResolvedTarget
 * @typedef {{frame: FrameHandle, objectId: string, ref: string | null, frames: import("../browser/frames.js").FrameInfo[]}} Located
 * @typedef {{
 *   frames: ReturnType<typeof import("../browser/frames.js").createFrames>,
 *   refs: ReturnType<typeof import("./refs.js").createRefs>,
 * }} TargetContext
 */

/** @param {string} message @param {string} [hint] */
function invalidTarget(message, hint = 'Use a ref from a snapshot (@e12), a CSS selector, or text="…".') {
  return new RpcError("invalid_params", message, undefined, { hint });
}

/**
 * "@e12" / "e12" → a ref; text="Save" (exact) or text=save (any case, part of the text) → text;
 * anything else → a CSS selector.
 * @param {unknown} raw
 * @returns {Target}
 */
export function parseTarget(raw) {
  if (typeof raw !== "string" || raw.trim() === "") throw invalidTarget("the target is empty");
  const s = raw.trim();
  const n = refNumber(s);
  if (n !== null) return { kind: "ref", ref: `e${n}` };
  if (/^text=/i.test(s)) {
    const rest = s.slice(5).trim();
    const quote = rest[0];
    if ((quote === '"' || quote === "'") && rest.length >= 2 && rest.endsWith(quote)) {
      let text = rest.slice(1, -1);
      if (quote === '"') {
        try {
          text = JSON.parse(rest);
        } catch {
          // not JSON escapes: take the text between the quotes as it is
        }
      }
      if (text.trim() === "") throw invalidTarget("text= needs some text, e.g. text=\"Save\"");
      return { kind: "text", text, exact: true };
    }
    if (rest === "") throw invalidTarget("text= needs some text, e.g. text=save");
    return { kind: "text", text: rest, exact: false };
  }
  return { kind: "css", selector: s };
}

/** @param {string} what */
function notFound(what) {
  return new RpcError("not_found", `no element matches ${what}`, "selector_not_found", {
    hint: "Check the page with `tabpilot snapshot` or `tabpilot find TEXT`; it may not be there yet.",
  });
}

/** @param {string} ref */
export function staleRef(ref) {
  return new RpcError("not_found", `@${ref} is gone from the page`, "ref_stale", {
    ref: `@${ref}`,
    hint: "The element was removed or the page changed; take a new snapshot and use its refs.",
  });
}

/** @param {string} ref */
function unknownRef(ref) {
  return new RpcError("not_found", `@${ref} was never given out in this tab`, "ref_not_found", {
    ref: `@${ref}`,
    hint: "Take a snapshot of this tab (`tabpilot snapshot`) and use a ref from it.",
  });
}

/**
 * Resolves a target to one element: its frame, an object id in that frame's agent world, its ref (if a
 * snapshot gave it one) and a label such as 'button "Save"'.
 * @param {TargetContext} ctx
 * @param {number} tabId
 * @param {unknown} raw
 * @returns {Promise<ResolvedTarget>}
 */
export async function resolveTarget(ctx, tabId, raw) {
  const found = await locateTarget(ctx, tabId, raw);
  return describedTarget(ctx, found, await ctx.frames.callOn(found.frame, found.objectId, DESCRIBE));
}

/**
 * The element a target names, before it is described (one round trip for a ref): its frame, an object
 * id, the ref when the target was one, and the tab's frames when they were listed.
 * @param {TargetContext} ctx @param {number} tabId @param {unknown} raw
 * @returns {Promise<Located>}
 */
export async function locateTarget(ctx, tabId, raw) {
  const target = parseTarget(raw);
  if (target.kind === "ref") return { ...(await locateRef(ctx, tabId, target.ref)), ref: target.ref, frames: [] };
  return { ...(await search(ctx, tabId, target)), ref: null };
}

/**
 * The frame that holds a ref's element and an object id for it (in the agent world of the frame whose
 * snapshot gave the ref out). Gone → ref_stale; never given out in this tab → ref_not_found.
 * @param {TargetContext} ctx @param {number} tabId @param {string} ref "e12" or "@e12"
 * @returns {Promise<{frame: FrameHandle, objectId: string}>}
 */
export async function locateRef(ctx, tabId, ref) {
  const n = refNumber(ref);
  if (n === null) throw invalidTarget(`${ref} is not a ref`, "A ref looks like @e12; take one from a snapshot.");
  const ownerId = ctx.refs.owner(tabId, n);
  const main = await ctx.frames.main(tabId);
  // Its frame when we know it; after a service-worker restart, every frame is asked.
  let candidates = [main];
  if (ownerId !== main.frameId) {
    const frames = await ctx.frames.list(tabId);
    candidates = ownerId === null ? frames : frames.filter((f) => f.frameId === ownerId);
  }
  const answers = await Promise.all(
    candidates.map((frame) =>
      ctx.frames
        .evaluate(frame, `((a) => a.resolve(${n}) || a.status(${n}))(${AGENT})`, { returnByValue: false })
        .then((remote) => ({ frame, remote }), (err) => {
          if (ownerId !== null) throw err;
          return null;
        }),
    ),
  );
  let stale = ownerId !== null || ctx.refs.wasIssued(tabId, n);
  for (const answer of answers) {
    if (!answer) continue;
    if (answer.remote.objectId) return { frame: answer.frame, objectId: answer.remote.objectId };
    if (answer.remote.value === "stale") stale = true;
  }
  throw stale ? staleRef(`e${n}`) : unknownRef(`e${n}`);
}

/**
 * CSS or text: the main frame first, then every other frame; a visible match anywhere beats a hidden one.
 * @param {TargetContext} ctx @param {number} tabId @param {Target & {kind: "css" | "text"}} target
 * @returns {Promise<{frame: FrameHandle, objectId: string, frames: import("../browser/frames.js").FrameInfo[]}>}
 */
async function search(ctx, tabId, target) {
  const query = target.kind === "css" ? target.selector : target.text;
  const exact = target.kind === "text" && target.exact;
  /** @param {FrameHandle} frame @param {boolean} visibleOnly */
  const ask = async (frame, visibleOnly) => {
    const expression = `(${SEARCH})(${JSON.stringify(target.kind)}, ${JSON.stringify(query)}, ${exact}, ${visibleOnly})`;
    const remote = await ctx.frames.evaluate(frame, expression, { returnByValue: false });
    if (remote.objectId) return { frame, objectId: /** @type {string} */ (remote.objectId) };
    if (typeof remote.value === "string" && remote.value.startsWith("invalid:")) {
      throw new RpcError("invalid_params", `invalid CSS selector ${JSON.stringify(query)}: ${remote.value.slice(8)}`, "invalid_selector", {
        hint: 'Fix the selector (CSS syntax), or use text="…" or a ref from a snapshot.',
      });
    }
    return null;
  };
  /** A frame that went away meanwhile has nothing to find. @param {FrameHandle} frame @param {boolean} visibleOnly */
  const askOther = (frame, visibleOnly) =>
    ask(frame, visibleOnly).catch((err) => (err instanceof RpcError && err.reason === "invalid_selector" ? Promise.reject(err) : null));
  const all = await ctx.frames.list(tabId);
  const [main, ...others] = all;
  const first = await ask(main, true);
  if (first) return { ...first, frames: all };
  for (const visibleOnly of [true, false]) {
    const frames = visibleOnly ? others : [main, ...others];
    const hit = (await Promise.all(frames.map((f) => askOther(f, visibleOnly)))).find((r) => r !== null);
    if (hit) return { ...hit, frames: all };
  }
  throw notFound(target.kind === "css" ? `the CSS selector ${JSON.stringify(query)}` : `the text ${JSON.stringify(query)}`);
}

/**
 * A located element with what DESCRIBE said of it (its label, ref, whether it sits in a same-origin
 * child document): an element of a child document (a snapshot walks those inline, so its ref lives in
 * the parent's agent) is handed over to its own frame's world.
 * @param {TargetContext} ctx @param {Located} found @param {{label: string, ref: string | null, nested: boolean}} info
 * @returns {Promise<ResolvedTarget>}
 */
export async function describedTarget(ctx, found, info) {
  const { frame, objectId } = found;
  // The backend node id is needed only to reach the element from another world: asked for then, once.
  /** @type {Promise<number> | null} */
  let node = null;
  const backendNode = () => (node ??= ctx.frames.send(frame, "DOM.describeNode", { objectId }).then((r) => /** @type {number} */ (r.node.backendNodeId)));
  let owner = frame;
  let id = objectId;
  if (info.nested) {
    const [backendNodeId, holder] = await Promise.all([
      backendNode(),
      ctx.frames.callOn(frame, objectId, "function () { return this.ownerDocument.defaultView.frameElement; }", [], { returnByValue: false }),
    ]);
    const { node: iframe } = await ctx.frames.send(frame, "DOM.describeNode", { objectId: holder.objectId });
    owner = { tabId: frame.tabId, sessionId: frame.sessionId, frameId: iframe.frameId };
    const contextId = await ctx.frames.agentWorld(owner);
    const { object } = await ctx.frames.send(owner, "DOM.resolveNode", { backendNodeId, executionContextId: contextId });
    id = object.objectId;
    for (const old of [objectId, holder.objectId]) void ctx.frames.send(frame, "Runtime.releaseObject", { objectId: old }).catch(() => {});
  }
  const known = found.ref ?? info.ref ?? (await refFromParents(ctx, frame, backendNode, found.frames));
  return { frame: owner, objectId: id, ref: known, label: info.label };
}

/**
 * The ref a same-process parent frame's snapshot gave the element (it walked this frame's document
 * inline), or null.
 * @param {TargetContext} ctx @param {FrameHandle} frame @param {() => Promise<number>} backendNode
 * @param {import("../browser/frames.js").FrameInfo[]} frames
 */
async function refFromParents(ctx, frame, backendNode, frames) {
  const byId = new Map(frames.map((f) => [f.frameId, f]));
  /** @param {import("../browser/frames.js").FrameInfo | undefined} f */
  const parentOf = (f) => (f?.parentFrameId ? byId.get(f.parentFrameId) : undefined);
  for (let parent = parentOf(byId.get(frame.frameId)); parent && parent.sessionId === frame.sessionId; parent = parentOf(parent)) {
    const [contextId, backendNodeId] = await Promise.all([ctx.frames.agentWorld(parent), backendNode()]);
    const { object } = await ctx.frames.send(parent, "DOM.resolveNode", { backendNodeId, executionContextId: contextId });
    const found = await ctx.frames.callOn(parent, object.objectId, OWN_REF);
    void ctx.frames.send(parent, "Runtime.releaseObject", { objectId: object.objectId }).catch(() => {});
    if (found) return /** @type {string} */ (found);
  }
  return null;
}

/** `this` = an element: the ref this world's agent gave it, or null. */
const OWN_REF = `function () {
  const agent = ${AGENT};
  const n = agent && agent.store ? agent.store.map.get(this) : undefined;
  return n ? "e" + n : null;
}`;

// ── In the page (agent world); self-contained, sent as source text. ──────────────────────────────────

/**
 * A selector list split for matching across shadow boundaries: each comma-separated selector becomes
 * its parts between descendant combinators (a space at the top level, not next to >, + or ~).
 * "main .card > button, #x a" → [["main", ".card > button"], ["#x", "a"]].
 * @param {string} selector
 * @returns {string[][]}
 */
export function splitSelector(selector) {
  /** @type {string[][]} */
  const list = [];
  /** @type {string[]} */
  let parts = [];
  let part = "";
  let depth = 0;
  /** @type {string | null} */
  let quote = null;
  const end = () => {
    if (part.trim()) parts.push(part.trim());
    part = "";
  };
  for (let i = 0; i < selector.length; i++) {
    const ch = selector[i];
    if (quote) {
      part += ch;
      if (ch === "\\") part += selector[++i] ?? "";
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      part += ch;
    } else if (ch === "\\") {
      part += ch + (selector[++i] ?? "");
    } else if (ch === "(" || ch === "[") {
      depth++;
      part += ch;
    } else if (ch === ")" || ch === "]") {
      depth--;
      part += ch;
    } else if (depth === 0 && ch === ",") {
      end();
      if (parts.length) list.push(parts);
      parts = [];
    } else if (depth === 0 && /\s/.test(ch)) {
      let j = i;
      while (j + 1 < selector.length && /\s/.test(selector[j + 1])) j++;
      const before = part.trimEnd().slice(-1);
      const after = selector[j + 1] ?? "";
      if (part.trim() && !/[>+~]/.test(before) && !/[>+~,]/.test(after)) end();
      else if (part.trim()) part += " ";
      i = j;
    } else part += ch;
  }
  end();
  if (parts.length) list.push(parts);
  return list;
}

/**
 * Finds the element for a CSS selector or a text, in this frame's document and its open shadow roots:
 * the first match (the first visible one with visibleOnly), null, or "invalid:<message>" for a selector
 * the browser rejects.
 * @param {"css" | "text"} kind @param {string} query @param {boolean} exact @param {boolean} visibleOnly
 */
function searchInPage(kind, query, exact, visibleOnly) {
  const LIMIT = 64;
  /** @type {Element[]} */
  const hits = [];
  /** @param {Element} el */
  const visible = (el) => /** @type {any} */ (el).checkVisibility({ visibilityProperty: true });
  const pick = () => (visibleOnly ? hits.find(visible) : hits[0]) ?? null;
  /** Open shadow roots in tree order, nested ones included. @param {Node} root @param {ShadowRoot[]} out */
  function shadowRoots(root, out) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const sr = /** @type {Element} */ (n).shadowRoot;
      if (sr) {
        out.push(sr);
        shadowRoots(sr, out);
      }
    }
    return out;
  }
  if (kind === "css") {
    /** @param {Document | ShadowRoot} root @param {string} selector */
    const collect = (root, selector) => {
      for (const el of root.querySelectorAll(selector)) if (hits.length < LIMIT && !hits.includes(el)) hits.push(el);
    };
    try {
      collect(document, query);
    } catch (err) {
      return "invalid:" + (err instanceof Error ? err.message : String(err));
    }
    // Most selectors match in the document itself: only then is walking for shadow roots needed.
    const light = pick();
    if (light) return light;
    const roots = shadowRoots(document, []);
    for (const sr of roots) collect(sr, query);
    // "host-tag inner-tag": a descendant combinator that crosses into a shadow root. Match the last part
    // in every root, then each earlier part on an ancestor, going from a shadow root up to its host.
    /** @param {Element} el */
    const up = (el) => el.parentElement ?? /** @type {any} */ (el.parentNode)?.host ?? null;
    for (const parts of splitSelector(query)) {
      if (parts.length < 2) continue;
      const last = /** @type {string} */ (parts[parts.length - 1]);
      for (const root of [document, ...roots]) {
        for (const el of root.querySelectorAll(last)) {
          let at = up(el);
          let i = parts.length - 2;
          for (; at && i >= 0; at = up(at)) if (at.matches(parts[i])) i--;
          if (i < 0 && hits.length < LIMIT && !hits.includes(el)) hits.push(el);
        }
      }
    }
    return pick();
  }
  const norm = (/** @type {string} */ s) => s.replace(/\s+/g, " ").trim();
  const want = exact ? norm(query) : norm(query).toLowerCase();
  /** @param {string} s */
  const contains = (s) => (exact ? norm(s) : norm(s).toLowerCase()).includes(want);
  /** @param {Element} el */
  const textOf = (el) => {
    const any = /** @type {any} */ (el);
    if (el.localName === "input" && /^(button|submit|reset)$/.test(any.type)) return any.value;
    // The source of a script or a style inside it is no text a person sees.
    const unseen = "script,style,noscript,template";
    if (!el.querySelector(unseen)) return el.textContent || "";
    let text = "";
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) if (!n.parentElement?.closest(unseen)) text += n.textContent;
    return text;
  };
  /** @type {Record<string, number>} */
  const SKIP = { script: 1, style: 1, noscript: 1, template: 1, head: 1 };
  // The deepest elements whose text contains the query: descend only into children that contain it too.
  /** @param {ParentNode} root @param {Element[]} out */
  function descend(root, out) {
    for (let c = root.firstElementChild; c && out.length < LIMIT; c = c.nextElementSibling) {
      if (SKIP[c.localName] === 1 || !contains(textOf(c))) continue;
      const before = out.length;
      descend(c, out);
      if (out.length === before) out.push(c);
    }
  }
  const ACTIONABLE =
    "a[href],button,input,select,textarea,summary,label,[role=button],[role=link],[role=tab],[role=menuitem]," +
    "[role=menuitemcheckbox],[role=menuitemradio],[role=option],[role=checkbox],[role=radio],[role=switch],[role=treeitem],[onclick]";
  /** @type {Element[]} */
  const deepest = [];
  descend(document, deepest);
  for (const sr of shadowRoots(document, [])) descend(sr, deepest);
  for (let el of deepest) {
    if (exact && norm(textOf(el)) !== want) continue;
    // Text inside a button or a link means the button or the link.
    const act = el.closest(ACTIONABLE);
    if (act && act !== el && (exact ? norm(textOf(act)) === want : contains(textOf(act)))) el = act;
    if (!hits.includes(el)) hits.push(el);
  }
  if (!exact) {
    // text=count should mean the button "Count", not a paragraph that "counts": an element whose whole
    // text is the query comes first, then what can be acted on, then document order.
    const rank = (/** @type {Element} */ el) => (norm(textOf(el)).toLowerCase() === want ? 0 : 2) + (el.matches(ACTIONABLE) ? 0 : 1);
    hits.sort((a, b) => rank(a) - rank(b));
  }
  return pick();
}

const SEARCH = `(() => { const splitSelector = ${splitSelector}; return ${searchInPage}; })()`;

/**
 * `this` = the element: its label (role and accessible name, short), its ref if a snapshot of this
 * document gave it one, and whether it lives in a child document of the one this world belongs to.
 * @this {Element}
 */
function describeInPage() {
  const el = this;
  const any = /** @type {any} */ (el);
  const clean = (/** @type {string | null | undefined} */ s) => (s || "").replace(/\s+/g, " ").trim();
  const tag = el.localName;
  /** @type {Record<string, string>} */
  const INPUT_ROLE = {
    button: "button", submit: "button", reset: "button", image: "button", checkbox: "checkbox", radio: "radio",
    range: "slider", number: "spinbutton", search: "searchbox", file: "file", color: "color", date: "date",
    "datetime-local": "datetime", time: "time", month: "month", week: "week", password: "password",
  };
  let role = clean(el.getAttribute("role")).split(" ")[0];
  if (!role) {
    if (tag === "a" && el.hasAttribute("href")) role = "link";
    else if (tag === "button") role = "button";
    else if (tag === "input") role = INPUT_ROLE[any.type] || "textbox";
    else if (tag === "select") role = any.multiple || any.size > 1 ? "listbox" : "combobox";
    else if (tag === "textarea" || any.isContentEditable) role = "textbox";
    else if (/^h[1-6]$/.test(tag)) role = "heading";
    else if (tag === "img") role = "img";
    else role = tag;
  }
  const field = /^(textbox|searchbox|password|combobox|listbox|slider|spinbutton|date|datetime|time|month|week|color|file)$/.test(role);
  // Rendered text: blocks inside are words apart ("Alpha Beta", not "AlphaBeta").
  // (An SVG element has no innerText: its words are its <text> elements', as the snapshot reads them.)
  const text = (/** @type {any} */ n) =>
    !n ? "" : typeof n.innerText === "string" ? n.innerText : n.namespaceURI === "http://www.w3.org/2000/svg" && n.localName !== "text" ? Array.from(n.querySelectorAll("text"), (t) => t.textContent).join(" ") : n.textContent;
  // The snapshot's names (snapshot/names.js), then the content, the title, a field's placeholder.
  let name = explicitName(el);
  if (!name && !field) name = clean(text(el));
  if (!name) name = clean(el.getAttribute("alt") || el.getAttribute("title"));
  if (!name && field) name = clean(el.getAttribute("placeholder"));
  if (name.length > 60) name = name.slice(0, 59) + "…";
  const agent = /** @type {any} */ (globalThis)[Symbol.for("tabpilot.snapshot")];
  const n = agent && agent.store ? agent.store.map.get(el) : undefined;
  // An element with no role of its own is called what the snapshot showed it as (`clickable`).
  if (role === tag) role = agent?.store?.roles?.get(el) ?? role;
  const icon = name || field ? "" : iconName(el);
  const label = name ? `${role} ${JSON.stringify(name)}` : icon ? `${role} icon=${icon}` : role;
  return { label, ref: n ? "e" + n : null, nested: el.ownerDocument !== document };
}

export const DESCRIBE = `function () {
  const labelText = ${labelText};
  const explicitName = ${explicitName};
  const iconName = ${iconName};
  return (${describeInPage}).call(this);
}`;
