// The side panel's port: requests to the daemon, chat events to the ports that watch a conversation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { registerPanelBridge, PANEL_PORT } from "../../../src/tabpilot/extension/person/panel-bridge.js";
import { FakeEvent } from "../helpers/fake-chrome.js";
import { settle } from "../helpers/wait.js";

const ORIGIN = "chrome-extension://abc/";

function fakePort(url = `${ORIGIN}sidepanel.html`, name = PANEL_PORT) {
  const port = { name, sender: { url }, sent: [], onMessage: new FakeEvent(), onDisconnect: new FakeEvent() };
  port.postMessage = (m) => port.sent.push(m);
  return port;
}

function setup() {
  const onConnect = new FakeEvent();
  const requests = [];
  let push = () => {};
  const link = {
    async request(method, params) {
      requests.push([method, params]);
      if (method === "chat.send") throw Object.assign(new Error("busy"), { code: "invalid_params", data: { reason: "run_in_progress" } });
      return { ok: method };
    },
    onEvent(fn) {
      push = fn;
      return () => {};
    },
  };
  registerPanelBridge({ getURL: (p) => ORIGIN + p, onConnect }, link);
  const connect = (port) => (onConnect.fire(port), port);
  return { connect, requests, push: (payload) => push("chat.event", payload) };
}

test("requests go to the daemon and answers come back by id; errors keep their code and reason", async () => {
  const { connect, requests } = setup();
  const port = connect(fakePort());
  port.onMessage.fire({ id: "1", method: "chat.list", params: {} });
  port.onMessage.fire({ id: "2", method: "chat.send", params: { conversation_id: "c-1", text: "hi" } });
  port.onMessage.fire({ id: "3", method: "tool.click", params: {} });
  await settle();
  assert.deepEqual(requests.map(([m]) => m), ["chat.list", "chat.send"]);
  assert.deepEqual(port.sent.find((m) => m.id === "1"), { id: "1", result: { ok: "chat.list" } });
  assert.equal(port.sent.find((m) => m.id === "2").error.data.reason, "run_in_progress");
  assert.equal(port.sent.find((m) => m.id === "3").error.code, "unknown_method");
});

test("only our own pages connect: a web page's port gets nothing", async () => {
  const { connect, requests } = setup();
  const stranger = connect(fakePort("https://evil.test/"));
  stranger.onMessage.fire({ id: "1", method: "chat.list", params: {} });
  const other = connect(fakePort(`${ORIGIN}popup.html`, "popup"));
  other.onMessage.fire({ id: "1", method: "chat.list", params: {} });
  await settle();
  assert.deepEqual(requests, []);
  assert.deepEqual(stranger.sent, []);
});

test("chat events reach the ports watching their conversation; the last one gone detaches", async () => {
  const { connect, requests, push } = setup();
  const a = connect(fakePort());
  const b = connect(fakePort());
  a.onMessage.fire({ id: "1", method: "chat.attach", params: { conversation_id: "c-1", since_seq: 0 } });
  b.onMessage.fire({ id: "1", method: "chat.attach", params: { conversation_id: "c-2", since_seq: 0 } });
  await settle();
  push({ conversation_id: "c-1", seq: 4, kind: "text", delta: "Hel" });
  assert.deepEqual(a.sent.filter((m) => m.event).map((m) => m.payload.seq), [4]);
  assert.deepEqual(b.sent.filter((m) => m.event), []);
  a.onDisconnect.fire();
  await settle();
  assert.deepEqual(requests.at(-1), ["chat.detach", { conversation_id: "c-1" }]);
  push({ conversation_id: "c-1", seq: 5, kind: "text", delta: "lo" });
  assert.equal(a.sent.filter((m) => m.event).length, 1);
});
