// @ts-check
// Sessions and their Agent Windows. One window per session; a tab belongs to a session when it is
// in that window (or in its set of extra tabs, e.g. a popup that could not be moved in).
// A panel session (a side-panel conversation) has no window of its own: it acts on the person's
// tab in place (its anchor) and on the tabs it opens from there; consent is the person typing in
// the panel on that tab. The daemon serves it only while the conversation's turn runs.
// The table lives in chrome.storage.session so a restarted service worker re-adopts its windows.
import { RpcError } from "../link/protocol.js";
import { readSaved } from "./saved.js";
import { createTabCache } from "./tab-cache.js";

export const STORAGE_KEY = "tp_sessions";
export const AGENT_WINDOW = Object.freeze({ url: "about:blank", focused: false, type: "normal", width: 1280, height: 800 });

/**
 * @typedef {{windowId: number, createdAt: number, extraTabs: Set<number>, panel?: {anchorTabId: number, currentTabId: number}}} Session
 *   panel: set for a panel session; windowId is then the anchor tab's window (the person's)
 * @typedef {{id?: number, windowId?: number, active?: boolean, url?: string, pendingUrl?: string, title?: string, status?: string, openerTabId?: number}} Tab
 * @typedef {{addListener(fn: (...args: any[]) => void): void}} ChromeEvent
 * @typedef {{
 *   create(data: object): Promise<{id?: number, tabs?: Tab[]}>,
 *   get(windowId: number): Promise<object>,
 *   remove(windowId: number): Promise<void>,
 *   onRemoved: ChromeEvent,
 * }} WindowsApi
 * @typedef {{
 *   get(tabId: number): Promise<Tab>,
 *   query(q: object): Promise<Tab[]>,
 *   move(tabId: number, props: object): Promise<unknown>,
 *   onCreated: ChromeEvent,
 *   onRemoved: ChromeEvent,
 * }} TabsApi
 */

/** @param {string} sessionId */
function unknownSession(sessionId) {
  return new RpcError("not_found", `session ${sessionId} is not open in this browser`, "unknown_session", {
    hint: "Start it again (tabpilot session start); its Agent Window may have been closed.",
  });
}

/** @param {number} tabId @param {string} sessionId */
function unknownTab(tabId, sessionId) {
  return new RpcError("not_found", `tab ${tabId} is not one of session ${sessionId}'s tabs`, "unknown_tab", {
    tab_id: tabId,
    hint: "List the session's tabs with `tabpilot tab list`.",
  });
}

/** A tab of the person's, outside every Agent Window. @param {number} tabId @param {string} sessionId */
function outOfScope(tabId, sessionId) {
  return new RpcError("permission_denied", `tab ${tabId} is one of the person's tabs, outside session ${sessionId}'s Agent Window`, "agent_window_scope", {
    tab_id: tabId,
    hint: `Ask the person for it first: tabpilot tab borrow ${tabId} --reason "what you need it for".`,
  });
}

/**
 * @param {{
 *   windows: WindowsApi,
 *   tabs: TabsApi,
 *   storage: import("../link/config.js").StorageArea,
 *   cdp: {detachSession(tabIds: Iterable<number>): Promise<void>} & Record<string, any>,
 *   emit: (event: string, payload: Record<string, unknown>) => void,
 *   guard?: (tabId: number) => void,
 *   admit?: (tab: Tab & {id: number}, options: {frames: boolean}) => Promise<void>,
 *   beforeStop?: (tabIds: number[], sessionId: string) => Promise<void>,
 *   now?: () => number,
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   guard: throws when a tab cannot take page commands now (a JavaScript dialog is open on it)
 *   admit: throws when the agent may not use the tab at all (a blocked site); `frames`: check every
 *   frame in it too (which attaches to it)
 *   beforeStop: runs on the session's tabs before the debugger lets go of them (dismiss open dialogs,
 *   give borrowed tabs back)
 *   cdp: its events and attachments also tell the tab cache (tab-cache.js) when to forget
 */
