// @ts-check
// What the browser last said about the tabs the sessions act on, so a command on the same page as the
// one before costs no round trip to the browser to find its tab (about a millisecond, more on a busy
// machine). An answer is kept only while nothing can have changed it; what a change may touch is
// forgotten at its first sign (the tab, and everything known of its window):
// - a tab event (one became active, changed address, title or status, moved, closed, was replaced or
//   opened) and a window closing;
// - a navigation CDP reports in a tab we debug. These come first: the browser's own tab events tell of
//   a navigation only when it commits, CDP as soon as it starts (the tab's pendingUrl, which the
//   blocked-site checks read, is set by then);
// - the debugger letting go of a tab; any change to the session table forgets everything (`forget`).
// The blocked-site check after a command reads it too: an action's own navigation is reported by CDP
// before the action is over (browser/outcome.js waits for exactly that), so it finds the tab forgotten.
// Only tabs the debugger is attached to are kept (their navigations are heard), and the tab events are
// listened to only while something is kept: they are not worth waking the worker for otherwise.

/**
 * @typedef {{addListener(fn: (...args: any[]) => void): void, removeListener(fn: (...args: any[]) => void): void}} RemovableEvent
 * @typedef {import("./sessions.js").Tab} Tab
 */

/** The navigations that may change a tab's address (any frame of it: cheap to over-forget). */
const NAVIGATIONS = new Set([
  "Page.frameRequestedNavigation",
  "Page.frameScheduledNavigation",
  "Page.frameStartedNavigating",
  "Page.frameStartedLoading",
  "Page.frameNavigated",
  "Page.navigatedWithinDocument",
]);

/**
 * @param {{
 *   tabs: Record<string, any>,
 *   windows: Record<string, any>,
 *   cdp: Record<string, any>,
 * }} deps the browser's tabs and windows, and the CDP client (its events and attachments); without
 *   the events it needs (a stand-in of the browser), nothing is kept
 */
export function createTabCache({ tabs, windows, cdp }) {
  /** Each event, and what it may have changed. @type {[RemovableEvent, (...args: any[]) => void][]} */
  const events = [
    [tabs.onActivated, (info) => drop(info?.tabId, info?.windowId)],
    [tabs.onUpdated, (tabId, _change, tab) => drop(tabId, tab?.windowId)],
    [tabs.onRemoved, (tabId, info) => drop(tabId, info?.windowId)],
    [tabs.onCreated, (tab) => drop(tab?.id, tab?.windowId)],
    [tabs.onAttached, (tabId, info) => drop(tabId, info?.newWindowId)],
    [tabs.onDetached, (tabId, info) => drop(tabId, info?.oldWindowId)],
    [tabs.onReplaced, (added, removed) => (drop(added), drop(removed))],
    [windows.onRemoved, (windowId) => drop(undefined, windowId)],
  ];
  const usable =
    events.every(([e]) => typeof e?.addListener === "function" && typeof e.removeListener === "function") &&
    typeof cdp.onEvent === "function" &&
    typeof cdp.onDetach === "function" &&
    typeof cdp.isAttached === "function";
  /** By `w<windowId>` (the window's active tab) or `t<tabId>`. @type {Map<string, Tab & {id: number}>} */
  const kept = new Map();
  /** Counts the times anything was forgotten: an answer asked for before one of them is not kept. */
  let generation = 0;
  /** Answers being asked for: the events are listened to from before the question goes out. */
  let asking = 0;
  let listening = false;

  /** Listen to the tab events exactly while something is kept or being asked for. */
  function listen() {
    const wanted = kept.size > 0 || asking > 0;
    if (wanted === listening) return;
    listening = wanted;
    for (const [e, fn] of events) {
      if (wanted) e.addListener(fn);
      else e.removeListener(fn);
    }
  }

  /**
   * Forget what a change to a tab, or in a window, may have touched.
   * @param {number | undefined} tabId @param {number | undefined} [windowId]
   */
  function drop(tabId, windowId) {
    generation++;
    for (const [key, tab] of [...kept]) {
      if ((tabId !== undefined && tab.id === tabId) || (windowId !== undefined && (tab.windowId === windowId || key === `w${windowId}`))) kept.delete(key);
    }
    listen();
  }

  function forget() {
    generation++;
    kept.clear();
    listen();
  }

  if (usable) {
    cdp.onEvent(null, (/** @type {string} */ method, /** @type {unknown} */ _params, /** @type {number} */ tabId) => {
      if (NAVIGATIONS.has(method)) drop(tabId);
    });
    cdp.onDetach((/** @type {number} */ tabId) => drop(tabId));
  }

  /**
   * The kept answer, or the browser's (kept when nothing changed while it was asked for).
   * @param {string} key @param {() => Promise<Tab | null | undefined>} ask
   * @returns {Promise<Tab | null | undefined>}
   */
  async function lookup(key, ask) {
    const known = kept.get(key);
    if (known || !usable) return known ?? ask();
    const asked = generation;
    asking++;
    listen();
    try {
      const tab = await ask();
      if (tab?.id !== undefined && asked === generation && cdp.isAttached(tab.id)) {
        // Known by its id too: the blocked-site check after the command asks for it that way.
        for (const k of new Set([key, `t${tab.id}`])) kept.set(k, /** @type {Tab & {id: number}} */ (tab));
      }
      return tab;
    } finally {
      asking--;
      listen();
    }
  }

  return {
    /** The active tab of a window. @param {number} windowId */
    active(windowId) {
      return lookup(`w${windowId}`, async () => (await tabs.query({ windowId, active: true }))[0]);
    },

    /** A tab by its id (null when there is none). @param {number} tabId */
    get(tabId) {
      return lookup(`t${tabId}`, () => tabs.get(tabId).catch(() => null));
    },

    forget,
  };
}
