// A tab's snapshot across frames (page/snapshots.js) with the in-page agents replaced by recorded
// answers: refs booked per frame, cross-origin frames spliced in within the budget, --diff.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSnapshots } from "../../../src/tabpilot/extension/page/snapshots.js";
import { createRefs } from "../../../src/tabpilot/extension/page/refs.js";

/**
 * Frames whose agents answer snapshot() with `pages[frameId](refStart, options)`; the iframe element
 * behind ref N of a frame is `owners[N]` (a frame id).
 */
function fakeFrames(pages, owners) {
  const calls = [];
  const handle = (frameId) => ({ tabId: 1, sessionId: frameId === "MAIN" ? null : `S-${frameId}`, frameId });
  return {
    calls,
    async main() {
      return handle("MAIN");
    },
    async list() {
      return Object.keys(pages).map((id) => ({ ...handle(id), parentFrameId: id === "MAIN" ? null : "MAIN", url: "" }));
    },
    async evaluate(frame, expression, { returnByValue = true } = {}) {
      calls.push([frame.frameId, expression.replace(/^.*?\]\./, "")]);
      const resolve = /\.resolve\((\d+)\)$/.exec(expression);
      if (resolve) return owners[resolve[1]] ? { objectId: `iframe-${resolve[1]}` } : { type: "object", subtype: "null" };
      const options = JSON.parse(/\.snapshot\((.*)\)$/.exec(expression)[1]);
      assert.equal(returnByValue, true);
      return pages[frame.frameId](options.refStart, options);
    },
    async send(frame, method, params) {
      if (method === "DOM.describeNode") return { node: { frameId: owners[params.objectId.slice(7)] } };
      return {};
    },
  };
}

/**
 * An in-page agent: `render()` gives lines in which `@e{key}` stands for the element `key`; like the real
 * agent it keeps an element's number for as long as it lives, and counts on from refStart.
 */
function agent(render, { frames = [], tokens = 10 } = {}) {
  const store = { next: 1, refs: new Map() };
  return (refStart) => {
    store.next = Math.max(store.next, refStart);
    const refOf = (key) => {
      if (!store.refs.has(key)) store.refs.set(key, store.next++);
      return store.refs.get(key);
    };
    const text = render().join("\n").replace(/@e\{(\w+)\}/g, (_, key) => `@e${refOf(key)}`);
    return {
      text,
      frames: frames.map((key) => ({ ref: `e${refOf(key)}`, name: "Other", src: "" })),
      nextRef: store.next,
      truncated: null,
      url: "http://top/",
      title: "Top",
      stats: { tokens, totalTokens: tokens },
    };
  };
}

test("a cross-origin frame is snapshotted in its own world, numbered after the top, and spliced in", async () => {
  const refs = createRefs();
  const pages = {
    MAIN: agent(() => ["# Top", '[button "A" @e{a}]', '[iframe "Other" @e{frame}]', "after"], { frames: ["frame"] }),
    CHILD: agent(() => ["## Inside", '[button "B" @e{b}]']),
  };
  const frames = fakeFrames(pages, { 2: "CHILD" });
  const snapshots = createSnapshots({ frames, refs });
  const s = await snapshots.take(1, {});
  assert.equal(s.text, ["# Top", "[button \"A\" @e1]", "--- iframe \"Other\" @e2", "## Inside", "[button \"B\" @e3]", "--- /iframe", "after"].join("\n"));
  assert.deepEqual([s.refs, s.frames, s.tokens, s.truncated], [3, 1, 20, false]);
  assert.deepEqual([refs.owner(1, 1), refs.owner(1, 2), refs.owner(1, 3)], ["MAIN", "MAIN", "CHILD"]);
  // the next snapshot starts where this one stopped: refs are never given twice in a tab
  assert.equal(await refs.next(1), 4);
  assert.equal((await snapshots.take(1, {})).text, s.text, "the same elements keep their refs");
  assert.match(frames.calls.filter(([, e]) => e.startsWith("snapshot")).at(-2)[1], /"refStart":4/);
});

test("a frame is left as its placeholder line when the budget is spent", async () => {
  const pages = {
    MAIN: agent(() => ["# Top", '[iframe "Other" @e{frame}]'], { frames: ["frame"], tokens: 190 }),
    CHILD: () => assert.fail("no budget left for the frame"),
  };
  const snapshots = createSnapshots({ frames: fakeFrames(pages, { 1: "CHILD" }), refs: createRefs() });
  const s = await snapshots.take(1, { maxTokens: 200 });
  assert.equal(s.text, "# Top\n[iframe \"Other\" @e1]");
  assert.equal(s.frames, 0);
});

test("afterAction: the whole snapshot, then only what changed, each time against the last one", async () => {
  let label = "Buy";
  const pages = { MAIN: agent(() => ["# Shop", `[button "${label}" @e{${label}}]`, "footer"]) };
  const snapshots = createSnapshots({ frames: fakeFrames(pages, {}), refs: createRefs() });
  assert.equal(await snapshots.afterAction(1, "diff"), "(no earlier snapshot of this tab: the whole snapshot follows)\n# Shop\n[button \"Buy\" @e1]\nfooter");
  assert.equal(await snapshots.afterAction(1, "diff"), "(no change since the last snapshot)");
  label = "Bought";
  assert.equal(await snapshots.afterAction(1, "diff"), "@@ # Shop\n- [button \"Buy\" @e1]\n+ [button \"Bought\" @e2]");
  assert.equal(await snapshots.afterAction(1, "snapshot"), "# Shop\n[button \"Bought\" @e2]\nfooter");
});
