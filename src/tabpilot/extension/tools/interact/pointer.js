// @ts-check
// tool.click / tool.hover / tool.drag: the mouse, through the actionability routine and trusted input.
import { RpcError, said } from "../../link/protocol.js";
import { requireString } from "../../link/params.js";
import { actionable, pressed, pressedElsewhere, release, saidName, PREPARE } from "../../page/actionability.js";
import { click as clickAt, hover as hoverAt, move, press, release as releaseAt, path } from "../../page/input.js";
import { lookupKey } from "../../page/keys.js";
import { watchOutcome } from "../../browser/outcome.js";
import { beginAction, finishAction, targetInfo } from "../../page/action.js";
import { approve } from "../../approval/gate.js";
import { elementFacts } from "../../approval/describe.js";

const BUTTONS = ["left", "right", "middle"];
/** Pointer moves between the press and the release of a drag: pages that track the pointer see it travel. */
const DRAG_STEPS = 8;
/** How long a drag waits for the browser to say an HTML5 drag started. */
const DRAG_START_MS = 150;

/** @param {unknown} raw @returns {import("../../page/keys.js").Modifier[]} */
function modifiersOf(raw) {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new RpcError("invalid_params", "modifiers must be a list like [\"Shift\", \"Control\"]");
  /** @type {import("../../page/keys.js").Modifier[]} */
  const out = [];
  for (const name of raw) {
    const key = lookupKey(String(name)).key;
    if (key !== "Alt" && key !== "Control" && key !== "Meta" && key !== "Shift") {
      throw new RpcError("invalid_params", `${JSON.stringify(name)} is not a modifier`, "unknown_key", { hint: "Modifiers are Shift, Control, Alt and Meta." });
    }
    if (!out.includes(key)) out.push(key);
  }
  return out;
}

/** @param {unknown} raw @returns {{x: number, y: number} | null} */
function positionOf(raw) {
  if (raw === undefined || raw === null) return null;
  const p = /** @type {any} */ (raw);
  if (typeof p !== "object" || !Number.isFinite(p.x) || !Number.isFinite(p.y)) throw new RpcError("invalid_params", "position must be {x, y} in CSS pixels");
  return { x: p.x, y: p.y };
}

/** The link is an `<a download>`: its click saves a file and navigates nowhere. @param {any} ctx @param {any} target */
function savesLink(ctx, target) {
  return ctx.frames.callOn(target.frame, target.objectId, "function () { return !!this.closest?.('a[download]'); }").catch(() => false);
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function click(params, ctx) {
  const raw = requireString(params, "target");
  const button = params.button ?? "left";
  if (!BUTTONS.includes(button)) throw new RpcError("invalid_params", `button must be one of ${BUTTONS.join(", ")}`);
  const clickCount = params.click_count ?? 1;
  if (clickCount !== 1 && clickCount !== 2) throw new RpcError("invalid_params", "click_count must be 1 or 2");
  const modifiers = modifiersOf(params.modifiers);
  const position = positionOf(params.position);
  const action = await beginAction(params, ctx, { gesture: true });
  const { signal } = ctx;
  const started = Date.now();
  const look = () => actionable(ctx, action.tabId, raw, { pointer: true, position, handle: false, intercept: true, timeoutMs: action.timeoutMs, deadline: action.deadline, signal });
  let target = await look();
  const what = () => ({ action: "click", target: targetInfo(target).name, facts: () => elementFacts(ctx, target) });
  while (await approve(ctx, action.sessionId, action.tabId, what())) {
    // The person took their time: the page may have moved, or changed what the click does, meanwhile.
    release(ctx, target);
    action.deadline = Date.now() + action.timeoutMs;
    target = await look();
  }
  try {
    for (;;) {
      const mayDownload = button === "left" && /^link\b/.test(targetInfo(target).label ?? "") && (await savesLink(ctx, target));
      const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
      const gesture = clickAt(action.send, target.point, { button, clickCount, modifiers });
      // Asked as soon as the page took the input, alongside the outcome's own round trip.
      const aimed = target;
      const landed = gesture.then(() => pressed(ctx, aimed), () => null);
      const downloads = mayDownload && landed.then((p) => p?.missed === null && p.defaulted);
      const { outcome } = await watch.settle(gesture, { deadline: action.deadline, signal, mayDownload, downloads });
      const hit = outcome.dialog ? null : (await landed)?.missed;
      if (!hit) return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: targetInfo(target), ...target.point, ...outcome });
      if (Date.now() >= action.deadline) throw pressedElsewhere(target, hit, Date.now() - started);
      release(ctx, target);
      target = await look();
    }
  } finally {
    release(ctx, target);
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function hover(params, ctx) {
  const raw = requireString(params, "target");
  const action = await beginAction(params, ctx, { gesture: true });
  const target = await actionable(ctx, action.tabId, raw, { pointer: true, enabled: false, handle: false, timeoutMs: action.timeoutMs, deadline: action.deadline, signal: ctx.signal });
  release(ctx, target);
  await hoverAt(action.send, target.point);
  return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: targetInfo(target), ...target.point });
}

