// @ts-check
// What Enter does in the composer: send now when no turn runs, otherwise queue the message and send
// the queue, oldest first, one message per turn, as each turn ends. Pure, so its order is tested.

/**
 * @typedef {{text: string, attach: string[]}} Outgoing
 * @param {{send(message: Outgoing): Promise<void>}} deps send starts a turn; it rejects when the daemon refuses
 */
export function createComposerQueue({ send }) {
  /** @type {Outgoing[]} */
  const queue = [];
  let running = false;
  let sending = false;
  /** @type {Set<() => void>} */
  const listeners = new Set();
  const changed = () => listeners.forEach((fn) => fn());

  async function next() {
    if (running || sending || queue.length === 0) return;
    sending = true;
    const message = /** @type {Outgoing} */ (queue.shift());
    changed();
    try {
      // Counted as running from here: a turn_start may come after more Enters.
      running = true;
      await send(message);
    } catch (err) {
      running = false;
      throw err;
    } finally {
      sending = false;
      changed();
    }
  }

  return {
    /** @param {Outgoing} message @returns {Promise<"sent" | "queued">} */
    async submit(message) {
      if (message.text.trim() === "") throw new Error("empty message");
      queue.push(message);
      if (running || sending) {
        changed();
        return "queued";
      }
      await next();
      return "sent";
    },
    /** The conversation's state as the daemon says it (a backlog, turn_start, turn_end). @param {boolean} now */
    setRunning(now) {
      const ended = running && !now;
      running = now;
      changed();
      if (ended) return next();
      return Promise.resolve();
    },
    get running() {
      return running;
    },
    /** @returns {readonly Outgoing[]} */
    get queued() {
      return queue;
    },
    /** The person abandoned the queued messages (a new chat, another tab's conversation). */
    clear() {
      queue.length = 0;
      running = false;
      changed();
    },
    /** @param {() => void} fn */
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
