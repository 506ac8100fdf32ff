// The composer's queue: messages typed during a turn wait and go out one per turn, in order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createComposerQueue } from "../../../src/tabpilot/extension/sidepanel/composer.js";

test("sends at once when idle; queues during a turn; sends the queue in order, one per turn", async () => {
  const sent = [];
  const q = createComposerQueue({ send: async (m) => void sent.push(m.text) });
  assert.equal(await q.submit({ text: "first", attach: [] }), "sent");
  assert.equal(q.running, true, "a turn counts as running once sent");
  assert.equal(await q.submit({ text: "second", attach: ["page"] }), "queued");
  assert.equal(await q.submit({ text: "third", attach: [] }), "queued");
  assert.deepEqual(q.queued.map((m) => m.text), ["second", "third"]);
  await q.setRunning(true);
  assert.deepEqual(sent, ["first"]);
  await q.setRunning(false);
  assert.deepEqual(sent, ["first", "second"]);
  await q.setRunning(true);
  await q.setRunning(true);
  assert.deepEqual(sent, ["first", "second"], "nothing more while the second turn runs");
  await q.setRunning(false);
  assert.deepEqual(sent, ["first", "second", "third"]);
  assert.equal(q.queued.length, 0);
});

test("a refused send leaves the composer idle and says why", async () => {
  const q = createComposerQueue({ send: async () => Promise.reject(new Error("blocked_site")) });
  await assert.rejects(q.submit({ text: "hi", attach: [] }), /blocked_site/);
  assert.equal(q.running, false);
  await assert.rejects(q.submit({ text: "  ", attach: [] }), /empty/);
});

test("clear drops what was queued", async () => {
  const sent = [];
  const q = createComposerQueue({ send: async (m) => void sent.push(m.text) });
  await q.submit({ text: "a", attach: [] });
  await q.submit({ text: "b", attach: [] });
  q.clear();
  await q.setRunning(false);
  assert.deepEqual(sent, ["a"]);
});
