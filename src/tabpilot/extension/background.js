// @ts-check
// The MV3 service worker. Everything is wired synchronously in the first turn, because Chrome
// only delivers an event that woke the worker to listeners registered by then.
import { createConfig, fetchManagedConfig } from "./lib/config.js";
import { createTransport } from "./lib/transport.js";
import { createConnection } from "./lib/connection.js";
import { createDispatcher, METHODS } from "./lib/dispatcher.js";
import { createCdp } from "./lib/cdp.js";
import { createDialogs } from "./lib/dialogs.js";
import { createSessionManager } from "./lib/sessions.js";
import { createFrameUrls } from "./lib/frame-urls.js";
import { createSiteGuard } from "./lib/site-guard.js";
import { createBorrowing } from "./lib/borrowing.js";
import { createFrames } from "./lib/frames.js";
import { createRefs } from "./lib/refs.js";
import { createSnapshots } from "./lib/snapshots.js";
import { createConsoleLog } from "./lib/console-log.js";
import { registerKeepalive } from "./lib/keepalive.js";
import { registerPopupBridge } from "./lib/popup-bridge.js";
import { createSessionBoard } from "./lib/session-board.js";
import { browserInfo } from "./lib/browser-info.js";
import { createOverlay } from "./lib/overlay.js";
import { createNotify } from "./lib/notify.js";
import { RpcError } from "./lib/protocol.js";

const config = createConfig({
  storage: chrome.storage.local,
  loadManaged: () => fetchManagedConfig(chrome.runtime, fetch),
});

const cdp = createCdp({
  debuggerApi: chrome.debugger,
  tabExists: (tabId) => chrome.tabs.get(tabId).then(() => true, () => false),
  setupTarget: (send) => sites.intercept(send),
});
const dialogs = createDialogs({ cdp });
const frames = createFrames({ cdp });
const sites = createSiteGuard({
  storage: chrome.storage.local,
  onChanged: chrome.storage.onChanged,
  cdp,
  tabs: chrome.tabs,
  frameUrls: createFrameUrls({ cdp, frames }),
  mainFrameId: (tabId) => frames.main(tabId).then((f) => f.frameId),
});
const refs = createRefs({ storage: chrome.storage.session, tabs: chrome.tabs });
const snapshots = createSnapshots({ frames, refs, tabs: chrome.tabs });
const consoleLog = createConsoleLog({
  cdp,
  storage: chrome.storage.session,
  tabs: chrome.tabs,
  frameUrl: (tabId, sessionId) => cdp.childSessions(tabId).find((c) => c.sessionId === sessionId)?.url,
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
    await borrowing.giveBackAll(sessionId);
    await dialogs.dismissAll(tabIds);
  },
});

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

const dispatcher = createDispatcher({
  handlers: sites.gate(METHODS),
  context: { sessions, cdp, dialogs, tabs: chrome.tabs, windows: chrome.windows, frames, refs, snapshots, consoleLog, overlay, notify, sites, borrowing },
  onRequest: (method, params) => {
    if (method.startsWith("tool.") && typeof params.session_id === "string") overlay.resumedByAgent(params.session_id);
  },
});

// The person's Stop (in a page or the popup): the daemon ends the session's running and queued calls and
// pauses it; what runs here ends at once rather than when the daemon's cancel arrives.
overlay.onStop((sessionId) => {
  connection.emit("session.user_interrupt", { session_id: sessionId });
  dispatcher.abortSession(
    sessionId,
    new RpcError("user_aborted", "stopped: the person pressed Stop", "user_interrupt", {
      hint: "the person stopped you; ask them before continuing, then run `tabpilot session resume`",
    }),
  );
});
overlay.onResume((sessionId) => connection.emit("session.user_resume", { session_id: sessionId }));
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

registerKeepalive(chrome.alarms, () => connection.ensureConnected());
registerPopupBridge(
  chrome.runtime,
  connection,
  createSessionBoard({ sessions, tabs: chrome.tabs, windows: chrome.windows, overlay, borrowing }),
);
// Without a startup listener Chrome would not start the worker when the browser starts.
chrome.runtime.onStartup.addListener(() => void connection.ensureConnected());

void connection.start();
