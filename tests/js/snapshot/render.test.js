// The snapshot renderer on page structures recorded from real pages (tests/js/fixtures/*.ir.json, walked
// in Chromium from the Debian python3-doc pages and tests/pages/forms.html).
// Golden texts: tests/js/fixtures/*.expected.txt; TABPILOT_UPDATE_GOLDEN=1 rewrites them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { renderSnapshot, layoutSnapshot } from "../../../src/tabpilot/extension/snapshot/render.js";

const fixture = (/** @type {string} */ name) => new URL(`./fixtures/${name}`, import.meta.url);
const load = (/** @type {string} */ name) => JSON.parse(readFileSync(fixture(`${name}.ir.json`), "utf8"));
const FULL = { maxTokens: 0 };

/** Every ref number in an IR (actionables and frames). @param {any} n @param {number[]} [out] */
function irRefs(n, out = []) {
  if (typeof n === "string" || !n) return out;
  if (n.ref != null) out.push(n.ref);
  for (const c of n.c || []) irRefs(c, out);
  return out;
}
/** Every word of the IR's text. @param {any} n @param {string[]} [out] */
function irWords(n, out = []) {
  if (typeof n === "string") {
    out.push(...(n.match(/\w+/g) || []));
    return out;
  }
  for (const c of n.c || []) irWords(c, out);
  return out;
}
/** @param {string} text */
const refsOf = (text) => [...text.matchAll(/@e(\d+)\b/g)].map((m) => +m[1]);

/** @param {string} name @param {string} text */
function golden(name, text) {
  const file = fixture(`${name}.expected.txt`);
  if (process.env.TABPILOT_UPDATE_GOLDEN) writeFileSync(file, text + "\n");
  assert.equal(text + "\n", readFileSync(file, "utf8"), `${name} differs from its golden text`);
}

