// @ts-check
// chrome.debugger as a small CDP client: attach on demand, one attachment per tab, events by tab,
// and Chrome's error strings turned into wire errors with a reason and a next step.
//
// Out-of-process iframes (a cross-site iframe runs in its own renderer) are child CDP sessions of the
// tab: Target.setAutoAttach (flatten) reports each one with a sessionId, and chrome.debugger (Chrome
// 125+) takes {tabId, sessionId} as a target. Their events reach only listeners that ask for them.
import { RpcError } from "../link/protocol.js";
import { isBrowserPage, notDebugged } from "./urls.js";

const PROTOCOL_VERSION = "1.3";

/**
 * @typedef {(method: string, params: any, tabId: number, sessionId: string | null) => void} EventListener
 * @typedef {(tabId: number, reason: string) => void} DetachListener
 * @typedef {{sessionId: string, targetId: string, url: string, parentSessionId: string | null}} ChildSession
 * @typedef {{
 *   attach(target: {tabId: number}, version: string): Promise<void>,
 *   detach(target: {tabId: number}): Promise<void>,
 *   sendCommand(target: {tabId: number, sessionId?: string}, method: string, params?: object): Promise<any>,
 *   onEvent: {addListener(fn: (source: {tabId?: number, sessionId?: string}, method: string, params?: any) => void): void},
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
const SESSION_GONE = /no session with given id|session (?:with given id )?not found|target closed|detached while handling command/i;

// Only frames: workers and the like are not pages an agent reads or acts on.
const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: "iframe" }] };

/**
 * @param {{
 *   debuggerApi: DebuggerApi,
 *   tabExists: (tabId: number) => Promise<boolean>,
 *   tabUrl?: (tabId: number) => Promise<string | null>,
 *   setupTarget?: (send: (method: string, params?: object) => Promise<any>, tabId: number) => Promise<void>,
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   tabUrl: the address the tab shows or goes to (a browser or extension page is never attached)
 *   setupTarget: what every target (a tab, an out-of-process frame) gets before anything else once we
 *   attach to it (the blocked sites' request interception); a tab whose setup fails is not attached
 */