export function createSessionManager({
  windows,
  tabs,
  storage,
  cdp,
  emit,
  guard = () => {},
  admit = async () => {},
  beforeStop = async () => {},
  now = Date.now,
  log = console,
}) {
  /** @type {Map<string, Session>} */
  const sessions = new Map();
  /** Ids whose window is being opened, so two concurrent starts cannot both succeed. */
  const starting = new Set();
  /** @type {Set<() => void>} */
  const changeListeners = new Set();
  let writes = Promise.resolve();
  /** The tab a command acts on, without asking the browser while nothing changed (see tab-cache.js). */
  const known = createTabCache({ tabs, windows, cdp });

  // Registered before the first await: MV3 only delivers events to listeners added in the first turn.
  windows.onRemoved.addListener((/** @type {number} */ windowId) => void onWindowRemoved(windowId));
  tabs.onCreated.addListener((/** @type {Tab} */ tab) => void onTabCreated(tab));
  tabs.onRemoved.addListener((/** @type {number} */ tabId) => void onTabRemoved(tabId));

  const ready = restore();

  async function restore() {
    const stored = await readSaved(storage, STORAGE_KEY, "the session table", log);
    for (const [id, entry] of Object.entries(stored)) {
      const windowId = entry?.windowId;
      if (!Number.isInteger(windowId)) continue;
      const anchor = entry.panel?.anchorTabId;
      const alive = Number.isInteger(anchor)
        ? await tabs.get(anchor).then(() => true, () => false)
        : await windows.get(windowId).then(() => true, () => false);
      if (!alive) continue;
      const extraTabs = new Set(Array.isArray(entry.extraTabIds) ? entry.extraTabIds.filter(Number.isInteger) : []);
      /** @type {Session} */
      const session = { windowId, createdAt: Number(entry.createdAt) || now(), extraTabs };
      if (Number.isInteger(anchor)) {
        const current = entry.panel.currentTabId;
        session.panel = { anchorTabId: anchor, currentTabId: Number.isInteger(current) ? current : anchor };
      }
      sessions.set(id, session);
    }
    await persist();
    changed();
  }

  function persist() {
    known.forget();
    /** @type {Record<string, {windowId: number, createdAt: number, extraTabIds: number[], panel?: object}>} */
    const table = {};
    for (const [id, s] of sessions) {
      table[id] = { windowId: s.windowId, createdAt: s.createdAt, extraTabIds: [...s.extraTabs] };
      if (s.panel) table[id].panel = { ...s.panel };
    }
    // Chained so an older snapshot can never land after a newer one.
    writes = writes
      .then(() => storage.set({ [STORAGE_KEY]: table }))
      .catch((err) => log.warn("tabpilot: cannot save the session table", err));
    return writes;
  }

  function changed() {
    for (const fn of [...changeListeners]) fn();
  }

  /** @param {number} windowId */
  function sessionOfWindow(windowId) {
    for (const [id, s] of sessions) if (!s.panel && s.windowId === windowId) return /** @type {const} */ ([id, s]);
    return null;
  }

  /** @param {Session} s @param {Tab} tab */
  function holds(s, tab) {
    if (tab.id !== undefined && (s.extraTabs.has(tab.id) || s.panel?.anchorTabId === tab.id)) return true;
    return !s.panel && s.windowId === tab.windowId;
  }

  /** @param {Tab} tab */
  function sessionOfTab(tab) {
    for (const [id, s] of sessions) if (holds(s, tab)) return /** @type {const} */ ([id, s]);
    return null;
  }

  /** @param {number} windowId */
  async function onWindowRemoved(windowId) {
    await ready;
    const found = sessionOfWindow(windowId);
    if (!found) return;
    const [id, session] = found;
    sessions.delete(id);
    await cdp.detachSession(session.extraTabs).catch(() => {});
    await persist();
    changed();
    emit("session.window_closed", { session_id: id, reason: "user_closed_window" });
  }

  // A link with target=_blank or window.open() in an agent tab must stay in the session.
  /** @param {Tab} tab */
  async function onTabCreated(tab) {
    if (tab.openerTabId === undefined || tab.id === undefined) return;
    await ready;
    if (sessions.size === 0) return;
    const opener = await tabs.get(tab.openerTabId).catch(() => null);
    const found = opener && sessionOfTab(opener);
    if (!found) return;
    if (found[1].panel) {
      // Adopted where it opened, in the person's window: the panel's conversation follows it.
      adoptInPlace(found[1], tab.id, tab.active === true);
      await persist();
      return;
    }
    if (tab.windowId === found[1].windowId) return;
    try {
      await tabs.move(tab.id, { windowId: found[1].windowId, index: -1 });
    } catch {
      // Popup windows cannot give up their tab; keep it in the session where it is.
      found[1].extraTabs.add(tab.id);
      await persist();
    }
  }

  /** @param {Session} session @param {number} tabId @param {boolean} current */
  function adoptInPlace(session, tabId, current) {
    session.extraTabs.add(tabId);
    if (current && session.panel) session.panel.currentTabId = tabId;
  }

  /** @param {number} tabId */
  async function onTabRemoved(tabId) {
    await ready;
    let dirty = false;
    for (const [id, s] of [...sessions]) {
      if (s.panel?.anchorTabId === tabId) {
        // Closing the tab ends its conversation's session: the daemon stops the turn.
        sessions.delete(id);
        dirty = true;
        await cdp.detachSession(s.extraTabs).catch(() => {});
        changed();
        emit("chat.tab_closed", { session_id: id, tab_id: tabId });
        continue;
      }
      dirty = s.extraTabs.delete(tabId) || dirty;
      if (s.panel?.currentTabId === tabId) s.panel.currentTabId = s.panel.anchorTabId;
    }
    if (dirty) await persist();
  }

  /** @param {string} sessionId */
  async function get(sessionId) {
    await ready;
    const session = sessions.get(sessionId);
    if (!session) throw unknownSession(sessionId);
    return session;
  }

  /** @param {string} sessionId @returns {Promise<(Tab & {id: number})[]>} */
  async function sessionTabs(sessionId) {
    const session = await get(sessionId);
    const inWindow = session.panel
      ? [await tabs.get(session.panel.anchorTabId).catch(() => null)]
      : await tabs.query({ windowId: session.windowId });
    const extra = await Promise.all([...session.extraTabs].map((id) => tabs.get(id).catch(() => null)));
    return /** @type {(Tab & {id: number})[]} */ ([...inWindow, ...extra].filter((t) => t && t.id !== undefined));
  }

  return {
    ready,

    async listSessionIds() {
      await ready;
      return [...sessions.keys()];
    },

    /** For the popup: the Agent Windows open right now (panel sessions have none). */
    list() {
      return [...sessions]
        .filter(([, s]) => !s.panel)
        .map(([sessionId, s]) => ({ sessionId, windowId: s.windowId, createdAt: s.createdAt }));
    },

    /** @param {string} sessionId */
    async isPanel(sessionId) {
      return Boolean((await get(sessionId)).panel);
    },

    /**
     * A tab the session opened joins it where it is (panel sessions: nothing moves), and with
     * `current` becomes the tab its tools act on.
     * @param {string} sessionId @param {number} tabId @param {{current?: boolean}} [options]
     */
    async adopt(sessionId, tabId, { current = false } = {}) {
      const session = await get(sessionId);
      if (!session.panel) return;
      adoptInPlace(session, tabId, current);
      await persist();
    },

    /** Make one of a panel session's tabs the one its tools act on. @param {string} sessionId @param {number} tabId */
    async select(sessionId, tabId) {
      const session = await get(sessionId);
      if (session.panel) {
        session.panel.currentTabId = tabId;
        await persist();
      }
    },

    /**
     * Bind a panel session to the person's tab (again: the daemon calls this at every turn). The
     * tab must exist and be on a site the agent may use.
     * @param {string} sessionId @param {number} tabId
     */
    async startPanel(sessionId, tabId) {
      await ready;
      const existing = sessions.get(sessionId);
      if (existing && !existing.panel) {
        throw new RpcError("invalid_params", `session ${sessionId} is already open`, "session_exists");
      }
      const tab = await tabs.get(tabId).catch(() => null);
      if (!tab || tab.id === undefined) {
        throw new RpcError("not_found", `there is no tab ${tabId}`, "tab_closed", { tab_id: tabId });
      }
      await admit(/** @type {Tab & {id: number}} */ (tab), { frames: false });
      const owner = sessionOfTab(tab);
      if (owner && owner[0] !== sessionId) {
        throw new RpcError("permission_denied", `tab ${tabId} belongs to session ${owner[0]}`, "borrow_conflict", { tab_id: tabId });
      }
      if (existing?.panel) {
        existing.panel.anchorTabId = tabId;
        if (!existing.extraTabs.has(existing.panel.currentTabId)) existing.panel.currentTabId = tabId;
        existing.windowId = /** @type {number} */ (tab.windowId);
      } else {
        sessions.set(sessionId, {
          windowId: /** @type {number} */ (tab.windowId),
          createdAt: now(),
          extraTabs: new Set(),
          panel: { anchorTabId: tabId, currentTabId: tabId },
        });
      }
      await persist();
      changed();
      return { window_id: tab.windowId ?? null, tab_id: tabId, kind: "panel" };
    },

    /** @param {() => void} fn @returns {() => void} */
    onChange(fn) {
      changeListeners.add(fn);
      return () => changeListeners.delete(fn);
    },

    get,
    tabs: sessionTabs,

    /** A tab as the browser last described it (see tab-cache.js); null when there is none. @param {number} tabId */
    tab: (tabId) => known.get(tabId),

    /** The session a tab belongs to (it is in its Agent Window, or one of its extra tabs), or null. @param {Tab} tab */
    async ownerOf(tab) {
      await ready;
      return sessionOfTab(tab)?.[0] ?? null;
    },

    /**
     * Open the session's Agent Window without taking focus from the person.
     * @param {string} sessionId
     * @param {{signal?: AbortSignal}} [options]
     */
    async start(sessionId, { signal } = {}) {
      await ready;
      if (sessions.has(sessionId) || starting.has(sessionId)) {
        throw new RpcError("invalid_params", `session ${sessionId} is already open`, "session_exists");
      }
      starting.add(sessionId);
      try {
        let win;
        try {
          win = await windows.create({ ...AGENT_WINDOW });
        } catch (err) {
          throw new RpcError("cdp_failed", `cannot open the Agent Window: ${err instanceof Error ? err.message : err}`);
        }
        const windowId = /** @type {number} */ (win.id);
        if (signal?.aborted) {
          await windows.remove(windowId).catch(() => {});
          throw signal.reason;
        }
        const tab = win.tabs?.find((t) => t.active) ?? win.tabs?.[0] ?? (await tabs.query({ windowId, active: true }))[0];
        sessions.set(sessionId, { windowId, createdAt: now(), extraTabs: new Set() });
        await persist();
        changed();
        return { window_id: windowId, tab_id: tab?.id ?? null };
      } finally {
        starting.delete(sessionId);
      }
    },

    /** Detach the debugger from the session's tabs and close its window (a panel session's tabs
     * are the person's: they stay open). @param {string} sessionId */
    async stop(sessionId) {
      const session = await get(sessionId);
      const tabIds = (await sessionTabs(sessionId)).map((t) => t.id);
      // Forget it before closing, so the window's onRemoved is not reported as the person's doing.
      sessions.delete(sessionId);
      await persist();
      changed();
      await beforeStop(tabIds, sessionId).catch((err) => log.warn(`tabpilot: cleaning up session ${sessionId} failed`, err));
      await cdp.detachSession(tabIds);
      if (!session.panel) await windows.remove(session.windowId).catch(() => {});
    },

    /**
     * The tab a page tool acts on: the given one if it is the session's, else the Agent Window's
     * active tab. A tab of the person's is out of scope until borrowed; another session's tab is not
     * found. The tab must pass `admit` (by `sites`), and unless `anyState` take page commands (`guard`).
     * @param {string} sessionId
     * @param {number} [tabId]
     * @param {{anyState?: boolean, sites?: "page" | "address" | "none"}} [options]
     *   anyState: for tools that manage tabs or answer dialogs;
     *   sites: check the page and its frames (default), only its address (a tool that shows it without
     *   touching it), or nothing (closing it)
     * @returns {Promise<Tab & {id: number}>}
     */
    async resolveTab(sessionId, tabId, { anyState = false, sites = "page" } = {}) {
      const session = await get(sessionId);
      /** @type {Tab | null} */
      let tab;
      if (tabId === undefined && session.panel) {
        tab = await known.get(session.panel.currentTabId);
        if (tab?.id === undefined) throw new RpcError("not_found", `the tab of session ${sessionId} is closed`, "tab_closed");
      } else if (tabId === undefined) {
        tab = await known.active(session.windowId);
        if (tab?.id === undefined) {
          throw new RpcError("not_found", `the Agent Window of session ${sessionId} has no active tab`, "unknown_tab");
        }
      } else {
        tab = await known.get(tabId);
        if (!tab) throw unknownTab(tabId, sessionId);
        if (!holds(session, tab)) {
          throw sessionOfTab(tab) ? unknownTab(tabId, sessionId) : outOfScope(tabId, sessionId);
        }
      }
      const found = /** @type {Tab & {id: number}} */ (tab);
      if (sites !== "none") await admit(found, { frames: sites === "page" });
      if (!anyState) guard(found.id);
      return found;
    },
  };
}
