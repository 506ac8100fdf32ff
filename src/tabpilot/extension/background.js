// @ts-check
// The MV3 service worker. Everything is wired synchronously in the first turn, because Chrome
// only delivers an event that woke the worker to listeners registered by then.
import { createConfig, fetchManagedConfig } from "./lib/config.js";
import { createTransport } from "./lib/transport.js";
import { createConnection } from "./lib/connection.js";
import { createDispatcher } from "./lib/dispatcher.js";
import { createCdp } from "./lib/cdp.js";
import { createDialogs } from "./lib/dialogs.js";
import { createSessionManager } from "./lib/sessions.js";
import { createFrames } from "./lib/frames.js";
import { createRefs } from "./lib/refs.js";
import { createSnapshots } from "./lib/snapshots.js";
import { createConsoleLog } from "./lib/console-log.js";
import { registerKeepalive } from "./lib/keepalive.js";
import { registerPopupBridge } from "./lib/popup-bridge.js";
import { browserInfo } from "./lib/browser-info.js";

const config = createConfig({
  storage: chrome.storage.local,
  loadManaged: () => fetchManagedConfig(chrome.runtime, fetch),
});

const cdp = createCdp({
  debuggerApi: chrome.debugger,
  tabExists: (tabId) => chrome.tabs.get(tabId).then(() => true, () => false),
});
const dialogs = createDialogs({ cdp });
const frames = createFrames({ cdp });
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
  beforeStop: (tabIds) => dialogs.dismissAll(tabIds),
});

const dispatcher = createDispatcher({ context: { sessions, cdp, dialogs, tabs: chrome.tabs, frames, refs, snapshots, consoleLog } });

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
registerPopupBridge(chrome.runtime, connection, sessions);
// Without a startup listener Chrome would not start the worker when the browser starts.
chrome.runtime.onStartup.addListener(() => void connection.ensureConnected());

void connection.start();
