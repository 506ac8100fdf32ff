// @ts-check
// The MV3 service worker. Everything is wired synchronously in the first turn, because Chrome
// only delivers an event that woke the worker to listeners registered by then.
import { createConfig, fetchManagedConfig } from "./link/config.js";
import { createTransport } from "./link/transport.js";
import { createConnection } from "./link/connection.js";
import { createDispatcher } from "./link/dispatcher.js";
import { METHODS } from "./tools/index.js";
import { cueOf } from "./tools/cues.js";
import { createCues } from "./page/cue.js";
import { createCdp } from "./browser/cdp.js";
import { createDialogs } from "./browser/dialogs.js";
import { createSessionManager } from "./state/sessions.js";
import { createFrameUrls } from "./browser/frame-urls.js";
import { createSiteGuard } from "./person/site-guard.js";
import { createBorrowing } from "./person/borrowing.js";
import { createFrames } from "./browser/frames.js";
import { createRefs } from "./page/refs.js";
import { createSnapshots } from "./page/snapshots.js";
import { createConsoleLog } from "./browser/console-log.js";
import { createDownloads } from "./browser/downloads.js";
import { createNetworkLog } from "./browser/network-log.js";
import { createNetworkRoutes } from "./browser/network-routes.js";
import { createGeolocationGrants } from "./tools/emulate/geolocation.js";
import { registerKeepalive } from "./link/keepalive.js";
import { registerPopupBridge } from "./person/popup-bridge.js";
import { createSessionBoard } from "./state/session-board.js";
import { browserInfo } from "./link/browser-info.js";
import { createOverlay } from "./person/overlay.js";
import { createNotify } from "./person/notify.js";
import { wireStop } from "./person/stop.js";
import { createPanelBridge } from "./panel/bridge.js";
import { createAttachments } from "./panel/attachments.js";
import { registerPanelOpeners } from "./panel/opener.js";
import { wireToolbar } from "./person/toolbar.js";
import { createRequestBlock } from "./person/request-block.js";
import { createPreloading } from "./person/preloading.js";
import { createGrants } from "./approval/grants.js";
import { createAsks } from "./approval/asks.js";
import { approve } from "./approval/gate.js";
import { createEffects } from "./approval/effects.js";
import { activityOf } from "./page/action.js";
import { optionalTabId } from "./link/params.js";

const config = createConfig({
  storage: chrome.storage.local,
  loadManaged: () => fetchManagedConfig(chrome.runtime, fetch),
});

const cdp = createCdp({
  debuggerApi: chrome.debugger,
  tabExists: (tabId) => chrome.tabs.get(tabId).then(() => true, () => false),
  tabUrl: (tabId) => chrome.tabs.get(tabId).then((t) => t.pendingUrl || t.url || null, () => null),
  setupTarget: async (send, tabId) => {
    // Before the agent's first command in the tab: nothing it loads may be speculated.
    await preloading.refresh();
    await sites.intercept(send, tabId);
    await networkLog.enable(send);
    await requests.debugged(tabId);
  },
});
const networkLog = createNetworkLog({ cdp, tabs: chrome.tabs });
/** @param {number} tabId */
const ownerOfTab = (tabId) => chrome.tabs.get(tabId).then((tab) => sessions.ownerOf(tab), () => null);
const networkRoutes = createNetworkRoutes({ ownerOfTab, onChange: () => sites.reapply() });
const geolocationGrants = createGeolocationGrants({ location: chrome.contentSettings.location });
const dialogs = createDialogs({ cdp });
const frames = createFrames({ cdp });
const frameUrls = createFrameUrls({ cdp, frames });
const sites = createSiteGuard({
  storage: chrome.storage.local,
  onChanged: chrome.storage.onChanged,
  cdp,
  // Where a tab is after a command: known without asking the browser while nothing changed it.
  tabs: { get: (tabId) => sessions.tab(tabId), remove: (tabId) => chrome.tabs.remove(tabId) },
  frameUrls,
  mainFrameId: (tabId) => frames.main(tabId).then((f) => f.frameId),
  routes: networkRoutes,
  // Created below, with the approvals it asks through.
  effects: { patterns: (tabId) => effects.patterns(tabId), answer: (tabId, paused, main, session) => effects.answer(tabId, paused, { main, session }) },
});
const refs = createRefs({ storage: chrome.storage.session, tabs: chrome.tabs });
const snapshots = createSnapshots({ frames, refs, tabs: chrome.tabs });
const consoleLog = createConsoleLog({
  cdp,
  storage: chrome.storage.session,
  tabs: chrome.tabs,
  frameUrl: (tabId, sessionId) => cdp.childSessions(tabId).find((c) => c.sessionId === sessionId)?.url,
});

