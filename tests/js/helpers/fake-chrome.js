// Enough of chrome.windows / chrome.tabs for the session manager and the tab tools.
export class FakeEvent {
  constructor() {
    this.listeners = [];
  }

  addListener(fn) {
    this.listeners.push(fn);
  }

  fire(...args) {
    for (const fn of this.listeners) fn(...args);
  }
}

export function fakeBrowser() {
  let nextWindow = 100;
  let nextTab = 1;
  const windows = new Map(); // id → {id, type}
  const tabs = new Map(); // id → tab
  const calls = [];

  const tabsInWindow = (windowId) => [...tabs.values()].filter((t) => t.windowId === windowId);
  function addTab(windowId, props = {}) {
    const tab = { id: nextTab++, windowId, url: "about:blank", title: "", active: false, status: "complete", ...props };
    if (tab.active) for (const t of tabsInWindow(windowId)) t.active = false;
    tabs.set(tab.id, tab);
    return tab;
  }
  function removeTab(id) {
    const tab = tabs.get(id);
    tabs.delete(id);
    chrome.tabs.onRemoved.fire(id, { windowId: tab.windowId, isWindowClosing: false });
    const rest = tabsInWindow(tab.windowId);
    if (rest.length === 0) {
      windows.delete(tab.windowId);
      chrome.windows.onRemoved.fire(tab.windowId);
    } else if (tab.active) {
      rest.at(-1).active = true;
    }
  }

  const chrome = {
    windows: {
      onRemoved: new FakeEvent(),
      async create(data) {
        calls.push(["windows.create", data]);
        const win = { id: nextWindow++, type: data.type ?? "normal" };
        windows.set(win.id, win);
        const tab = addTab(win.id, { url: data.url ?? "about:blank", active: true });
        return { ...win, tabs: [{ ...tab }] };
      },
      async get(id) {
        if (!windows.has(id)) throw new Error(`No window with id: ${id}.`);
        return { ...windows.get(id) };
      },
      async remove(id) {
        calls.push(["windows.remove", id]);
        if (!windows.has(id)) throw new Error(`No window with id: ${id}.`);
        for (const t of tabsInWindow(id)) tabs.delete(t.id);
        windows.delete(id);
        chrome.windows.onRemoved.fire(id);
      },
    },
    tabs: {
      onCreated: new FakeEvent(),
      onRemoved: new FakeEvent(),
      async get(id) {
        if (!tabs.has(id)) throw new Error(`No tab with id: ${id}.`);
        return { ...tabs.get(id) };
      },
      async query({ windowId, active }) {
        return [...tabs.values()]
          .filter((t) => (windowId === undefined || t.windowId === windowId) && (active === undefined || t.active === active))
          .map((t) => ({ ...t }));
      },
      async create({ windowId, url = "about:blank", active = true }) {
        calls.push(["tabs.create", { windowId, url, active }]);
        return { ...addTab(windowId, { url, active }) };
      },
      async remove(id) {
        calls.push(["tabs.remove", id]);
        if (!tabs.has(id)) throw new Error(`No tab with id: ${id}.`);
        removeTab(id);
      },
      async update(id, props) {
        calls.push(["tabs.update", id, props]);
        const tab = tabs.get(id);
        if (props.active) for (const t of tabsInWindow(tab.windowId)) t.active = t.id === id;
        return { ...tab };
      },
      async move(id, { windowId }) {
        calls.push(["tabs.move", id, windowId]);
        const tab = tabs.get(id);
        if (windows.get(tab.windowId)?.type !== "normal") throw new Error("Tabs can only be moved to and from normal windows.");
        tab.windowId = windowId;
        return { ...tab };
      },
    },
  };

  return {
    chrome,
    calls,
    windows,
    tabs,
    addTab,
    /** A window the person (or a page's window.open) opened. */
    addWindow(type = "normal") {
      const win = { id: nextWindow++, type };
      windows.set(win.id, win);
      return win.id;
    },
    /** The person closes a window. */
    closeWindow(id) {
      for (const t of tabsInWindow(id)) tabs.delete(t.id);
      windows.delete(id);
      chrome.windows.onRemoved.fire(id);
    },
  };
}

/** A CDP stand-in that records detaches. */
export function fakeCdp() {
  const detached = [];
  return {
    detached,
    async detachSession(ids) {
      detached.push(...ids);
    },
    async detach(id) {
      detached.push(id);
    },
  };
}
