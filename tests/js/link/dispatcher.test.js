// Dispatcher: one answer per request, cancel, duplicates, unknown methods, errors, auth gate.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createDispatcher } from "../../../src/tabpilot/extension/link/dispatcher.js";
import { METHODS } from "../../../src/tabpilot/extension/tools/index.js";
import { EXTENSION_METHODS, RpcError } from "../../../src/tabpilot/extension/link/protocol.js";

const quiet = { warn() {} };
const tick = () => new Promise((r) => setImmediate(r));

function setup(handlers) {
  const sent = [];
  const dispatcher = createDispatcher({ handlers, context: { marker: 1 }, log: quiet });
  dispatcher.setAuthenticated(true);
  const handle = (frame) => dispatcher.handle(frame, (out) => sent.push(out));
  return { sent, dispatcher, handle };
}

/** A handler that waits for its abort signal (like a long navigation). */
function untilAborted(_params, { signal }) {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("stopped"))));
}

test("the method table serves exactly the protocol's methods, cancel aside", () => {
  const served = new Set([...Object.keys(METHODS), "cancel"]);
  assert.deepEqual([...served].sort(), [...EXTENSION_METHODS].sort());
});

test("a result is answered with the request id and the handler sees params and context", async () => {
  const { sent, handle } = setup({ "tool.x": (params, ctx) => ({ got: params.a, marker: ctx.marker, signal: ctx.signal instanceof AbortSignal }) });
  handle({ id: "d-1", method: "tool.x", params: { a: 5 } });
  await tick();
  assert.deepEqual(sent, [{ id: "d-1", result: { got: 5, marker: 1, signal: true } }]);
});

test("missing params become {} and an undefined result becomes null", async () => {
  const { sent, handle } = setup({ "tool.x": (params) => void assert.deepEqual(params, {}) });
  handle({ id: "d-1", method: "tool.x" });
  await tick();
  assert.deepEqual(sent, [{ id: "d-1", result: null }]);
});

test("unknown methods, including inherited names, get unknown_method", async () => {
  const { sent, handle } = setup({});
  handle({ id: "d-1", method: "tool.nope" });
  handle({ id: "d-2", method: "toString" });
  await tick();
  assert.deepEqual(sent.map((f) => [f.id, f.error.code]), [["d-1", "unknown_method"], ["d-2", "unknown_method"]]);
});

test("a thrown RpcError keeps its code and data; anything else is protocol_error", async () => {
  const { sent, handle } = setup({
    "tool.a": () => {
      throw new RpcError("not_found", "no tab", "unknown_tab", { tab_id: 3 });
    },
    "tool.b": async () => {
      throw new TypeError("boom");
    },
  });
  handle({ id: "d-1", method: "tool.a" });
  handle({ id: "d-2", method: "tool.b" });
  await tick();
  assert.deepEqual(sent, [
    { id: "d-1", error: { code: "not_found", message: "no tab", data: { tab_id: 3, reason: "unknown_tab" } } },
    { id: "d-2", error: { code: "protocol_error", message: "boom" } },
  ]);
});

test("cancel aborts the request: the ack comes first, then cancelled/rpc_cancelled", async () => {
  let seenSignal;
  const { sent, handle } = setup({
    "tool.slow": (params, ctx) => {
      seenSignal = ctx.signal;
      return untilAborted(params, ctx);
    },
  });
  handle({ id: "d-1", method: "tool.slow" });
  await tick();
  handle({ id: "d-2", method: "cancel", params: { rpc_id: "d-1" } });
  await tick();
  assert.equal(seenSignal.aborted, true);
  assert.deepEqual(sent[0], { id: "d-2", result: { cancelled: true } });
  assert.equal(sent[1].id, "d-1");
  assert.equal(sent[1].error.code, "cancelled");
  assert.equal(sent[1].error.data.reason, "rpc_cancelled");
  assert.equal(sent.length, 2);
});

test("a handler that ignores its signal still answers cancelled at once, and only once", async () => {
  let finish;
  const { sent, handle } = setup({ "tool.deaf": () => new Promise((r) => (finish = r)) });
  handle({ id: "d-1", method: "tool.deaf" });
  await tick();
  handle({ id: "d-2", method: "cancel", params: { rpc_id: "d-1" } });
  await tick();
  finish({ late: true });
  await tick();
  assert.deepEqual(sent.map((f) => f.id), ["d-2", "d-1"]);
  assert.equal(sent[1].error.code, "cancelled");
});

test("cancel of an unknown or finished id answers cancelled:false", async () => {
  const { sent, handle } = setup({ "tool.x": () => ({}) });
  handle({ id: "d-1", method: "tool.x" });
  await tick();
  handle({ id: "d-2", method: "cancel", params: { rpc_id: "d-1" } });
  handle({ id: "d-3", method: "cancel", params: {} });
  assert.deepEqual(sent.slice(1), [
    { id: "d-2", result: { cancelled: false } },
    { id: "d-3", result: { cancelled: false } },
  ]);
});

test("a duplicate in-flight id is refused without disturbing the first", async () => {
  let finish;
  const { sent, handle } = setup({ "tool.x": () => new Promise((r) => (finish = r)) });
  handle({ id: "d-1", method: "tool.x" });
  handle({ id: "d-1", method: "tool.x" });
  await tick();
  assert.deepEqual(sent, [{ id: "d-1", error: { code: "protocol_error", message: "request id d-1 is already in flight", data: { reason: "duplicate_rpc_id" } } }]);
  finish({ ok: 1 });
  await tick();
  assert.deepEqual(sent[1], { id: "d-1", result: { ok: 1 } });
  handle({ id: "d-1", method: "tool.x" });
  await tick();
  assert.equal(sent.length, 2, "the id is free again once answered");
});

