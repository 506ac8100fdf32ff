// The popup's port: snapshots out, validated changes in; small wiring helpers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyPopupMessage, registerPopupBridge } from "../../../src/tabpilot/extension/person/popup-bridge.js";
import { registerKeepalive, KEEPALIVE_ALARM } from "../../../src/tabpilot/extension/link/keepalive.js";
import { browserInfo } from "../../../src/tabpilot/extension/link/browser-info.js";
import { FakeEvent } from "../helpers/fake-chrome.js";

function fakeConnection() {
  const calls = [];
  const listeners = new Set();
  return {
    calls,
    changed: () => listeners.forEach((fn) => fn()),
    listenerCount: () => listeners.size,
    status: () => ({ state: "connected", label: "x" }),
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    setLabel: async (v) => calls.push(["label", v]),
    setEnabled: async (v) => calls.push(["enabled", v]),
    setPort: async (v) => calls.push(["port", v]),
    pair: async (v) => calls.push(["pair", v]),
  };
}

test("the popup answers a question the page hides, by its request id", async () => {
  const answered = [];
  const asks = { list: () => [], onChange: () => () => {}, answer: (id, answer) => answered.push([id, answer]) };
  await applyPopupMessage(fakeConnection(), { kind: "answer_hidden", value: { request_id: "r1", answer: "allow" } }, undefined, undefined, asks);
  await applyPopupMessage(fakeConnection(), { kind: "answer_hidden", value: null }, undefined, undefined, asks);
  assert.deepEqual(answered, [["r1", "allow"], [undefined, undefined]]);
});

test("popup messages are validated before they change anything", async () => {
  const c = fakeConnection();
  const warn = console.warn;
  console.warn = () => {};
  try {
    for (const message of [
      { kind: "set_label", value: "  Work  " },
      { kind: "set_label", value: 5 },
      { kind: "set_enabled", value: false },
      { kind: "set_enabled", value: "false" },
      { kind: "set_port", value: 41000 },
      { kind: "set_port", value: 0 },
      { kind: "set_port", value: "41000" },
      { kind: "pair", value: "abcd-efgh" },
      { kind: "pair", value: "abc" },
      { kind: "nope" },
      null,
    ]) {
      await applyPopupMessage(c, message);
    }
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(c.calls, [["label", "Work"], ["enabled", false], ["port", 41000], ["pair", "ABCDEFGH"]]);
});

test("the bridge pushes a snapshot on connect and on change, only to our own pages", async () => {
  const c = fakeConnection();
  const board = { describe: async () => [{ sessionId: "s" }], onChange: () => () => {}, act: async () => {} };
  const runtime = { getURL: (p) => `chrome-extension://id/${p}`, onConnect: new FakeEvent() };
  registerPopupBridge(runtime, c, board);
  const port = (url, name = "popup") => {
    const p = { name, sender: { url }, posted: [], onMessage: new FakeEvent(), onDisconnect: new FakeEvent() };
    p.postMessage = (m) => p.posted.push(m);
    return p;
  };
  const page = port("https://evil.example/");
  runtime.onConnect.fire(page);
  assert.equal(page.posted.length, 0);
  const popup = port("chrome-extension://id/popup/popup.html");
  runtime.onConnect.fire(popup);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(popup.posted, [{ state: "connected", label: "x", sessions: [{ sessionId: "s" }] }]);
  c.changed();
  await new Promise((r) => setImmediate(r));
  assert.equal(popup.posted.length, 2);
  popup.onDisconnect.fire();
  assert.equal(c.listenerCount(), 0);
});

test("session choices from the popup go to the board; connection messages do not", async () => {
  const c = fakeConnection();
  const acted = [];
  const board = { act: async (action, id) => acted.push([action, id]) };
  for (const message of [
    { kind: "stop_session", value: "s1" },
    { kind: "resume_session", value: "s1" },
    { kind: "show_session", value: "s2" },
    { kind: "stop_all", value: null },
    { kind: "set_label", value: "L" },
  ]) {
    await applyPopupMessage(c, message, board);
  }
  assert.deepEqual(acted, [["stop", "s1"], ["resume", "s1"], ["show", "s2"], ["stop_all", null]]);
  assert.deepEqual(c.calls, [["label", "L"]]);
});

test("the keepalive alarm is created every 30 s and only its own alarm reconnects", () => {
  const created = [];
  const alarms = { create: (name, info) => created.push([name, info]), onAlarm: new FakeEvent() };
  let ticks = 0;
  registerKeepalive(alarms, () => ticks++);
  assert.deepEqual(created, [[KEEPALIVE_ALARM, { periodInMinutes: 0.5 }]]);
  assert.equal(KEEPALIVE_ALARM, "tp-keepalive");
  alarms.onAlarm.fire({ name: "other" });
  alarms.onAlarm.fire({ name: KEEPALIVE_ALARM });
  assert.equal(ticks, 1);
});

test("browser info from brands, falling back to the user agent", () => {
  const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  assert.deepEqual(browserInfo({ userAgent: ua, userAgentData: { brands: [{ brand: "Chromium" }, { brand: "Google Chrome" }] } }), {
    name: "chrome",
    version: "156.0.0.0",
  });
  assert.deepEqual(browserInfo({ userAgent: `${ua} Edg/156.0.0.0`, userAgentData: { brands: [{ brand: "Chromium" }, { brand: "Microsoft Edge" }] } }).name, "edge");
  assert.deepEqual(browserInfo({ userAgent: ua }), { name: "chromium", version: "156.0.0.0" });
});
