// @ts-check
// What every action tool does around its own work: find the tab and the deadline, make the page believe
// it has the focus (the Agent Window usually does not), put the person's input shield up until the
// request ends (the agent's own input goes through its gate) and say in the page what the agent does,
// and finish the result (the element acted on, the outcome, a snapshot or diff when asked).
import { RpcError } from "../link/protocol.js";
import { sessionIdOf, optionalTabId, timeoutOf } from "../link/params.js";
import { afterAction } from "./snapshots.js";
import { nameOf } from "./actionability.js";

export const ACTION_TIMEOUT_MS = 5000;
const AFTER = ["snapshot", "diff"];

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
  await emulateFocus(ctx, tab.id);
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
