// @ts-check
// A tool row's outcome line reads as the characters the page had, even from a clipped JSON result.
import test from "node:test";
import assert from "node:assert/strict";
import { outcomeLine } from "../../../src/tabpilot/extension/sidepanel/outcome.js";

test("a clipped result's label and title are decoded: no \\u00b7, no \\\"", () => {
  assert.equal(outcomeLine("snapshot", "tabpilot", '{"title":"Caf\\u00e9 \\u00b7 menu \\"x\\"","url":"http://x","lines":["aaa…'), 'read "Café · menu "x""');
  assert.equal(outcomeLine("click", "tabpilot", '{"target":{"label":"button \\"Sign \\u00b7 in\\"","ref":"e1"},"x":"…'), 'clicked button "Sign · in"');
  assert.equal(outcomeLine("eval", "tabpilot", '{"value":"a \\u00b7 b","more":"…'), '{"value":"a · b","more":"…');
});

test("a new tab is named by its address, not its id", () => {
  assert.equal(outcomeLine("click", "tabpilot", JSON.stringify({ target: { label: "link", ref: "e2" }, opened_tab: { tab_id: 7, url: "https://x.test/" } })), "clicked link @e2 → opened a new tab https://x.test/");
});

test("an answered dialog reads as what was done, and no result shows its tab id", () => {
  assert.equal(outcomeLine("dialog", "tabpilot", JSON.stringify({ tab_id: 3, answered: { type: "confirm", message: "Leave?", handled: "dismissed" } })), 'dismissed the confirm dialog "Leave?"');
  assert.equal(outcomeLine("wait", "tabpilot", JSON.stringify({ tab_id: 3, waited_ms: 5 })), '{"waited_ms":5}');
});

test("a clipped find or text result shows what was read, never its tab id", () => {
  assert.equal(outcomeLine("find", "tabpilot", '{"tab_id":2015,"text":"1 match for \\"plan\\": # heading [textbox…'), '1 match for "plan": # heading [textbox…');
  assert.equal(outcomeLine("text", "tabpilot", '{"tab_id":2015,"url":"http://x/","title":"QZX title","text":"long…'), 'read "QZX title"');
  assert.equal(outcomeLine("wait", "tabpilot", '{"tab_id":2015,"waited":"long…'), '{"waited":"long…');
});
