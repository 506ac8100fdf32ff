// @ts-check
// The one actionability routine every element action goes through, so an action waits the way a person
// would wait and acts only on what a person could act on.
//
// Until the action's timeout, one attempt after another (pauses growing from 0 to 250 ms):
//   1. resolve   the target (a ref, CSS piercing open shadow roots, text=) to one element. A ref whose
//                element is gone (ref_stale), an unknown ref and a bad selector fail at once; a target
//                not found yet is looked for again.
//   2. attached  the element is still in its document;
//   3. visible   it renders (checkVisibility) with a non-empty box;
//   4. enabled   not :disabled, not inside aria-disabled="true"                    (`enabled`)
//   5. editable  a text field, value input or contenteditable, not read-only        (`editable`)
//                — a checkbox, button… is refused at once: it will never take text;
//   6. in view   what a person can see of it: its box cut by every scroll box around it (overflow other
//                than visible, on its containing-block chain), by its frame's viewport and the frames'
//                above. When nothing is left (or not the `position` asked for), it is scrolled to the centre,
//                which scrolls every box, the page and the frames around it. The action point (the centre
//                of the largest part seen, or `position` from its top-left) is worked out in the tab's
//                viewport, across frames;
//   7. stable    for pointer actions: while an animation runs in its document (CSS animations and
//                transitions, Web Animations), the same box across the next animation frame; a page
//                with nothing animating has nothing moving, and costs no frame;             (`pointer`)
//   8. hit       for pointer actions: the element (or something inside it, or its label) is what the
//                browser hits at the point — through open shadow roots and same-origin frames, and
//                through the person's overlay (the badge, the shield), which the gesture passes.
// Steps 2–8 are one call into the page. The caller then moves the pointer and acts in one go.
// When time runs out the last thing that was wrong is reported (code timeout): selector_not_found,
// element_not_visible, element_disabled, element_not_editable, element_not_ready (kept moving or
// detaching), or element_covered naming what covers it (e.g. a cookie banner's text). A cover is
// reported sooner when it has settled: the same cover, in the same place and opacity, on looks at
// least SETTLED_COVER_MS apart while nothing animates — a cookie banner waits for a person, not for
// time. A cover that animates or changes (a spinner, a fading toast) is waited out as before.
import { RpcError, fromPage, said } from "../link/protocol.js";
import { AGENT } from "../browser/frames.js";
import { refNumber } from "./refs.js";
import { DESCRIBE, describedTarget, locateTarget, parseTarget, staleRef } from "./targets.js";

/** Pauses between attempts, then the last one again and again. */
const PAUSES_MS = [0, 20, 50, 100, 100, 250];
/** How long a cover must stay the same, with nothing animating, to be reported before the timeout. */
export const SETTLED_COVER_MS = 500;
/** Failures of locating a target that a later attempt may not see. */
const RETRY_REASONS = new Set(["selector_not_found", "frame_detached"]);

/**
 * @typedef {import("./targets.js").ResolvedTarget} ResolvedTarget
 * @typedef {{x: number, y: number}} Point
 * @typedef {ResolvedTarget & {point: Point}} ActionableTarget  point: in the tab's viewport
 * @typedef {{pointer?: boolean, visible?: boolean, enabled?: boolean, editable?: boolean, scroll?: boolean, label?: boolean,
 *            position?: Point | null, handle?: boolean, intercept?: boolean, timeoutMs: number, deadline?: number,
 *            signal?: AbortSignal}} ActionabilityOptions
 *   visible false: the element only has to be attached (and enabled); it gets no action point
 *   label: a <label> target stands for its control (fill, select, focus a field by its label)
 *   handle false: the caller needs no object id (the point, or callOnTarget): a ref of the top document
 *   is then found, described and prepared in one round trip, and the result holds none (objectId null)
 *   intercept: the click that follows is checked where its press lands (pressed)
 */

// ── In the page (the frame's agent world), sent as source text: `this` is the element. ──────────────

/**
 * Steps 2–8: state, scrolling, the action point in this frame's viewport (plus the offset of this frame
 * in the tab's viewport when every frame above is same-origin, else null) and, for pointer actions,
 * stability and the hit test.
 * @this {Element}
 * @param {{visible: boolean, enabled: boolean, editable: boolean, scroll: boolean, pointer: boolean,
 *          position: {x: number, y: number} | null, intercept?: boolean}} opts
 *   visible false: only attached and enabled (a file input hidden behind a styled button)
 */
