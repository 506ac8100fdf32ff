// @ts-check
// Key names, aliases and combos turned into the fields of CDP Input.dispatchKeyEvent, for a US layout.
//
// A combo is modifiers and one key joined by "+": "Control+A", "shift+tab", "Meta+Shift+Z", "Control++".
// Names are case-insensitive; aliases cover what people write (Esc, Return, Del, Up, PgDn, Ctrl, Cmd …).
// A single character is a key too: printable US-layout characters get their physical key (code,
// keyCode) and the Shift they need; any other character (é, 中, 😀) is sent as text with no key code.
import { RpcError } from "../link/protocol.js";

/** CDP's modifier bit field. */
export const MODIFIER_BITS = Object.freeze({ Alt: 1, Control: 2, Meta: 4, Shift: 8 });

/**
 * @typedef {"Alt" | "Control" | "Meta" | "Shift"} Modifier
 * @typedef {{key: string, code: string, keyCode: number, text: string, location: number, shift: boolean}} KeyDefinition
 *   shift: the key needs Shift to produce `key` (e.g. "A", "!")
 * @typedef {{type: "keyDown" | "rawKeyDown" | "keyUp", key: string, code: string, windowsVirtualKeyCode: number,
 *   modifiers: number, location?: number, text?: string, unmodifiedText?: string, commands?: string[]}} KeyEvent
 * @typedef {{modifiers: Modifier[], key: KeyDefinition, label: string}} Combo
 */

// code, unshifted, shifted, keyCode
/** @type {[string, string, string, number][]} */
const PRINTABLE = [
  ["Backquote", "`", "~", 192],
  ["Digit1", "1", "!", 49],
  ["Digit2", "2", "@", 50],
  ["Digit3", "3", "#", 51],
  ["Digit4", "4", "$", 52],
  ["Digit5", "5", "%", 53],
  ["Digit6", "6", "^", 54],
  ["Digit7", "7", "&", 55],
  ["Digit8", "8", "*", 56],
  ["Digit9", "9", "(", 57],
  ["Digit0", "0", ")", 48],
  ["Minus", "-", "_", 189],
  ["Equal", "=", "+", 187],
  ["BracketLeft", "[", "{", 219],
  ["BracketRight", "]", "}", 221],
  ["Backslash", "\\", "|", 220],
  ["Semicolon", ";", ":", 186],
  ["Quote", "'", '"', 222],
  ["Comma", ",", "<", 188],
  ["Period", ".", ">", 190],
  ["Slash", "/", "?", 191],
  ["Space", " ", " ", 32],
  ...[..."abcdefghijklmnopqrstuvwxyz"].map(
    (c) => /** @type {[string, string, string, number]} */ ([`Key${c.toUpperCase()}`, c, c.toUpperCase(), c.toUpperCase().charCodeAt(0)]),
  ),
];

// name, code, keyCode, text, location (1 = left, 3 = numpad)
/** @type {[string, string, number, string, number][]} */
const NAMED = [
  ["Enter", "Enter", 13, "\r", 0],
  ["Tab", "Tab", 9, "", 0],
  ["Backspace", "Backspace", 8, "", 0],
  ["Delete", "Delete", 46, "", 0],
  ["Escape", "Escape", 27, "", 0],
  ["Insert", "Insert", 45, "", 0],
  ["Home", "Home", 36, "", 0],
  ["End", "End", 35, "", 0],
  ["PageUp", "PageUp", 33, "", 0],
  ["PageDown", "PageDown", 34, "", 0],
  ["ArrowLeft", "ArrowLeft", 37, "", 0],
  ["ArrowUp", "ArrowUp", 38, "", 0],
  ["ArrowRight", "ArrowRight", 39, "", 0],
  ["ArrowDown", "ArrowDown", 40, "", 0],
  ["Shift", "ShiftLeft", 16, "", 1],
  ["Control", "ControlLeft", 17, "", 1],
  ["Alt", "AltLeft", 18, "", 1],
  ["Meta", "MetaLeft", 91, "", 1],
  ["CapsLock", "CapsLock", 20, "", 0],
  ["NumLock", "NumLock", 144, "", 0],
  ["ScrollLock", "ScrollLock", 145, "", 0],
  ["Pause", "Pause", 19, "", 0],
  ["PrintScreen", "PrintScreen", 44, "", 0],
  ["ContextMenu", "ContextMenu", 93, "", 0],
  ...Array.from({ length: 24 }, (_, i) => /** @type {[string, string, number, string, number]} */ ([`F${i + 1}`, `F${i + 1}`, 112 + i, "", 0])),
];

// Numpad keys are named by their code; key and text are what they type.
// code, key, keyCode, text
/** @type {[string, string, number, string][]} */
const NUMPAD = [
  ...Array.from({ length: 10 }, (_, i) => /** @type {[string, string, number, string]} */ ([`Numpad${i}`, String(i), 96 + i, String(i)])),
  ["NumpadMultiply", "*", 106, "*"],
  ["NumpadAdd", "+", 107, "+"],
  ["NumpadSubtract", "-", 109, "-"],
  ["NumpadDecimal", ".", 110, "."],
  ["NumpadDivide", "/", 111, "/"],
  ["NumpadEnter", "Enter", 13, "\r"],
];

