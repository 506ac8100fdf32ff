// Key names, aliases and combos → Input.dispatchKeyEvent params.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lookupKey, parseCombo, comboEvents, textEvents, MODIFIER_BITS } from "../../../src/tabpilot/extension/page/keys.js";
import { RpcError } from "../../../src/tabpilot/extension/link/protocol.js";

const summary = (events) => events.map((e) => [e.type, e.key, e.code, e.windowsVirtualKeyCode, e.modifiers, e.text ?? null]);

test("names are case-insensitive and aliases map to the canonical key", () => {
  for (const [raw, key, code, keyCode] of [
    ["Enter", "Enter", "Enter", 13],
    ["enter", "Enter", "Enter", 13],
    ["RETURN", "Enter", "Enter", 13],
    ["esc", "Escape", "Escape", 27],
    ["Del", "Delete", "Delete", 46],
    ["up", "ArrowUp", "ArrowUp", 38],
    ["arrowdown", "ArrowDown", "ArrowDown", 40],
    ["PgDn", "PageDown", "PageDown", 34],
    ["space", " ", "Space", 32],
    ["Tab", "Tab", "Tab", 9],
    ["f5", "F5", "F5", 116],
    ["F24", "F24", "F24", 135],
    ["Numpad7", "7", "Numpad7", 103],
    ["numpadenter", "Enter", "NumpadEnter", 13],
    ["KeyQ", "q", "KeyQ", 81],
    ["Digit3", "3", "Digit3", 51],
    ["ctrl", "Control", "ControlLeft", 17],
    ["Cmd", "Meta", "MetaLeft", 91],
    ["option", "Alt", "AltLeft", 18],
    ["plus", "+", "Equal", 187],
  ]) {
    const def = lookupKey(raw);
    assert.deepEqual([def.key, def.code, def.keyCode], [key, code, keyCode], raw);
  }
  assert.equal(lookupKey("Enter").text, "\r");
  assert.equal(lookupKey("Numpad7").location, 3);
  assert.equal(lookupKey("Shift").location, 1);
});

test("single characters: their US-layout key, shifted ones marked, others as plain text", () => {
  assert.deepEqual(lookupKey("a"), { key: "a", code: "KeyA", keyCode: 65, text: "a", location: 0, shift: false });
  assert.deepEqual(lookupKey("A"), { key: "A", code: "KeyA", keyCode: 65, text: "A", location: 0, shift: true });
  assert.deepEqual(lookupKey("!"), { key: "!", code: "Digit1", keyCode: 49, text: "!", location: 0, shift: true });
  assert.deepEqual(lookupKey("?"), { key: "?", code: "Slash", keyCode: 191, text: "?", location: 0, shift: true });
  assert.deepEqual(lookupKey("é"), { key: "é", code: "", keyCode: 0, text: "é", location: 0, shift: false });
  assert.deepEqual(lookupKey("😀"), { key: "😀", code: "", keyCode: 0, text: "😀", location: 0, shift: false });
});

test("unknown keys are invalid_params / unknown_key with a hint", () => {
  for (const raw of ["Entr", "", "ab", "Control+Q+W", "Shift+"]) {
    assert.throws(
      () => parseCombo(raw),
      (err) => err instanceof RpcError && err.code === "invalid_params" && err.reason === "unknown_key" && err.data.hint.length > 0,
      raw,
    );
  }
});

test("combos: modifiers in order, the key last, '+' usable as a key", () => {
  const ctrlA = parseCombo("Control+A");
  assert.deepEqual(ctrlA.modifiers, ["Control"]);
  assert.equal(ctrlA.key.code, "KeyA");
  assert.equal(parseCombo("ctrl+a").label, "Control+A");
  assert.equal(parseCombo("Control+A").key.key, "a");
  assert.equal(parseCombo("A").key.key, "A");
  assert.equal(parseCombo("Shift+Tab").label, "Shift+Tab");
  assert.equal(parseCombo("shift + tab").key.key, "Tab");
  assert.deepEqual(parseCombo("Control++").key.key, "+");
  assert.deepEqual(parseCombo("+").modifiers, []);
  assert.equal(parseCombo(" ").key.key, " ");
  assert.equal(parseCombo("Meta+Shift+Meta+z").label, "Meta+Shift+Z");
});

