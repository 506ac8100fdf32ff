// @ts-check
// tool.tab_borrow / tool.tab_return: use one of the person's tabs with their consent, and give it back.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, requireTabId, timeoutOf } from "../../link/params.js";
import { DEFAULT_CONSENT_MS } from "../../person/borrowing.js";

const MAX_REASON = 300;

/** @type {import("../../link/dispatcher.js").Handler} */
export async function tabBorrow(params, { borrowing, signal }) {
  const reason = params.reason ?? undefined;
  if (reason !== undefined && (typeof reason !== "string" || reason.length > MAX_REASON)) {
    throw new RpcError("invalid_params", `reason must be a text of at most ${MAX_REASON} characters`);
  }
  return borrowing.borrow(sessionIdOf(params), requireTabId(params), {
    reason: reason?.trim() || undefined,
    timeoutMs: timeoutOf(params, DEFAULT_CONSENT_MS),
    signal,
  });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function tabReturn(params, { borrowing }) {
  return borrowing.giveBack(sessionIdOf(params), requireTabId(params));
}
