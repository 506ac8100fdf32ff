// An in-memory chrome.storage area with the promise API the extension uses.
export class FakeStorage {
  constructor(initial = {}) {
    this.data = { ...initial };
    this.writes = 0;
  }

  async get(keys) {
    const wanted = keys === null || keys === undefined ? Object.keys(this.data) : [keys].flat();
    const out = {};
    for (const k of wanted) if (k in this.data) out[k] = structuredClone(this.data[k]);
    return out;
  }

  async set(items) {
    this.writes++;
    Object.assign(this.data, structuredClone(items));
  }

  async remove(keys) {
    for (const k of [keys].flat()) delete this.data[k];
  }
}