/** What people write → the canonical name (all compared lower-case). */
const ALIASES = {
  esc: "Escape",
  return: "Enter",
  del: "Delete",
  ins: "Insert",
  up: "ArrowUp",
  down: "ArrowDown",
  left: "ArrowLeft",
  right: "ArrowRight",
  pgup: "PageUp",
  pgdn: "PageDown",
  pgdown: "PageDown",
  space: " ",
  spacebar: " ",
  plus: "+",
  minus: "-",
  ctrl: "Control",
  control: "Control",
  cmd: "Meta",
  command: "Meta",
  super: "Meta",
  win: "Meta",
  windows: "Meta",
  os: "Meta",
  option: "Alt",
  opt: "Alt",
  caps: "CapsLock",
  menu: "ContextMenu",
};

/** @type {Map<string, KeyDefinition>} lower-case name or code → key */
const BY_NAME = new Map();
/** @type {Map<string, KeyDefinition>} exact character → key */
const BY_CHAR = new Map();

for (const [code, plain, shifted, keyCode] of PRINTABLE) {
  const base = { code, keyCode, location: 0 };
  BY_CHAR.set(plain, { ...base, key: plain, text: plain, shift: false });
  if (shifted !== plain) BY_CHAR.set(shifted, { ...base, key: shifted, text: shifted, shift: true });
  BY_NAME.set(code.toLowerCase(), { ...base, key: plain, text: plain, shift: false });
}
for (const [name, code, keyCode, text, location] of NAMED) {
  const def = { key: name, code, keyCode, text, location, shift: false };
  BY_NAME.set(name.toLowerCase(), def);
  BY_NAME.set(code.toLowerCase(), def);
}
for (const [code, key, keyCode, text] of NUMPAD) {
  BY_NAME.set(code.toLowerCase(), { key, code, keyCode, text, location: 3, shift: false });
}

/** The shifted twin of an unshifted printable key ("a" → "A", "1" → "!"), or null. @param {KeyDefinition} def */
function shiftedOf(def) {
  if (def.shift || def.location !== 0) return null;
  const row = PRINTABLE.find(([code]) => code === def.code);
  if (!row || row[2] === row[1]) return null;
  return /** @type {KeyDefinition} */ (BY_CHAR.get(row[2]));
}

/** @param {string} raw */
function unknownKey(raw) {
  return new RpcError("invalid_params", `unknown key ${JSON.stringify(raw)}`, "unknown_key", {
    hint: "Use a key name (Enter, Tab, Escape, ArrowDown, PageDown, F5, Backspace …), a single character, or a combo like Control+A.",
  });
}

/**
 * The key a name, alias, code or single character stands for.
 * @param {string} raw
 * @param {{platform?: string}} [options] platform "mac" makes ControlOrMeta mean Meta
 * @returns {KeyDefinition}
 */
export function lookupKey(raw, { platform = "" } = {}) {
  if (typeof raw !== "string" || raw === "") throw unknownKey(String(raw));
  const exact = BY_CHAR.get(raw);
  if (exact) return exact;
  const lower = raw.toLowerCase();
  const name = lower === "controlormeta" ? (platform === "mac" ? "meta" : "control") : (ALIASES[/** @type {keyof ALIASES} */ (lower)] ?? lower);
  const named = BY_NAME.get(name.toLowerCase()) ?? BY_CHAR.get(name);
  if (named) return named;
  // Any other single character (one code point, so 😀 too) is typed as text.
  if ([...raw].length === 1) return { key: raw, code: "", keyCode: 0, text: raw, location: 0, shift: false };
  throw unknownKey(raw);
}

/** @param {KeyDefinition} def @returns {Modifier | null} */
function modifierOf(def) {
  return def.key === "Alt" || def.key === "Control" || def.key === "Meta" || def.key === "Shift" ? def.key : null;
}

/**
 * Parse "Control+Shift+A" into modifiers and one key. "+" alone, or last, is the plus key ("Control++").
 * @param {string} spec
 * @param {{platform?: string}} [options]
 * @returns {Combo}
 */
