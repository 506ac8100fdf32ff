// @ts-check
// The panel page's port to the worker: requests with answers, pushes, and a new port 1 s after the
// old one dropped (the worker restarted), after which the page re-attaches from what it rendered.
import { PANEL_PORT } from "../panel/names.js";

export const RECONNECT_MS = 1_000;

/** An answer the worker gave as an error. */
export class PanelError extends Error {
  /** @param {{code?: string, message?: string, reason?: string, hint?: string}} error */
  constructor(error) {
    super(error?.message ?? "refused");
    this.code = error?.code ?? "protocol_error";
    this.reason = error?.reason;
    this.hint = error?.hint;
  }
}

/**
 * @param {{
 *   connect: (name: string) => {postMessage(m: unknown): void, disconnect(): void,
 *     onMessage: {addListener(fn: (m: any) => void): void}, onDisconnect: {addListener(fn: () => void): void}},
 *   onPush: (message: any) => void,
 *   onReconnect: () => void,
 *   timers?: {setTimeout: typeof setTimeout},
 * }} deps
 */
export function createPanelLink({ connect, onPush, onReconnect, timers = globalThis }) {
  let ids = 0;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const pending = new Map();
  let port = open();

  function open() {
    const p = connect(PANEL_PORT);
    p.onMessage.addListener((message) => {
      if (message?.push) {
        onPush(message);
        return;
      }
      const waiter = pending.get(message?.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(new PanelError(message.error));
      else waiter.resolve(message.result);
    });
    p.onDisconnect.addListener(() => {
      for (const waiter of pending.values()) waiter.reject(new PanelError({ code: "no_browser_connected", message: "the extension restarted; try again" }));
      pending.clear();
      timers.setTimeout(() => {
        port = open();
        onReconnect();
      }, RECONNECT_MS);
    });
    return p;
  }

  return {
    /** @param {string} op @param {Record<string, unknown>} [params] @returns {Promise<any>} */
    call(op, params = {}) {
      const id = ++ids;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        try {
          port.postMessage({ id, op, params });
        } catch {
          pending.delete(id);
          reject(new PanelError({ code: "no_browser_connected", message: "the extension is restarting; try again" }));
        }
      });
    },
  };
}
