// A manual clock: timers fire only when the test advances time.
export class FakeTimers {
  constructor() {
    this.now = 0;
    this.nextId = 1;
    this.pending = new Map();
    this.setTimeout = this.setTimeout.bind(this);
    this.clearTimeout = this.clearTimeout.bind(this);
  }

  setTimeout(fn, ms) {
    const id = this.nextId++;
    this.pending.set(id, { at: this.now + ms, fn, ms });
    return id;
  }

  clearTimeout(id) {
    this.pending.delete(id);
  }

  /** Delays of the timers still pending, in creation order. */
  delays() {
    return [...this.pending.values()].map((t) => t.ms);
  }

  advance(ms) {
    const until = this.now + ms;
    for (;;) {
      let next = null;
      for (const [id, t] of this.pending) if (t.at <= until && (next === null || t.at < next[1].at)) next = [id, t];
      if (next === null) break;
      this.pending.delete(next[0]);
      this.now = next[1].at;
      next[1].fn();
    }
    this.now = until;
  }
}
