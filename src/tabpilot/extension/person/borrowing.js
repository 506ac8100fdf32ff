// @ts-check
// Borrowing: a session may use one of the person's own tabs only after the person said yes, and gives it
// back where it was. The person is asked in the page itself (person/overlay.js) and with a system
// notification (person/notify.js) at once; the first answer counts, and no answer is a no.
//
// A borrowed tab moves into the session's Agent Window (so it is the session's like any other of its
// tabs) and is remembered with where it came from: its window, index and whether it was the active tab.
// It goes back there when the agent returns it, when the session stops, or when the person closes the
// Agent Window: Chrome then closes the tabs in it, and the borrowed ones are reopened from the browser's
// recently closed list (chrome.sessions keeps their history, scroll position and form state, which
// opening the address again would lose) and put back in place. A tab the person drags out of the Agent
// Window, or closes, is theirs again at once.
import { RpcError } from "../link/protocol.js";
import { readSaved } from "../state/saved.js";
import { browserPage, isBrowserPage } from "../browser/urls.js";

export const STORAGE_KEY = "tp_borrowed";
export const DEFAULT_CONSENT_MS = 60_000;
/** How long a closed Agent Window's tabs get to show up in the recently closed list. */
const RECENTLY_CLOSED_WAIT_MS = 1000;
const RECENTLY_CLOSED_POLL_MS = 100;

/**
 * @typedef {{sessionId: string, agentWindowId: number, windowId: number, index: number, active: boolean, url: string, at: number}} Loan
 *   windowId, index, active: where the tab was in the person's window; url: its address now (to find it
 *   again among recently closed tabs); at: when it was borrowed
 * @typedef {{id?: number, windowId?: number, index?: number, active?: boolean, url?: string, pendingUrl?: string, title?: string}} Tab
 * @typedef {{addListener(fn: (...args: any[]) => void): void}} ChromeEvent
 * @typedef {{
 *   get(tabId: number): Promise<Tab>,
 *   query(q: object): Promise<Tab[]>,
 *   move(tabId: number, props: {windowId: number, index: number}): Promise<unknown>,
 *   update(tabId: number, props: object): Promise<unknown>,
 *   create(props: object): Promise<Tab>,
 *   onRemoved: ChromeEvent, onAttached: ChromeEvent,
 *   onUpdated: ChromeEvent & {removeListener(fn: (...args: any[]) => void): void},
 * }} TabsApi
 * @typedef {{
 *   get(windowId: number): Promise<{id?: number, type?: string}>,
 *   getLastFocused(q: object): Promise<{id?: number}>,
 *   create(props: object): Promise<{id?: number}>,
 *   update(windowId: number, props: object): Promise<unknown>,
 *   onRemoved: ChromeEvent,
 * }} WindowsApi
 * @typedef {{
 *   getRecentlyClosed(filter?: {maxResults?: number}): Promise<any[]>,
 *   restore(sessionId: string): Promise<{tab?: Tab, window?: unknown}>,
 * }} RecentlyClosedApi
 * @typedef {"allow" | "deny" | "timeout"} Verdict
 */

/** @param {string} reason @param {string} message @param {number} tabId @param {string} hint @param {"permission_denied" | "invalid_params"} [code] */
function refused(reason, message, tabId, hint, code = "permission_denied") {
  return new RpcError(code, message, reason, { tab_id: tabId, hint });
}

/**
 * The first real answer among several ways of asking (null: that way got none); "timeout" if none.
 * @param {Promise<Verdict | null>[]} asks
 * @returns {Promise<Verdict>}
 */
export function firstAnswer(asks) {
  return new Promise((resolve) => {
    let left = asks.length;
    for (const ask of asks) {
      ask.then(
        (verdict) => (verdict !== null ? resolve(verdict) : --left === 0 && resolve("timeout")),
        () => --left === 0 && resolve("timeout"),
      );
    }
  });
}

