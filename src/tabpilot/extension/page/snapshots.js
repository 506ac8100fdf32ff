// @ts-check
// Snapshots of a whole tab: the top document's snapshot (same-origin iframes and open shadow roots are
// walked inline by the in-page agent), with every cross-origin iframe snapshotted in its own frame's
// agent world and spliced in at its placeholder. Refs are numbered per tab (refs.js). The last snapshot
// of each tab is kept, so an action can print only what changed since (`--diff`).
import { RpcError } from "../link/protocol.js";
import { withDeadline } from "../link/deadline.js";
import { AGENT, objectArg } from "../browser/frames.js";
import { locateRef, resolveTarget } from "./targets.js";
import { refNumber } from "./refs.js";
import { spliceFrames, DEFAULT_MAX_TOKENS } from "../snapshot/index.js";
import { createListeners } from "./listeners.js";

/** Below this many tokens left, a cross-origin frame stays a placeholder line. */
const MIN_FRAME_BUDGET = 40;
/** Frames nested in frames are followed this deep. */
const MAX_FRAME_DEPTH = 4;
/** A cross-origin frame that does not answer in this time (a busy script) stays a placeholder line. */
const FRAME_TIMEOUT_MS = 2000;
const NOTICE = "[… cut at";
/** Closed shadow roots inside closed shadow roots are followed this deep. */
const MAX_CLOSED_DEPTH = 4;
/** CDP objects made while preparing a snapshot, released together. */
const GROUP = "tabpilot-snapshot";
/**
 * @typedef {import("../browser/frames.js").FrameHandle} FrameHandle
 * @typedef {{mode?: "full" | "interactive", maxTokens?: number, rootRef?: string | null, viewportOnly?: boolean, urls?: boolean}} SnapshotOptions
 * @typedef {{
 *   tabId: number, url: string, title: string, text: string, refs: number, truncated: boolean,
 *   tokens: number, totalTokens: number, omittedTokens: number, frames: number, ms: number,
 * }} TabSnapshot
 */

/** @param {{reason: string, message: string}} error */
function agentError(error) {
  const hints = {
    ref_stale: "The element was removed or the page changed; take a new snapshot and use its refs.",
    ref_not_found: "Take a snapshot of this tab (`tabpilot snapshot`) and use a ref from it.",
    element_not_visible: "It is hidden right now; snapshot the whole page, or wait until it shows.",
  };
  const reason = error.reason in hints ? error.reason : undefined;
  return new RpcError("not_found", error.message, reason, { hint: hints[/** @type {keyof hints} */ (error.reason)] });
}

/** The number of distinct refs a snapshot text shows (its cut notice aside). @param {string} text */
export function countRefs(text) {
  const body = text.split("\n").filter((line) => !line.startsWith(NOTICE)).join("\n");
  return new Set(body.match(/@e\d+\b/g) ?? []).size;
}

/**
 * The snapshot as plain reading text: no refs, links as their text; controls keep their bracket
 * (`[button "Save"]`) because a form reads better with them.
 * @param {string} text
 */
export function readableText(text) {
  return text
    .split("\n")
    .map((line) => {
      if (line.startsWith(NOTICE)) return line;
      return line
        .replace(/\[([^[\]]*?) @e\d+((?: [^[\]]*)?)\]/g, (_, inner, tail) => {
          const role = /^([a-z]+)(?: "|$)/.exec(inner)?.[1];
          if (role === undefined) return inner; // a link: its text
          if (inner === role && !tail) return ""; // a bare container marker
          return `[${inner}${tail}]`;
        })
        .replace(/ @e\d+\b/g, "")
        .replace(/ {2,}/g, " ")
        .trimEnd();
    })
    .join("\n");
}

/**
 * Marks the placeholder lines of frames that could not load (`[iframe "Ads" @e7 blocked]`).
 * @param {string} text @param {string[]} refs frame refs ("eN")
 */
export function markBlocked(text, refs) {
  if (!refs.length) return text;
  const wanted = new Set(refs.map((r) => `@${r}]`));
  return text
    .split("\n")
    .map((line) => {
      const m = /^(\s*\[iframe(?: "(?:[^"\\]|\\.)*")? )(@e\d+\])$/.exec(line);
      return m && wanted.has(m[2]) ? `${m[1]}${m[2].slice(0, -1)} blocked]` : line;
    })
    .join("\n");
}

/**
 * Line diff (Myers): the lines removed (`- `) and added (`+ `), in hunks, each after `@@` and the
 * nearest heading or landmark above it in the new text.
 * @param {string} before @param {string} after
 */
export function diffLines(before, after) {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops = myers(a.slice(start, endA), b.slice(start, endB));
  if (ops === null) return null;
  /** @type {string[]} */
  const out = [];
  let ia = start;
  let ib = start;
  let lastHunkEnd = -2;
  for (const op of ops) {
    if (op === "=") {
      ia++;
      ib++;
      continue;
    }
    if (ib !== lastHunkEnd) {
      let context = "";
      for (let j = ib - 1; j >= 0 && !context; j--) if (/^(#{1,6} |--- )/.test(b[j])) context = b[j];
      out.push(context ? `@@ ${context}` : "@@");
    }
    if (op === "-") out.push(`- ${a[ia++]}`);
    else out.push(`+ ${b[ib++]}`);
    lastHunkEnd = ib;
  }
  return out.join("\n");
}

/**
 * The edit script turning a into b ("=", "-", "+" per step), or null when it would take too many edits
 * to be worth reading line by line.
 * @param {string[]} a @param {string[]} b
 * @returns {string[] | null}
 */
function myers(a, b) {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, 4000);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  /** @type {Int32Array[]} */
  const trace = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, offset, n, m, d);
    }
  }
  return null;
}

