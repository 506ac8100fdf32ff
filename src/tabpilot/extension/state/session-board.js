// @ts-check
// The live sessions as the popup shows them (each with its Agent Window, the tab it is on, whether the
// person stopped it, how many tabs it borrowed) and what the person can do there: Stop, Resume, show
// the Agent Window, Stop all.

/**
 * @typedef {{sessionId: string, windowId: number, tab: {id: number, title: string, url: string} | null, paused: boolean, borrowed: number}} SessionView
 * @typedef {{addListener(fn: (...args: any[]) => void): void, removeListener(fn: (...args: any[]) => void): void}} ChromeEvent
 */

/** How long a burst of tab changes is gathered into one push. */
const COALESCE_MS = 100;

/**
 * @param {{
 *   sessions: {list(): {sessionId: string, windowId: number}[], onChange(fn: () => void): () => void},
 *   tabs: {query(q: object): Promise<{id?: number, title?: string, url?: string, pendingUrl?: string}[]>, onActivated: ChromeEvent, onUpdated: ChromeEvent},
 *   windows: {update(windowId: number, props: object): Promise<unknown>},
 *   overlay: {stop(sessionId: string): void, resume(sessionId: string): void, isPaused(sessionId: string): boolean,
 *             onStop(fn: () => void): void, onResume(fn: () => void): void},
 *   borrowing: {borrowedBy(sessionId: string): number[]},
 * }} deps
 */
export function createSessionBoard({ sessions, tabs, windows, overlay, borrowing }) {
  /** @type {Set<() => void>} */
  const watchers = new Set();
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let pending;
  const changed = () => {
    clearTimeout(pending);
    pending = setTimeout(() => watchers.forEach((fn) => fn()), COALESCE_MS);
  };
  overlay.onStop(changed);
  overlay.onResume(changed);

  /** @param {string} sessionId */
  const live = (sessionId) => sessions.list().find((s) => s.sessionId === sessionId);

  return {
    /** @returns {Promise<SessionView[]>} */
    async describe() {
      return Promise.all(
        sessions.list().map(async ({ sessionId, windowId }) => {
          const [tab] = await tabs.query({ windowId, active: true }).catch(() => []);
          return {
            sessionId,
            windowId,
            tab: tab?.id === undefined ? null : { id: tab.id, title: tab.title ?? "", url: tab.url || tab.pendingUrl || "" },
            paused: overlay.isPaused(sessionId),
            borrowed: borrowing.borrowedBy(sessionId).length,
          };
        }),
      );
    },

    /**
     * Calls fn when what `describe` says may have changed, while subscribed. The tab events are
     * listened to only then: they are not worth waking the worker for.
     * @param {() => void} fn @returns {() => void} unsubscribe
     */
    onChange(fn) {
      if (watchers.size === 0) {
        tabs.onActivated.addListener(changed);
        tabs.onUpdated.addListener(changed);
      }
      watchers.add(fn);
      const off = sessions.onChange(changed);
      return () => {
        off();
        watchers.delete(fn);
        if (watchers.size > 0) return;
        tabs.onActivated.removeListener(changed);
        tabs.onUpdated.removeListener(changed);
      };
    },

    /**
     * Apply the person's choice; anything naming no live session is ignored.
     * @param {"stop" | "resume" | "show" | "stop_all"} action @param {unknown} [sessionId]
     */
    async act(action, sessionId) {
      if (action === "stop_all") {
        for (const s of sessions.list()) if (!overlay.isPaused(s.sessionId)) overlay.stop(s.sessionId);
        return;
      }
      const session = typeof sessionId === "string" ? live(sessionId) : undefined;
      if (!session) return;
      if (action === "stop") overlay.stop(session.sessionId);
      else if (action === "resume") overlay.resume(session.sessionId);
      else if (action === "show") await windows.update(session.windowId, { focused: true });
    },
  };
}
