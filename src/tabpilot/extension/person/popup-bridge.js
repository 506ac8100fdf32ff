// @ts-check
// The service-worker end of the popup's port: pushes status snapshots (the connection and the live
// sessions, the side panel's conversations and the questions a page hides), applies the person's changes and
// choices (Stop, Resume, show a session's window, stop a conversation, Stop all: sessions and conversations
// alike, and the answer to a question the page hides, person/hidden-asks.js).
import { normalizeCode } from "../link/auth.js";
import { isValidPort } from "../link/config.js";

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
 * @typedef {{
 *   describe(): Promise<unknown[]>,
 *   onChange(fn: () => void): () => void,
 *   act(action: "stop" | "resume" | "show" | "stop_all", sessionId?: unknown): Promise<void>,
 * }} SessionBoard
 * @typedef {{
 *   conversations(): Promise<unknown[]>,
 *   onChange(fn: () => void): () => void,
 *   stop(conversationId: string): Promise<unknown>,
 *   stopAll(): Promise<void>,
 * }} PanelBoard
 * @typedef {{
 *   list(): unknown[],
 *   onChange(fn: () => void): () => void,
 *   answer(requestId: unknown, answer: unknown): boolean,
 * }} HiddenAsksBoard
 */

/** Popup message kind → what it does to a session (state/session-board.js). */
const SESSION_ACTIONS = Object.freeze({ stop_session: "stop", resume_session: "resume", show_session: "show", stop_all: "stop_all" });

/**
 * Apply one message from the popup; malformed ones are ignored (the popup validates first).
 * @param {ConnectionLike} connection
 * @param {any} message
 * @param {SessionBoard} [board]
 * @param {PanelBoard} [panel]
 * @param {HiddenAsksBoard} [asks]
 */
export async function applyPopupMessage(connection, message, board, panel, asks) {
  const value = message?.value;
  if (message?.kind === "answer_hidden") {
    asks?.answer(value?.request_id, value?.answer);
    return;
  }
  if (message?.kind === "stop_all") await panel?.stopAll();
  if (message?.kind === "stop_conversation") {
    if (typeof value === "string") await panel?.stop(value);
    return;
  }
  const action = Object.hasOwn(SESSION_ACTIONS, message?.kind) ? SESSION_ACTIONS[/** @type {keyof SESSION_ACTIONS} */ (message.kind)] : null;
  if (action !== null && board) {
    await board.act(action, value);
    return;
  }
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
 * @param {SessionBoard} board
 * @param {PanelBoard} [panel]
 * @param {HiddenAsksBoard} [asks]
 */
export function registerPopupBridge(runtime, connection, board, panel, asks) {
  runtime.onConnect.addListener((port) => {
    // Only our own pages (the popup, or popup.html opened in a tab), never a web page's script.
    if (port.name !== PORT_NAME || !port.sender?.url?.startsWith(runtime.getURL(""))) return;
    let pushed = Promise.resolve();
    // One after the other, so an older snapshot never lands after a newer one.
    const push = () => {
      pushed = pushed.then(async () => {
        try {
          const [sessions, conversations] = await Promise.all([board.describe(), panel?.conversations()]);
          port.postMessage({ ...connection.status(), sessions, ...(panel ? { conversations } : {}), ...(asks ? { hidden_asks: asks.list() } : {}) });
        } catch {
          // the popup closed between the change and the push
        }
      });
    };
    const unsubscribe = [connection.onChange(push), board.onChange(push), ...(panel ? [panel.onChange(push)] : []), ...(asks ? [asks.onChange(push)] : [])];
    port.onMessage.addListener((message) => {
      applyPopupMessage(connection, message, board, panel, asks).catch((err) => console.warn("tabpilot: popup change failed", err));
    });
    port.onDisconnect.addListener(() => unsubscribe.forEach((off) => off()));
    push();
  });
}
