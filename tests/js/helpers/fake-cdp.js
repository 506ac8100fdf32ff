// The event side of browser/cdp.js for tests: listeners by tab, emit and detach by hand. Each test
// adds the `send` its page needs.

/** @param {number} defaultTab the tab events go to when the test names none */
export function fakeCdpEvents(defaultTab) {
  const listeners = new Set();
  const detachListeners = new Set();
  return {
    onEvent(tabId, fn) {
      const entry = { tabId, fn };
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
    onDetach(fn) {
      detachListeners.add(fn);
      return () => detachListeners.delete(fn);
    },
    emit(method, params, tabId = defaultTab) {
      for (const l of [...listeners]) if (l.tabId === null || l.tabId === tabId) l.fn(method, params, tabId, null);
    },
    detach(tabId = defaultTab) {
      for (const fn of [...detachListeners]) fn(tabId, "target_closed");
    },
    listenerCount: () => listeners.size + detachListeners.size,
  };
}
