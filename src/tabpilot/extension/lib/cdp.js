// @ts-check
// chrome.debugger as a small CDP client: attach on demand, one attachment per tab, events by tab,
// and Chrome's error strings turned into wire errors with a reason and a next step.
import { RpcError } from "./protocol.js";

const PROTOCOL_VERSION = "1.3";

/**
 * @typedef {(method: string, params: any, tabId: number) => void} EventListener
 * @typedef {(tabId: number, reason: string) => void} DetachListener
 * @typedef {{
 *   attach(target: {tabId: number}, version: string): Promise<void>,
 *   detach(target: {tabId: number}): Promise<void>,
 *   sendCommand(target: {tabId: number}, method: string, params?: object): Promise<any>,
 *   onEvent: {addListener(fn: (source: {tabId?: number}, method: string, params?: any) => void): void},
 *   onDetach: {addListener(fn: (source: {tabId?: number}, reason: string) => void): void},
 * }} DebuggerApi
 */

/** chrome.debugger reports CDP protocol errors as the JSON text of the error object. */
export function errorMessage(/** @type {unknown} */ err) {
  const text = err instanceof Error ? err.message : typeof err === "string" ? err : String(/** @type {any} */ (err)?.message ?? err);
  if (text.startsWith("{")) {
    try {
      const parsed = JSON.parse(text);
      if (typeof parsed.message === "string") return parsed.message;
    } catch {
      // not JSON after all
    }
  }
  return text;
}

const CONFLICT = /another debugger is already attached/i;
const NOT_DEBUGGABLE = /cannot access a chrome|cannot access contents of|cannot attach to this target/i;
const TARGET_GONE = /no tab with (?:given )?id|no target with given id|detached while handling command|debugger is not attached/i;

/**
 * @param {{debuggerApi: DebuggerApi, tabExists: (tabId: number) => Promise<boolean>, log?: Pick<Console, "warn">}} deps
 */