test("Shift turns a printable key into its shifted character", () => {
  assert.equal(parseCombo("Shift+a").key.key, "A");
  assert.equal(parseCombo("Shift+1").key.key, "!");
  assert.equal(parseCombo("Shift+/").key.text, "?");
  assert.equal(parseCombo("Shift+Enter").key.key, "Enter");
});

test("combo events press modifiers like a person and type text only without Control/Alt/Meta", () => {
  assert.deepEqual(summary(comboEvents(parseCombo("Control+A"))), [
    ["rawKeyDown", "Control", "ControlLeft", 17, MODIFIER_BITS.Control, null],
    ["rawKeyDown", "a", "KeyA", 65, MODIFIER_BITS.Control, null],
    ["keyUp", "a", "KeyA", 65, MODIFIER_BITS.Control, null],
    ["keyUp", "Control", "ControlLeft", 17, 0, null],
  ]);
  assert.deepEqual(summary(comboEvents(parseCombo("Shift+1"))), [
    ["rawKeyDown", "Shift", "ShiftLeft", 16, 8, null],
    ["keyDown", "!", "Digit1", 49, 8, "!"],
    ["keyUp", "!", "Digit1", 49, 8, null],
    ["keyUp", "Shift", "ShiftLeft", 16, 0, null],
  ]);
  assert.deepEqual(summary(comboEvents(parseCombo("Enter"))), [
    ["keyDown", "Enter", "Enter", 13, 0, "\r"],
    ["keyUp", "Enter", "Enter", 13, 0, null],
  ]);
  // A shifted character on its own carries the Shift bit a person's finger would add.
  assert.deepEqual(summary(comboEvents(parseCombo("?"))), [
    ["keyDown", "?", "Slash", 191, 8, "?"],
    ["keyUp", "?", "Slash", 191, 8, null],
  ]);
  const ctrlShiftTab = comboEvents(parseCombo("Control+Shift+Tab"));
  assert.deepEqual(ctrlShiftTab.map((e) => e.modifiers), [2, 10, 10, 10, 2, 0]);
});

test("macOS editing shortcuts carry their editing command; ControlOrMeta follows the platform", () => {
  const [, down] = comboEvents(parseCombo("Meta+A", { platform: "mac" }), { platform: "mac" });
  assert.deepEqual(down.commands, ["selectAll"]);
  const redo = comboEvents(parseCombo("Meta+Shift+Z", { platform: "mac" }), { platform: "mac" });
  assert.deepEqual(redo.find((e) => e.commands)?.commands, ["redo"]);
  assert.equal(comboEvents(parseCombo("Control+A")).some((e) => e.commands), false);
  assert.equal(comboEvents(parseCombo("Meta+A"), { platform: "linux" }).some((e) => e.commands), false);
  assert.deepEqual(parseCombo("ControlOrMeta+V", { platform: "mac" }).modifiers, ["Meta"]);
  assert.deepEqual(parseCombo("ControlOrMeta+V", { platform: "linux" }).modifiers, ["Control"]);
});

test("text: one key press per character, non-BMP characters whole, newlines as Enter", () => {
  const groups = textEvents("aB!é😀\r\n\t");
  assert.equal(groups.length, 7);
  assert.deepEqual(
    groups.map(([down]) => [down.type, down.key, down.code, down.modifiers, down.text ?? null]),
    [
      ["keyDown", "a", "KeyA", 0, "a"],
      ["keyDown", "B", "KeyB", 8, "B"],
      ["keyDown", "!", "Digit1", 8, "!"],
      ["keyDown", "é", "", 0, "é"],
      ["keyDown", "😀", "", 0, "😀"],
      ["keyDown", "Enter", "Enter", 0, "\r"],
      ["rawKeyDown", "Tab", "Tab", 0, null],
    ],
  );
  assert.ok(groups.every(([, up]) => up.type === "keyUp"));
  assert.deepEqual(textEvents(""), []);
});
