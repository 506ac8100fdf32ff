// The worker's panel bridge: who may connect, routing to the daemon, per-conversation fan-out with a
// backlog that never loses or doubles an event, re-attaching after the link returns, tab binding.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createPanelBridge, isPanelPort, PANEL_PORT } from "../../../src/tabpilot/extension/panel/bridge.js";
import { FakeEvent } from "../helpers/fake-event.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { waitFor, settle } from "../helpers/wait.js";

const ORIGIN = "chrome-extension://abc";
const quiet = { warn() {} };

function fakeRuntime() {
  return { id: "abc", getURL: (p) => `${ORIGIN}/${p}`, onConnect: new FakeEvent() };
}

function fakePort(url, { name = PANEL_PORT, id = "abc", origin } = {}) {
  const port = {
    name,
    sender: { id, url, ...(origin ? { origin } : {}) },
    sent: [],
    disconnected: false,
    onMessage: new FakeEvent(),
    onDisconnect: new FakeEvent(),
    postMessage(m) {
      port.sent.push(structuredClone(m));
    },
    disconnect() {
      port.disconnected = true;
    },
  };
  port.ask = async (op, params = {}) => {
    const id = `${op}-${port.sent.length}-${Math.random()}`;
    port.onMessage.fire({ id, op, params });
    await waitFor(() => port.sent.some((m) => m.id === id), `the answer to ${op}`);
    return port.sent.find((m) => m.id === id);
  };
  port.events = () => port.sent.filter((m) => m.push === "event").map((m) => m.event.seq);
  return port;
}

/** A daemon link: answers what `answers` says, records requests, pushes events on demand. */
function fakeConnection(answers = {}) {
  const events = new FakeEvent();
  const changes = new FakeEvent();
  const conn = {
    state: "connected",
    requests: [],
    emitted: [],
    async request(method, params) {
      conn.requests.push([method, structuredClone(params)]);
      const answer = answers[method];
      if (typeof answer === "function") return answer(params);
      if (answer instanceof Error) throw answer;
      return answer ?? {};
    },
    onEvent: (fn) => events.addListener(fn),
    onChange: (fn) => {
      changes.addListener(fn);
      return () => changes.removeListener(fn);
    },
    status: () => ({ state: conn.state, lastError: null }),
    emit: (name, payload) => conn.emitted.push([name, payload]),
    push: (event) => events.fire("chat.event", event),
    setUp(up) {
      conn.state = up ? "connected" : "disconnected";
      changes.fire();
    },
  };
  return conn;
}

function setup(answers, { tabsById = { 7: { id: 7, windowId: 1, url: "https://shop.test/", title: "Shop" } }, blocked = [] } = {}) {
  const runtime = fakeRuntime();
  const connection = fakeConnection(answers);
  const tabs = {
    get: async (id) => {
      if (!tabsById[id]) throw new Error("no tab");
      return tabsById[id];
    },
    onRemoved: new FakeEvent(),
  };
  const admit = async (tab) => {
    if (blocked.some((h) => tab.url.includes(h))) {
      throw Object.assign(new Error(`tab ${tab.id} is on a site the person blocked`), { code: "permission_denied", reason: "site_blocked" });
    }
  };
  const attachments = {
    read: [],
    page: async () => (attachments.read.push("page"), { text: '- heading "Shop"', url: "https://shop.test/", title: "Shop" }),
    selection: async () => (attachments.read.push("selection"), "chosen words"),
    screenshot: async () => (attachments.read.push("screenshot"), "iVBORw0KGgo="),
  };
  const approvals = {
    answered: [],
    gone: [],
    answer(id, decision, from) {
      approvals.answered.push([id, decision, from]);
      return true;
    },
    panelGone: (cid) => approvals.gone.push(cid),
  };
  const bridge = createPanelBridge({ runtime, connection, tabs, storage: new FakeStorage(), admit, attachments, approvals, log: quiet });
  const open = (url = `${ORIGIN}/sidepanel/sidepanel.html`, options) => {
    const port = fakePort(url, options);
    runtime.onConnect.fire(port);
    return port;
  };
  return { bridge, runtime, connection, tabs, attachments, open, approvals };
}