/** @param {Int32Array[]} trace @param {number} offset @param {number} n @param {number} m @param {number} dEnd */
function backtrack(trace, offset, n, m, dEnd) {
  /** @type {string[]} */
  const ops = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const down = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]);
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push("=");
      x--;
      y--;
    }
    ops.push(down ? "+" : "-");
    if (down) y--;
    else x--;
  }
  while (x > 0 && y > 0) {
    ops.push("=");
    x--;
    y--;
  }
  return ops.reverse();
}

/**
 * A cross-origin frame's answer, or null when the frame cannot be read: it is navigating, went away,
 * or is too busy to answer in time.
 * @template T @param {Promise<T>} answer @returns {Promise<T | null>}
 */
async function unlessUnreadable(answer) {
  const timeout = () => new RpcError("timeout", "the frame did not answer", "tool_timeout");
  try {
    return await withDeadline(answer, { timeoutMs: FRAME_TIMEOUT_MS, onTimeout: timeout });
  } catch (err) {
    if (err instanceof RpcError && (err.reason === "frame_detached" || err.reason === "tool_timeout" || err.code === "cdp_failed")) return null;
    throw err;
  }
}

/**
 * @param {{
 *   frames: ReturnType<typeof import("../browser/frames.js").createFrames>,
 *   refs: ReturnType<typeof import("./refs.js").createRefs>,
 *   tabs?: {onRemoved: {addListener(fn: (tabId: number) => void): void}},
 * }} deps
 */
