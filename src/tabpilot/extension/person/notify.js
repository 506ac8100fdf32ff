// @ts-check
// A system notification with buttons: how the person is asked when the page itself cannot show the
// question (a chrome:// page, a PDF, a page still loading, a minimised window). The person's button is
// the answer; closing the notification is "closed"; no answer in time is "timeout" (callers treat both
// as a no: consent fails closed).

/**
 * @typedef {{addListener(fn: (...args: any[]) => void): void}} ChromeEvent
 * @typedef {{
 *   create(id: string, options: object): Promise<string>,
 *   clear(id: string): Promise<boolean>,
 *   onButtonClicked: ChromeEvent,
 *   onClosed: ChromeEvent,
 *   onClicked: ChromeEvent,
 * }} NotificationsApi
 * @typedef {number | "timeout" | "closed"} Answer  number: the index of the button pressed
 * @typedef {{id: string, title: string, message: string, buttons: string[], contextMessage?: string}} Question
 * @typedef {{timeoutMs: number, signal?: AbortSignal, onClick?: () => void}} AskOptions
 *   onClick: the person clicked the notification's body (e.g. bring the tab in question to the front)
 */

/**
 * Register in the worker's first turn: Chrome delivers a click that woke the worker only to listeners
 * added by then.
 * @param {{notifications: NotificationsApi, iconUrl: string, log?: Pick<Console, "warn">}} deps
 */
export function createNotify({ notifications, iconUrl, log = console }) {
  /** @type {Map<string, {answer: (a: Answer) => void, onClick?: () => void}>} */
  const pending = new Map();

  notifications.onButtonClicked.addListener((/** @type {string} */ id, /** @type {number} */ index) => pending.get(id)?.answer(index));
  // Closed by the system (it timed out on screen) is not an answer: the other ways of asking still may be.
  notifications.onClosed.addListener((/** @type {string} */ id, /** @type {boolean} */ byUser) => {
    if (byUser) pending.get(id)?.answer("closed");
  });
  notifications.onClicked.addListener((/** @type {string} */ id) => pending.get(id)?.onClick?.());

  return {
    /**
     * Ask with a notification; settles with the button's index, "closed", or "timeout". An aborted ask
     * removes the notification and settles "closed" (the asker has stopped listening).
     * @param {Question} question
     * @param {AskOptions} options
     * @returns {Promise<Answer>}
     */
    ask({ id, title, message, buttons, contextMessage }, { timeoutMs, signal, onClick }) {
      if (signal?.aborted) return Promise.resolve("closed");
      if (pending.has(id)) throw new Error(`notification ${id} is already asking`);
      return new Promise((resolve) => {
        const timer = setTimeout(() => answer("timeout"), timeoutMs);
        const onAbort = () => answer("closed");
        /** @param {Answer} value */
        function answer(value) {
          if (pending.get(id)?.answer !== answer) return;
          pending.delete(id);
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          void Promise.resolve(notifications.clear(id)).catch(() => {});
          resolve(value);
        }
        pending.set(id, { answer, onClick });
        signal?.addEventListener("abort", onAbort, { once: true });
        const options = {
          type: "basic",
          iconUrl,
          title,
          message,
          ...(contextMessage ? { contextMessage } : {}),
          buttons: buttons.map((text) => ({ title: text })),
          // Stays on screen until answered where the platform allows it.
          requireInteraction: true,
          priority: 2,
        };
        Promise.resolve(notifications.create(id, options)).catch((err) => {
          // No notification could be shown: only the timeout can answer for it now.
          log.warn(`tabpilot: cannot show notification ${id}`, err);
        });
      });
    },
  };
}
