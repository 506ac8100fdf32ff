// The snapshot engine's service-worker side: calling expressions, ref parsing, frame splicing.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  pageAgentSource,
  snapshotExpression,
  findExpression,
  resolveExpression,
  statusExpression,
  locateExpression,
  parseRef,
  refsIn,
  spliceFrames,
  DEFAULT_MAX_TOKENS,
} from "../../../src/tabpilot/extension/snapshot/index.js";

test("the page source is one cached expression that installs and returns the agent", () => {
  const src = pageAgentSource();
  assert.equal(pageAgentSource(), src);
  assert.match(src, /^\(\(\) => \{/);
  assert.match(src, /\}\)\(\)$/);
  // it parses as an expression
  assert.doesNotThrow(() => new Function(`return ${src};`));
  assert.equal(DEFAULT_MAX_TOKENS, 12000);
});

test("calling expressions embed their arguments as JSON", () => {
  const src = pageAgentSource();
  assert.equal(snapshotExpression({ mode: "interactive", refStart: 7 }), `${src}.snapshot({"mode":"interactive","refStart":7})`);
  assert.equal(snapshotExpression(), `${src}.snapshot({})`);
  assert.equal(findExpression('say "hi"', { maxMatches: 5 }), `${src}.find("say \\"hi\\"", {"maxMatches":5})`);
  assert.equal(resolveExpression("@e12"), `${src}.resolve("@e12")`);
  assert.equal(statusExpression(12), `${src}.status(12)`);
  assert.equal(locateExpression("e3"), `${src}.locate("e3")`);
});

test("parseRef accepts @eN, eN, N and numbers; nothing else", () => {
  assert.equal(parseRef("@e12"), 12);
  assert.equal(parseRef("e12"), 12);
  assert.equal(parseRef("E12"), 12);
  assert.equal(parseRef(" @@e7 "), 7);
  assert.equal(parseRef("12"), 12);
  assert.equal(parseRef(12), 12);
  for (const bad of ["", "e", "@x1", "e1.5", "e-1", 0, -3, 1.5, null, undefined, {}]) assert.equal(parseRef(bad), null, String(bad));
});

test("refsIn lists the refs of a text in order", () => {
  assert.deepEqual(refsIn('[a @e1] [button "b" @e22 pressed]\n--- iframe @e3'), [1, 22, 3]);
  assert.deepEqual(refsIn("no refs, e5 or @e"), []);
});

test("spliceFrames replaces cross-origin placeholders with the frame's own snapshot", () => {
  const parent = ["# Shop", '[iframe "Pay \\"now\\"" @e4]', "- item", '  [iframe @e9]', "[iframe @e10]", "Footer"].join("\n");
  const out = spliceFrames(parent, {
    e4: '[textbox "Card" @e11]\n[button "Pay" @e12]',
    "@e9": "inner text",
    e77: "not in the text",
  });
  assert.equal(
    out,
    [
      "# Shop",
      '--- iframe "Pay \\"now\\"" @e4',
      '[textbox "Card" @e11]',
      '[button "Pay" @e12]',
      "--- /iframe",
      "- item",
      "  --- iframe @e9",
      "  inner text",
      "  --- /iframe",
      "[iframe @e10]",
      "Footer",
    ].join("\n"),
  );
  assert.equal(spliceFrames(parent, {}), parent);
  assert.equal(spliceFrames("[iframe @e2]", { e2: "" }), "--- iframe @e2\n--- /iframe");
});
