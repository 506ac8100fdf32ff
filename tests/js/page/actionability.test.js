// A cover that has settled is reported at once; one that animates, moves, fades or changes is waited out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SETTLED_COVER_MS, watchCover } from "../../../src/tabpilot/extension/page/actionability.js";

const banner = { cover: { tag: "div#banner", role: "dialog", name: "Cookie consent", text: "We use cookies" }, box: [0, 400, 800, 300, 1], animating: false };

test("the same cover, nothing animating, on looks SETTLED_COVER_MS apart has settled", () => {
  let watched = watchCover(null, banner, 1000);
  assert.equal(watched.settled, false);
  watched = watchCover(watched.seen, banner, 1000 + SETTLED_COVER_MS - 1);
  assert.equal(watched.settled, false);
  watched = watchCover(watched.seen, banner, 1000 + SETTLED_COVER_MS);
  assert.equal(watched.settled, true);
});

test("an animating page, another cover, or the same cover moved or fading starts the watch over", () => {
  const first = watchCover(null, banner, 0).seen;
  for (const look of [
    { ...banner, animating: true },
    { ...banner, cover: { ...banner.cover, text: "Loading…" } },
    { ...banner, box: [0, 380, 800, 300, 1] },
    { ...banner, box: [0, 400, 800, 300, 0.6] },
  ]) {
    const watched = watchCover(first, look, SETTLED_COVER_MS * 3);
    assert.equal(watched.settled, false, JSON.stringify(look));
    if (!look.animating) assert.equal(watched.seen?.since, SETTLED_COVER_MS * 3);
    else assert.equal(watched.seen, null);
  }
});

test("the action code travels to a frame's world once: later looks send a line, and a new world gets it again", async () => {
  const { actionable } = await import("../../../src/tabpilot/extension/page/actionability.js");
  const { AGENT_KEY } = await import("../../../src/tabpilot/extension/snapshot/index.js");
  const vm = await import("node:vm");
  const world = () => {
    const context = vm.createContext({});
    // The snapshot agent of this world knows no element: every look finds its ref gone.
    vm.runInContext(`globalThis[Symbol.for(${JSON.stringify(AGENT_KEY)})] = { resolve: () => null };`, context);
    return context;
  };
  let context = world();
  const sent = [];
  const main = { tabId: 1, sessionId: null, frameId: "F" };
  const ctx = {
    refs: { owner: () => "F" },
    frames: {
      main: async () => main,
      call: async (frame, source, args) => {
        sent.push(source.length);
        return vm.runInContext(`(${source})`, context)(...args);
      },
    },
  };
  const look = () => assert.rejects(actionable(ctx, 1, "@e4", { pointer: true, handle: false, timeoutMs: 1000 }), { reason: "ref_stale" });
  await look();
  assert.equal(sent.length, 2, "the first look finds no action code and sends it");
  assert.ok(sent[0] < 200 && sent[1] > 5000, `${sent}`);
  await look();
  assert.equal(sent.length, 3);
  assert.ok(sent[2] < 200);
  context = world();
  await look();
  assert.equal(sent.length, 5, "a new world (the page navigated) gets it again");
});

test("a call on a ref looked at without a handle finds the element by its number, and a ref gone since is stale", async () => {
  const { callOnTarget } = await import("../../../src/tabpilot/extension/page/actionability.js");
  const { AGENT_KEY } = await import("../../../src/tabpilot/extension/snapshot/index.js");
  const vm = await import("node:vm");
  const context = vm.createContext({});
  vm.runInContext(`const field = { value: "old" }; globalThis[Symbol.for(${JSON.stringify(AGENT_KEY)})] = { resolve: (n) => (n === 7 ? field : null) };`, context);
  const byHandle = [];
  const ctx = {
    frames: {
      call: async (frame, source, args) => vm.runInContext(`(${source})`, context)(...args),
      callOn: async (frame, objectId, source, args) => (byHandle.push(objectId), "by handle"),
    },
  };
  const frame = { tabId: 1, sessionId: null, frameId: "F" };
  const set = "function (value) { const was = this.value; this.value = value; return was; }";
  assert.equal(await callOnTarget(ctx, { frame, objectId: null, ref: "e7", label: "textbox" }, set, ["new"]), "old");
  assert.equal(await callOnTarget(ctx, { frame, objectId: null, ref: "e7", label: "textbox" }, "function () { return this.value; }"), "new");
  await assert.rejects(callOnTarget(ctx, { frame, objectId: null, ref: "e8", label: "textbox" }, set, ["x"]), { reason: "ref_stale" });
  assert.equal(await callOnTarget(ctx, { frame, objectId: "H1", ref: "e7", label: "textbox" }, set, ["x"]), "by handle");
  assert.deepEqual(byHandle, ["H1"]);
});
