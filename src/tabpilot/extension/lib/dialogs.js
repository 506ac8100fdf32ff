// @ts-check
// The one place that decides what happens to JavaScript dialogs on tabs we debug.
// Today: accept alerts (they only block), leave confirm/prompt to the person, and accept
// beforeunload only while a navigation the agent asked for is leaving that page.

const HISTORY_LIMIT = 32;

/**
 * @typedef {{type: string, message: string, url: string, handled: "accepted" | "left_open", at: number}} DialogRecord
 * @typedef {{
 *   send(tabId: number, method: string, params?: object): Promise<any>,
 *   onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number) => void): () => void,
 *   onDetach(fn: (tabId: number) => void): () => void,
 * }} CdpLike
 */

/** @param {{cdp: CdpLike, now?: () => number, log?: Pick<Console, "warn">}} deps */
export function createDialogs({ cdp, now = Date.now, log = console }) {
  /** Tabs with an agent navigation in progress, counted so nested callers compose. */
  /** @type {Map<number, number>} */
  const leaving = new Map();
  /** @type {Map<number, DialogRecord[]>} */
  const history = new Map();
  /** The dialog left open on each tab, until Chrome reports it closed. */
  /** @type {Map<number, DialogRecord>} */
  const open = new Map();

  /** @param {number} tabId @param {DialogRecord} record */
  function remember(tabId, record) {
    const list = history.get(tabId) ?? [];
    list.push(record);
    if (list.length > HISTORY_LIMIT) list.shift();
    history.set(tabId, list);
  }

  /** @param {number} tabId @param {{type?: string, message?: string, url?: string}} params */
  async function onOpening(tabId, params) {
    const type = params.type ?? "alert";
    const accept = type === "alert" || (type === "beforeunload" && (leaving.get(tabId) ?? 0) > 0);
    const record = { type, message: params.message ?? "", url: params.url ?? "", at: now() };
    if (!accept) {
      const left = { ...record, handled: /** @type {const} */ ("left_open") };
      remember(tabId, left);
      open.set(tabId, left);
      return;
    }
    try {
      await cdp.send(tabId, "Page.handleJavaScriptDialog", { accept: true });
      remember(tabId, { ...record, handled: "accepted" });
    } catch (err) {
      log.warn(`tabpilot: could not accept a ${type} dialog on tab ${tabId}`, err);
    }
  }

  cdp.onEvent(null, (method, params, tabId) => {
    if (method === "Page.javascriptDialogOpening") void onOpening(tabId, params);
    else if (method === "Page.javascriptDialogClosed") open.delete(tabId);
  });
  cdp.onDetach((tabId) => {
    history.delete(tabId);
    open.delete(tabId);
  });

  return {
    /**
     * While the returned release function has not been called, a beforeunload prompt on the tab
     * is accepted: the agent asked to leave the page.
     * @param {number} tabId
     */
    allowUnload(tabId) {
      leaving.set(tabId, (leaving.get(tabId) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (leaving.get(tabId) ?? 1) - 1;
        if (left > 0) leaving.set(tabId, left);
        else leaving.delete(tabId);
      };
    },

    /** The dialog blocking a tab right now, if we left one open. */
    pending: (/** @type {number} */ tabId) => open.get(tabId) ?? null,

    /** Dialogs seen on a tab since we attached, oldest first. */
    history: (/** @type {number} */ tabId) => [...(history.get(tabId) ?? [])],
  };
}
