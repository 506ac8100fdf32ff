// @ts-check
// What every action tool does around its own work: find the tab and the deadline, make the page believe
// it has the focus (the Agent Window usually does not), put the person's input shield up until the
// request ends (the agent's own input goes through its gate), say in the page what the agent does,
// tell the action's observers (below) and finish the result (the element acted on, the outcome, a
// snapshot or diff when asked).
import { RpcError } from "../link/protocol.js";
import { sessionIdOf, optionalTabId, timeoutOf } from "../link/params.js";
import { afterAction } from "./snapshots.js";
import { nameOf } from "./actionability.js";

export const ACTION_TIMEOUT_MS = 5000;
const AFTER = ["snapshot", "diff"];

/**
 * The seam every watcher of actions plugs into (the person's cues first): `before` the action starts,
 * `atPoint` once its element is actionable (just before the gesture), `after` with its outcome once the
 * request is over. background.js hands them in as `ctx.observers`; an observer bounds its own wait and
 * never fails the action.
 * @typedef {{method: string, params: Record<string, any>, tabId: number, sessionId: string}} ObservedCall
 * @typedef {{
 *   before?(call: ObservedCall): unknown,
 *   atPoint?(call: ObservedCall, target: import("./actionability.js").ActionableTarget): unknown,
 *   after?(call: ObservedCall, ok: boolean): void,
 * }} ActionObserver
 */

/**
 * Tells the observers an action on this tab starts, and arranges `atPoint` and `after` for it.
 * @param {Record<string, any>} ctx @param {number} tabId @param {Record<string, any>} params
 */
export async function announce(ctx, tabId, params) {
  /** @type {ActionObserver[]} */
  const observers = ctx.observers ?? [];
  if (observers.length === 0) return;
  /** @type {ObservedCall} */
  const call = { method: String(ctx.method ?? ""), params, tabId, sessionId: String(params.session_id ?? "") };
  const quietly = (/** @type {() => unknown} */ fn) => Promise.resolve().then(fn).catch(() => {});
  ctx.atPoint = (/** @type {import("./actionability.js").ActionableTarget} */ target) => Promise.all(observers.map((o) => quietly(() => o.atPoint?.(call, target))));
  ctx.atEnd?.((/** @type {{ok: boolean}} */ end) => {
    for (const o of observers) void quietly(() => o.after?.(call, end.ok));
  });
  await Promise.all(observers.map((o) => quietly(() => o.before?.(call))));
}

/** Per CDP client (one per service worker): tabs told they have the focus, until the debugger lets go. */
const focusEmulated = new WeakMap();

/**
 * A focused-looking page takes keys and fires focus events even while its window is in the background.
 * @param {Record<string, any>} ctx @param {number} tabId
 */
async function emulateFocus(ctx, tabId) {
  let tabs = focusEmulated.get(ctx.cdp);
  if (!tabs) {
    tabs = new Set();
    focusEmulated.set(ctx.cdp, tabs);
    const known = tabs;
    ctx.cdp.onDetach((/** @type {number} */ id) => known.delete(id));
  }
  if (tabs.has(tabId)) return;
  await ctx.cdp.send(tabId, "Emulation.setFocusEmulationEnabled", { enabled: true });
  tabs.add(tabId);
}

/**
 * @param {Record<string, any>} params
 * @param {Record<string, any>} ctx
 * @param {{defaultTimeoutMs?: number, gesture?: boolean}} [options] gesture: the pointer or a few keys
 *   act right after the first look at the element (the shield comes up only when they need it)
 */
export async function beginAction(params, ctx, { defaultTimeoutMs = ACTION_TIMEOUT_MS, gesture = false } = {}) {
  const timeoutMs = timeoutOf(params, defaultTimeoutMs);
  const deadline = Date.now() + timeoutMs;
  if (params.after !== undefined && !AFTER.includes(params.after)) throw new RpcError("invalid_params", `after must be one of ${AFTER.join(", ")}`);
  const sessionId = sessionIdOf(params);
  const tab = await ctx.sessions.resolveTab(sessionId, optionalTabId(params));
  ctx.mark?.("tab");
  /** @type {import("./input.js").Send} */
  let send = (method, params) => ctx.cdp.send(tab.id, method, params);
  if (ctx.mark) send = marked(send, ctx.mark);
  if (ctx.overlay) {
    const shield = ctx.overlay.shield(tab.id, { activity: activityOf(ctx.method, params), pass: gesture });
    ctx.atEnd(() => shield.release());
    // actionable() opens it for the gesture alongside its first look at the element.
    ctx.shield = shield;
    send = shield.gate(send);
  }
  await Promise.all([emulateFocus(ctx, tab.id), announce(ctx, /** @type {number} */ (tab.id), params)]);
  ctx.mark?.("begun");
  return { sessionId, tabId: /** @type {number} */ (tab.id), timeoutMs, deadline, send };
}

/**
 * The bench's mark of the first input the page is sent (past the shield's gate): the setup before it
 * is what every action on a ref pays.
 * @param {import("./input.js").Send} send @param {(name: string) => void} mark
 * @returns {import("./input.js").Send}
 */
function marked(send, mark) {
  return (method, params) => {
    if (method.startsWith("Input.")) mark("input");
    return send(method, params);
  };
}

/**
 * What the badge in the page says the agent does, e.g. `click @e12` (never a value it types).
 * @param {string | undefined} method @param {Record<string, any>} params
 */
export function activityOf(method, params) {
  const verb = String(method ?? "").replace(/^tool\./, "");
  const target = params.source ?? params.target ?? (Array.isArray(params.keys) ? params.keys.join(" ") : params.direction ?? params.to);
  return typeof target === "string" && target ? `${verb} ${target}` : verb;
}

/** How results name the element: its ref and label. @param {import("./targets.js").ResolvedTarget} t */
export function targetInfo(t) {
  return { ref: t.ref, label: t.label, name: nameOf(t) };
}

/**
 * The result, with a fresh snapshot or a diff appended when the agent asked for one.
 * @param {Record<string, any>} ctx @param {Record<string, any>} params @param {number} tabId
 * @param {Record<string, any>} result
 */
export async function finishAction(ctx, params, tabId, result) {
  // A dialog left open blocks the page: no snapshot until it is answered.
  if (params.after === undefined || result.dialog?.handled === "open") return result;
  return { ...result, snapshot: await afterAction(ctx, tabId, params.after) };
}
