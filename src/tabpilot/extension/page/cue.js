// @ts-check
// The person sees what the agent does: before an action fires, a ring around its element (in whichever
// frame it is, a dot at a position given), or a frame around the page for a navigation or a scroll, with
// the verb and the element's name; it turns green or red with the outcome and fades. The page gets one
// element, a host on documentElement with data-tabpilot-cue: a closed shadow root in the top layer that
// takes no pointer events and no focus. It is drawn from the frame's agent world, whose state the page
// cannot read. A cue waits a few tens of ms at most for its paint and never fails an action.
import { callOnTarget, nameOf } from "./actionability.js";

/** The switch on the options page (absent: on). */
export const CUES_KEY = "tp_cues";
/** The longest an action waits for its cue to be painted, from the worker's side. */
export const PAINT_WAIT_MS = 40;
/** How long a settled cue stays before it fades. */
const SETTLED_MS = 700;

/**
 * @typedef {import("./action.js").ObservedCall} ObservedCall
 * @typedef {import("./actionability.js").ActionableTarget} ActionableTarget
 * @typedef {import("../browser/frames.js").FrameHandle} FrameHandle
 */

/**
 * In the frame's agent world. op "paint": add this call's ring (`this` is the element) or, without an
 * element, its page-edge frame; resolves once a frame was painted (or after a bound). "settle": colour the
 * call's cue by its outcome and fade it. "clear": take it away now.
 * @param {"paint" | "settle" | "clear"} op @param {number} callId @param {string} caption
 * @param {{x: number, y: number} | null} position from the element's top-left
 * @param {number} settledMs
 * @param {number} until a paint arriving later is dropped: the action went on without it, and this may
 *   be the document it navigated to
 * @this {Element | undefined}
 */
