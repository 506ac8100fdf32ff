// Target parsing (refs, text=, CSS), the selector split that lets CSS cross shadow boundaries, and the
// per-tab ref numbering.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseTarget, splitSelector } from "../../../src/tabpilot/extension/page/targets.js";
import { createRefs, refNumber, STORAGE_KEY } from "../../../src/tabpilot/extension/page/refs.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { FakeEvent } from "../helpers/fake-chrome.js";

test("refs: @e12, e12, any case, spaces around", () => {
  for (const raw of ["@e12", "e12", "@E12", "  @e12 "]) assert.deepEqual(parseTarget(raw), { kind: "ref", ref: "e12" });
  assert.equal(refNumber("@e0"), null);
  assert.equal(refNumber("@@e1"), null);
  assert.equal(refNumber(12), null);
});

test('text= : quoted is exact (JSON escapes work), bare is any case and part of the text', () => {
  assert.deepEqual(parseTarget('text="Save"'), { kind: "text", text: "Save", exact: true });
  assert.deepEqual(parseTarget("text='Save all'"), { kind: "text", text: "Save all", exact: true });
  assert.deepEqual(parseTarget('text="say \\"hi\\""'), { kind: "text", text: 'say "hi"', exact: true });
  assert.deepEqual(parseTarget("text=save"), { kind: "text", text: "save", exact: false });
  assert.deepEqual(parseTarget("TEXT= Sign in "), { kind: "text", text: "Sign in", exact: false });
  assert.deepEqual(parseTarget('text="half'), { kind: "text", text: '"half', exact: false });
});

test("anything else is CSS; empty targets are invalid_params with a hint", () => {
  assert.deepEqual(parseTarget("#save"), { kind: "css", selector: "#save" });
  assert.deepEqual(parseTarget("e12x"), { kind: "css", selector: "e12x" });
  assert.deepEqual(parseTarget("button[name=text]"), { kind: "css", selector: "button[name=text]" });
  for (const raw of ["", "   ", undefined, 5, "text=", 'text=""']) {
    assert.throws(() => parseTarget(raw), (err) => err.code === "invalid_params" && /text=|ref/.test(err.data.hint ?? err.message));
  }
});

test("selectors split at top-level descendant combinators only", () => {
  assert.deepEqual(splitSelector("fancy-field button"), [["fancy-field", "button"]]);
  assert.deepEqual(splitSelector("main .card > button, #x a"), [["main", ".card > button"], ["#x", "a"]]);
  assert.deepEqual(splitSelector('a[title="x y"] b'), [['a[title="x y"]', "b"]]);
  assert.deepEqual(splitSelector("div:not(.a .b)   span"), [["div:not(.a .b)", "span"]]);
  assert.deepEqual(splitSelector("a >  b ~ c"), [["a > b ~ c"]]);
  assert.deepEqual(splitSelector("x\\ y z"), [["x\\ y", "z"]]);
  assert.deepEqual(splitSelector("button"), [["button"]]);
});

test("ref numbering: one counter per tab, owners by range, never reused", async () => {
  const refs = createRefs();
  assert.equal(await refs.next(1), 1);
  refs.issued(1, "MAIN", 1, 40);
  refs.issued(1, "CHILD", 40, 45);
  refs.issued(1, "MAIN", 45, 50);
  assert.equal(await refs.next(1), 50);
  assert.equal(await refs.next(2), 1, "another tab counts on its own");
  assert.equal(refs.owner(1, 12), "MAIN");
  assert.equal(refs.owner(1, 44), "CHILD");
  assert.equal(refs.owner(1, 45), "MAIN");
  assert.equal(refs.owner(1, 50), null);
  assert.equal(refs.wasIssued(1, 49), true);
  assert.equal(refs.wasIssued(1, 50), false);
  // An agent that already counted further moves the counter past its own numbers.
  refs.issued(1, "MAIN", 50, 50);
  refs.issued(1, "CHILD", 60, 70);
  assert.equal(await refs.next(1), 70);
});

test("ref counters survive a service-worker restart; a closed tab is forgotten", async () => {
  const storage = new FakeStorage();
  const tabs = { onRemoved: new FakeEvent() };
  const refs = createRefs({ storage, tabs });
  refs.issued(7, "F", 1, 30);
  refs.issued(8, "F", 1, 5);
  await new Promise((r) => setTimeout(r, 0));
  const again = createRefs({ storage, tabs: { onRemoved: new FakeEvent() } });
  assert.equal(await again.next(7), 30);
  assert.equal(again.owner(7, 3), null, "owners are memory only: every frame is asked");
  assert.equal(again.wasIssued(7, 3), true);
  tabs.onRemoved.fire(8);
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual((await storage.get(STORAGE_KEY))[STORAGE_KEY], { 7: 30 });
});