export function parseCombo(spec, options = {}) {
  if (spec === " ") return { modifiers: [], key: lookupKey(" "), label: "Space" };
  if (typeof spec !== "string" || spec.trim() === "") throw unknownKey(String(spec));
  const trimmed = spec.trim();
  const parts = trimmed === "+" ? ["+"] : trimmed.split(/\+(?!$)/).map((p) => p.trim());
  if (parts.some((p) => p === "")) throw unknownKey(spec);
  /** @type {Modifier[]} */
  const modifiers = [];
  for (const part of parts.slice(0, -1)) {
    const modifier = modifierOf(lookupKey(part, options));
    if (!modifier) {
      throw new RpcError("invalid_params", `${JSON.stringify(part)} in ${JSON.stringify(spec)} is not a modifier`, "unknown_key", {
        hint: "A combo is modifiers (Control, Shift, Alt, Meta) and one key, e.g. Control+Shift+K; press other keys one after another.",
      });
    }
    if (!modifiers.includes(modifier)) modifiers.push(modifier);
  }
  let key = lookupKey(/** @type {string} */ (parts.at(-1)), options);
  const letter = /^Key[A-Z]$/.test(key.code);
  // With modifiers a letter's case does not matter (Control+A is Control+a); only Shift shifts it.
  if (letter && modifiers.length > 0) key = /** @type {KeyDefinition} */ (BY_NAME.get(key.code.toLowerCase()));
  if (modifiers.includes("Shift")) key = shiftedOf(key) ?? key;
  const keyLabel = key.key === " " ? "Space" : letter && modifiers.length > 0 ? key.key.toUpperCase() : key.key;
  return { modifiers, key, label: [...modifiers, keyLabel].join("+") };
}

/** @param {Iterable<Modifier>} modifiers */
function bits(modifiers) {
  let value = 0;
  for (const m of modifiers) value |= MODIFIER_BITS[m];
  return value;
}

// Chrome on macOS edits through native commands that synthetic key events do not trigger.
const MAC_COMMANDS = { a: "selectAll", c: "copy", x: "cut", v: "paste", z: "undo" };

/** @param {Combo} combo @param {string} platform */
function editingCommands(combo, platform) {
  if (platform !== "mac" || !combo.modifiers.includes("Meta")) return undefined;
  const letter = combo.key.code.startsWith("Key") ? combo.key.code.slice(3).toLowerCase() : "";
  if (letter === "z" && combo.modifiers.includes("Shift")) return ["redo"];
  const command = MAC_COMMANDS[/** @type {keyof MAC_COMMANDS} */ (letter)];
  return command && combo.modifiers.length === 1 ? [command] : undefined;
}

/**
 * @param {KeyDefinition} def @param {number} modifiers @param {boolean} withText
 * @returns {[KeyEvent, KeyEvent]} down and up
 */
function keyPair(def, modifiers, withText) {
  const common = { key: def.key, code: def.code, windowsVirtualKeyCode: def.keyCode, modifiers, ...(def.location ? { location: def.location } : {}) };
  /** @type {KeyEvent} */
  const down = withText && def.text ? { type: "keyDown", ...common, text: def.text, unmodifiedText: def.text } : { type: "rawKeyDown", ...common };
  return [down, { type: "keyUp", ...common }];
}

/**
 * Key events that hold modifiers (down in order) and let them go (up in reverse), as fingers do.
 * @param {Modifier[]} modifiers
 * @returns {{down: KeyEvent[], up: KeyEvent[]}}
 */
export function modifierEvents(modifiers) {
  /** @type {Modifier[]} */
  const held = [];
  const down = modifiers.map((m) => {
    held.push(m);
    return keyPair(/** @type {KeyDefinition} */ (BY_NAME.get(m.toLowerCase())), bits(held), false)[0];
  });
  const up = [...modifiers].reverse().map((m) => {
    held.splice(held.indexOf(m), 1);
    return keyPair(/** @type {KeyDefinition} */ (BY_NAME.get(m.toLowerCase())), bits(held), false)[1];
  });
  return { down, up };
}

/**
 * The Input.dispatchKeyEvent params that press a combo like a person: modifiers down in order, the
 * key down and up, modifiers up in reverse. The key types its text only without Control/Alt/Meta.
 * @param {Combo} combo
 * @param {{platform?: string}} [options]
 * @returns {KeyEvent[]}
 */
export function comboEvents(combo, { platform = "" } = {}) {
  const { down: hold, up: letGo } = modifierEvents(combo.modifiers);
  const held = combo.key.shift && !combo.modifiers.includes("Shift") ? [...combo.modifiers, /** @type {Modifier} */ ("Shift")] : combo.modifiers;
  const typesText = !combo.modifiers.some((m) => m !== "Shift");
  const [down, up] = keyPair(combo.key, bits(held), typesText);
  const commands = editingCommands(combo, platform);
  if (commands) down.commands = commands;
  return [...hold, down, up, ...letGo];
}

/**
 * The key events that type `text`, one group per character (a code point, so non-BMP characters stay
 * whole). "\n" presses Enter ("\r\n" too), "\t" Tab; other characters press their key, or, off the
 * US layout, are sent as text on a key without a code.
 * @param {string} text
 * @returns {KeyEvent[][]}
 */
export function textEvents(text) {
  /** @type {KeyEvent[][]} */
  const groups = [];
  const chars = [...text.replace(/\r\n?/g, "\n")];
  for (const ch of chars) {
    const def = ch === "\n" ? /** @type {KeyDefinition} */ (BY_NAME.get("enter")) : ch === "\t" ? /** @type {KeyDefinition} */ (BY_NAME.get("tab")) : lookupKey(ch);
    groups.push(keyPair(def, def.shift ? MODIFIER_BITS.Shift : 0, true));
  }
  return groups;
}