test("nothing is executed or answered before authentication", async () => {
  let calls = 0;
  const sent = [];
  const dispatcher = createDispatcher({ handlers: { "tool.x": () => ++calls }, context: {}, log: quiet });
  assert.equal(dispatcher.handle({ id: "d-1", method: "tool.x" }, (f) => sent.push(f)), true);
  await tick();
  assert.deepEqual([calls, sent.length], [0, 0]);
});

test("losing authentication aborts what is in flight", async () => {
  let signal;
  const { sent, dispatcher, handle } = setup({ "tool.slow": (p, ctx) => ((signal = ctx.signal), untilAborted(p, ctx)) });
  handle({ id: "d-1", method: "tool.slow" });
  await tick();
  dispatcher.setAuthenticated(false);
  await tick();
  assert.equal(signal.aborted, true);
  assert.equal(sent[0].error.code, "cancelled");
});

test("responses and events are not requests", () => {
  const { sent, handle } = setup({});
  assert.equal(handle({ id: "x", result: 1 }), false);
  assert.equal(handle({ event: "e", payload: {} }), false);
  assert.equal(sent.length, 0);
});

test("abortSession ends one session's requests at once with the given error, not the others'", async () => {
  const { sent, dispatcher, handle } = setup({ "tool.x": untilAborted });
  handle({ id: "d-1", method: "tool.x", params: { session_id: "a" } });
  handle({ id: "d-2", method: "tool.x", params: { session_id: "b" } });
  handle({ id: "d-3", method: "tool.x", params: { session_id: "a" } });
  await tick();
  dispatcher.abortSession("a", new RpcError("user_aborted", "stopped: the person pressed Stop", "user_interrupt"));
  await tick();
  assert.deepEqual(
    sent.map((f) => [f.id, f.error.code, f.error.data.reason]),
    [["d-1", "user_aborted", "user_interrupt"], ["d-3", "user_aborted", "user_interrupt"]],
  );
  dispatcher.abortAll();
  await tick();
  assert.equal(sent.at(-1).id, "d-2");
});

test("what a handler leaves to the end of its request runs however the request ended; onRequest sees each request", async () => {
  const ran = [];
  const seen = [];
  const dispatcher = createDispatcher({
    handlers: {
      "tool.ok": (params, ctx) => (ctx.atEnd(() => ran.push(`ok ${ctx.method}`)), { fine: true }),
      "tool.bad": async (params, ctx) => {
        ctx.atEnd(() => ran.push("bad"));
        throw new RpcError("invalid_params", "no");
      },
    },
    context: {},
    log: quiet,
    onRequest: (method, params) => seen.push([method, params.session_id]),
  });
  dispatcher.setAuthenticated(true);
  dispatcher.handle({ id: "d-1", method: "tool.ok", params: { session_id: "s" } }, () => {});
  dispatcher.handle({ id: "d-2", method: "tool.bad", params: {} }, () => {});
  await tick();
  assert.deepEqual(ran.sort(), ["bad", "ok tool.ok"]);
  assert.deepEqual(seen, [["tool.ok", "s"], ["tool.bad", undefined]]);
});

test("a handler's progress goes out with its request id before its answer, and not once it is cancelled", async () => {
  let release;
  const { sent, handle } = setup({
    "tool.ask": async (params, ctx) => {
      ctx.progress({ waiting: "approval", deadline_ms: 120000 });
      await new Promise((r) => (release = r));
      ctx.progress({ waiting: "approval", deadline_ms: 1 });
      return { done: true };
    },
  });
  handle({ id: "d-1", method: "tool.ask" });
  await tick();
  assert.deepEqual(sent, [{ id: "d-1", progress: { waiting: "approval", deadline_ms: 120000 } }]);
  handle({ id: "d-2", method: "cancel", params: { rpc_id: "d-1" } });
  await tick();
  release();
  await tick();
  assert.deepEqual(sent.map((f) => Object.keys(f).sort().join()), ["id,progress", "id,result", "error,id"]);
});

test("timings are off until the worker's globalThis.tabpilotTimings is an array: then each request records its phases", async () => {
  const seen = [];
  const { handle } = setup({
    "tool.x": (_params, ctx) => {
      seen.push(typeof ctx.mark);
      ctx.mark?.("half");
      ctx.mark?.("half");
      return {};
    },
  });
  handle({ id: "d-1", method: "tool.x", params: { session_id: "s" } });
  await tick();
  assert.deepEqual(seen, ["undefined"]);
  globalThis.tabpilotTimings = [];
  try {
    handle({ id: "d-2", method: "tool.x", params: { session_id: "s" } });
    await tick();
    assert.deepEqual(seen, ["undefined", "function"]);
    const [record] = globalThis.tabpilotTimings;
    assert.equal(globalThis.tabpilotTimings.length, 1);
    assert.equal(record.method, "tool.x");
    assert.equal(record.session_id, "s");
    assert.deepEqual(Object.keys(record.marks), ["half", "answered"], "a mark keeps its first time");
    assert.ok(record.marks.half >= 0 && record.marks.answered >= record.marks.half && record.ms >= record.marks.answered);
  } finally {
    delete globalThis.tabpilotTimings;
  }
});
