// @ts-check
// tool.session_start / tool.session_stop: open and close a session's Agent Window, or bind a side-panel
// conversation's session to the person's tab (kind "panel").
import { sessionIdOf } from "../../link/params.js";
import { RpcError } from "../../link/protocol.js";

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStart(params, { sessions, signal }) {
  if (params.kind === "panel") {
    if (!Number.isInteger(params.tab_id)) throw new RpcError("invalid_params", "a panel session needs the tab_id it acts on");
    return sessions.startPanel(sessionIdOf(params), /** @type {number} */ (params.tab_id));
  }
  return sessions.start(sessionIdOf(params), { signal });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStop(params, { sessions }) {
  await sessions.stop(sessionIdOf(params));
  return { closed: true };
}
