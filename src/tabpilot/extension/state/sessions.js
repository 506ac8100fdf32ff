// @ts-check
// Sessions and their Agent Windows. One window per session; a tab belongs to a session when it is
// in that window (or in its set of extra tabs, e.g. a popup that could not be moved in).
// A panel session (a side-panel conversation's) has no window: it acts in place on the person's tab
// the conversation is bound to, and on the tabs the agent opened from it.
// The table lives in chrome.storage.session so a restarted service worker re-adopts its windows.
import { RpcError } from "../link/protocol.js";
import { readSaved } from "./saved.js";

export const STORAGE_KEY = "tp_sessions";
export const AGENT_WINDOW = Object.freeze({ url: "about:blank", focused: false, type: "normal", width: 1280, height: 800 });

/**
 * @typedef {{kind: "agent" | "panel", windowId: number, createdAt: number, extraTabs: Set<number>, tabId?: number}} Session
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
    hint: "List the session's tabs with tab_list.",
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
 *   cdp: {detachSession(tabIds: Iterable<number>): Promise<void>},
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
      const panel = entry.kind === "panel";
      if (panel && !Number.isInteger(entry.tabId)) continue;
      const alive = panel
        ? await tabs.get(entry.tabId).then(() => true, () => false)
        : await windows.get(windowId).then(() => true, () => false);
      if (!alive) continue;
      const extraTabs = new Set(Array.isArray(entry.extraTabIds) ? entry.extraTabIds.filter(Number.isInteger) : []);
      /** @type {Session} */
      const session = { kind: panel ? "panel" : "agent", windowId, createdAt: Number(entry.createdAt) || now(), extraTabs };
      if (panel) session.tabId = entry.tabId;
      sessions.set(id, session);
    }
    await persist();
    changed();
  }

  function persist() {
    /** @type {Record<string, {kind?: string, windowId: number, createdAt: number, extraTabIds: number[], tabId?: number}>} */
    const table = {};
    for (const [id, s] of sessions) {
      table[id] = { windowId: s.windowId, createdAt: s.createdAt, extraTabIds: [...s.extraTabs] };
      if (s.kind === "panel") Object.assign(table[id], { kind: "panel", tabId: s.tabId });
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
    for (const [id, s] of sessions) if (s.kind === "agent" && s.windowId === windowId) return /** @type {const} */ ([id, s]);
    return null;
  }

  /** @param {Tab} tab */
  function sessionOfTab(tab) {
    for (const [id, s] of sessions) {
      const inWindow = s.kind === "agent" ? s.windowId === tab.windowId : tab.id === s.tabId;
      if (inWindow || (tab.id !== undefined && s.extraTabs.has(tab.id))) return /** @type {const} */ ([id, s]);
    }
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
    if (found[1].kind === "panel") {
      // The person's own browsing: the tab stays where Chrome put it, and joins the conversation.
      found[1].extraTabs.add(tab.id);
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

  /** @param {number} tabId */
  async function onTabRemoved(tabId) {
    await ready;
    let dirty = false;
    for (const [id, s] of sessions) {
      dirty = s.extraTabs.delete(tabId) || dirty;
      // A panel session ends with its tab (the side panel tells the daemon, which stops the run).
      if (s.kind === "panel" && s.tabId === tabId) {
        sessions.delete(id);
        await cdp.detachSession(s.extraTabs).catch(() => {});
        dirty = true;
      }
    }
    if (dirty) {
      await persist();
      changed();
    }
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
    const inWindow = session.kind === "panel" ? [await tabs.get(/** @type {number} */ (session.tabId)).catch(() => null)] : await tabs.query({ windowId: session.windowId });
    const extra = await Promise.all([...session.extraTabs].map((id) => tabs.get(id).catch(() => null)));
    return /** @type {(Tab & {id: number})[]} */ ([...inWindow, ...extra].filter((t) => t && t.id !== undefined));
  }

  return {
    ready,

    async listSessionIds() {
      await ready;
      return [...sessions.keys()];
    },

    /** For the popup: what is open right now. */
    list() {
      return [...sessions].map(([sessionId, s]) => ({ sessionId, kind: s.kind, windowId: s.windowId, tabId: s.tabId ?? null, createdAt: s.createdAt }));
    },

    /** @param {() => void} fn @returns {() => void} */
    onChange(fn) {
      changeListeners.add(fn);
      return () => changeListeners.delete(fn);
    },

    get,
    tabs: sessionTabs,

    /** The session a tab belongs to (it is in its Agent Window, or one of its extra tabs), or null. @param {Tab} tab */
    async ownerOf(tab) {
      await ready;
      return sessionOfTab(tab)?.[0] ?? null;
    },

    /**
     * Bind a side-panel conversation's session to the person's tab, in place. Called before every turn,
     * so it also rebinds (a conversation reopened from History on another tab); the tabs the agent
     * opened stay with it while their opener is the same.
     * @param {string} sessionId @param {number} tabId
     */
    async startPanel(sessionId, tabId) {
      await ready;
      const tab = await tabs.get(tabId).catch(() => null);
      if (!tab || tab.id === undefined || tab.windowId === undefined) {
        throw new RpcError("not_found", `tab ${tabId} of the side panel's conversation is closed`, "unknown_tab", { tab_id: tabId });
      }
      await admit(/** @type {Tab & {id: number}} */ (tab), { frames: false });
      const earlier = sessions.get(sessionId);
      if (earlier && earlier.kind !== "panel") throw new RpcError("invalid_params", `session ${sessionId} is already open`, "session_exists");
      const extraTabs = earlier?.tabId === tabId ? earlier.extraTabs : new Set();
      sessions.set(sessionId, { kind: "panel", windowId: tab.windowId, tabId, createdAt: earlier?.createdAt ?? now(), extraTabs });
      await persist();
      changed();
      return { window_id: tab.windowId, tab_id: tabId };
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
        sessions.set(sessionId, { kind: "agent", windowId, createdAt: now(), extraTabs: new Set() });
        await persist();
        changed();
        return { window_id: windowId, tab_id: tab?.id ?? null };
      } finally {
        starting.delete(sessionId);
      }
    },

    /** Detach the debugger from the session's tabs and close its window. @param {string} sessionId */
    async stop(sessionId) {
      const session = await get(sessionId);
      const tabIds = (await sessionTabs(sessionId)).map((t) => t.id);
      // Forget it before closing, so the window's onRemoved is not reported as the person's doing.
      sessions.delete(sessionId);
      await persist();
      changed();
      await beforeStop(tabIds, sessionId).catch((err) => log.warn(`tabpilot: cleaning up session ${sessionId} failed`, err));
      await cdp.detachSession(tabIds);
      // A panel session's tabs are the person's: they stay open.
      if (session.kind === "agent") await windows.remove(session.windowId).catch(() => {});
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
      if (session.kind === "panel") {
        const wanted = tabId ?? /** @type {number} */ (session.tabId);
        tab = await tabs.get(wanted).catch(() => null);
        if (!tab) throw unknownTab(wanted, sessionId);
        if (wanted !== session.tabId && !session.extraTabs.has(wanted)) throw unknownTab(wanted, sessionId);
      } else if (tabId === undefined) {
        [tab] = await tabs.query({ windowId: session.windowId, active: true });
        if (tab?.id === undefined) {
          throw new RpcError("not_found", `the Agent Window of session ${sessionId} has no active tab`, "unknown_tab");
        }
      } else {
        tab = await tabs.get(tabId).catch(() => null);
        if (!tab) throw unknownTab(tabId, sessionId);
        if (tab.windowId !== session.windowId && !session.extraTabs.has(tabId)) {
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