for (const page of ["index", "json", "forms"]) {
  test(`${page}: every ref of the structure appears exactly once, in document order`, () => {
    const ir = load(page);
    const { text } = renderSnapshot(ir, FULL);
    const expected = irRefs(ir);
    assert.ok(expected.length > 20);
    assert.deepEqual(refsOf(text), expected);
  });

  test(`${page}: every word of the structure's text is in the snapshot`, () => {
    const ir = load(page);
    const have = new Map();
    for (const w of renderSnapshot(ir, FULL).text.match(/\w+/g) || []) have.set(w, (have.get(w) || 0) + 1);
    const missing = [];
    for (const w of irWords(ir)) {
      const n = have.get(w) || 0;
      if (n) have.set(w, n - 1);
      else missing.push(w);
    }
    assert.deepEqual(missing, []);
  });

  test(`${page}: interactive mode keeps every ref and only context besides`, () => {
    const ir = load(page);
    const { text } = renderSnapshot(ir, { ...FULL, mode: "interactive" });
    assert.deepEqual(refsOf(text), irRefs(ir));
    for (const line of text.split("\n")) {
      assert.match(line, /^(#{1,6} |--- |\[|[^[]*: \[)/, `unexpected line in -i: ${line}`);
    }
  });
}

test("index.html renders as its golden text", () => {
  golden("index.full", renderSnapshot(load("index"), FULL).text);
});

test("json.html (excerpt) renders as its golden text, full and interactive", () => {
  golden("json.full", renderSnapshot(load("json"), FULL).text);
  golden("json.interactive", renderSnapshot(load("json"), { ...FULL, mode: "interactive" }).text);
});

test("forms page renders as its golden text, full and interactive", () => {
  golden("forms.full", renderSnapshot(load("forms"), FULL).text);
  golden("forms.interactive", renderSnapshot(load("forms"), { ...FULL, mode: "interactive" }).text);
});

test("json.html: headings, links, code fences, tables and the sidebar read as flow text", () => {
  const lines = renderSnapshot(load("json"), FULL).text.split("\n");
  const has = (/** @type {string} */ l) => assert.ok(lines.includes(l), `missing line: ${l}`);
  has('--- navigation "related navigation"');
  has("- [index @e1]");
  has("# [json @e12] — JSON encoder and decoder");
  has("Source code: [Lib/json/__init__.py @e13]");
  has('[clickable ">>>" @e23]');
  has("```");
  has(">>> import json");
  has("| JSON | Python |");
  has("| number (real) | float |");
  has("  - [Basic Usage @e135]");
  has("    - [dump() @e136]");
  has("--- /navigation");
  // footnote links (role doc-noteref) are links, not clickables
  assert.ok(lines.some((l) => l.includes("JavaScript [[1] @e19] ).")));
  // code blocks are fenced in pairs
  assert.equal(lines.filter((l) => l === "```").length % 2, 0);
});

test("forms: each control's role, name, value and state can be read", () => {
  const text = renderSnapshot(load("forms"), FULL).text;
  for (const want of [
    '[textbox "Name" @e4 required focused value="Ada"]',
    '[textbox "Email" @e5 required placeholder="you@example.com"]',
    '[password "Password" @e6 value="••••••••"]',
    '[textbox "Coupon" @e10 invalid value="BAD"]',
    '[textbox "Order id" @e11 readonly value="A-1042"]',
    '[radio "Standard" @e12 checked] [radio "Express" @e13 unchecked] [radio "Pickup" @e14 unchecked disabled]',
    '[checkbox "Select all" @e17 mixed]',
    '[switch "Dark mode" @e18 checked]',
    '[combobox "Size" @e19 value="M" options="S|M|L"]',
    '[listbox "Toppings" @e20 value="Ham|Olives" options="Ham|Cheese|Olives"]',
    '[slider "Volume" @e22 value="30"]',
    '[date "Delivery date" @e23 value="2026-12-24"]',
    '[textbox "Notes" @e30 value="Leave at door"]',
    '[button "Pay later" @e34 disabled]',
    '[button "More options" @e35 collapsed]',
    '[button "Bold" @e36 pressed]',
    '[tab "Overview" @e38 selected]',
    '[combobox "Country" @e45 collapsed value="Norway"]',
    '[option "Apple" @e47 selected]',
    '[menuitemcheckbox "Show ruler" @e50 checked]',
    'Editable: [textbox @e51 value="Editable note"]',
    '[clickable @e57] Card title with a [card link @e58] inside.',
    '[summary "Shipping details" @e59 expanded]',
    '[summary "Returns" @e60 collapsed]',
    '[textbox "Nickname" @e61 value="ada99"] [button "Check" @e62]',
    '--- iframe "Child form" @e63',
    '[iframe "Other origin" @e67]',
    '| Tea | 2 | [button "Remove tea" @e68] |',
    '--- dialog "Cookies"',
  ]) {
    assert.ok(text.includes(want), `missing: ${want}`);
  }
  // label text that became a control's name is not repeated
  assert.ok(!/\bName \[textbox "Name"/.test(text));
  assert.ok(!text.includes("Subscribe [checkbox"));
  // hidden things stay hidden
  for (const hidden of ["Invisible words", "Aria hidden", "Hidden attribute", "Collapsed link", "Overlay button", "Returns text"]) {
    assert.ok(!text.includes(hidden), `should be hidden: ${hidden}`);
  }
  // sr-only text is kept
  assert.ok(text.includes("Fields marked required must be filled."));
});

test("forms: groups give context in interactive mode", () => {
  const text = renderSnapshot(load("forms"), { ...FULL, mode: "interactive" }).text;
  assert.ok(text.includes('Shipping: [radio "Standard" @e12 checked]'));
  assert.ok(text.includes('Contact: [textbox "Name" @e4'));
  assert.ok(text.startsWith('--- banner\n--- navigation "Site"\n[Home @e1] [Order @e2] [Help @e3 current]'));
});

test("the layout records the block and kind of each line", () => {
  const { lines, blocks, kinds } = layoutSnapshot(load("json"), {});
  assert.equal(lines.length, blocks.length);
  assert.equal(lines.length, kinds.length);
  const h1 = lines.findIndex((l) => l.startsWith("# "));
  assert.equal(kinds[h1], 1);
  assert.ok(blocks[h1] >= 0);
  const lm = lines.indexOf("--- main");
  assert.equal(kinds[lm], 7);
  const fences = lines.map((l, j) => (l === "```" ? kinds[j] : null)).filter((k) => k !== null);
  assert.ok(fences.every((k) => k === 9));
});