/** A managed browser (started by `tabpilot browser launch`), not the person's own profile. */
const isManaged = () => config.load().then((settings) => settings.managed);
const downloads = createDownloads({
  downloadsApi: chrome.downloads,
  cdp,
  ownerOfTab,
  tabsShowing: (url) => chrome.tabs.query({}).then((all) => all.filter((t) => t.url === url && t.id !== undefined).map((t) => /** @type {number} */ (t.id))),
  isManaged,
  isBlocked: (url) => sites.isBlocked(url),
  anySession: () => sessions.listSessionIds().then((ids) => ids.length > 0),
  // No tool call waits on a download: its card has a signal of its own, and nobody to tell of progress.
  hold: (sessionId, tabId, item) =>
    tabId === null
      ? Promise.resolve(true)
      : approve({ approvals, tabs: chrome.tabs, sites, signal: new AbortController().signal, progress: () => {} }, sessionId, tabId, {
          action: "download",
          target: `the file ${item.filename?.split(/[\\/]/).pop() || "download"}`,
          url: item.finalUrl || item.url,
        }).then(() => true),
});

const sessions = createSessionManager({
  windows: chrome.windows,
  tabs: chrome.tabs,
  storage: chrome.storage.session,
  cdp,
  emit: (name, payload) => connection.emit(name, payload),
  guard: (tabId) => dialogs.guard(tabId),
  admit: (tab, options) => sites.admit(tab, options),
  beforeStop: async (tabIds, sessionId) => {
    await networkRoutes.remove(sessionId, null);
    await networkRoutes.unshape(sessionId);
    await geolocationGrants.revoke(sessionId, null).catch(() => {});
    await borrowing.giveBackAll(sessionId);
    await dialogs.dismissAll(tabIds);
  },
});

// A rule left by a worker that died mid-session goes once no session is left to want it.
void sessions.listSessionIds().then((ids) => (ids.length ? undefined : geolocationGrants.clearAll()), () => {});

const overlay = createOverlay({ tabs: chrome.tabs, runtime: chrome.runtime, sessions });
const notify = createNotify({ notifications: chrome.notifications, iconUrl: chrome.runtime.getURL("icons/icon-128.png") });
const borrowing = createBorrowing({
  tabs: chrome.tabs,
  windows: chrome.windows,
  recentlyClosed: chrome.sessions,
  storage: chrome.storage.session,
  sessions,
  cdp,
  dialogs,
  overlay,
  notify,
  sites,
});

const grants = createGrants({ storage: chrome.storage.local });
const asks = createAsks({
  timeoutMs: () => grants.timeoutMs(),
  page: overlay,
  notify,
  panelShows: (cid) => panel.shows(cid),
  tabInView: async (sessionId) => {
    const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true }).catch(() => []);
    const owner = tab ? await sessions.ownerOf(tab) : null;
    return tab?.id !== undefined && (owner === null || owner === sessionId) ? tab.id : null;
  },
  showTab: (tabId) => void chrome.tabs.get(tabId).then((tab) => Promise.all([chrome.tabs.update(tabId, { active: true }), chrome.windows.update(tab.windowId, { focused: true })])).catch(() => {}),
  emit: (name, payload) => connection.emit(name, payload),
});
chrome.tabs.onRemoved.addListener((tabId) => asks.tabClosed(tabId));
const effects = createEffects({
  turnOf: (sessionId) => approvals.turnOf(sessionId),
  tabOf: (sessionId, params) => sessions.resolveTab(sessionId, optionalTabId(params), { anyState: true, sites: "none" }),
  grants,
  asks,
  retarget: (tabId) => sites.reapply(tabId),
  activityOf,
});
cdp.onEvent(null, (method, params, tabId, session) => method === "Network.requestWillBeSent" && effects.sent(tabId, session, params), { children: true });
const approvals = {
  grants,
  asks,
  effects,
  /** A panel session's conversation and its turn's sites; null for every other session. @param {string} sessionId */
  async turnOf(sessionId) {
    const session = await sessions.get(sessionId).catch(() => null);
    if (!session?.panel) return null;
    // A panel session whose conversation is not known here still asks (in the page): it never passes unasked.
    return (await panel.turnOfTab(session.panel.anchorTabId)) ?? { conversationId: "", scope: { sites: [], unconfined: false }, start: null };
  },
};