/**
 * Register in the worker's first turn (it listens to tab and window events).
 * @param {{
 *   tabs: TabsApi,
 *   windows: WindowsApi,
 *   recentlyClosed: RecentlyClosedApi,
 *   storage: import("../link/config.js").StorageArea,
 *   sessions: {get(sessionId: string): Promise<{windowId: number}>, ownerOf(tab: Tab): Promise<string | null>, list(): {windowId: number}[]},
 *   cdp: {attach(tabId: number): Promise<void>, detach(tabId: number): Promise<void>},
 *   dialogs: {dismissAll(tabIds: Iterable<number>): Promise<void>},
 *   overlay: {
 *     askBorrow(tabId: number, request: {requestId: string, sessionId: string, reason?: string, timeoutMs: number, signal?: AbortSignal}): Promise<string>,
 *     activate(tabId: number, sessionId: string): Promise<void>,
 *     deactivate(tabId: number): Promise<void>,
 *   },
 *   notify: {ask(question: {id: string, title: string, message: string, buttons: string[], contextMessage?: string},
 *                options: {timeoutMs: number, signal?: AbortSignal, onClick?: () => void}): Promise<number | "timeout" | "closed">},
 *   sites: {isBlocked(url: string | undefined): Promise<boolean>},
 *   random?: () => string,
 *   log?: Pick<Console, "warn">,
 * }} deps
 */
