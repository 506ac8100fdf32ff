// @ts-check
// The questions a page keeps the person from answering where they are asked. A prompt frame arms only
// while it is drawn at its natural size (content/drawn.js); when the page shrinks or zooms it, the content
// script says so, and from then on that ask is answered in the toolbar popup (person/popup-bridge.js), which
// no page can draw over. Once hidden, an ask stays answerable there until it ends: a page that lets the
// prompt show again for a moment must not take the place to answer away from under the person's pointer.

/**
 * @typedef {"borrow" | "help" | "approve"} AskKind
 * @typedef {{requestId: string, kind: AskKind, tabId: number, view: Record<string, unknown>, why: string}} HiddenAsk
 * @typedef {(answer: string) => boolean} Answerer  settles the ask with the person's answer; false: not an answer to it
 */

/** What each kind of ask takes as an answer, as the popup's buttons send it. */
export const ANSWERS = Object.freeze({ borrow: ["deny", "allow"], approve: ["deny", "allow"], help: ["cancel", "done"] });

export function createHiddenAsks() {
  /** @type {Map<string, {ask: HiddenAsk, answer: Answerer}>} */
  const hidden = new Map();
  /** @type {Set<() => void>} */
  const watchers = new Set();
  const changed = () => {
    for (const fn of [...watchers]) fn();
  };

  return {
    /**
     * The page hides this ask (why: in the person's words); the latest reason is kept.
     * @param {HiddenAsk} ask @param {Answerer} answer
     */
    hide(ask, answer) {
      const before = hidden.get(ask.requestId)?.ask.why;
      hidden.set(ask.requestId, { ask, answer });
      if (before !== ask.why) changed();
    },

    /** The ask ended (answered anywhere, timed out, withdrawn). @param {string} requestId */
    end(requestId) {
      if (hidden.delete(requestId)) changed();
    },

    /** @returns {HiddenAsk[]} */
    list() {
      return [...hidden.values()].map(({ ask }) => ask);
    },

    /**
     * The person's answer in the popup: only to an ask the page hides, and only one its kind takes.
     * @param {unknown} requestId @param {unknown} answer @returns {boolean}
     */
    answer(requestId, answer) {
      const entry = typeof requestId === "string" ? hidden.get(requestId) : undefined;
      if (!entry || typeof answer !== "string" || !ANSWERS[entry.ask.kind].includes(answer)) return false;
      return entry.answer(answer);
    },

    /** @param {() => void} fn @returns {() => void} unsubscribe */
    onChange(fn) {
      watchers.add(fn);
      return () => watchers.delete(fn);
    },
  };
}