const cues = createCues({
  frames,
  storage: chrome.storage.local,
  onChanged: chrome.storage.onChanged,
  kindOf: cueOf,
  // Where the tab is known to be (its frames too) without asking the page.
  blocked: async (tabId) => {
    const tab = await Promise.resolve(sessions.tab(tabId)).catch(() => null);
    for (const url of [tab?.url, tab?.pendingUrl, ...frameUrls.knownOf(tabId)]) if (url && (await sites.isBlocked(url))) return true;
    return false;
  },
});

const dispatcher = createDispatcher({
  handlers: sites.gate(effects.watch(METHODS)),
  context: { sessions, cdp, dialogs, tabs: chrome.tabs, windows: chrome.windows, frames, refs, snapshots, consoleLog, downloads, networkLog, networkRoutes, geolocationGrants, isManaged, overlay, notify, sites, borrowing, approvals, cues, observers: [cues] },
  onRequest: (method, params) => {
    if (method.startsWith("tool.") && typeof params.session_id === "string") overlay.resumedByAgent(params.session_id);
  },
});

wireStop({
  overlay,
  emit: (name, payload) => connection.emit(name, payload),
  abortSession: (sessionId, reason) => dispatcher.abortSession(sessionId, reason),
});
wireToolbar({ action: chrome.action, sessions, overlay });
const requests = createRequestBlock({
  dnr: chrome.declarativeNetRequest,
  tabs: chrome.tabs,
  navigationErrors: chrome.webNavigation.onErrorOccurred,
  storage: chrome.storage.local,
  onChanged: chrome.storage.onChanged,
  sessions,
  isBlocked: (url) => sites.isBlocked(url),
  onDetach: (fn) => cdp.onDetach(fn),
  self: chrome.runtime.id,
});
const preloading = createPreloading({ setting: chrome.privacy?.network?.networkPredictionEnabled, sessions });
// Content scripts (in every page) have no use for what is stored locally: the pairing secret, blocked sites.
void chrome.storage.local.setAccessLevel?.({ accessLevel: "TRUSTED_CONTEXTS" }).catch(() => {});

const transport = createTransport({ url: () => connection.url() });

const connection = createConnection({
  transport,
  config,
  dispatcher,
  sessionIds: () => sessions.listSessionIds(),
  extensionVersion: chrome.runtime.getManifest().version,
  browser: browserInfo(navigator),
});

const panel = createPanelBridge({
  runtime: chrome.runtime,
  connection,
  tabs: chrome.tabs,
  storage: chrome.storage.session,
  admit: (tab) => sites.admit(tab, { frames: false }),
  attachments: createAttachments({ snapshots, cdp }),
  approvals: asks,
  hidden: overlay.hiddenAsks,
});
registerPanelOpeners({ sidePanel: chrome.sidePanel, commands: chrome.commands, contextMenus: chrome.contextMenus, runtime: chrome.runtime });

registerKeepalive(chrome.alarms, () => connection.ensureConnected());
registerPopupBridge(
  chrome.runtime,
  connection,
  createSessionBoard({ sessions, tabs: chrome.tabs, windows: chrome.windows, overlay, borrowing }),
  panel,
  overlay.hiddenAsks,
);
// Without a startup listener Chrome would not start the worker when the browser starts.
chrome.runtime.onStartup.addListener(() => void connection.ensureConnected());

void connection.start();