test("only the extension's own panel page may connect: not a content script, not another page, not another extension", () => {
  const runtime = fakeRuntime();
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/sidepanel/sidepanel.html`), runtime), true);
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/sidepanel/sidepanel.html?tab=7`), runtime), true);
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/sidepanel/sidepanel.html`, { origin: ORIGIN }), runtime), true);
  // A content script's port carries its page's URL (and our extension id).
  assert.equal(isPanelPort(fakePort("https://evil.test/sidepanel/sidepanel.html"), runtime), false);
  assert.equal(isPanelPort(fakePort(`https://evil.test/?u=${ORIGIN}/sidepanel/sidepanel.html`), runtime), false);
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/sidepanel/sidepanel.html`, { origin: "https://evil.test" }), runtime), false);
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/popup/popup.html`), runtime), false);
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/sidepanel/sidepanel.html`, { id: "other" }), runtime), false);
  assert.equal(isPanelPort(fakePort(`${ORIGIN}/sidepanel/sidepanel.htmlx`), runtime), false);
});

test("every panel hears which approval cards a page hides, on connect and whenever that changes", () => {
  const runtime = fakeRuntime();
  const watchers = new Set();
  let list = [{ requestId: "ap-1", kind: "approve" }, { requestId: "borrow-3", kind: "borrow" }];
  const hidden = { list: () => list, onChange: (fn) => (watchers.add(fn), () => watchers.delete(fn)) };
  const tabs = { get: async () => ({}), onRemoved: new FakeEvent() };
  createPanelBridge({ runtime, connection: fakeConnection({}), tabs, storage: new FakeStorage(), admit: async () => {}, attachments: {}, hidden, log: quiet });
  const port = fakePort(`${ORIGIN}/sidepanel/sidepanel.html`);
  runtime.onConnect.fire(port);
  list = [];
  for (const fn of watchers) fn();
  assert.deepEqual(port.sent, [{ push: "hidden", approval_ids: ["ap-1"] }, { push: "hidden", approval_ids: [] }]);
});

test("a refused port is disconnected and its messages never reach the daemon", async () => {
  const { open, connection } = setup({ "chat.start": { conversation_id: "c-1" } });
  const port = open("https://shop.test/");
  assert.equal(port.disconnected, true);
  port.onMessage.fire({ id: 1, op: "start", params: { tab_id: 7, agent: "claude" } });
  port.onMessage.fire({ id: 2, op: "send", params: { conversation_id: "c-1", text: "hi" } });
  await settle();
  assert.deepEqual(connection.requests, []);
  assert.deepEqual(port.sent, []);
});

test("answers come back by id; the daemon's errors keep their code, reason and hint; an unknown operation is refused", async () => {
  const busy = Object.assign(new Error("a turn is running"), { code: "invalid_params", data: { reason: "run_in_progress", hint: "wait or Stop" } });
  const { open, connection } = setup({ "chat.list": { conversations: [] }, "chat.stop": busy });
  const port = open();
  assert.deepEqual((await port.ask("history")).result, { conversations: [] });
  assert.deepEqual((await port.ask("stop", { conversation_id: "c-1" })).error, { code: "invalid_params", message: "a turn is running", reason: "run_in_progress", hint: "wait or Stop" });
  // Only the panel's own operations: no raw daemon method passes through.
  for (const op of ["chat.start", "tool.click", "constructor", "__proto__"]) assert.equal((await port.ask(op)).error.code, "unknown_method", op);
  assert.deepEqual(connection.requests.map(([m]) => m), ["chat.list", "chat.stop"]);
});

test("start binds the conversation to the tab; send fences attachments; the tab closing tells the daemon", async () => {
  const { open, connection, tabs } = setup({ "chat.start": { conversation_id: "c-1", session_id: "p-x" }, "chat.send": { turn_id: "t-1" } });
  const port = open();
  const started = await port.ask("start", { tab_id: 7, agent: "claude", workspace: null });
  assert.equal(started.result.conversation_id, "c-1");
  assert.deepEqual(connection.requests[0], ["chat.start", { tab_id: 7, window_id: 1, url: "https://shop.test/", title: "Shop", agent: "claude", workspace: null }]);
  assert.equal((await port.ask("tab", { tab_id: 7 })).result.conversation_id, "c-1");
  await port.ask("send", { conversation_id: "c-1", text: "what is this?", attach: ["page", "screenshot", "javascript"], client_msg_id: "m1" });
  const [, sent] = connection.requests.at(-1);
  assert.match(sent.text, /^what is this\?\n\n\[The person attached/);
  assert.match(sent.text, /<<<untrusted page [a-z0-9]{12} url="https:\/\/shop.test\/" title="Shop">>>\n- heading "Shop"\n<<<end /);
  assert.deepEqual(sent.attachments, [{ kind: "screenshot", media_type: "image/png", data: "iVBORw0KGgo=" }]);
  tabs.onRemoved.fire(7);
  await waitFor(() => connection.emitted.length === 1, "chat.tab_closed");
  assert.deepEqual(connection.emitted[0], ["chat.tab_closed", { conversation_id: "c-1", tab_id: 7 }]);
  assert.equal((await port.ask("send", { conversation_id: "c-1", text: "more" })).error.reason, "unknown_tab");
});

test("attach by tab attaches whatever conversation is bound to it, or answers that none is", async () => {
  const { open, connection } = setup({ "chat.start": { conversation_id: "c-1" }, "chat.attach": (p) => ({ conversation_id: p.conversation_id, events: [{ conversation_id: p.conversation_id, seq: 1 }], running: true }) });
  const port = open();
  assert.deepEqual((await port.ask("attach", { tab_id: 7, since_seq: 0 })).result, { conversation_id: null, events: [], running: false });
  assert.deepEqual(connection.requests, [], "nothing bound: the daemon is not asked");
  await port.ask("start", { tab_id: 7, agent: "claude" });
  const attached = await port.ask("attach", { tab_id: 7, since_seq: 0 });
  assert.equal(attached.result.conversation_id, "c-1");
  assert.deepEqual(connection.requests.at(-1), ["chat.attach", { conversation_id: "c-1", since_seq: 0, fold: true }]);
  connection.push({ conversation_id: "c-1", seq: 2 });
  assert.deepEqual(port.events(), [2], "and it is watched from there on");
  assert.equal((await port.ask("attach", { tab_id: "7" })).error.code, "invalid_params");
});

test("on a blocked site the panel can neither start nor send nor attach", async () => {
  const tabsById = { 7: { id: 7, windowId: 1, url: "https://bank.test/", title: "Bank" }, 8: { id: 8, windowId: 1, url: "https://shop.test/", title: "Shop" } };
  const { open, connection, attachments } = setup({ "chat.start": { conversation_id: "c-1" } }, { tabsById, blocked: ["bank.test"] });
  const port = open();
  const info = await port.ask("tab", { tab_id: 7 });
  assert.equal(info.result.blocked.reason, "site_blocked");
  const refused = await port.ask("start", { tab_id: 7, agent: "claude" });
  assert.equal(refused.error.reason, "site_blocked");
  assert.deepEqual(connection.requests, []);
  // A conversation whose tab went on to a blocked site: its next message, and what it would attach, stay.
  assert.equal((await port.ask("start", { tab_id: 8, agent: "claude" })).result.conversation_id, "c-1");
  tabsById[8].url = "https://bank.test/account";
  const sent = await port.ask("send", { conversation_id: "c-1", text: "and this?", attach: ["page", "selection", "screenshot"] });
  assert.equal(sent.error.reason, "site_blocked");
  assert.deepEqual(attachments.read, []);
  assert.deepEqual(connection.requests.map(([m]) => m), ["chat.start"]);
});

test("a backlog and live events that cross it reach the panel once each, in order; other conversations stay out", async () => {
  let release;
  const attached = new Promise((r) => (release = r));
  const { open, connection } = setup({
    "chat.attach": async () => {
      await attached;
      return { events: [{ conversation_id: "c-1", seq: 3 }, { conversation_id: "c-1", seq: 4 }], running: true, last_seq: 4 };
    },
  });
  const port = open();
  const answer = port.ask("attach", { conversation_id: "c-1", since_seq: 2 });
  await settle();
  // Live events sent while the backlog is on its way: one it also holds, one after it.
  connection.push({ conversation_id: "c-1", seq: 4 });
  connection.push({ conversation_id: "c-1", seq: 5 });
  connection.push({ conversation_id: "c-2", seq: 1 });
  release();
  const reply = await answer;
  assert.deepEqual(reply.result.events.map((e) => e.seq), [3, 4]);
  await waitFor(() => port.events().length === 1, "the live event after the backlog");
  assert.deepEqual(port.events(), [5]);
  const replyAt = port.sent.findIndex((m) => m.id === reply.id);
  const liveAt = port.sent.findIndex((m) => m.push === "event");
  assert.ok(replyAt < liveAt, "the backlog arrives before the live events");
  connection.push({ conversation_id: "c-1", seq: 6 });
  assert.deepEqual(port.events(), [5, 6]);
});

test("two panels on one conversation both get its events; the last one leaving detaches", async () => {
  const { open, connection } = setup({ "chat.attach": { events: [], running: false } });
  const a = open();
  const b = open(`${ORIGIN}/sidepanel/sidepanel.html?tab=7`);
  await a.ask("attach", { conversation_id: "c-1", since_seq: 0 });
  await b.ask("attach", { conversation_id: "c-1", since_seq: 0 });
  connection.push({ conversation_id: "c-1", seq: 1 });
  assert.deepEqual([a.events(), b.events()], [[1], [1]]);
  a.onDisconnect.fire();
  assert.equal(connection.requests.some(([m]) => m === "chat.detach"), false, "b still watches");
  b.onDisconnect.fire();
  assert.deepEqual(connection.requests.at(-1), ["chat.detach", { conversation_id: "c-1" }]);
});

test("after the daemon link comes back, watched conversations are attached again from the last event sent", async () => {
  const { open, connection } = setup({ "chat.attach": (p) => ({ events: p.since_seq === 0 ? [{ conversation_id: "c-1", seq: 1 }] : [{ conversation_id: "c-1", seq: 2 }, { conversation_id: "c-1", seq: 3 }], running: true }) });
  const port = open();
  await port.ask("attach", { conversation_id: "c-1", since_seq: 0 });
  // One port, one point: its backlog may come folded. Re-attaching serves every port from the earliest.
  assert.deepEqual(connection.requests.at(-1), ["chat.attach", { conversation_id: "c-1", since_seq: 0, fold: true }]);
  connection.setUp(false);
  connection.setUp(true);
  await waitFor(() => port.events().length === 2, "the missed events");
  assert.deepEqual(connection.requests.at(-1), ["chat.attach", { conversation_id: "c-1", since_seq: 1 }]);
  assert.deepEqual(port.events(), [2, 3]);
  assert.ok(port.sent.some((m) => m.push === "status" && m.link.state === "disconnected"));
  // The page attaching again itself: it may hold part of a run of text already, so nothing is folded.
  await port.ask("attach", { conversation_id: "c-1", since_seq: 1 });
  assert.deepEqual(connection.requests.at(-1), ["chat.attach", { conversation_id: "c-1", since_seq: 1, fold: false }]);
});

test("the popup's Stop all stops every running conversation", async () => {
  const { bridge, connection } = setup({
    "chat.list": { conversations: [{ conversation_id: "c-1", running: true }, { conversation_id: "c-2", running: false }, { conversation_id: "c-3", running: true }] },
    "chat.stop": { stopped: true },
  });
  await bridge.stopAll();
  assert.deepEqual(connection.requests.filter(([m]) => m === "chat.stop").map(([, p]) => p.conversation_id), ["c-1", "c-3"]);
});

test("a card is answered only from a panel showing its conversation; the last such panel closing hands its cards on", async () => {
  const { open, approvals, bridge } = setup({ "chat.attach": { events: [], running: true } });
  const shower = open();
  const other = open();
  await shower.ask("attach", { conversation_id: "c-1", since_seq: 0 });
  assert.equal(bridge.shows("c-1"), true);
  const refused = await other.ask("answer", { conversation_id: "c-1", approval_id: "ap-1", decision: "allow" });
  assert.equal(refused.error.code, "invalid_params");
  assert.deepEqual(approvals.answered, []);
  const ok = await shower.ask("answer", { conversation_id: "c-1", approval_id: "ap-1", decision: "allow", always: true });
  assert.deepEqual(ok.result, { answered: true });
  assert.deepEqual(approvals.answered, [["ap-1", "allow", { conversationId: "c-1", always: true }]]);
  shower.onDisconnect.fire();
  assert.equal(bridge.shows("c-1"), false);
  assert.deepEqual(approvals.gone, ["c-1"]);
});

test("a turn's sites come from the tab it starts on and the person's own words, not from what is attached", async () => {
  const { open, bridge } = setup({ "chat.start": { conversation_id: "c-1" }, "chat.send": { turn_id: "t-1" } });
  const port = open();
  await port.ask("start", { tab_id: 7, agent: "claude" });
  await port.ask("send", { conversation_id: "c-1", text: "compare with docs.test please", attach: ["page"] });
  assert.deepEqual(await bridge.turnOfTab(7), { conversationId: "c-1", scope: { sites: ["shop.test", "docs.test"], unconfined: false }, start: "shop.test" });
  assert.equal(await bridge.turnOfTab(8), null);
});