export function createSnapshots({ frames, refs, tabs }) {
  /** The last snapshot of each tab, for --diff: its text (without a cut notice) and its options. */
  /** @type {Map<number, {text: string, options: SnapshotOptions}>} */
  const last = new Map();
  tabs?.onRemoved.addListener((tabId) => last.delete(tabId));
  const ctx = { frames, refs };
  const listeners = createListeners({ frames });

  /**
   * Runs one agent call that may give out refs in `frame`, and books them to that frame.
   * @param {FrameHandle} frame @param {(refStart: number) => string} call e.g. `snapshot({…})`
   */
  async function agentCall(frame, call) {
    const start = await refs.next(frame.tabId);
    const result = await frames.evaluate(frame, `${AGENT}.${call(start)}`);
    if (result && typeof result.nextRef === "number") refs.issued(frame.tabId, frame.frameId, start, result.nextRef);
    if (result?.error) throw agentError(result.error);
    return result;
  }

  /**
   * Hands the agent the closed shadow roots of the likely hosts its last walk met; true when it got
   * one (then a new walk shows their content).
   * @param {FrameHandle} frame
   */
  async function openClosedRoots(frame) {
    const list = await frames.evaluate(frame, `${AGENT}.takeHosts()`, { returnByValue: false });
    if (!list.objectId) return false;
    let adopted = 0;
    try {
      const { result } = await frames.send(frame, "Runtime.getProperties", { objectId: list.objectId, ownProperties: true });
      const hosts = result.filter((/** @type {any} */ p) => /^\d+$/.test(p.name) && p.value?.objectId).map((/** @type {any} */ p) => p.value.objectId);
      const contextId = await frames.agentWorld(frame);
      await Promise.all(
        hosts.map(async (/** @type {string} */ objectId) => {
          const { node } = await frames.send(frame, "DOM.describeNode", { objectId, depth: 0 });
          const root = node.shadowRoots?.find((/** @type {any} */ r) => r.shadowRootType === "closed");
          if (!root) return;
          const { object } = await frames.send(frame, "DOM.resolveNode", { backendNodeId: root.backendNodeId, executionContextId: contextId, objectGroup: GROUP });
          await frames.callOn(frame, objectId, `function (root) { ${AGENT}.adoptRoot.call(this, root); }`, [objectArg(object.objectId)]);
          adopted++;
        }),
      );
    } finally {
      void frames.send(frame, "Runtime.releaseObject", { objectId: list.objectId }).catch(() => {});
      void frames.send(frame, "Runtime.releaseObjectGroup", { objectGroup: GROUP }).catch(() => {});
    }
    return adopted > 0;
  }

  /**
   * One frame's snapshot (or find): listeners told first, closed shadow roots opened and walked again.
   * @param {FrameHandle} frame @param {(refStart: number) => string} call
   */
  async function readFrame(frame, call) {
    await listeners.listen(frame).catch(() => {});
    let result = await agentCall(frame, call);
    for (let depth = 0; result.hosts > 0 && depth < MAX_CLOSED_DEPTH; depth++) {
      if (!(await openClosedRoots(frame).catch(() => false))) break;
      await listeners.listen(frame).catch(() => {});
      result = await agentCall(frame, call);
    }
    return result;
  }

  /**
   * Gives a found element a ref in its frame's agent, numbered and booked like a snapshot's refs.
   * @param {{frame: FrameHandle, objectId: string}} found
   */
  async function adoptRef({ frame, objectId }) {
    const start = await refs.next(frame.tabId);
    const given = await frames.callOn(frame, objectId, `function (start) { return ${AGENT}.adopt(this, start); }`, [start]);
    refs.issued(frame.tabId, frame.frameId, start, given.nextRef);
    return /** @type {number} */ (given.ref);
  }

  /**
   * The frames behind a result's cross-origin placeholders, as [placeholder ref, frame] pairs.
   * @param {FrameHandle} parent @param {{ref: string}[]} placeholders
   * @param {() => Promise<import("../browser/frames.js").FrameInfo[]>} allFrames
   */
  async function framesBehind(parent, placeholders, allFrames) {
    /** @type {[string, FrameHandle][]} */
    const out = [];
    for (const { ref } of placeholders) {
      const remote = await frames.evaluate(parent, `${AGENT}.resolve(${refNumber(ref)})`, { returnByValue: false });
      if (!remote.objectId) continue;
      const { node } = await frames.send(parent, "DOM.describeNode", { objectId: remote.objectId });
      void frames.send(parent, "Runtime.releaseObject", { objectId: remote.objectId }).catch(() => {});
      const frame = (await allFrames()).find((f) => f.frameId === node.frameId);
      if (frame) out.push([ref, frame]);
    }
    return out;
  }

  /**
   * A snapshot of the tab (or of one element's subtree), cross-origin frames spliced in.
   * @param {number} tabId
   * @param {SnapshotOptions} options
   * @param {{remember?: boolean}} [how] remember: keep it as the tab's last snapshot (for --diff)
   * @returns {Promise<TabSnapshot>}
   */
  async function take(tabId, options, { remember = true } = {}) {
    const started = Date.now();
    const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    let frame = await frames.main(tabId);
    let rootRef = null;
    let ref = options.rootRef && refNumber(options.rootRef) !== null ? options.rootRef : null;
    if (options.rootRef && ref === null) {
      // Any other target (a CSS selector, text=…): find the element, then start there by its ref —
      // the one a snapshot gave it, else a new one from its own frame's agent.
      const found = await resolveTarget(ctx, tabId, options.rootRef);
      ref = found.ref ?? `@e${await adoptRef(found)}`;
      void frames.send(found.frame, "Runtime.releaseObject", { objectId: found.objectId }).catch(() => {});
    }
    if (ref !== null) {
      const found = await locateRef(ctx, tabId, ref);
      void frames.send(found.frame, "Runtime.releaseObject", { objectId: found.objectId }).catch(() => {});
      frame = found.frame;
      rootRef = `@e${refNumber(ref)}`;
    }
    const engine = { mode: options.mode ?? "full", viewportOnly: !!options.viewportOnly, urls: !!options.urls };
    const top = await readFrame(frame, (refStart) => `snapshot(${JSON.stringify({ ...engine, maxTokens, rootRef, refStart })})`);
    /** @type {Promise<import("../browser/frames.js").FrameInfo[]> | null} */
    let listed = null;
    const allFrames = () => (listed ??= frames.list(tabId));
    let spent = top.stats.tokens;
    let spliced = 0;

    /** @param {FrameHandle} parent @param {any} result @param {number} depth @returns {Promise<string>} */
    async function withFrames(parent, result, depth) {
      const shown = result.frames.filter((/** @type {{ref: string}} */ f) => result.text.includes(` @${f.ref}]`));
      if (!shown.length || depth >= MAX_FRAME_DEPTH) return result.text;
      /** @type {Record<string, string>} */
      const texts = {};
      /** @type {string[]} */
      const blocked = [];
      for (const [ref, child] of await framesBehind(parent, shown, allFrames)) {
        // The browser showed its error page instead: the frame refused to be framed, or was blocked.
        if (child.url.startsWith("chrome-error:")) {
          blocked.push(ref);
          continue;
        }
        const left = maxTokens > 0 ? maxTokens - spent : 0;
        if (maxTokens > 0 && left < MIN_FRAME_BUDGET) break;
        const inner = await unlessUnreadable(
          readFrame(child, (refStart) => `snapshot(${JSON.stringify({ ...engine, maxTokens: left, refStart })})`),
        );
        if (!inner) continue;
        spent += inner.stats.tokens;
        spliced++;
        texts[ref] = await withFrames(child, inner, depth + 1);
      }
      return markBlocked(spliceFrames(result.text, texts), blocked);
    }

    const text = await withFrames(frame, top, 0);
    const truncated = top.truncated ?? null;
    if (remember) {
      const body = text.split("\n").filter((line) => !line.startsWith(NOTICE)).join("\n");
      last.set(tabId, { text: body, options: { ...options } });
    }
    return {
      tabId,
      url: top.url,
      title: top.title,
      text,
      refs: countRefs(text),
      truncated: truncated !== null,
      tokens: spent,
      totalTokens: top.stats.totalTokens + (spent - top.stats.tokens),
      omittedTokens: truncated ? truncated.omittedTokens : 0,
      frames: spliced,
      ms: Date.now() - started,
    };
  }

  /**
   * `find`: the matching lines of the tab, cross-origin frames included, each with its ref and context.
   * @param {number} tabId @param {string} query @param {{maxMatches?: number}} [options]
   */
  async function find(tabId, query, { maxMatches = 50 } = {}) {
    const main = await frames.main(tabId);
    const call = (/** @type {number} */ maxMatches) => (/** @type {number} */ refStart) =>
      `find(${JSON.stringify(query)}, ${JSON.stringify({ maxMatches, refStart })})`;
    const top = await readFrame(main, call(maxMatches));
    /** @type {Promise<import("../browser/frames.js").FrameInfo[]> | null} */
    let listed = null;
    const allFrames = () => (listed ??= frames.list(tabId));
    let matches = top.matches;
    let more = top.matches > maxMatches;
    /** @type {string[]} */
    const lines = top.text.split("\n").slice(1);
    /** @param {FrameHandle} parent @param {any} result @param {number} depth */
    async function visit(parent, result, depth) {
      if (depth >= MAX_FRAME_DEPTH || !result.frames.length) return;
      for (const [ref, child] of await framesBehind(parent, result.frames, allFrames)) {
        const inner = await unlessUnreadable(readFrame(child, call(Math.max(1, maxMatches - Math.min(matches, maxMatches)))));
        if (!inner) continue;
        if (inner.matches) {
          const name = result.frames.find((/** @type {{ref: string}} */ f) => f.ref === ref)?.name;
          lines.push(`--- iframe${name ? ` ${JSON.stringify(name)}` : ""} @${ref}`, ...inner.text.split("\n").slice(1));
          matches += inner.matches;
          more ||= inner.matches > maxMatches;
        }
        await visit(child, inner, depth + 1);
      }
    }
    await visit(main, top, 0);
    let head = `${matches} match${matches === 1 ? "" : "es"} for ${JSON.stringify(query)}`;
    if (more) head += ` (first ${maxMatches} shown per frame; refine the text)`;
    return { tabId, text: [head + (matches ? ":" : "."), ...lines].join("\n"), matches };
  }

  /**
   * What an action appends with --snapshot (a fresh snapshot) or --diff (what changed since the tab's
   * last snapshot, taken again with the same options).
   * @param {number} tabId @param {"snapshot" | "diff"} mode
   */
  async function afterAction(tabId, mode) {
    const before = last.get(tabId);
    const options = before?.options ?? {};
    let current;
    try {
      current = await take(tabId, options);
    } catch (err) {
      // The subtree the last snapshot showed is gone: show the page instead.
      if (!(options.rootRef && err instanceof RpcError && err.code === "not_found")) throw err;
      current = await take(tabId, { ...options, rootRef: null });
    }
    if (mode === "snapshot") return current.text;
    if (!before) return `(no earlier snapshot of this tab: the whole snapshot follows)\n${current.text}`;
    const now = /** @type {{text: string}} */ (last.get(tabId)).text;
    const diff = diffLines(before.text, now);
    if (diff === null) return `(too much changed to list line by line: the whole snapshot follows)\n${current.text}`;
    return diff === "" ? "(no change since the last snapshot)" : diff;
  }

  return { take, find, afterAction };
}

/**
 * For actions' --snapshot / --diff: what to print after the outcome line.
 * @param {{snapshots: ReturnType<typeof createSnapshots>}} ctx @param {number} tabId @param {"snapshot" | "diff"} mode
 */
export function afterAction(ctx, tabId, mode) {
  return ctx.snapshots.afterAction(tabId, mode);
}
