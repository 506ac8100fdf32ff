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

const sessions = createSessionManager({
  windows: chrome.windows,
  tabs: chrome.tabs,
  storage: chrome.storage.session,
  cdp,
  emit: (name, payload) => connection.emit(name, payload),
});

const dispatcher = createDispatcher({ context: { sessions, cdp, dialogs, tabs: chrome.tabs } });

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