export function createCdp({ debuggerApi, tabExists, log = console }) {
  /** @type {Map<number, Promise<void>>} */
  const attachments = new Map();
  /** Why Chrome last ended our session on a tab ("target_closed", "canceled_by_user"). */
  /** @type {Map<number, string>} */
  const detachReasons = new Map();
  /** @type {Set<{tabId: number | null, fn: EventListener}>} */
  const eventListeners = new Set();
  /** @type {Set<DetachListener>} */
  const detachListeners = new Set();

  debuggerApi.onEvent.addListener((source, method, params) => {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    for (const l of [...eventListeners]) {
      if (l.tabId !== null && l.tabId !== tabId) continue;
      try {
        l.fn(method, params ?? {}, tabId);
      } catch (err) {
        log.warn(`tabpilot cdp: listener for ${method} failed`, err);
      }
    }
  });

  debuggerApi.onDetach.addListener((source, reason) => {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    attachments.delete(tabId);
    detachReasons.set(tabId, reason);
    for (const fn of [...detachListeners]) fn(tabId, reason);
  });

  /**
   * @param {unknown} err
   * @param {number} tabId
   * @param {string} what the command or "attach"
   * @returns {Promise<RpcError>}
   */
  async function toRpcError(err, tabId, what) {
    if (err instanceof RpcError) return err;
    const message = errorMessage(err);
    if (CONFLICT.test(message)) {
      return new RpcError("cdp_failed", `tab ${tabId} is already being debugged by someone else`, "debugger_conflict", {
        tab_id: tabId,
        hint: "Close DevTools (or the other debugging extension) on that tab, then retry.",
      });
    }
    if (!(await tabExists(tabId))) return tabClosedError(tabId);
    if (TARGET_GONE.test(message)) return detachedError(tabId);
    if (NOT_DEBUGGABLE.test(message)) {
      return new RpcError("cdp_failed", `tab ${tabId} shows a page the browser does not let extensions control (${message})`, "page_not_debuggable", {
        tab_id: tabId,
        hint: "Navigate the tab to an http(s) page first, or use another tab.",
      });
    }
    return new RpcError("cdp_failed", `${what}: ${message}`, undefined, { tab_id: tabId });
  }

  /** @param {number} tabId */
  function tabClosedError(tabId) {
    return new RpcError("not_found", `tab ${tabId} was closed`, "tab_closed", {
      tab_id: tabId,
      hint: "List the session's tabs with tab_list and pick another one.",
    });
  }

  /** @param {number} tabId */
  function detachedError(tabId) {
    const byPerson = detachReasons.get(tabId) === "canceled_by_user";
    return new RpcError(
      "cdp_failed",
      byPerson ? `the person stopped the debugging of tab ${tabId}` : `the debugger was detached from tab ${tabId}`,
      "debugger_detached",
      {
        tab_id: tabId,
        hint: byPerson
          ? "The person cancelled the browser's debugging bar; ask them before you retry."
          : "Retry the command; it attaches again.",
      },
    );
  }

  /** @param {number} tabId @param {string} method @param {object} [params] */
  function rawSend(tabId, method, params = {}) {
    return debuggerApi.sendCommand({ tabId }, method, params);
  }

  /** @param {number} tabId */
  async function doAttach(tabId) {
    try {
      await debuggerApi.attach({ tabId }, PROTOCOL_VERSION);
    } catch (err) {
      // A restarted service worker may still own the old session: detaching only works on our own,
      // so a successful detach means the conflict was with ourselves.
      if (!CONFLICT.test(errorMessage(err)) || !(await debuggerApi.detach({ tabId }).then(() => true, () => false))) {
        throw err;
      }
      await debuggerApi.attach({ tabId }, PROTOCOL_VERSION);
    }
    detachReasons.delete(tabId);
    try {
      await rawSend(tabId, "Page.enable");
      await rawSend(tabId, "Runtime.enable");
      await rawSend(tabId, "Page.setLifecycleEventsEnabled", { enabled: true });
    } catch (err) {
      await debuggerApi.detach({ tabId }).catch(() => {});
      throw err;
    }
  }

  /** @param {number} tabId */
  function attach(tabId) {
    let pending = attachments.get(tabId);
    if (pending) return pending;
    pending = doAttach(tabId).catch(async (err) => {
      if (attachments.get(tabId) === pending) attachments.delete(tabId);
      throw await toRpcError(err, tabId, "attach");
    });
    attachments.set(tabId, pending);
    return pending;
  }

  /** @param {number} tabId */
  async function detach(tabId) {
    const pending = attachments.get(tabId);
    if (!pending) return;
    attachments.delete(tabId);
    const ok = await pending.then(() => true, () => false);
    if (ok) await debuggerApi.detach({ tabId }).catch(() => {});
  }

  return {
    attach,
    detach,

    /** @param {Iterable<number>} tabIds */
    async detachSession(tabIds) {
      await Promise.all([...tabIds].map(detach));
    },

    /** @param {number} tabId */
    isAttached: (tabId) => attachments.has(tabId),

    /**
     * Send a CDP command to a tab, attaching first when needed.
     * @param {number} tabId
     * @param {string} method
     * @param {object} [params]
     */
    async send(tabId, method, params = {}) {
      await attach(tabId);
      try {
        return await rawSend(tabId, method, params);
      } catch (err) {
        throw await toRpcError(err, tabId, method);
      }
    },

    /**
     * @param {number | null} tabId null for every tab
     * @param {EventListener} fn
     * @returns {() => void} unsubscribe
     */
    onEvent(tabId, fn) {
      const entry = { tabId, fn };
      eventListeners.add(entry);
      return () => eventListeners.delete(entry);
    },

    /** @param {DetachListener} fn @returns {() => void} unsubscribe */
    onDetach(fn) {
      detachListeners.add(fn);
      return () => detachListeners.delete(fn);
    },

    /** The error for work pending on a tab when Chrome ends our session there. */
    async detachError(/** @type {number} */ tabId) {
      return (await tabExists(tabId)) ? detachedError(tabId) : tabClosedError(tabId);
    },
  };
}