export function createCdp({ debuggerApi, tabExists, tabUrl = async () => null, setupTarget = async () => {}, log = console }) {
  /** @type {Map<number, Promise<void>>} */
  const attachments = new Map();
  /** Why Chrome last ended our session on a tab ("target_closed", "canceled_by_user"). */
  /** @type {Map<number, string>} */
  const detachReasons = new Map();
  /** @type {Set<{tabId: number | null, fn: EventListener, children: boolean}>} */
  const eventListeners = new Set();
  /** @type {Set<DetachListener>} */
  const detachListeners = new Set();
  /** The child sessions (out-of-process iframes) of each attached tab. */
  /** @type {Map<number, Map<string, ChildSession>>} */
  const childSessions = new Map();

  debuggerApi.onEvent.addListener((source, method, params) => {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    const sessionId = source.sessionId ?? null;
    const payload = params ?? {};
    if (method === "Target.attachedToTarget") onChildAttached(tabId, sessionId, payload);
    else if (method === "Target.detachedFromTarget") childSessions.get(tabId)?.delete(payload.sessionId);
    for (const l of [...eventListeners]) {
      if ((l.tabId !== null && l.tabId !== tabId) || (sessionId !== null && !l.children)) continue;
      try {
        l.fn(method, payload, tabId, sessionId);
      } catch (err) {
        log.warn(`tabpilot cdp: listener for ${method} failed`, err);
      }
    }
  });

  debuggerApi.onDetach.addListener((source, reason) => {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    attachments.delete(tabId);
    childSessions.delete(tabId);
    detachReasons.set(tabId, reason);
    for (const fn of [...detachListeners]) fn(tabId, reason);
  });

  /**
   * A frame of the tab got its own process: remember its session, and give it what the tab has
   * (console, page events, and auto-attach for the frames nested in it).
   * @param {number} tabId @param {string | null} parentSessionId @param {any} params
   */
  function onChildAttached(tabId, parentSessionId, params) {
    const info = params.targetInfo ?? {};
    if (typeof params.sessionId !== "string" || info.type !== "iframe") return;
    if (isBrowserPage(info.url)) {
      // An extension's frame in the page (tabpilot's own prompts among them) is never the agent's.
      void debuggerApi.sendCommand(parentSessionId === null ? { tabId } : { tabId, sessionId: parentSessionId }, "Target.detachFromTarget", { sessionId: params.sessionId }).catch(() => {});
      return;
    }
    let children = childSessions.get(tabId);
    if (!children) childSessions.set(tabId, (children = new Map()));
    const sessionId = params.sessionId;
    children.set(sessionId, { sessionId, targetId: info.targetId, url: info.url ?? "", parentSessionId });
    const target = { tabId, sessionId };
    void (async () => {
      await setupTarget((method, commandParams) => debuggerApi.sendCommand(target, method, commandParams), tabId);
      for (const [method, commandParams] of [["Runtime.enable", {}], ["Page.enable", {}], ["Target.setAutoAttach", AUTO_ATTACH]]) {
        await debuggerApi.sendCommand(target, method, commandParams);
      }
    })().catch(() => {
      // The frame went away while we set it up; its detach event removes it.
    });
  }
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
      hint: "List the session's tabs with `tabpilot tab list` and pick another one.",
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
    const shows = await tabUrl(tabId);
    if (isBrowserPage(shows)) throw notDebugged(tabId, /** @type {string} */ (shows));
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
      await setupTarget((method, params) => rawSend(tabId, method, params), tabId);
      await rawSend(tabId, "Page.enable");
      await rawSend(tabId, "Runtime.enable");
      await rawSend(tabId, "Page.setLifecycleEventsEnabled", { enabled: true });
      // Browser-side console entries (failed requests, CSP, interventions) for tool.console.
      await rawSend(tabId, "Log.enable");
      await rawSend(tabId, "Target.setAutoAttach", AUTO_ATTACH);
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

  /**
   * Send a CDP command to a tab, attaching first when needed.
   * @param {number} tabId
   * @param {string} method
   * @param {object} [params]
   */
  async function send(tabId, method, params = {}) {
    await attach(tabId);
    try {
      return await rawSend(tabId, method, params);
    } catch (err) {
      throw await toRpcError(err, tabId, method);
    }
  }

  /** @param {number} tabId */
  async function detach(tabId) {
    const pending = attachments.get(tabId);
    if (!pending) return;
    attachments.delete(tabId);
    childSessions.delete(tabId);
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
     * One attachment's identity: what a tool keeps for the tab (overrides, init scripts) lasts only as
     * long as the attachment that holds it in Chrome. @param {number} tabId
     */
    attachmentOf: (tabId) => attachments.get(tabId) ?? null,

    /** Every target we are attached to (or attaching to): the tabs, and the out-of-process frames in them. */
    targets() {
      /** @type {{tabId: number, sessionId: string | null}[]} */
      const out = [];
      for (const tabId of attachments.keys()) {
        out.push({ tabId, sessionId: null });
        for (const child of childSessions.get(tabId)?.values() ?? []) out.push({ tabId, sessionId: child.sessionId });
      }
      return out;
    },

    /**
     * The tab's out-of-process frames known right now (each reported before Target.setAutoAttach
     * answers, so an attached tab's list is complete).
     * @param {number} tabId
     * @returns {ChildSession[]}
     */
    childSessions: (tabId) => [...(childSessions.get(tabId)?.values() ?? [])],

    /**
     * Send a CDP command to one of the tab's child sessions (sessionId null: the tab itself).
     * @param {number} tabId
     * @param {string | null} sessionId
     * @param {string} method
     * @param {object} [params]
     */
    async sendToSession(tabId, sessionId, method, params = {}) {
      if (sessionId === null) return send(tabId, method, params);
      await attach(tabId);
      try {
        return await debuggerApi.sendCommand({ tabId, sessionId }, method, params);
      } catch (err) {
        const gone = !childSessions.get(tabId)?.has(sessionId) || SESSION_GONE.test(errorMessage(err));
        if (gone && (await tabExists(tabId))) {
          throw new RpcError("not_found", `a frame of tab ${tabId} went away during ${method}`, "frame_detached", {
            tab_id: tabId,
            hint: "The frame was removed or navigated; take a new snapshot and retry.",
          });
        }
        throw await toRpcError(err, tabId, method);
      }
    },

    send,

    /**
     * @param {number | null} tabId null for every tab
     * @param {EventListener} fn
     * @param {{children?: boolean}} [options] children: also events of the tab's out-of-process frames
     * @returns {() => void} unsubscribe
     */
    onEvent(tabId, fn, { children = false } = {}) {
      const entry = { tabId, fn, children };
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
