// @ts-check
// The toolbar icon says whether an agent works in this browser: the number of working sessions on an
// orange badge, ❚❚ on a grey one when the person stopped them all, nothing when there is no session.
// A page cannot draw over or hide the browser's toolbar, and the popup behind the icon has Stop.

export const WORKING = "#ea580c";
export const STOPPED = "#6b7280";

/**
 * What the badge shows for these sessions.
 * @param {{paused: boolean}[]} sessions
 * @returns {{text: string, color: string}}
 */
export function badgeOf(sessions) {
  const working = sessions.filter((s) => !s.paused).length;
  if (sessions.length === 0) return { text: "", color: WORKING };
  return working > 0 ? { text: String(working), color: WORKING } : { text: "❚❚", color: STOPPED };
}

/**
 * Register in the worker's first turn.
 * @param {{
 *   action: {setBadgeText(d: {text: string}): Promise<void>, setBadgeBackgroundColor(d: {color: string}): Promise<void>, setTitle(d: {title: string}): Promise<void>},
 *   sessions: {list(): {sessionId: string}[], onChange(fn: () => void): () => void, ready: Promise<unknown>},
 *   overlay: {isPaused(sessionId: string): boolean, onPauseChange(fn: () => void): void},
 *   log?: Pick<Console, "warn">,
 * }} deps
 */
export function wireToolbar({ action, sessions, overlay, log = console }) {
  let shown = "";
  let writes = Promise.resolve();
  const update = () => {
    const list = sessions.list().map((s) => ({ paused: overlay.isPaused(s.sessionId) }));
    const { text, color } = badgeOf(list);
    if (`${text}|${color}` === shown) return;
    shown = `${text}|${color}`;
    const title = text === "" ? "tabpilot" : text === "❚❚" ? "tabpilot: stopped — open to resume or stop" : `tabpilot: an agent is working (${text}) — open to stop it`;
    writes = writes
      .then(() => Promise.all([action.setBadgeBackgroundColor({ color }), action.setBadgeText({ text }), action.setTitle({ title })]))
      .then(() => {}, (err) => log.warn("tabpilot: cannot update the toolbar badge", err));
  };
  sessions.onChange(update);
  overlay.onPauseChange(update);
  void sessions.ready.then(update);
  return { update };
}
