// @ts-check
// Trusted mouse and keyboard input through the CDP Input domain, in the tab's top-level viewport
// (CSS pixels; Chrome routes a point inside an out-of-process iframe to that frame).
//
// The commands of one gesture are sent together, not one after the other: Chrome runs them in order,
// and a pointer move is delivered with the next animation frame, so awaiting each command would cost
// a frame per step. The returned promise settles when the last command was handled by the page; it
// stays pending while a JavaScript dialog the gesture opened is showing (callers race it).
import { modifierEvents, MODIFIER_BITS } from "./keys.js";

/**
 * @typedef {(method: string, params: object) => Promise<any>} Send a CDP command on the tab's own session
 * @typedef {{x: number, y: number}} Point
 * @typedef {"left" | "right" | "middle"} Button
 * @typedef {import("./keys.js").Modifier} Modifier
 * @typedef {import("./keys.js").KeyEvent} KeyEvent
 */

/** The `buttons` bit of each button while it is held. */
const BUTTON_BITS = { left: 1, right: 2, middle: 4 };

/** @param {Modifier[]} modifiers */
function modifierBits(modifiers) {
  return modifiers.reduce((acc, m) => acc | MODIFIER_BITS[m], 0);
}

/**
 * Send commands in order without waiting between them; settles when all were handled.
 * @param {Send} send @param {[string, object][]} commands
 */
function pipeline(send, commands) {
  return Promise.all(commands.map(([method, params]) => send(method, params)));
}

/**
 * Move, press and release (twice for a double click: click, click, dblclick like a real mouse).
 * @param {Send} send
 * @param {Point} point
 * @param {{button?: Button, clickCount?: 1 | 2, modifiers?: Modifier[], move?: boolean}} [options]
 *   move: false when the pointer is already there. The move costs no frame here: the press that follows
 *   makes Chrome deliver it at once instead of with the next animation frame.
 */
export function click(send, { x, y }, { button = "left", clickCount = 1, modifiers = [], move = true } = {}) {
  const bits = modifierBits(modifiers);
  // Modifier keys are held around the gesture, as fingers would; the pointer events carry their bits.
  const held = modifierEvents(modifiers);
  /** @type {[string, object][]} */
  const commands = held.down.map((e) => /** @type {[string, object]} */ (["Input.dispatchKeyEvent", e]));
  if (move) commands.push(["Input.dispatchMouseEvent", { type: "mouseMoved", x, y, modifiers: bits, button: "none", buttons: 0 }]);
  for (let count = 1; count <= clickCount; count++) {
    commands.push(["Input.dispatchMouseEvent", { type: "mousePressed", x, y, modifiers: bits, button, buttons: BUTTON_BITS[button], clickCount: count }]);
    commands.push(["Input.dispatchMouseEvent", { type: "mouseReleased", x, y, modifiers: bits, button, buttons: 0, clickCount: count }]);
  }
  for (const e of held.up) commands.push(["Input.dispatchKeyEvent", e]);
  return pipeline(send, commands);
}

/**
 * Move the pointer (hover); with `held`, a drag step with that button down.
 * @param {Send} send @param {Point} point @param {{held?: Button | null}} [options]
 */
export function move(send, { x, y }, { held = null } = {}) {
  return send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y, button: held ?? "none", buttons: held ? BUTTON_BITS[held] : 0 });
}

/**
 * Move the pointer onto a point and stay (hover). A move alone is delivered with the page's next
 * animation frame (up to a frame, ~17 ms at 60 Hz); the release of no button that follows makes Chrome
 * deliver it at once, and fires nothing in the page (no mouseup, pointerup or click).
 * @param {Send} send @param {Point} point
 */
export function hover(send, { x, y }) {
  return pipeline(send, [
    ["Input.dispatchMouseEvent", { type: "mouseMoved", x, y, button: "none", buttons: 0 }],
    ["Input.dispatchMouseEvent", { type: "mouseReleased", x, y, button: "none", buttons: 0 }],
  ]);
}

/** @param {Send} send @param {Point} point */
export function press(send, { x, y }) {
  return send("Input.dispatchMouseEvent", { type: "mousePressed", x, y, button: "left", buttons: 1, clickCount: 1 });
}

/** @param {Send} send @param {Point} point */
export function release(send, { x, y }) {
  return send("Input.dispatchMouseEvent", { type: "mouseReleased", x, y, button: "left", buttons: 0, clickCount: 1 });
}

/**
 * Points from `from` to `to` (both excluded) for a drag, so pages that track the pointer see it travel.
 * @param {Point} from @param {Point} to @param {number} steps
 * @returns {Point[]}
 */
export function path(from, to, steps) {
  return Array.from({ length: steps }, (_, i) => {
    const t = (i + 1) / (steps + 1);
    return { x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t };
  });
}

/**
 * Send key events (a combo, or characters) in order.
 * @param {Send} send @param {KeyEvent[]} events
 */
export function keys(send, events) {
  return pipeline(
    send,
    events.map((e) => ["Input.dispatchKeyEvent", e]),
  );
}

/**
 * Type characters (groups from keys.textEvents), all at once or `delayMs` apart.
 * @param {Send} send
 * @param {KeyEvent[][]} groups
 * @param {{delayMs?: number, signal?: AbortSignal, sleep?: (ms: number) => Promise<void>}} [options]
 */
export async function type(send, groups, { delayMs = 0, signal, sleep = (ms) => new Promise((r) => setTimeout(r, ms)) } = {}) {
  if (delayMs <= 0) return keys(send, groups.flat());
  for (let i = 0; i < groups.length; i++) {
    if (signal?.aborted) throw signal.reason;
    if (i > 0) await sleep(delayMs);
    await keys(send, groups[i]);
  }
  return [];
}
