// @ts-check
// tool.session_start / tool.session_stop: open and close a session's Agent Window; with kind
// "panel", bind a side-panel conversation's session to the person's tab instead (no window).
import { sessionIdOf, requireTabId } from "../../link/params.js";

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStart(params, { sessions, signal }) {
  if (params.kind === "panel") return sessions.startPanel(sessionIdOf(params), requireTabId(params));
  return sessions.start(sessionIdOf(params), { signal });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStop(params, { sessions }) {
  await sessions.stop(sessionIdOf(params));
  return { closed: true };
}