async function prepareInPage(opts) {
  const el = this;
  const any = /** @type {any} */ (el);
  if (!el.isConnected) return { state: "detached" };
  const TEXT_TYPES = /^(text|search|email|url|tel|password|number|date|time|datetime-local|month|week|color|range)$/;
  if (opts.editable) {
    const kind = el.localName === "textarea" || (el.localName === "input" && TEXT_TYPES.test(any.type)) ? "field" : any.isContentEditable ? "rich" : null;
    if (!kind) return { state: "not_editable", final: true, detail: el.localName === "input" ? `an input of type ${any.type}` : `a ${el.localName} element` };
    if (kind === "field" && any.readOnly) return { state: "readonly" };
  }
  if (opts.enabled && (el.matches(":disabled") || el.closest('[aria-disabled="true"]'))) return { state: "disabled" };
  if (!opts.visible) return { state: "ok", point: null, offset: { x: 0, y: 0 } };
  if (!any.checkVisibility({ visibilityProperty: true })) return { state: "hidden" };
  const doc = el.ownerDocument;
  const win = /** @type {Window} */ (doc.defaultView);
  /** The iframe element holding a window, when its document may be read (same origin). @param {Window} w */
  const ownerOf = (w) => {
    try {
      return w.frameElement;
    } catch {
      return null;
    }
  };
  /** Where an iframe's viewport starts in its parent's. @param {Element} frame */
  const contentOrigin = (frame) => {
    const r = frame.getBoundingClientRect();
    const cs = getComputedStyle(frame);
    return { x: r.left + parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft), y: r.top + parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop) };
  };
  /** Where this frame's viewport sits in the tab's: added up through same-origin frames. */
  const frameOffset = () => {
    let x = 0;
    let y = 0;
    for (let w = win; w !== w.top; ) {
      const owner = ownerOf(w);
      if (!owner) return null;
      const o = contentOrigin(owner);
      x += o.x;
      y += o.y;
      w = /** @type {Window} */ (owner.ownerDocument.defaultView);
    }
    return { x, y };
  };
  /** @typedef {{l: number, t: number, r: number, b: number}} Box */
  /** @param {Node} n */
  const flatParent = (n) => /** @type {Element | null} */ (n.parentNode instanceof ShadowRoot ? n.parentNode.host : n.parentElement);
  /**
   * What is left of `box` (in `node`'s window) once every box around `node` that clips it (overflow other
   * than visible, on the containing-block chain: an absolute or fixed child escapes the boxes it is not
   * positioned by) and its window's viewport have cut it. @param {Element} node @param {Box} box
   */
  const clipIn = (node, box) => {
    const d = node.ownerDocument;
    const w = /** @type {Window} */ (d.defaultView);
    let { l, t, r, b } = box;
    let position = w.getComputedStyle(node).position;
    // The body's overflow belongs to the viewport unless the root element has one of its own.
    const bodyClips = w.getComputedStyle(d.documentElement).overflow !== "visible";
    for (let p = flatParent(node); p && p !== d.documentElement; p = flatParent(p)) {
      const cs = w.getComputedStyle(p);
      const holdsFixed = cs.transform !== "none" || cs.perspective !== "none" || cs.filter !== "none" || /paint|layout|strict|content/.test(cs.contain) || /transform|perspective|filter/.test(cs.willChange);
      const holds = position === "fixed" ? holdsFixed : position === "absolute" ? cs.position !== "static" || holdsFixed : true;
      if (!holds) continue;
      position = cs.position;
      if ((p === d.body && !bodyClips) || cs.display === "inline" || cs.display === "contents") continue;
      const clipX = cs.overflowX !== "visible";
      const clipY = cs.overflowY !== "visible";
      if (!clipX && !clipY) continue;
      const pr = p.getBoundingClientRect();
      const left = pr.left + p.clientLeft;
      const top = pr.top + p.clientTop;
      if (clipX) [l, r] = [Math.max(l, left), Math.min(r, left + p.clientWidth)];
      if (clipY) [t, b] = [Math.max(t, top), Math.min(b, top + p.clientHeight)];
    }
    return { l: Math.max(l, 0), t: Math.max(t, 0), r: Math.min(r, w.innerWidth), b: Math.min(b, w.innerHeight) };
  };
  /**
   * The part of a rect of `el` a person can see, in this frame's viewport: clipped by every scroll box
   * and viewport around it, up through the same-origin frames (a cross-origin parent is not readable);
   * null when nothing of it is left. @param {Box} part
   */
  const visiblePart = (part) => {
    let box = clipIn(el, part);
    let dx = 0;
    let dy = 0;
    for (let w = win; w !== w.top && box.r > box.l && box.b > box.t; ) {
      const owner = ownerOf(w);
      if (!owner) break;
      const o = contentOrigin(owner);
      const inner = { l: o.x, t: o.y, r: o.x + owner.clientWidth, b: o.y + owner.clientHeight };
      const moved = { l: Math.max(box.l + o.x, inner.l), t: Math.max(box.t + o.y, inner.t), r: Math.min(box.r + o.x, inner.r), b: Math.min(box.b + o.y, inner.b) };
      box = clipIn(owner, moved);
      dx += o.x;
      dy += o.y;
      w = /** @type {Window} */ (owner.ownerDocument.defaultView);
    }
    if (box.r <= box.l || box.b <= box.t) return null;
    return { l: box.l - dx, t: box.t - dy, r: box.r - dx, b: box.b - dy };
  };
  /** The client rect with the most area a person can see (the first line of a wrapped link may be cut), and that area. */
  const pick = () => {
    /** @type {DOMRect | null} */
    let rect = null;
    /** @type {Box | null} */
    let seen = null;
    let bestArea = -1;
    for (const r of el.getClientRects()) {
      if (r.width <= 0 || r.height <= 0) continue;
      const part = visiblePart({ l: r.left, t: r.top, r: r.right, b: r.bottom });
      const area = part ? (part.r - part.l) * (part.b - part.t) : 0;
      if (area > bestArea) [rect, seen, bestArea] = [r, part, area];
    }
    return { rect, seen };
  };
  /** The action point: `position` from the box's top-left, else the centre of what can be seen of it. @param {Box | null} seen */
  const pointOf = (seen) => {
    if (opts.position) {
      const b = el.getBoundingClientRect();
      return { x: b.left + opts.position.x, y: b.top + opts.position.y };
    }
    return seen ? { x: (seen.l + seen.r) / 2, y: (seen.t + seen.b) / 2 } : null;
  };
  /** Can the person see the action point (and so the element there)? */
  const visible = () => {
    if (!seen || !point) return false;
    if (!opts.position) return true;
    return !!visiblePart({ l: point.x - 0.5, t: point.y - 0.5, r: point.x + 0.5, b: point.y + 0.5 });
  };
  let { rect, seen } = pick();
  if (!rect) return { state: "hidden" };
  let point = pointOf(seen);
  if (opts.scroll && !visible()) {
    // Chrome scrolls every scroller around the element: overflow boxes, the page, the frames above.
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    ({ rect, seen } = pick());
    if (!rect) return { state: "hidden" };
    point = pointOf(seen);
  }
  if (!visible() || !point) return { state: "outside" };
  const offset = frameOffset();
  if (!opts.pointer) return { state: "ok", point, offset };

  // Stable: only a running animation moves things without a script; then wait one frame and compare.
  // A page that draws no frames (hidden) moves nothing either: the wait gives up quickly.
  if (doc.getAnimations().some((a) => a.playState === "running")) {
    const box = () => {
      const b = el.getBoundingClientRect();
      return [b.left, b.top, b.width, b.height];
    };
    const before = box();
    await new Promise((resolve) => {
      requestAnimationFrame(resolve);
      setTimeout(resolve, 100);
    });
    if (box().some((v, i) => Math.abs(v - before[i]) > 0.5)) return { state: "moving" };
  }

  // Hit: the element (or what it holds) is what the pointer meets, here and in the same-origin frames above.
  /** @param {Node} n */
  const up = (n) => /** @type {Node | null} */ (n.parentNode instanceof ShadowRoot ? n.parentNode.host : n.parentNode);
  /** Is `inner` the element or inside it, across shadow roots? @param {Node} outer @param {Node | null} inner */
  const holds = (outer, inner) => {
    for (let n = inner; n; n = up(n)) if (n === outer) return true;
    return false;
  };
  /** The person's overlay is at the point: the gesture must wait until it is open (the worker's shield). */
  let overlaid = false;
  /**
   * The topmost element at a point seen from a document or shadow root. The person's overlay is not in
   * the way: the agent's gesture goes through it. @param {Document | ShadowRoot} scope @param {number} x @param {number} y
   */
  const topAt = (scope, x, y) => {
    const hit = scope.elementFromPoint(x, y);
    if (!hit || !hit.hasAttribute("data-tabpilot-overlay")) return hit;
    overlaid = true;
    return scope.elementsFromPoint(x, y).find((e) => !e.hasAttribute("data-tabpilot-overlay")) ?? null;
  };
  /** The deepest element at a point, looking into open shadow roots. @param {Document} d @param {number} x @param {number} y */
  const deepHit = (d, x, y) => {
    let hit = topAt(d, x, y);
    while (hit && hit.shadowRoot) {
      const inner = topAt(hit.shadowRoot, x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  /** A control is hit through its label too (custom checkboxes hide the input under the label). @param {Element} target @param {Element | null} hit */
  const receives = (target, hit) => {
    if (holds(target, hit)) return true;
    const label = hit && hit.closest("label");
    return !!label && /** @type {any} */ (label).control === target;
  };
  /** Is something animating in this document (CSS animations and transitions, Web Animations)? @param {Document} d */
  const animating = (d) => d.getAnimations().some((a) => a.playState === "running");
  /** Where the cover is and how opaque: a cover fading or moving away by script changes these. @param {Element | null} hit */
  const lookOf = (hit) => {
    const moving = animating(doc) || (!!hit && animating(hit.ownerDocument));
    if (!hit) return { box: [], animating: moving };
    const b = hit.getBoundingClientRect();
    let opacity = 1;
    for (let n = /** @type {Node | null} */ (hit); n instanceof Element; n = up(n)) opacity *= Number(getComputedStyle(n).opacity);
    return { box: [b.left, b.top, b.width, b.height, opacity].map((v) => Math.round(v * 100) / 100), animating: moving };
  };
  /** What covers `target`: the largest thing around the hit element that does not contain the target. */
  const cover = (/** @type {Element | null} */ hit, /** @type {Element} */ target) => {
    if (!hit) return { role: "", name: "", text: "", tag: "nothing" };
    let c = hit;
    const d = hit.ownerDocument;
    for (let p = up(c); p instanceof Element && p !== d.body && p !== d.documentElement && !holds(p, target); p = up(p)) c = p;
    const clean = (/** @type {string | null} */ s) => (s || "").replace(/\s+/g, " ").trim();
    const text = clean(/** @type {HTMLElement} */ (c).innerText ?? c.textContent);
    return {
      tag: c.localName + (c.id ? `#${c.id}` : ""),
      role: clean(c.getAttribute("role")),
      name: clean(c.getAttribute("aria-label")),
      text: text.length > 80 ? `${text.slice(0, 79)}…` : text,
    };
  };
  const hit = deepHit(doc, point.x, point.y);
  if (!receives(el, hit)) return { state: "covered", cover: cover(hit, el), ...lookOf(hit) };
  let at = { ...point };
  for (let w = win; w !== w.top; ) {
    const owner = ownerOf(w);
    if (!owner) break;
    const o = contentOrigin(owner);
    at = { x: at.x + o.x, y: at.y + o.y };
    const outer = deepHit(owner.ownerDocument, at.x, at.y);
    if (!holds(owner, outer)) return { state: "covered", cover: cover(outer, owner), ...lookOf(outer) };
    w = /** @type {Window} */ (owner.ownerDocument.defaultView);
  }
  if (opts.intercept) guardPress(point);
  // Known only when every frame above was hit-tested too (same-origin all the way up).
  return { state: "ok", point, offset, overlaid: offset ? overlaid : null };

  /**
   * The hit test above ran before the pointer moved: a page that changes on the move (a hover menu
   * closing pushes the content back up) sends the press to something else. So the press is checked
   * where it lands, when it lands (as Playwright does), and a press that misses is kept from the page
   * — it and the rest of its gesture — and told to the worker (`pressed`), which looks again. It also
   * tells whether the page left the click its default action (an `<a download>` then saves its file).
   * Only the gesture at this point is watched, for a bounded time, so the person's own clicks elsewhere
   * pass untouched.
   * @param {{x: number, y: number}} at
   */
  function guardPress(at) {
    const KEY = Symbol.for("tabpilot.press");
    const g = /** @type {any} */ (globalThis);
    g[KEY]?.disarm();
    const TYPES = ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "dblclick", "auxclick", "contextmenu"];
    /** @type {{missed: any, defaulted: boolean, disarm: () => void}} */
    const guard = { missed: null, defaulted: false, disarm };
    /**
     * Did the browser send the press to the element (or its label)? Its own hit test, the event's
     * path; the element's own look at the point for what that path hides (closed shadow trees).
     * @param {MouseEvent} e
     */
    const reached = (e) => {
      for (const n of e.composedPath()) {
        if (n === el || (n instanceof Element && n.localName === "label" && /** @type {any} */ (n).control === el)) return true;
      }
      return receives(el, deepHit(doc, e.clientX, e.clientY));
    };
    /** @param {MouseEvent} e */
    const onEvent = (e) => {
      if (!e.isTrusted || Math.abs(e.clientX - at.x) > 1 || Math.abs(e.clientY - at.y) > 1) return;
      if (guard.missed === null && (e.type === "pointerdown" || e.type === "mousedown") && !reached(e)) {
        guard.missed = cover(deepHit(doc, e.clientX, e.clientY), el);
      }
      if (guard.missed === null) return;
      e.preventDefault();
      e.stopImmediatePropagation();
    };
    // After the page's own handlers: did it leave the click its default action (a link's download)?
    /** @param {MouseEvent} e */
    const onClicked = (e) => {
      if (e.isTrusted && guard.missed === null) guard.defaulted = !e.defaultPrevented;
    };
    for (const type of TYPES) win.addEventListener(type, /** @type {any} */ (onEvent), { capture: true });
    win.addEventListener("click", onClicked);
    const timer = setTimeout(disarm, 10000);
    g[KEY] = guard;
    function disarm() {
      clearTimeout(timer);
      win.removeEventListener("click", onClicked);
      for (const type of TYPES) win.removeEventListener(type, /** @type {any} */ (onEvent), { capture: true });
      if (g[KEY] === guard) delete g[KEY];
    }
  }
}

/**
 * What became of the click guarded by the last preparation: what its press hit instead of its element
 * (null: its element), and whether the page left the click its default action.
 */
function pressedInPage() {
  const guard = /** @type {any} */ (globalThis)[Symbol.for("tabpilot.press")];
  if (!guard) return null;
  guard.disarm();
  return { missed: guard.missed, defaulted: guard.defaulted };
}

/** The role a control is named by when it is reached through its label. @this {Element} */
function controlRoleInPage() {
  const el = /** @type {any} */ (this);
  const ROLES = { checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton", search: "searchbox", file: "file" };
  if (el.getAttribute("role")) return el.getAttribute("role");
  if (el.localName === "select") return el.multiple ? "listbox" : "combobox";
  if (el.localName === "input") return ROLES[/** @type {keyof ROLES} */ (el.type)] || "textbox";
  return el.localName === "textarea" ? "textbox" : el.localName;
}

export const PREPARE = prepareInPage.toString();
const PRESSED = pressedInPage.toString();
const CONTROL_ROLE = controlRoleInPage.toString();

/**
 * The action agent: DESCRIBE and PREPARE kept in a frame's agent world, installed by the first action
 * on a document, so later calls send a line instead of their source (the page parses every byte of a
 * function sent with a call, about a millisecond for these). The world is ours: the page cannot see it.
 */
const ACT = `globalThis[Symbol.for("tabpilot.act")]`;
const ACT_SOURCE = `{
  describe: ${DESCRIBE},
  prepare: ${PREPARE},
  /** A ref's element found, described and prepared (see quickLook). */
  async look(n, opts) {
    const el = ${AGENT}.resolve(n);
    if (!el) return { gone: true };
    const info = this.describe.call(el);
    if (info.nested || (opts.label && info.label.split(" ", 1)[0] === "label")) return null;
    return { info, prepared: await this.prepare.call(el, opts) };
  },
  /**
   * Both in one round trip (el: the element just located); the preparation is left for later when the
   * element must first be handed to another world (a same-origin child document) or stands for another
   * (a label, with opts.label).
   */
  async describeAndPrepare(el, opts) {
    const info = this.describe.call(el);
    if (info.nested || (opts.label && info.label.split(" ", 1)[0] === "label")) return { info, prepared: null };
    return { info, prepared: await this.prepare.call(el, opts) };
  },
}`;
/** What a call answers when the agent is not in the world yet (a new document, or a new world). */
const NOT_INSTALLED = "tabpilot: no action agent here";

/**
 * A call of the action agent (`act`; `this`: the element, when called on one), and the same call
 * installing the agent first. @param {string} call
 */
function agentCall(call) {
  return {
    known: `function (...args) { const act = ${ACT}; return act ? ${call} : ${JSON.stringify(NOT_INSTALLED)}; }`,
    installing: `function (...args) { const act = (${ACT} ??= ${ACT_SOURCE}); return ${call}; }`,
  };
}
const LOOK = agentCall("act.look(...args)");
const DESCRIBE_AND_PREPARE = agentCall("act.describeAndPrepare(this, ...args)");
const PREPARE_ELEMENT = agentCall("act.prepare.call(this, ...args)");

/**
 * Run an action agent call in the frame's agent world: on the element `objectId`, or in the world itself.
 * @param {Record<string, any>} ctx @param {import("../browser/frames.js").FrameHandle} frame
 * @param {string | null} objectId @param {{known: string, installing: string}} call @param {unknown[]} args
 */
async function inAgent(ctx, frame, objectId, call, args) {
  const run = (/** @type {string} */ source) =>
    objectId === null ? ctx.frames.call(frame, source, args) : ctx.frames.callOn(frame, objectId, source, args, { awaitPromise: true });
  const answer = await run(call.known);
  return answer === NOT_INSTALLED ? run(call.installing) : answer;
}

// ── In the service worker ───────────────────────────────────────────────────────────────────────────

/** What covers the target, all of it the page's (its role and tag included: one mark costs less). @param {{role: string, name: string, text: string, tag: string}} c */
function describeCover(c) {
  const what = c.role ? `${c.role}${c.name ? ` ${JSON.stringify(c.name)}` : ""}` : c.tag;
  return fromPage(c.text ? `${what} (${JSON.stringify(c.text)})` : what);
}

/** @param {ResolvedTarget} t */
export function nameOf(t) {
  return t.ref ? `${t.label} @${t.ref}` : t.label;
}

/** The target's name in an error's words: its label is the page's, its ref tabpilot's. @param {{label: string, ref?: string | null}} t */
export function saidName(t) {
  return t.ref ? said`${fromPage(t.label)} @${t.ref}` : said`${fromPage(t.label)}`;
}

/**
 * The error for a state that stayed wrong until the timeout.
 * @param {string} state @param {{target: ResolvedTarget | null, raw: string, waitedMs: number, detail?: any}} info
 */
function notReady(state, { target, raw, waitedMs, detail }) {
  const what = target ? saidName(target) : JSON.stringify(raw);
  const after = `after ${(waitedMs / 1000).toFixed(1)} s`;
  const data = { waited_ms: waitedMs, target: raw, ...(target ? { ref: target.ref, label: target.label } : {}) };
  switch (state) {
    case "covered":
      return new RpcError("timeout", said`${what} is covered by ${describeCover(detail)} (${after})`, "element_covered", {
        ...data,
        cover: detail,
        hint: "Close or accept what covers it first (e.g. click its button), then retry.",
      });
    case "disabled":
      return new RpcError("timeout", said`${what} is disabled (${after})`, "element_disabled", {
        ...data,
        hint: "It stayed disabled: do what the page needs first (fill the required fields…), or check it with `tabpilot snapshot`.",
      });
    case "readonly":
      return new RpcError("timeout", said`${what} is read-only (${after})`, "element_not_editable", {
        ...data,
        hint: "It does not take text; check the page with `tabpilot snapshot`.",
      });
    case "hidden":
    case "outside":
      return new RpcError("timeout", said`${what} is ${state === "hidden" ? "hidden" : "out of reach of the viewport"} (${after})`, "element_not_visible", {
        ...data,
        hint: "Open what holds it (a menu, a tab, a collapsed section) or scroll to it, then retry.",
      });
    case "not_found":
      return new RpcError("timeout", `nothing matches ${JSON.stringify(raw)} (${after})`, "selector_not_found", {
        ...data,
        hint: "Check the page with `tabpilot snapshot` or `tabpilot find TEXT`, or raise --timeout if it comes later.",
      });
    default:
      return new RpcError("timeout", said`${what} ${state === "moving" ? "kept moving" : "kept being replaced"} (${after})`, "element_not_ready", {
        ...data,
        hint: "Retry, or raise --timeout; an animation may still be running.",
      });
  }
}

/**
 * One look at a covered target: has its cover settled? `seen` is the cover first seen unchanged, and
 * when; a look while anything animates, or at another cover (or the same one moved or fading), starts over.
 * @param {{key: string, since: number} | null} seen
 * @param {{cover?: unknown, box?: number[], animating?: boolean}} look
 * @param {number} now
 * @returns {{seen: {key: string, since: number} | null, settled: boolean}}
 */
export function watchCover(seen, look, now) {
  if (look.animating) return { seen: null, settled: false };
  const key = JSON.stringify([look.cover, look.box]);
  if (!seen || seen.key !== key) return { seen: { key, since: now }, settled: false };
  return { seen, settled: now - seen.since >= SETTLED_COVER_MS };
}

/** @param {number} ms @param {AbortSignal} [signal] */
function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** Let go of an element handle we no longer need (fire and forget). @param {Record<string, any>} ctx @param {ResolvedTarget} t */
export function release(ctx, t) {
  if (!t.objectId) return;
  void ctx.frames.send(t.frame, "Runtime.releaseObject", { objectId: t.objectId }).catch(() => {});
}

/** Wraps a function so the agent world calls it on a ref's element, found by the ref's number. @param {string} source */
const onRef = (source) => `function (n, ...args) { const el = ${AGENT}.resolve(n); return el ? { value: (${source}).apply(el, args) } : null; }`;

/**
 * Call a function on the target's element (`this`) and return its value: through its object id, or,
 * for a ref looked at without one (handle false), in the agent world by the ref's number, which costs
 * no handle; a ref whose element went meanwhile is stale.
 * @param {Record<string, any>} ctx @param {ResolvedTarget} target @param {string} source @param {unknown[]} [args]
 */
export async function callOnTarget(ctx, target, source, args = []) {
  if (target.objectId) return ctx.frames.callOn(target.frame, target.objectId, source, args);
  const answer = await ctx.frames.call(target.frame, onRef(source), [refNumber(target.ref), ...args]);
  if (answer === null) throw staleRef(/** @type {string} */ (target.ref));
  return answer.value;
}

/**
 * What became of a click prepared with `intercept`: `missed`, what its press hit instead of its element
 * (kept from the page), else null; `defaulted`, the page left the click its default action. null when
 * the page left before it could say.
 * @param {Record<string, any>} ctx @param {ResolvedTarget} target
 * @returns {Promise<{missed: {role: string, name: string, text: string, tag: string} | null, defaulted: boolean} | null>}
 */
export function pressed(ctx, target) {
  return ctx.frames.call(target.frame, PRESSED).catch(() => null);
}

/**
 * The error for a press that kept landing elsewhere until the timeout. @param {ResolvedTarget} target
 * @param {{role: string, name: string, text: string, tag: string}} hit @param {number} waitedMs
 */
export function pressedElsewhere(target, hit, waitedMs) {
  return new RpcError("timeout", said`${saidName(target)} moved when the pointer came: the press would land on ${describeCover(hit)} (after ${(waitedMs / 1000).toFixed(1)} s)`, "element_not_ready", {
    waited_ms: waitedMs,
    ref: target.ref,
    label: target.label,
    cover: hit,
    hint: "The page moves it when the pointer moves (a menu closing, a hover effect): hover somewhere else first, or check it with `tabpilot snapshot`.",
  });
}

/**
 * The control a <label> target stands for, named by its role and the label's text; other targets as they are.
 * @param {Record<string, any>} ctx @param {ResolvedTarget} target
 * @returns {Promise<ResolvedTarget>}
 */
async function followLabel(ctx, target) {
  if (target.label.split(" ", 1)[0] !== "label") return target;
  const control = await ctx.frames.callOn(target.frame, target.objectId, "function () { return this.control; }", [], { returnByValue: false });
  if (!control.objectId) return target;
  const role = await ctx.frames.callOn(target.frame, control.objectId, CONTROL_ROLE);
  release(ctx, target);
  return { ...target, objectId: control.objectId, label: `${role}${target.label.slice("label".length)}` };
}

/**
 * The first look at a ref of the top document in one round trip: found, described and prepared by the
 * frame's agent, by value. null when the ref is not the top document's, or its element must be handed
 * to another world or stands for another (the full look does those); a ref whose element is gone fails.
 * @param {Record<string, any>} ctx @param {number} tabId @param {string} raw @param {Record<string, unknown>} opts
 * @returns {Promise<{target: ResolvedTarget, prepared: any} | null>}
 */
async function quickLook(ctx, tabId, raw, opts) {
  const parsed = parseTarget(raw);
  const n = parsed.kind === "ref" ? refNumber(parsed.ref) : null;
  if (n === null) return null;
  const main = await ctx.frames.main(tabId);
  if (ctx.refs.owner(tabId, n) !== main.frameId) return null;
  const seen = await inAgent(ctx, main, null, LOOK, [n, opts]);
  if (seen === null) return null;
  // The frame that gave the ref out no longer holds its element.
  if (seen.gone) throw staleRef(`e${n}`);
  return { target: { frame: main, objectId: /** @type {any} */ (null), ref: `e${n}`, label: seen.info.label }, prepared: seen.prepared };
}

/**
 * Wait until `raw` names an element an action can be done to, and return it with its action point.
 * @param {Record<string, any>} ctx handler context (frames, refs, cdp, signal)
 * @param {number} tabId
 * @param {string} raw the target as the agent wrote it
 * @param {ActionabilityOptions} options
 * @returns {Promise<ActionableTarget>}
 */
export async function actionable(ctx, tabId, raw, options) {
  const { pointer = false, visible = true, enabled = true, editable = false, scroll = true, label = false, position = null, handle = true, intercept = false, signal } = options;
  const started = Date.now();
  const deadline = options.deadline ?? started + options.timeoutMs;
  /** @type {{state: string, target: ResolvedTarget | null, detail?: any}} */
  let last = { state: "not_found", target: null };
  /** @type {{key: string, since: number} | null} */
  let cover = null;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw notReady(last.state, { target: last.target, raw, waitedMs: Date.now() - started, detail: last.detail });
      await pause(Math.min(PAUSES_MS[Math.min(attempt, PAUSES_MS.length - 1)], left), signal);
    }
    if (signal?.aborted) throw signal.reason;
    const opts = { visible, enabled, editable, scroll, pointer, position, intercept };
    /** @type {ResolvedTarget} */
    let target;
    /** @type {any} */
    let prepared;
    try {
      const quick = attempt === 0 && !handle ? (ctx.shield?.expect(), await quickLook(ctx, tabId, raw, { ...opts, label })) : null;
      if (quick) {
        ({ target, prepared } = quick);
      } else {
        const found = await locateTarget(ctx, tabId, raw);
        // The first look usually finds the element ready: the shield opens for the gesture meanwhile.
        if (attempt === 0) ctx.shield?.expect();
        const first = await inAgent(ctx, found.frame, found.objectId, DESCRIBE_AND_PREPARE, [{ ...opts, label }]);
        target = await describedTarget(ctx, found, first.info);
        prepared = first.prepared;
        if (!prepared && label) target = await followLabel(ctx, target);
      }
    } catch (err) {
      if (err instanceof RpcError && err.reason && RETRY_REASONS.has(err.reason)) {
        ctx.shield?.unexpect();
        last = { state: "not_found", target: null };
        continue;
      }
      throw err;
    }
    prepared ??= await inAgent(ctx, target.frame, target.objectId, PREPARE_ELEMENT, [opts]);
    ctx.mark?.("looked");
    if (prepared.state !== "ok") {
      ctx.shield?.unexpect();
      release(ctx, target);
      if (prepared.final) {
        throw new RpcError("invalid_params", said`${saidName(target)} does not take text: it is ${fromPage(prepared.detail)}`, "element_not_editable", {
          target: raw,
          ref: target.ref,
          hint: "Use check/uncheck for checkboxes and radios, select for <select>, upload for file inputs, click for buttons.",
        });
      }
      last = { state: prepared.state, target, detail: prepared.cover };
      const watched = prepared.state === "covered" ? watchCover(cover, prepared, Date.now()) : { seen: null, settled: false };
      cover = watched.seen;
      if (watched.settled) throw notReady("covered", { target, raw, waitedMs: Date.now() - started, detail: prepared.cover });
      continue;
    }
    if (prepared.overlaid === false) ctx.shield?.clear();
    // The frame's place in the tab: known in the page when every frame above is same-origin.
    const offset = visible ? (prepared.offset ?? (await ctx.frames.offset(target.frame))) : null;
    const ready = { ...target, point: offset ? { x: prepared.point.x + offset.x, y: prepared.point.y + offset.y } : { x: 0, y: 0 } };
    // The action's observers (the person's cue) see its element before the gesture.
    await ctx.atPoint?.(ready);
    return ready;
  }
}
