// WebSocket transport: single flight, backoff, explicit disconnect, frame parsing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createTransport, backoffDelay } from "../../../src/tabpilot/extension/link/transport.js";
import { FakeTimers } from "../helpers/fake-timers.js";
import { fakeWebSocketClass } from "../helpers/fake-websocket.js";

const quiet = { info() {}, warn() {} };

function setup({ random = () => 0.5 } = {}) {
  const timers = new FakeTimers();
  const { FakeWebSocket, sockets } = fakeWebSocketClass();
  const events = [];
  const transport = createTransport({
    url: () => "ws://127.0.0.1:52830",
    WebSocketImpl: FakeWebSocket,
    timers,
    random,
    log: quiet,
  });
  transport.subscribe({
    onOpen: () => events.push("open"),
    onFrame: (f) => events.push(f),
    onClose: (c) => events.push(`close:${c.code}`),
  });
  return { timers, sockets, events, transport };
}

test("backoff is 0.5, 1, 2, 4, then 5 s, with at most 10 % jitter", () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 9].map((n) => backoffDelay(n, () => 0.5)), [500, 1000, 2000, 4000, 5000, 5000, 5000]);
  assert.equal(backoffDelay(0, () => 0), 450);
  assert.equal(backoffDelay(4, () => 1), 5500);
});

test("connect is single flight", () => {
  const { sockets, transport } = setup();
  transport.connect();
  transport.connect();
  assert.equal(sockets.length, 1);
  assert.equal(transport.state, "dialing");
  sockets[0].open();
  transport.connect();
  assert.equal(sockets.length, 1);
  assert.equal(transport.state, "open");
});

test("failed dials back off on the schedule and never overlap", () => {
  const { timers, sockets, transport } = setup();
  transport.connect();
  const seen = [];
  for (let i = 0; i < 6; i++) {
    sockets.at(-1).serverClose(1006);
    seen.push(timers.delays()[0]);
    timers.advance(timers.delays()[0]);
    assert.equal(sockets.filter((s) => s.closed === null).length, 1, "one live socket at a time");
  }
  assert.deepEqual(seen, [500, 1000, 2000, 4000, 5000, 5000]);
});

test("resetBackoff after authentication restarts the schedule", () => {
  const { timers, sockets, transport } = setup();
  transport.connect();
  for (let i = 0; i < 4; i++) {
    sockets.at(-1).serverClose();
    timers.advance(10_000);
  }
  sockets.at(-1).open();
  transport.resetBackoff();
  sockets.at(-1).serverClose();
  assert.deepEqual(timers.delays(), [500]);
});

test("send only reaches a socket whose open fired", () => {
  const { sockets, transport } = setup();
  assert.equal(transport.send({ a: 1 }), false);
  transport.connect();
  assert.equal(transport.send({ a: 1 }), false, "still dialing");
  sockets[0].open();
  assert.equal(transport.send({ a: 2 }), true);
  assert.deepEqual(sockets[0].sent, [{ a: 2 }]);
});

test("explicit disconnect closes and stops reconnecting", () => {
  const { timers, sockets, events, transport } = setup();
  transport.connect();
  sockets[0].open();
  transport.disconnect();
  assert.deepEqual(sockets[0].closed, { code: 1000, reason: "disconnect" });
  assert.deepEqual(events, ["open", "close:1000"]);
  timers.advance(60_000);
  assert.equal(sockets.length, 1);
  assert.equal(transport.state, "idle");
});

test("drop closes but keeps reconnecting; late events of the old socket are ignored", () => {
  const { timers, sockets, events, transport } = setup();
  transport.connect();
  sockets[0].open();
  transport.drop("bad handshake");
  sockets[0].onmessage?.({ data: "{}" });
  timers.advance(500);
  assert.equal(sockets.length, 2);
  assert.deepEqual(events, ["open", "close:1000"]);
});

test("connect during a pending retry dials at once", () => {
  const { timers, sockets, transport } = setup();
  transport.connect();
  sockets[0].serverClose();
  transport.connect();
  assert.equal(sockets.length, 2);
  assert.deepEqual(timers.delays().filter((d) => d !== 10_000), [], "retry timer cleared");
});

test("a dial that never opens is abandoned after the connect timeout", () => {
  const { timers, sockets, transport } = setup();
  transport.connect();
  timers.advance(10_000);
  assert.ok(sockets[0].closed);
  timers.advance(500);
  assert.equal(sockets.length, 2);
});

test("non-JSON inbound messages are dropped", () => {
  const { sockets, events, transport } = setup();
  transport.connect();
  sockets[0].open();
  sockets[0].receive("not json");
  sockets[0].onmessage({ data: new ArrayBuffer(2) });
  sockets[0].receive({ id: "d-1", method: "system.ping" });
  assert.deepEqual(events, ["open", { id: "d-1", method: "system.ping" }]);
});

test("a throwing WebSocket constructor schedules a retry", () => {
  const timers = new FakeTimers();
  let calls = 0;
  const Throwing = function () {
    calls++;
    throw new SyntaxError("bad url");
  };
  const transport = createTransport({ url: () => "x", WebSocketImpl: Throwing, timers, log: quiet, random: () => 0.5 });
  transport.connect();
  assert.deepEqual(timers.delays(), [500]);
  timers.advance(500);
  assert.equal(calls, 2);
});
