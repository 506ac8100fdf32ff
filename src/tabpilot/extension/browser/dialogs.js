// @ts-check
// The one place that decides what happens to JavaScript dialogs on tabs we debug:
// - alert: accepted at once (it only blocks the page) and remembered, so the action that raised it
//   can report it;
// - confirm, prompt and beforeunload: left open for the agent to answer (`answer`, tool.dialog) and
//   reported by the action that raised them; while one is open, every other page command on that tab
//   fails fast with dialog_open (`guard`, called once by sessions.resolveTab);
// - beforeunload while a navigation the agent asked for is leaving the page: accepted (it asked to leave);
// - a dialog still open when its session stops is dismissed (`dismissAll`).
import { RpcError, fromPage, said } from "../link/protocol.js";

const HISTORY_LIMIT = 32;
const TEXT_LIMIT = 4096;

/**
 * @typedef {"accepted" | "dismissed" | "open"} DialogState
 * @typedef {{seq: number, type: string, message: string, url: string, default_prompt: string,
 *            handled: DialogState, at: number}} DialogRecord
 * @typedef {{
 *   send(tabId: number, method: string, params?: object): Promise<any>,
 *   onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number) => void): () => void,
 *   onDetach(fn: (tabId: number) => void): () => void,
 * }} CdpLike
 */

/** @param {unknown} value */
const clip = (value) => String(value ?? "").slice(0, TEXT_LIMIT);

/** `confirm "Delete 3 files?"` — how errors and outcome lines name a dialog. @param {DialogRecord} d */
export function describeDialog(d) {
  const message = d.message.length > 120 ? `${d.message.slice(0, 119)}…` : d.message;
  return said`${d.type} ${fromPage(JSON.stringify(message))}`;
}

/** @param {{cdp: CdpLike, now?: () => number, log?: Pick<Console, "warn">}} deps */
export function createDialogs({ cdp, now = Date.now, log = console }) {
  /** Tabs with an agent navigation in progress, counted so nested callers compose. */
  /** @type {Map<number, number>} */
  const leaving = new Map();
  /** @type {Map<number, DialogRecord[]>} */
  const history = new Map();
  /** The dialog left open on each tab, until it is answered or Chrome reports it closed. */
  /** @type {Map<number, DialogRecord>} */
  const open = new Map();
  /** Per-tab sequence numbers; never reset, so a cursor taken before an action stays valid. */
  /** @type {Map<number, number>} */
  const sequences = new Map();
  /** @type {Set<(tabId: number, record: DialogRecord) => void>} */
  const openListeners = new Set();

  /** @param {number} tabId @param {DialogRecord} record */
  function remember(tabId, record) {
    const list = history.get(tabId) ?? [];
    list.push(record);
    if (list.length > HISTORY_LIMIT) list.shift();
    history.set(tabId, list);
  }

  /** @param {number} tabId @param {{type?: string, message?: string, url?: string, defaultPrompt?: string}} params */
  async function onOpening(tabId, params) {
    const type = params.type ?? "alert";
    const seq = (sequences.get(tabId) ?? 0) + 1;
    sequences.set(tabId, seq);
    /** @type {DialogRecord} */
    const record = {
      seq,
      type,
      message: clip(params.message),
      url: clip(params.url),
      default_prompt: clip(params.defaultPrompt),
      handled: "open",
      at: now(),
    };
    remember(tabId, record);
    const accept = type === "alert" || (type === "beforeunload" && (leaving.get(tabId) ?? 0) > 0);
    if (!accept) {
      open.set(tabId, record);
      for (const fn of [...openListeners]) fn(tabId, record);
      return;
    }
    try {
      await cdp.send(tabId, "Page.handleJavaScriptDialog", { accept: true });
      record.handled = "accepted";
    } catch (err) {
      log.warn(`tabpilot: could not accept a ${type} dialog on tab ${tabId}`, err);
      open.set(tabId, record);
    }
  }

  cdp.onEvent(null, (method, params, tabId) => {
    if (method === "Page.javascriptDialogOpening") void onOpening(tabId, params);
    else if (method === "Page.javascriptDialogClosed") {
      // Answered by us, or by the person in the browser.
      const record = open.get(tabId);
      if (record && record.handled === "open") record.handled = params.result ? "accepted" : "dismissed";
      open.delete(tabId);
    }
  });
  cdp.onDetach((tabId) => {
    history.delete(tabId);
    open.delete(tabId);
  });

  /**
   * @param {number} tabId
   * @param {{accept: boolean, promptText?: string}} answer
   * @returns {Promise<DialogRecord>}
   */
  async function answer(tabId, { accept, promptText }) {
    const record = open.get(tabId);
    if (!record) {
      throw new RpcError("not_found", `no dialog is open on tab ${tabId}`, "no_dialog", {
        tab_id: tabId,
        hint: "Nothing to answer: the dialog was already closed, or it was an alert (those are accepted at once).",
      });
    }
    try {
      await cdp.send(tabId, "Page.handleJavaScriptDialog", {
        accept,
        ...(promptText !== undefined && record.type === "prompt" ? { promptText } : {}),
      });
    } catch (err) {
      // Closed in the meantime (the person answered it, or the page went away).
      if (open.get(tabId) !== record) {
        throw new RpcError("not_found", said`the ${describeDialog(record)} dialog was already closed`, "no_dialog", { tab_id: tabId });
      }
      throw err;
    }
    record.handled = accept ? "accepted" : "dismissed";
    if (open.get(tabId) === record) open.delete(tabId);
    return record;
  }

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

    /** A position in the tab's dialog sequence; `since` returns what came after it. */
    cursor: (/** @type {number} */ tabId) => sequences.get(tabId) ?? 0,

    /** @param {number} tabId @param {number} cursor */
    since: (tabId, cursor) => (history.get(tabId) ?? []).filter((d) => d.seq > cursor),

    /**
     * Resolves when a dialog newer than `after` (a cursor) is left open on the tab, at once if one is
     * already: an action races its input against it.
     * @param {number} tabId
     * @param {number} [after]
     * @returns {{opened: Promise<DialogRecord>, cancel: () => void}}
     */
    whenOpen(tabId, after = 0) {
      /** @type {(tabId: number, record: DialogRecord) => void} */
      let listener = () => {};
      /** @type {Promise<DialogRecord>} */
      const opened = new Promise((resolve) => {
        const current = open.get(tabId);
        if (current && current.seq > after) {
          resolve(current);
          return;
        }
        listener = (id, record) => {
          if (id === tabId && record.seq > after) resolve(record);
        };
        openListeners.add(listener);
      });
      return { opened, cancel: () => void openListeners.delete(listener) };
    },

    /**
     * The fail-fast check for page commands: a tab showing a dialog cannot run them.
     * @param {number} tabId
     */
    guard(tabId) {
      const record = open.get(tabId);
      if (!record) return;
      throw new RpcError("invalid_params", said`a ${describeDialog(record)} dialog is open on tab ${tabId}`, "dialog_open", {
        tab_id: tabId,
        dialog: { type: record.type, message: record.message, default_prompt: record.default_prompt },
        hint: "Answer it first: `tabpilot dialog accept` (add --text for a prompt) or `tabpilot dialog dismiss`.",
      });
    },

    answer,

    /** Dismiss what is still open on these tabs (their session is ending). @param {Iterable<number>} tabIds */
    async dismissAll(tabIds) {
      const tabs = [...tabIds].filter((id) => open.has(id));
      await Promise.all(tabs.map((id) => answer(id, { accept: false }).catch((err) => log.warn(`tabpilot: could not dismiss the dialog on tab ${id}`, err))));
    },
  };
}
