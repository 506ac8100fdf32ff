// @ts-check
// The service-worker end of the popup's port: pushes status snapshots, applies the person's changes.
import { normalizeCode } from "./auth.js";
import { isValidPort } from "./config.js";

export const PORT_NAME = "popup";
const MAX_LABEL_LENGTH = 64;
const CODE_LENGTH = 8;

/**
 * @typedef {{
 *   status(): Record<string, unknown>,
 *   onChange(fn: () => void): () => void,
 *   setLabel(label: string): Promise<void>,
 *   setEnabled(enabled: boolean): Promise<void>,
 *   setPort(port: number): Promise<void>,
 *   pair(code: string): Promise<void>,
 * }} ConnectionLike
 * @typedef {{list(): unknown[], onChange(fn: () => void): () => void}} SessionsLike
 */

/**
 * Apply one message from the popup; malformed ones are ignored (the popup validates first).
 * @param {ConnectionLike} connection
 * @param {any} message
 */
export async function applyPopupMessage(connection, message) {
  const value = message?.value;
  switch (message?.kind) {
    case "set_label":
      if (typeof value === "string") await connection.setLabel(value.trim().slice(0, MAX_LABEL_LENGTH));
      return;
    case "set_enabled":
      if (typeof value === "boolean") await connection.setEnabled(value);
      return;
    case "set_port":
      if (isValidPort(value)) await connection.setPort(value);
      return;
    case "pair":
      if (typeof value === "string" && normalizeCode(value).length === CODE_LENGTH) await connection.pair(normalizeCode(value));
      return;
    default:
      console.warn("tabpilot: unknown popup message", message);
  }
}

/**
 * Register in the worker's first turn.
 * @param {{getURL(path: string): string, onConnect: {addListener(fn: (port: any) => void): void}}} runtime
 * @param {ConnectionLike} connection
 * @param {SessionsLike} sessions
 */
export function registerPopupBridge(runtime, connection, sessions) {
  runtime.onConnect.addListener((port) => {
    // Only our own pages (the popup, or popup.html opened in a tab), never a web page's script.
    if (port.name !== PORT_NAME || !port.sender?.url?.startsWith(runtime.getURL(""))) return;
    const push = () => {
      try {
        port.postMessage({ ...connection.status(), sessions: sessions.list() });
      } catch {
        // the popup closed between the change and the push
      }
    };
    const unsubscribe = [connection.onChange(push), sessions.onChange(push)];
    port.onMessage.addListener((message) => {
      applyPopupMessage(connection, message).catch((err) => console.warn("tabpilot: popup change failed", err));
    });
    port.onDisconnect.addListener(() => unsubscribe.forEach((off) => off()));
    push();
  });
}