export function createBorrowing({
  tabs,
  windows,
  recentlyClosed,
  storage,
  sessions,
  cdp,
  dialogs,
  overlay,
  notify,
  sites,
  random = () => Math.random().toString(36).slice(2, 8),
  log = console,
}) {
  /** @type {Map<number, Loan>} */
  const loans = new Map();
  /** Tabs a session is asking for right now. @type {Map<number, string>} */
  const asking = new Map();
  /** Loans of an Agent Window being closed, by its window id, until the window is gone. @type {Map<number, Loan[]>} */
  const closing = new Map();
  let writes = Promise.resolve();

  tabs.onRemoved.addListener((/** @type {number} */ tabId, /** @type {{windowId: number, isWindowClosing: boolean}} */ info) => void onTabRemoved(tabId, info));
  tabs.onAttached.addListener((/** @type {number} */ tabId, /** @type {{newWindowId: number}} */ info) => void onTabAttached(tabId, info));
  windows.onRemoved.addListener((/** @type {number} */ windowId) => void onWindowRemoved(windowId));

  /** Keeps each loan's address current. Listening only while there are loans: it is not worth waking the worker for. */
  const onUpdated = (/** @type {number} */ tabId, /** @type {{url?: string}} */ change) => {
    const loan = loans.get(tabId);
    if (!loan || !change.url) return;
    loan.url = change.url;
    void persist();
  };
  let watching = false;
  function watchAddresses() {
    if (watching === loans.size > 0) return;
    watching = loans.size > 0;
    if (watching) tabs.onUpdated.addListener(onUpdated);
    else tabs.onUpdated.removeListener(onUpdated);
  }

  const ready = restore();

  async function restore() {
    const stored = await readSaved(storage, STORAGE_KEY, "the borrowed tabs", log);
    for (const [key, loan] of Object.entries(stored)) {
      const tabId = Number(key);
      if (await tabs.get(tabId).then(() => true, () => false)) loans.set(tabId, /** @type {Loan} */ (loan));
    }
    await persist();
  }

  function persist() {
    watchAddresses();
    const table = Object.fromEntries(loans);
    writes = writes.then(() => storage.set({ [STORAGE_KEY]: table })).catch((err) => log.warn("tabpilot: cannot save the borrowed tabs", err));
    return writes;
  }

  /** @param {number} tabId @param {{windowId: number, isWindowClosing: boolean}} info */
  async function onTabRemoved(tabId, { windowId, isWindowClosing }) {
    await ready;
    const loan = loans.get(tabId);
    if (!loan) return;
    loans.delete(tabId);
    void persist();
    // Closed with the Agent Window: it goes back once the window is gone. Closed by itself: the person's doing.
    if (isWindowClosing && windowId === loan.agentWindowId) closing.set(windowId, [...(closing.get(windowId) ?? []), loan]);
  }

  /** @param {number} tabId @param {{newWindowId: number}} info */
  async function onTabAttached(tabId, { newWindowId }) {
    await ready;
    const loan = loans.get(tabId);
    if (!loan || newWindowId === loan.agentWindowId) return;
    // The person took it back (dragged it out of the Agent Window).
    loans.delete(tabId);
    void persist();
    await release(tabId);
  }

  /** @param {number} windowId */
  async function onWindowRemoved(windowId) {
    await ready;
    const gone = closing.get(windowId);
    if (!gone) return;
    closing.delete(windowId);
    // Last borrowed first, as giveBackAll does.
    gone.sort((a, b) => b.at - a.at);
    for (const loan of gone) await reopen(loan).catch((err) => log.warn("tabpilot: cannot give a borrowed tab back after its Agent Window closed", err));
  }

  /**
   * Reopen a borrowed tab that closed with its Agent Window, from the recently closed list when it is
   * there, else by its address; then put it back in place.
   * @param {Loan} loan
   */
  async function reopen(loan) {
    let entry = null;
    for (let waited = 0; !entry && waited <= RECENTLY_CLOSED_WAIT_MS; waited += RECENTLY_CLOSED_POLL_MS) {
      const closed = await recentlyClosed.getRecentlyClosed({ maxResults: 25 }).catch(() => []);
      entry = closed.flatMap((c) => c.window?.tabs ?? []).find((t) => t.url === loan.url && typeof t.sessionId === "string") ?? null;
      if (!entry) await new Promise((r) => setTimeout(r, RECENTLY_CLOSED_POLL_MS));
    }
    const restored = entry ? (await recentlyClosed.restore(entry.sessionId)).tab : await tabs.create({ url: loan.url, active: false });
    if (restored?.id !== undefined) await place(restored.id, loan);
  }

  /** A normal window of the person's to return a tab to when its own is gone, or null. */
  async function fallbackWindow() {
    const win = await windows.getLastFocused({ windowTypes: ["normal"] }).catch(() => null);
    const agentWindows = new Set(sessions.list().map((s) => s.windowId));
    return win?.id !== undefined && !agentWindows.has(win.id) ? win.id : null;
  }

  /**
   * Put a tab where the loan says it was: its window and index, active or not.
   * @param {number} tabId @param {Loan} loan
   */
  async function place(tabId, loan) {
    const alive = await windows.get(loan.windowId).then(() => true, () => false);
    const windowId = alive ? loan.windowId : await fallbackWindow();
    if (windowId === null) {
      const win = await windows.create({ tabId, focused: false });
      return { window_id: win.id ?? null, index: 0, fallback: true };
    }
    const there = await tabs.query({ windowId });
    const before = there.find((t) => t.active);
    // The person may have closed tabs meanwhile: past the end is the end.
    await tabs.move(tabId, { windowId, index: alive && loan.index <= there.length ? loan.index : -1 });
    const [after] = await tabs.query({ windowId, active: true });
    if (loan.active) await tabs.update(tabId, { active: true });
    // Moving a tab in may make it the active one; the tab the person was looking at stays in front.
    else if (after?.id === tabId && before?.id !== undefined) await tabs.update(before.id, { active: true });
    const moved = await tabs.get(tabId);
    return { window_id: windowId, index: moved.index ?? loan.index, fallback: !alive };
  }

  /** The tab is the person's again: no debugger, no badge, no dialog left waiting for the agent. @param {number} tabId */
  async function release(tabId) {
    await dialogs.dismissAll([tabId]).catch(() => {});
    await cdp.detach(tabId).catch(() => {});
    await overlay.deactivate(tabId).catch(() => {});
  }

  /**
   * Ask the person in the page and with a notification at once.
   * @param {Tab & {id: number}} tab @param {string} sessionId @param {string | undefined} reason @param {number} timeoutMs @param {AbortSignal} [signal]
   * @returns {Promise<Verdict>}
   */
  async function ask(tab, sessionId, reason, timeoutMs, signal) {
    const requestId = `borrow-${tab.id}-${Date.now().toString(36)}-${random()}`;
    const asked = new AbortController();
    const cancel = () => asked.abort();
    signal?.addEventListener("abort", cancel, { once: true });
    const title = tab.title || tab.url || `tab ${tab.id}`;
    try {
      const inPage = overlay
        .askBorrow(tab.id, { requestId, sessionId, reason, timeoutMs, signal: asked.signal })
        .then((a) => (a === "allow" || a === "deny" || a === "timeout" ? a : null));
      const byNotification = notify
        .ask(
          {
            id: `tabpilot-${requestId}`,
            title: "Let an agent use this tab?",
            message: `Session ${sessionId} asks to use “${title}”${reason ? `: ${reason}` : "."}`,
            contextMessage: "It moves to the agent's window until it is given back. No answer means no.",
            buttons: ["Allow", "Deny"],
          },
          {
            timeoutMs,
            signal: asked.signal,
            // Clicking the notification shows the tab, where the same question waits.
            onClick: () => void Promise.all([tabs.update(tab.id, { active: true }), windows.update(/** @type {number} */ (tab.windowId), { focused: true })]).catch(() => {}),
          },
        )
        .then((a) => (a === 0 ? "allow" : a === 1 || a === "closed" ? "deny" : "timeout"));
      return await firstAnswer([inPage, byNotification]);
    } finally {
      signal?.removeEventListener("abort", cancel);
      // Whoever answered, the other question goes away.
      asked.abort();
    }
  }

  /** @param {number} tabId @param {string} sessionId */
  async function checkBorrowable(tabId, sessionId) {
    const session = await sessions.get(sessionId);
    const tab = await tabs.get(tabId).catch(() => null);
    if (!tab || tab.id === undefined) {
      throw new RpcError("not_found", `there is no tab ${tabId}`, "unknown_tab", { tab_id: tabId, hint: "`tabpilot tab list --scope user` shows the person's tabs." });
    }
    const lender = loans.get(tabId)?.sessionId;
    if (lender === sessionId) throw refused("already_borrowed", `session ${sessionId} has already borrowed tab ${tabId}`, tabId, "Use it: it is one of your tabs.", "invalid_params");
    if (lender) throw refused("borrow_conflict", `tab ${tabId} is borrowed by another session`, tabId, "Wait until it is given back, or ask the person.");
    const owner = await sessions.ownerOf(tab);
    if (owner === sessionId) throw refused("already_borrowed", `tab ${tabId} is already in session ${sessionId}'s Agent Window`, tabId, "Use it: it is one of your tabs.", "invalid_params");
    if (owner) throw new RpcError("not_found", `tab ${tabId} is not one of the person's tabs`, "unknown_tab", { tab_id: tabId, hint: "`tabpilot tab list --scope user` shows the person's tabs." });
    for (const url of [tab.url, tab.pendingUrl]) {
      if (isBrowserPage(url)) throw browserPage(/** @type {string} */ (url), { tab_id: tabId });
    }
    if ((await sites.isBlocked(tab.url)) || (await sites.isBlocked(tab.pendingUrl))) {
      throw new RpcError("blocked_site", `tab ${tabId} is on a site the person blocked`, "site_blocked", {
        tab_id: tabId,
        hint: "The person blocked this site for agents: do not try another way in; tell them the task needs it.",
      });
    }
    const win = await windows.get(/** @type {number} */ (tab.windowId)).catch(() => null);
    if (win?.type !== "normal") {
      throw new RpcError("invalid_params", `tab ${tabId} is in a ${win?.type ?? "closed"} window, whose tabs cannot move`, undefined, {
        tab_id: tabId,
        hint: "Ask the person to move it into a normal browser window first.",
      });
    }
    return { tab: /** @type {Tab & {id: number}} */ (tab), agentWindowId: session.windowId };
  }

  return {
    ready,

    /** The session that borrowed the tab, or null. @param {number} tabId */
    borrowerOf(tabId) {
      return loans.get(tabId)?.sessionId ?? null;
    },

    /** The tabs a session borrowed. @param {string} sessionId */
    borrowedBy(sessionId) {
      return [...loans].filter(([, loan]) => loan.sessionId === sessionId).map(([tabId]) => tabId);
    },

    /**
     * Ask the person for one of their tabs; on Allow it moves into the Agent Window as its current tab.
     * @param {string} sessionId @param {number} tabId
     * @param {{reason?: string, timeoutMs?: number, signal?: AbortSignal}} [options]
     */
    async borrow(sessionId, tabId, { reason, timeoutMs = DEFAULT_CONSENT_MS, signal } = {}) {
      await ready;
      const { tab } = await checkBorrowable(tabId, sessionId);
      // Checked and taken in one turn, so two sessions cannot ask for one tab at once.
      if (loans.has(tabId) || asking.has(tabId)) throw refused("borrow_conflict", `tab ${tabId} is borrowed by another session`, tabId, "Wait until it is given back, or ask the person.");
      asking.set(tabId, sessionId);
      try {
        const verdict = await ask(tab, sessionId, reason, timeoutMs, signal);
        if (signal?.aborted) throw signal.reason;
        if (verdict === "deny") throw refused("borrow_denied", `the person said no to lending tab ${tabId}`, tabId, "Do not ask again unless they tell you to; carry on without that tab.");
        if (verdict === "timeout") {
          throw refused("borrow_timeout", `nobody answered within ${Math.round(timeoutMs / 1000)} s, so tab ${tabId} stays the person's`, tabId, "Tell the person what you need the tab for; borrow it again only if they agree.");
        }
        // The person may have moved, navigated or closed it while deciding: look again.
        const { tab: now, agentWindowId } = await checkBorrowable(tabId, sessionId).catch((err) => {
          throw err.reason === "already_borrowed" ? refused("borrow_conflict", `tab ${tabId} moved while the person was asked`, tabId, "Ask again.") : err;
        });
        /** @type {Loan} */
        const loan = {
          sessionId,
          agentWindowId,
          windowId: /** @type {number} */ (now.windowId),
          index: now.index ?? 0,
          active: now.active === true,
          url: now.url || now.pendingUrl || "",
          at: Date.now(),
        };
        loans.set(tabId, loan);
        await persist();
        try {
          await tabs.move(tabId, { windowId: agentWindowId, index: -1 });
          await tabs.update(tabId, { active: true });
        } catch (err) {
          loans.delete(tabId);
          await persist();
          throw new RpcError("cdp_failed", `tab ${tabId} could not move into the Agent Window: ${err instanceof Error ? err.message : err}`, undefined, { tab_id: tabId });
        }
        // Attached at once: its dialogs follow the agent's rules and blocked sites are intercepted.
        await cdp.attach(tabId).catch((err) => log.warn(`tabpilot: borrowed tab ${tabId} could not be attached yet`, err));
        void overlay.activate(tabId, sessionId).catch(() => {});
        return {
          tab_id: tabId,
          url: now.url || now.pendingUrl || "",
          title: now.title ?? "",
          window_id: agentWindowId,
          original_window_id: loan.windowId,
          original_index: loan.index,
        };
      } finally {
        asking.delete(tabId);
      }
    },

    /**
     * Give a borrowed tab back where it was. `closing`: the Agent Window is about to close anyway.
     * @param {string} sessionId @param {number} tabId @param {{closing?: boolean}} [options]
     */
    async giveBack(sessionId, tabId, { closing: windowClosing = false } = {}) {
      await ready;
      const loan = loans.get(tabId);
      if (!loan || loan.sessionId !== sessionId) {
        throw refused("not_borrowed", `tab ${tabId} is not a tab session ${sessionId} borrowed`, tabId, "`tabpilot tab list` marks the tabs you borrowed.", "invalid_params");
      }
      loans.delete(tabId);
      await persist();
      await release(tabId);
      if (!windowClosing) {
        // The Agent Window must not close with its last tab gone.
        const left = await tabs.query({ windowId: loan.agentWindowId });
        if (left.every((t) => t.id === tabId)) await tabs.create({ windowId: loan.agentWindowId, url: "about:blank", active: true });
      }
      try {
        const placed = await place(tabId, loan);
        return { tab_id: tabId, returned: true, ...placed, active: loan.active };
      } catch (err) {
        // Still in the Agent Window: lent again, so closing that window reopens it in the person's.
        if (await tabs.get(tabId).then((t) => t.windowId === loan.agentWindowId, () => false)) {
          loans.set(tabId, loan);
          await persist();
        }
        throw new RpcError("cdp_failed", `tab ${tabId} could not go back: ${err instanceof Error ? err.message : err}`, undefined, { tab_id: tabId });
      }
    },

    /** Give back every tab the session borrowed (it is stopping). @param {string} sessionId */
    async giveBackAll(sessionId) {
      await ready;
      // Last borrowed first: each index was taken with the ones borrowed before it already gone.
      for (const tabId of this.borrowedBy(sessionId).reverse()) {
        await this.giveBack(sessionId, tabId, { closing: true }).catch((err) => log.warn(`tabpilot: cannot give tab ${tabId} back`, err));
      }
    },
  };
}
