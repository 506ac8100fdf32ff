// @ts-check
import { test } from "node:test";
import assert from "node:assert/strict";
import { createPreloading } from "../../../src/tabpilot/extension/person/preloading.js";

function world() {
  const calls = [];
  let control = "controlled_by_this_extension";
  const setting = {
    async set(/** @type {any} */ d) {
      calls.push(["set", d.value]);
    },
    async clear() {
      calls.push(["clear"]);
    },
    async get() {
      return { value: false, levelOfControl: control };
    },
  };
  /** @type {string[]} */
  let ids = [];
  /** @type {(() => void)[]} */
  const listeners = [];
  const sessions = { listSessionIds: async () => ids, onChange: (/** @type {() => void} */ fn) => (listeners.push(fn), () => {}), ready: Promise.resolve() };
  const warnings = [];
  const preloading = createPreloading({ setting, sessions, log: { warn: (/** @type {string} */ m) => warnings.push(m) } });
  return {
    calls,
    warnings,
    preloading,
    /** @param {string[]} next */
    sessionsAre: async (next) => {
      ids = next;
      listeners.forEach((fn) => fn());
      await preloading.refresh();
    },
    controlledBy: (/** @type {string} */ who) => (control = who),
  };
}

test("speculative loading is off while any session is open and given back after the last one", async () => {
  const w = world();
  await w.preloading.refresh();
  assert.deepEqual(w.calls, [["clear"]]);
  await w.sessionsAre(["a"]);
  await w.sessionsAre(["a", "p-x"]);
  await w.preloading.refresh();
  assert.deepEqual(w.calls, [["clear"], ["set", false]]);
  await w.sessionsAre([]);
  assert.deepEqual(w.calls, [["clear"], ["set", false], ["clear"]]);
  assert.deepEqual(w.warnings, []);
});

test("a setting a policy or another extension holds is reported, not taken for off", async () => {
  const w = world();
  w.controlledBy("controlled_by_other_extensions");
  await w.sessionsAre(["a"]);
  assert.match(w.warnings.join(""), /controlled_by_other_extensions/);
});