/**
 * Press on the source, travel to the target and release. When the page starts an HTML5 drag, the
 * browser hands it to us (Input.setInterceptDrags) and the drop is dispatched as drag events.
 * @type {import("../../link/dispatcher.js").Handler}
 */
export async function drag(params, ctx) {
  const sourceRaw = requireString(params, "source");
  const targetRaw = requireString(params, "target");
  const action = await beginAction(params, ctx);
  const { signal } = ctx;
  const common = { timeoutMs: action.timeoutMs, deadline: action.deadline, signal };
  // The drop target first (scrolled into view), then the source (which gets the pointer); the target
  // must still be in view after the source was brought in.
  const dest = await actionable(ctx, action.tabId, targetRaw, { ...common, enabled: false });
  /** @type {import("../../page/actionability.js").ActionableTarget | null} */
  let source = null;
  try {
    source = await actionable(ctx, action.tabId, sourceRaw, { ...common, pointer: true });
    const placed = await ctx.frames.callOn(
      dest.frame,
      dest.objectId,
      PREPARE,
      [{ visible: true, enabled: false, editable: false, scroll: false, pointer: false, position: null }],
      { awaitPromise: true },
    );
    if (placed.state !== "ok") {
      throw new RpcError("invalid_params", said`${saidName(dest)} and ${saidName(source)} do not fit in the viewport together`, "element_not_visible", {
        hint: "Scroll so both are visible, or drag in two steps through a place in between.",
      });
    }
    const offset = placed.offset ?? (await ctx.frames.offset(dest.frame));
    const to = { x: placed.point.x + offset.x, y: placed.point.y + offset.y };
    const from = source.point;
    const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
    const { value: html5, outcome } = await watch.settle(gesture(ctx, action.tabId, action.send, from, to), { deadline: action.deadline, signal });
    return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, source: targetInfo(source), target: targetInfo(dest), html5: html5 === true, from, to, ...outcome });
  } finally {
    release(ctx, dest);
    if (source) release(ctx, source);
  }
}

/**
 * The drag itself; resolves to true when it was an HTML5 drag and drop.
 * @param {Record<string, any>} ctx @param {number} tabId
 * @param {import("../../page/input.js").Send} send
 * @param {{x: number, y: number}} from @param {{x: number, y: number}} to
 */
async function gesture(ctx, tabId, send, from, to) {
  /** @type {any} */
  let dragData = null;
  const off = ctx.cdp.onEvent(tabId, (/** @type {string} */ method, /** @type {any} */ p) => {
    if (method === "Input.dragIntercepted") dragData = p.data;
  });
  await send("Input.setInterceptDrags", { enabled: true });
  try {
    const steps = path(from, to, DRAG_STEPS);
    await Promise.all([move(send, from), press(send, from)]);
    // The first step starts an HTML5 drag if the page allows one: the browser then reports it.
    await move(send, steps[0], { held: "left" });
    const started = Date.now();
    while (!dragData && Date.now() - started < DRAG_START_MS) {
      await send("Runtime.evaluate", { expression: "0" });
      if (!dragData) await new Promise((r) => setTimeout(r, 10));
    }
    if (dragData) {
      // The page's view sees the drag come in, travel (dragenter/dragleave follow the elements) and drop.
      await send("Input.dispatchDragEvent", { type: "dragEnter", ...steps[0], data: dragData });
      for (const p of [...steps.slice(1), to]) await send("Input.dispatchDragEvent", { type: "dragOver", ...p, data: dragData });
      await send("Input.dispatchDragEvent", { type: "drop", ...to, data: dragData });
      await releaseAt(send, to);
      return true;
    }
    for (const p of steps.slice(1)) await move(send, p, { held: "left" });
    await move(send, to, { held: "left" });
    await releaseAt(send, to);
    return false;
  } finally {
    off();
    await send("Input.setInterceptDrags", { enabled: false }).catch(() => {});
  }
}
