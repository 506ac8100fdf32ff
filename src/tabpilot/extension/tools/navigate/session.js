// @ts-check
// tool.session_start / tool.session_stop: open and close a session's Agent Window; with kind
// "panel", bind a side-panel conversation's session to the person's tab instead (no window).
import { sessionIdOf, requireTabId } from "../../link/params.js";

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStart(params, { sessions, overlay, signal }) {
  const sessionId = sessionIdOf(params);
  if (params.kind !== "panel") return sessions.start(sessionId, { signal });
  const started = await sessions.startPanel(sessionId, requireTabId(params));
  // The person's tab was open before the session: show its badge (with Stop) now.
  await overlay?.activate(started.tab_id, sessionId);
  return started;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function sessionStop(params, { sessions, overlay }) {
  const sessionId = sessionIdOf(params);
  // A panel session's tabs are the person's and stay open: take the badge off them.
  const left = (await sessions.isPanel(sessionId)) ? await sessions.tabs(sessionId) : [];
  await sessions.stop(sessionId);
  await Promise.all(left.map((t) => overlay?.deactivate(t.id)));
  return { closed: true };
}
