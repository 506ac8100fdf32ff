// @ts-check
// tool.session_start / tool.session_stop: open and close a session's Agent Window.
import { sessionIdOf } from "../../link/params.js";

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStart(params, { sessions, signal }) {
  return sessions.start(sessionIdOf(params), { signal });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStop(params, { sessions }) {
  await sessions.stop(sessionIdOf(params));
  return { closed: true };
}