function cueInPage(op, callId, caption, position, settledMs, until) {
  const g = /** @type {any} */ (globalThis);
  const state = g.__tabpilotCue ?? (g.__tabpilotCue = { host: null, root: null, callId: 0, timer: 0 });
  const drop = () => {
    clearTimeout(state.timer);
    state.host?.remove();
    state.host = state.root = null;
  };
  if (op === "clear") return drop();
  if (op === "paint" && Date.now() > until) return;
  if (op === "settle") {
    if (state.callId !== callId || !state.root) return;
    state.root.querySelector(".cue")?.setAttribute("data-outcome", caption);
    clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.root?.querySelector(".cue")?.classList.add("fading");
      state.timer = setTimeout(drop, 400);
    }, settledMs);
    return;
  }
  /** @param {HTMLElement} node @param {Record<string, string>} props */
  const pin = (node, props) => {
    for (const [k, v] of Object.entries(props)) node.style.setProperty(k, v, "important");
  };
  if (state.callId !== callId || !state.host?.isConnected) {
    drop();
    const host = document.createElement("div");
    host.setAttribute("data-tabpilot-cue", "");
    host.setAttribute("popover", "manual");
    host.inert = true;
    pin(host, {
      // No box of its own: only what it draws can overlap the page (or a card the person must see whole).
      position: "fixed", top: "0", left: "0", margin: "0", padding: "0", border: "0", width: "0", height: "0",
      "max-width": "none", "max-height": "none", background: "transparent", overflow: "visible",
      "pointer-events": "none", opacity: "1", visibility: "visible", "z-index": "2147483647",
    });
    const root = host.attachShadow({ mode: "closed" });
    // A constructed sheet, not a <style>: a page's Content-Security-Policy (style-src) does not hold it back.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(`
.cue { position: fixed; top: 0; left: 0; width: 0; height: 0; transition: opacity .4s; --c: #7c3aed; }
.cue[data-outcome="ok"] { --c: #16a34a; } .cue[data-outcome="failed"] { --c: #dc2626; }
.cue.fading { opacity: 0; }
.ring, .edge { position: fixed; box-sizing: border-box; border: 3px solid var(--c); border-radius: 6px; box-shadow: 0 0 0 4px color-mix(in srgb, var(--c) 25%, transparent); }
.edge { inset: 0; border-width: 4px; border-radius: 0; }
.dot { position: fixed; width: 12px; height: 12px; margin: -8px 0 0 -8px; border-radius: 50%; background: var(--c); border: 2px solid #fff; }
.caption { position: fixed; font: 600 12px/1.4 system-ui, sans-serif; color: #fff; background: var(--c); padding: 1px 6px; border-radius: 4px; white-space: nowrap; max-width: 60vw; overflow: hidden; text-overflow: ellipsis; }
`);
    root.adoptedStyleSheets = [sheet];
    const cue = document.createElement("div");
    cue.className = "cue";
    root.append(cue);
    document.documentElement.appendChild(host);
    Object.assign(state, { host, root, callId });
  }
  const host = state.host;
  // A page's own top-layer element (a modal dialog, its popover) shown since goes above: raise again.
  if (host.matches(":popover-open")) host.hidePopover();
  host.showPopover();
  const cue = state.root.querySelector(".cue");
  /** @param {string} cls @param {Record<string, number>} box */
  const add = (cls, box) => {
    const node = document.createElement("div");
    node.className = cls;
    for (const [k, v] of Object.entries(box)) node.style[/** @type {any} */ (k)] = `${v}px`;
    cue.append(node);
    return node;
  };
  const label = add("caption", {});
  label.textContent = caption;
  const r = this instanceof Element ? this.getBoundingClientRect() : null;
  // A hidden element (a file input behind a styled button) has no box to ring: the page is framed instead.
  if (r && (r.width > 0 || r.height > 0)) {
    add("ring", { left: r.left - 4, top: r.top - 4, width: r.width + 8, height: r.height + 8 });
    if (position) add("dot", { left: r.left + position.x, top: r.top + position.y });
    Object.assign(label.style, r.top > 26 ? { left: `${Math.max(r.left - 4, 0)}px`, top: `${r.top - 26}px` } : { left: `${Math.max(r.left - 4, 0)}px`, top: `${r.bottom + 6}px` });
  } else {
    add("edge", {});
    Object.assign(label.style, { left: "8px", top: "8px" });
  }
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 30);
  });
}
const CUE = cueInPage.toString();

/**
 * @param {{
 *   frames: Pick<ReturnType<typeof import("../browser/frames.js").createFrames>, "main" | "call" | "callOn">,
 *   storage: chrome.storage.StorageArea,
 *   onChanged: chrome.storage.StorageChangedEvent,
 *   kindOf: (method: string) => "element" | "edge" | "none",
 *   blocked: (tabId: number) => Promise<boolean>,
 * }} deps
 */
export function createCues({ frames, storage, onChanged, kindOf, blocked }) {
  /** @type {Promise<boolean> | null} */
  let enabled = null;
  onChanged.addListener((changes, area) => {
    if (area === "local" && CUES_KEY in changes) enabled = null;
  });
  const isOn = () => (enabled ??= storage.get(CUES_KEY).then((v) => v[CUES_KEY] !== false, () => true));
  /** The frames of each tab showing a cue, with the call that drew it. @type {Map<number, Map<string, {frame: FrameHandle, callId: number}>>} */
  const shown = new Map();
  let nextId = 0;
  /** @type {WeakMap<ObservedCall, number>} */
  const ids = new WeakMap();
  const idOf = (/** @type {ObservedCall} */ call) => ids.get(call) ?? (ids.set(call, ++nextId), nextId);

  /**
   * Runs `work` for at most PAINT_WAIT_MS; whatever it does, the action goes on. It gets the time after
   * which its paint must not land (the action went on without it).
   * @param {(until: number) => Promise<unknown>} work
   */
  const bounded = (work) =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, PAINT_WAIT_MS);
      work(Date.now() + PAINT_WAIT_MS).then(
        () => (clearTimeout(timer), resolve(undefined)),
        () => (clearTimeout(timer), resolve(undefined)),
      );
    });

  /** @param {ObservedCall} call */
  async function allowed(call) {
    return kindOf(call.method) !== "none" && (await isOn()) && !(await blocked(call.tabId));
  }

  /** @param {number} tabId @param {FrameHandle} frame @param {number} callId */
  function remember(tabId, frame, callId) {
    const frames = shown.get(tabId) ?? new Map();
    shown.set(tabId, frames);
    frames.set(`${frame.sessionId ?? ""}/${frame.frameId}`, { frame, callId });
  }

  return {
    /** @param {ObservedCall} call */
    before(call) {
      if (kindOf(call.method) !== "edge") return;
      return bounded(async (until) => {
        if (!(await allowed(call))) return;
        const main = await frames.main(call.tabId);
        remember(call.tabId, main, idOf(call));
        await frames.call(main, CUE, ["paint", idOf(call), captionOf(call), null, SETTLED_MS, until]);
      });
    },
    /** @param {ObservedCall} call @param {ActionableTarget} target */
    atPoint(call, target) {
      if (kindOf(call.method) !== "element") return;
      return bounded(async (until) => {
        if (!(await allowed(call))) return;
        remember(call.tabId, target.frame, idOf(call));
        const position = call.method === "tool.click" ? (call.params.position ?? null) : null;
        await callOnTarget({ frames }, target, CUE, ["paint", idOf(call), `${verbOf(call)} ${nameOf(target)}`, position, SETTLED_MS, until]);
      });
    },
    /** @param {ObservedCall} call @param {boolean} ok */
    after(call, ok) {
      const id = ids.get(call);
      if (id === undefined) return;
      for (const { frame, callId } of shown.get(call.tabId)?.values() ?? []) {
        if (callId === id) void frames.call(frame, CUE, ["settle", id, ok ? "ok" : "failed", null, SETTLED_MS, 0]).catch(() => {});
      }
    },
    /** Takes the tab's cues away now (before a screenshot: it shows the page, not the cue). @param {number} tabId */
    clear(tabId) {
      const drawn = shown.get(tabId);
      shown.delete(tabId);
      if (!drawn) return Promise.resolve();
      return bounded(() => Promise.all([...drawn.values()].map(({ frame }) => frames.call(frame, CUE, ["clear", 0, "", null, 0, 0]).catch(() => {}))));
    },
  };
}

/** @param {ObservedCall} call */
const verbOf = (call) => call.method.replace(/^tool\./, "").replace(/_/g, " ");

/** The edge cue's words: the verb and where it goes (its host only: the page needs no more). @param {ObservedCall} call */
function captionOf(call) {
  const to = typeof call.params.url === "string" ? hostOf(call.params.url) : String(call.params.direction ?? call.params.to ?? "");
  return to ? `${verbOf(call)} ${to}` : verbOf(call);
}

/** @param {string} url */
function hostOf(url) {
  try {
    return new URL(url).host || url;
  } catch {
    return "";
  }
}
