// Windows with ordered tabs, as borrowing sees them: indexes, moves between windows, the active tab,
// closing a window with its tabs, and the browser's recently closed list.
import { FakeEvent as Event } from "./fake-event.js";

export function fakeTabStrip() {
  let nextWindow = 100;
  let nextTab = 1;
  let nextClosed = 1;
  /** @type {Map<number, {id: number, type: string, order: number[]}>} */
  const windows = new Map();
  const tabs = new Map();
  const closed = [];
  const calls = [];
  let lastFocused = null;

  const view = (tab) => ({ ...tab, index: windows.get(tab.windowId).order.indexOf(tab.id) });
  function activate(windowId, tabId) {
    for (const id of windows.get(windowId).order) tabs.get(id).active = id === tabId;
  }
  function detach(tab) {
    const win = windows.get(tab.windowId);
    win.order = win.order.filter((id) => id !== tab.id);
    if (tab.active && win.order.length > 0) activate(win.id, win.order[0]);
    tab.active = false;
    return win;
  }
  function insert(tab, windowId, index = -1) {
    const order = windows.get(windowId).order;
    order.splice(index < 0 || index > order.length ? order.length : index, 0, tab.id);
    tab.windowId = windowId;
  }
  function addWindow(type = "normal") {
    const win = { id: nextWindow++, type, order: [] };
    windows.set(win.id, win);
    lastFocused = win.id;
    return win.id;
  }
  function addTab(windowId, props = {}) {
    const tab = { id: nextTab++, windowId, url: "about:blank", title: "", active: false, status: "complete", ...props };
    tabs.set(tab.id, tab);
    insert(tab, windowId, props.index);
    delete tab.index;
    if (tab.active || windows.get(windowId).order.length === 1) activate(windowId, tab.id);
    return tab;
  }
  function closeWindow(windowId) {
    const win = windows.get(windowId);
    closed.unshift({ window: { tabs: win.order.map((id) => ({ sessionId: String(nextClosed++), url: tabs.get(id).url })) } });
    for (const id of [...win.order]) {
      tabs.delete(id);
      chrome.tabs.onRemoved.fire(id, { windowId, isWindowClosing: true });
    }
    windows.delete(windowId);
    chrome.windows.onRemoved.fire(windowId);
  }

  const chrome = {
    tabs: {
      onRemoved: new Event(),
      onAttached: new Event(),
      onUpdated: new Event(),
      async get(id) {
        if (!tabs.has(id)) throw new Error(`No tab with id: ${id}.`);
        return view(tabs.get(id));
      },
      async query({ windowId, active } = {}) {
        return [...windows.values()]
          .flatMap((w) => w.order)
          .map((id) => tabs.get(id))
          .filter((t) => (windowId === undefined || t.windowId === windowId) && (active === undefined || t.active === active))
          .map(view);
      },
      async move(id, { windowId, index }) {
        calls.push(["tabs.move", id, { windowId, index }]);
        const tab = tabs.get(id);
        if (windows.get(tab.windowId).type !== "normal" || windows.get(windowId)?.type !== "normal") {
          throw new Error("Tabs can only be moved to and from normal windows.");
        }
        const from = detach(tab);
        insert(tab, windowId, index);
        // Like Chrome: a tab moved into a window becomes its active tab.
        activate(windowId, id);
        if (from.id !== windowId) {
          chrome.tabs.onAttached.fire(id, { newWindowId: windowId, newPosition: index });
          if (from.order.length === 0) {
            windows.delete(from.id);
            chrome.windows.onRemoved.fire(from.id);
          }
        }
        return view(tab);
      },
      async update(id, props) {
        calls.push(["tabs.update", id, props]);
        const tab = tabs.get(id);
        if (props.active) activate(tab.windowId, id);
        if (props.url) tab.url = props.url;
        return view(tab);
      },
      async create({ windowId = lastFocused, url = "about:blank", active = true, index }) {
        calls.push(["tabs.create", { windowId, url, active }]);
        return view(addTab(windowId, { url, active, index }));
      },
    },
    windows: {
      onRemoved: new Event(),
      async get(id) {
        if (!windows.has(id)) throw new Error(`No window with id: ${id}.`);
        return { id, type: windows.get(id).type };
      },
      async getLastFocused() {
        if (lastFocused === null || !windows.has(lastFocused)) throw new Error("No last-focused window");
        return { id: lastFocused, type: windows.get(lastFocused).type };
      },
      async create({ tabId }) {
        calls.push(["windows.create", { tabId }]);
        const id = addWindow();
        const tab = tabs.get(tabId);
        detach(tab);
        insert(tab, id);
        activate(id, tabId);
        return { id };
      },
      async update(id, props) {
        calls.push(["windows.update", id, props]);
        if (props.focused) lastFocused = id;
        return { id };
      },
    },
    recentlyClosed: {
      async getRecentlyClosed() {
        return structuredClone(closed);
      },
      async restore(sessionId) {
        calls.push(["sessions.restore", sessionId]);
        const entry = closed.flatMap((c) => c.window.tabs).find((t) => t.sessionId === sessionId);
        const tab = addTab(addWindow(), { url: entry.url, active: true, restored: true });
        return { tab: view(tab) };
      },
    },
  };

  return { chrome, calls, windows, tabs, addWindow, addTab, closeWindow, view: (id) => view(tabs.get(id)) };
}
