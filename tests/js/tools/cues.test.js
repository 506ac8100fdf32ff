// @ts-check
import { test } from "node:test";
import assert from "node:assert/strict";
import { METHODS } from "../../../src/tabpilot/extension/tools/index.js";
import { CUES } from "../../../src/tabpilot/extension/tools/cues.js";

test("every tool of the dispatcher table chose its cue, and the cue table names no other", () => {
  assert.deepEqual(Object.keys(CUES).sort(), Object.keys(METHODS).sort());
  for (const [method, kind] of Object.entries(CUES)) assert.ok(["element", "edge", "none"].includes(kind), `${method}: ${kind}`);
});

test("what acts on an element rings it; what goes somewhere frames the page; reads draw nothing", () => {
  for (const m of ["click", "hover", "fill", "check", "select", "drag", "upload"]) assert.equal(CUES[`tool.${m}`], "element");
  for (const m of ["navigate", "navigate_back", "reload", "scroll"]) assert.equal(CUES[`tool.${m}`], "edge");
  for (const m of ["snapshot", "text", "find", "screenshot", "evaluate"]) assert.equal(CUES[`tool.${m}`], "none");
});
