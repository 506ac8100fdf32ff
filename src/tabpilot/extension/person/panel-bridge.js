// @ts-check
// The service-worker end of the side panel's port: the panel's requests go to the daemon (agent.list,
// chat.*) over the one authenticated link, and each conversation's chat events go to the ports
// watching it. Only our own pages may connect; web pages and content scripts have no path here.
import { PANEL_METHODS } from "../link/protocol.js";

export const PANEL_PORT = "panel";

/**
 * @typedef {{
 *   request(method: string, params: Record<string, unknown>): Promise<unknown>,
 *   onEvent(fn: (name: string, payload: Record<string, any>) => void): () => void,
 * }} DaemonLink
 * @typedef {{postMessage(message: unknown): void, onMessage: {addListener(fn: (m: any) => void): void},
 *   onDisconnect: {addListener(fn: () => void): void}, name?: string, sender?: {url?: string}}} Port
 */

/** @param {unknown} err */
function wireError(err) {
  const e = /** @type {any} */ (err);
  return { code: typeof e?.code === "string" ? e.code : "protocol_error", message: e?.message ?? String(err), data: e?.data ?? {} };
}

/**
 * Register in the worker's first turn.
 * @param {{getURL(path: string): string, onConnect: {addListener(fn: (port: Port) => void): void}}} runtime
 * @param {DaemonLink} link
 */
export function registerPanelBridge(runtime, link) {
  /** conversation id → the ports showing it */
  /** @type {Map<string, Set<Port>>} */
  const watching = new Map();

  link.onEvent((name, payload) => {
    if (name !== "chat.event") return;
    for (const port of watching.get(payload.conversation_id) ?? []) {
      try {
        port.postMessage({ event: name, payload });
      } catch {
        // the panel closed between the event and the push
      }
    }
  });

  /** @param {Port} port @param {string} conversationId */
  function unwatch(port, conversationId) {
    const ports = watching.get(conversationId);
    if (!ports?.delete(port) || ports.size > 0) return;
    watching.delete(conversationId);
    // The last view of it went away; the turn itself runs on in the daemon.
    link.request("chat.detach", { conversation_id: conversationId }).catch(() => {});
  }

  runtime.onConnect.addListener((port) => {
    if (port.name !== PANEL_PORT || !port.sender?.url?.startsWith(runtime.getURL(""))) return;
    /** @type {Set<string>} */
    const mine = new Set();
    port.onMessage.addListener(async (message) => {
      const id = message?.id;
      const method = message?.method;
      const params = message?.params && typeof message.params === "object" ? message.params : {};
      if (typeof id !== "string" || typeof method !== "string" || !PANEL_METHODS.has(method)) {
        port.postMessage({ id, error: { code: "unknown_method", message: `the panel cannot ask for ${method}`, data: {} } });
        return;
      }
      const conversationId = typeof params.conversation_id === "string" ? params.conversation_id : null;
      // Watching starts before the request leaves, so no event sent after the backlog is missed.
      if (method === "chat.attach" && conversationId) {
        mine.add(conversationId);
        if (!watching.has(conversationId)) watching.set(conversationId, new Set());
        watching.get(conversationId)?.add(port);
      }
      if (method === "chat.detach" && conversationId) {
        mine.delete(conversationId);
        const ports = watching.get(conversationId);
        ports?.delete(port);
        if (ports && ports.size > 0) {
          port.postMessage({ id, result: { detached: true } });
          return;
        }
        watching.delete(conversationId);
      }
      try {
        port.postMessage({ id, result: await link.request(method, params) });
      } catch (err) {
        port.postMessage({ id, error: wireError(err) });
      }
    });
    port.onDisconnect.addListener(() => {
      for (const conversationId of mine) unwatch(port, conversationId);
    });
  });
}
