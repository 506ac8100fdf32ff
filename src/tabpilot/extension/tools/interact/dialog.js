// @ts-check
// tool.dialog: answer the confirm, prompt or beforeunload dialog left open on a tab (or say which is open).
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, timeoutOf } from "../../link/params.js";
import { watchOutcome } from "../../browser/outcome.js";
import { ACTION_TIMEOUT_MS } from "../../page/action.js";
import { approve } from "../../approval/gate.js";

const ACTIONS = ["accept", "dismiss", "status"];

/** @type {import("../../link/dispatcher.js").Handler} */
export async function dialog(params, ctx) {
  const action = params.action ?? "status";
  if (!ACTIONS.includes(action)) throw new RpcError("invalid_params", `action must be one of ${ACTIONS.join(", ")}`);
  if (params.text !== undefined && (typeof params.text !== "string" || action !== "accept")) {
    throw new RpcError("invalid_params", "text must be a string, and only goes with accept (the answer to a prompt)");
  }
  const timeoutMs = timeoutOf(params, ACTION_TIMEOUT_MS);
  const deadline = Date.now() + timeoutMs;
  const sessionId = sessionIdOf(params);
  const tab = await ctx.sessions.resolveTab(sessionId, optionalTabId(params), { anyState: true });
  const pending = ctx.dialogs.pending(tab.id);
  if (action === "status") {
    return { tab_id: tab.id, dialog: pending && { type: pending.type, message: pending.message, default_prompt: pending.default_prompt, handled: pending.handled } };
  }
  if (action === "accept" && pending) {
    const what = { action: "dialog", accept: true, dialog: pending.type, target: `${pending.type} dialog "${String(pending.message ?? "").slice(0, 120)}"` };
    await approve(ctx, sessionId, tab.id, what);
  }
  const watch = await watchOutcome(ctx, tab.id, sessionId);
  const answer = ctx.dialogs.answer(tab.id, { accept: action === "accept", promptText: params.text });
  const { outcome } = await watch.settle(answer, { deadline, signal: ctx.signal, after: "tasks" });
  // Resolved before any dialog that followed it could open.
  const record = await answer;
  return {
    tab_id: tab.id,
    answered: { type: record.type, message: record.message, handled: record.handled, ...(params.text !== undefined && record.type === "prompt" ? { text: params.text } : {}) },
    ...outcome,
  };
}
