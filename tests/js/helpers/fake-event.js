// A chrome.* event (onUpdated, onRemoved, …) a test fires by hand.
export class FakeEvent {
  constructor() {
    this.listeners = new Set();
  }

  addListener(fn) {
    this.listeners.add(fn);
  }

  removeListener(fn) {
    this.listeners.delete(fn);
  }

  fire(...args) {
    for (const fn of [...this.listeners]) fn(...args);
  }
}
