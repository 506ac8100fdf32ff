// @ts-check
// The cue observer against fake frames: what it paints where, and that it never costs an action more
// than its bound or fails it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createCues, CUES_KEY, PAINT_WAIT_MS } from "../../../src/tabpilot/extension/page/cue.js";
import { cueOf } from "../../../src/tabpilot/extension/tools/cues.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { FakeEvent } from "../helpers/fake-event.js";

const MAIN = { tabId: 1, sessionId: null, frameId: "main" };
const CROSS = { tabId: 1, sessionId: "oopif", frameId: "cross" };

/** @param {{answer?: (args: unknown[]) => Promise<unknown>, stored?: Record<string, unknown>, blocked?: boolean}} [o] */
function setup({ answer = async () => undefined, stored = {}, blocked = false } = {}) {
  /** @type {{frame: any, op: unknown, on: string | null, words: unknown}[]} */
  const calls = [];
  const frames = {
    main: async () => MAIN,
    call: (/** @type {any} */ frame, /** @type {string} */ _source, /** @type {unknown[]} */ args) => {
      calls.push({ frame, op: args[0], on: null, words: args[2] });
      return answer(args);
    },
    callOn: (/** @type {any} */ frame, /** @type {string} */ objectId, /** @type {string} */ _source, /** @type {unknown[]} */ args) => {
      calls.push({ frame, op: args[0], on: objectId, words: args[2] });
      return answer(args);
    },
  };
  const storage = new FakeStorage(stored);
  const onChanged = new FakeEvent();
  const cues = createCues({ frames: /** @type {any} */ (frames), storage: /** @type {any} */ (storage), onChanged: /** @type {any} */ (onChanged), kindOf: cueOf, blocked: async () => blocked });
  return { cues, calls, storage, onChanged };
}

const call = (/** @type {string} */ method, params = {}) => ({ method, params, tabId: 1, sessionId: "s" });
const target = { frame: CROSS, objectId: "obj-1", ref: "e3", label: 'button "Go"', point: { x: 10, y: 10 } };

test("an element's cue is painted on the element, in its own frame; its outcome settles it there", async () => {
  const { cues, calls } = setup();
  const click = call("tool.click");
  await cues.before(click);
  await cues.atPoint(click, target);
  cues.after(click, false);
  assert.deepEqual(calls.map((c) => [c.frame.frameId, c.op, c.on, c.words]), [
    ["cross", "paint", "obj-1", 'click button "Go" @e3'],
    ["cross", "settle", null, "failed"],
  ]);
});

test("a navigation frames the top document before it goes; reads draw nothing", async () => {
  const { cues, calls } = setup();
  await cues.before(call("tool.navigate", { url: "https://example.com/a" }));
  for (const m of ["tool.snapshot", "tool.text", "tool.screenshot"]) {
    await cues.before(call(m));
    await cues.atPoint(call(m), target);
  }
  assert.deepEqual(calls.map((c) => [c.frame.frameId, c.op]), [["main", "paint"]]);
});

test("a frame that never answers costs the bound and nothing else; one that fails fails nothing", async () => {
  for (const answer of [() => new Promise(() => {}), async () => Promise.reject(new Error("frame gone"))]) {
    const { cues } = setup({ answer });
    const started = Date.now();
    await cues.atPoint(call("tool.click"), target);
    // The bound is PAINT_WAIT_MS; a loaded machine may add to it, never the frame.
    assert.ok(Date.now() - started < PAINT_WAIT_MS * 10, `${Date.now() - started} ms`);
  }
});

test("switched off on the options page, or on a blocked site, nothing is painted", async () => {
  const off = setup({ stored: { [CUES_KEY]: false } });
  await off.cues.atPoint(call("tool.click"), target);
  const blocked = setup({ blocked: true });
  await blocked.cues.atPoint(call("tool.click"), target);
  await blocked.cues.before(call("tool.navigate", { url: "https://example.com/" }));
  assert.deepEqual([off.calls, blocked.calls], [[], []]);
  // Switched on again: the next action has its cue.
  await off.storage.set({ [CUES_KEY]: true });
  off.onChanged.fire({ [CUES_KEY]: { newValue: true } }, "local");
  await off.cues.atPoint(call("tool.click"), target);
  assert.equal(off.calls.length, 1);
});

test("a screenshot clears the cues of its tab in every frame that shows one", async () => {
  const { cues, calls } = setup();
  await cues.atPoint(call("tool.click"), target);
  await cues.before(call("tool.scroll", { direction: "down" }));
  calls.length = 0;
  await cues.clear(1);
  assert.deepEqual(calls.map((c) => [c.frame.frameId, c.op]).sort(), [["cross", "clear"], ["main", "clear"]]);
  calls.length = 0;
  await cues.clear(1);
  assert.deepEqual(calls, []);
});
