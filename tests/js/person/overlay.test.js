// The worker side of the person's view (person/overlay.js) and the notification asker (person/notify.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createOverlay } from "../../../src/tabpilot/extension/person/overlay.js";
import { createNotify } from "../../../src/tabpilot/extension/person/notify.js";
import { withoutOverlay } from "../../../src/tabpilot/extension/tools/observe/observation.js";
import { activityOf } from "../../../src/tabpilot/extension/page/action.js";
import { FakeEvent } from "../helpers/fake-chrome.js";

const quiet = { warn() {} };
const tick = () => new Promise((r) => setImmediate(r));
const EXT = "ext-id";

/**
 * Tabs 1 and 2 are in session "s1"'s Agent Window (window 10); tab 3 is the person's. `pages` answers
 * what the worker sends to a tab's content script (no entry: the tab has none).
 */
function setup({ pages = {} } = {}) {
  const sent = [];
  const stops = [];
  const resumes = [];
  const tabs = {
    onRemoved: new FakeEvent(),
    async sendMessage(tabId, message, options) {
      sent.push([tabId, message, options]);
      const page = pages[tabId];
      if (!page) throw new Error("Could not establish connection. Receiving end does not exist.");
      return page(message);
    },
  };
  const runtime = { id: EXT, onMessage: new FakeEvent(), getURL: (path) => `chrome-extension://${EXT}/${path}` };
  const windowOf = { 1: 10, 2: 10, 3: 20 };
  const sessions = {
    async ownerOf(tab) {
      return windowOf[tab.id] === 10 ? "s1" : null;
    },
    async tabs(sessionId) {
      return sessionId === "s1" ? [{ id: 1 }, { id: 2 }] : [];
    },
  };
  let tokens = 0;
  const overlay = createOverlay({ tabs, runtime, sessions, token: () => `secret-${++tokens}`, log: quiet });
  overlay.onStop((sessionId, tabId) => stops.push([sessionId, tabId]));
  overlay.onResume((sessionId) => resumes.push(sessionId));
  /** A message from the content script of a tab's frame; resolves its reply (undefined: not answered). */
  const fromPage = (tabId, message, { frameId = 0, id = EXT } = {}) =>
    new Promise((resolve) => {
      let answered = false;
      const handled = runtime.onMessage.listeners[0](message, { id, frameId, tab: { id: tabId, windowId: windowOf[tabId] } }, (r) => {
        answered = true;
        resolve(r);
      });
      if (!handled && !answered) resolve(undefined);
    });
  /** A message from a prompt frame (prompt/prompt.html, or another page) in a tab; resolves its reply. */
  const fromPrompt = (tabId, message, { url = `chrome-extension://${EXT}/prompt/prompt.html?borrow#x`, id = EXT } = {}) =>
    new Promise((resolve) => {
      let answered = false;
      const handled = runtime.onMessage.listeners[0](message, { id, frameId: 7, url, tab: { id: tabId } }, (r) => {
        answered = true;
        resolve(r);
      });
      if (!handled && !answered) resolve(undefined);
    });
  return { overlay, sent, stops, resumes, fromPage, fromPrompt };
}

const ok = () => ({ ok: true });
const shown = (m) => (m.kind === "borrow" || m.kind === "help" ? { shown: true } : { ok: true });

test("a borrow is answered only by the prompt frame holding the ask's token, in the tab that was asked", async () => {
  const { overlay, sent, fromPage, fromPrompt } = setup({ pages: { 3: shown } });
  const answer = overlay.askBorrow(3, { requestId: "r1", sessionId: "s1", reason: "  read   the total ", timeoutMs: 5000 });
  await tick();
  const [tabId, message, options] = sent[0];
  assert.equal(tabId, 3);
  assert.deepEqual(options, { frameId: 0 });
  assert.equal(message.kind, "borrow");
  assert.deepEqual({ ...message.ask, deadline: 0 }, { session_id: "s1", reason: "read the total", request_id: "r1", token: "secret-1", deadline: 0 });
  // the page's content script (which a page could impersonate) cannot answer at all
  assert.equal(await fromPage(3, { kind: "overlay.borrow_answer", request_id: "r1", answer: "allow" }), undefined);
  assert.equal(await fromPage(3, { kind: "prompt.answer", token: "secret-1", answer: "allow" }), undefined);
  // the prompt frame gets what to show; a wrong token, another tab, another page or extension get nothing
  const hello = await fromPrompt(3, { kind: "prompt.hello", token: "secret-1" });
  assert.equal(hello.kind, "borrow");
  assert.equal(hello.tab_id, 3);
  assert.equal(hello.view.reason, "read the total");
  assert.equal(await fromPrompt(3, { kind: "prompt.answer", token: "secret-2", answer: "allow" }), null);
  assert.equal(await fromPrompt(1, { kind: "prompt.answer", token: "secret-1", answer: "allow" }), null);
  assert.equal(await fromPrompt(3, { kind: "prompt.answer", token: "secret-1", answer: "allow" }, { url: `chrome-extension://${EXT}/options/options.html` }), undefined);
  assert.equal(await fromPrompt(3, { kind: "prompt.answer", token: "secret-1", answer: "allow" }, { id: "other" }), undefined);
  assert.deepEqual(await fromPrompt(3, { kind: "prompt.answer", token: "secret-1", answer: "yes please" }), { ok: false });
  assert.deepEqual(await fromPrompt(3, { kind: "prompt.answer", token: "secret-1", answer: "deny" }), { ok: true });
  assert.equal(await answer, "deny");
  await tick();
  assert.deepEqual(sent.at(-1)[1], { kind: "ask_end", request_id: "r1" });
});

test("an ask the page draws out of its size is answered in the popup, and only there and then", async () => {
  const { overlay, fromPage, fromPrompt } = setup({ pages: { 3: () => ({ shown: true }) } });
  const changes = [];
  overlay.hiddenAsks.onChange(() => changes.push(overlay.hiddenAsks.list().length));
  const answer = overlay.askBorrow(3, { requestId: "r1", sessionId: "s1", reason: "read", timeoutMs: 5000 });
  await tick();
  // not hidden: the popup cannot answer it
  assert.deepEqual(await fromPage(3, { kind: "prompt.drawn", token: "secret-1", natural: true, why: "" }), { ok: true });
  assert.equal(overlay.hiddenAsks.answer("r1", "allow"), false);
  // the word of another tab, or about another token, or from a frame that is not the page's top, changes nothing
  assert.deepEqual(await fromPage(1, { kind: "prompt.drawn", token: "secret-1", natural: false, why: "x" }), { ok: false });
  assert.deepEqual(await fromPage(3, { kind: "prompt.drawn", token: "secret-9", natural: false, why: "x" }), { ok: false });
  assert.equal(await fromPage(3, { kind: "prompt.drawn", token: "secret-1", natural: false, why: "x" }, { frameId: 4 }), undefined);
  assert.deepEqual(overlay.hiddenAsks.list(), []);
  assert.deepEqual(await fromPage(3, { kind: "prompt.drawn", token: "secret-1", natural: false, why: "the page zooms it to ×0.04 of its size" }), { ok: true });
  const [hidden] = overlay.hiddenAsks.list();
  assert.deepEqual({ ...hidden, view: hidden.view.reason }, { requestId: "r1", kind: "borrow", tabId: 3, view: "read", why: "the page zooms it to ×0.04 of its size" });
  // shown at its size again: still answered in the popup (the place to answer does not flicker away)
  await fromPage(3, { kind: "prompt.drawn", token: "secret-1", natural: true, why: "" });
  assert.equal(overlay.hiddenAsks.list().length, 1);
  assert.equal(overlay.hiddenAsks.answer("r1", "done"), false, "not an answer a borrow takes");
  assert.equal(overlay.hiddenAsks.answer("r2", "allow"), false);
  assert.equal(overlay.hiddenAsks.answer("r1", "allow"), true);
  assert.equal(await answer, "allow");
  assert.deepEqual(overlay.hiddenAsks.list(), []);
  assert.deepEqual(changes, [1, 0]);
  // answered: its prompt frame answers nothing more
  assert.equal(await fromPrompt(3, { kind: "prompt.answer", token: "secret-1", answer: "deny" }), null);
  // an approval card answered in the popup says so to its asker, once
  const approved = overlay.askApproval(3, { requestId: "ap-1", sessionId: "p-1", view: { title: "Submit a form", target: "x" }, timeoutMs: 5000 });
  await tick();
  await fromPage(3, { kind: "prompt.drawn", token: "secret-2", natural: false, why: "shrunk" });
  assert.equal(overlay.hiddenAsks.answer("ap-1", "deny"), true);
  assert.equal(await approved, "deny");
  assert.deepEqual([overlay.answeredVia("ap-1"), overlay.answeredVia("ap-1"), overlay.answeredVia("r1")], ["popup", "page", "page"]);
});

test("a borrow nobody can see or answer is never a yes", async () => {
  const { overlay } = setup({ pages: { 3: shown } });
  assert.equal(await overlay.askBorrow(5, { requestId: "r1", sessionId: "s1", timeoutMs: 5000 }), "unavailable");
  assert.equal(await overlay.askBorrow(3, { requestId: "r2", sessionId: "s1", timeoutMs: 20 }), "timeout");
  const controller = new AbortController();
  const aborted = overlay.askBorrow(3, { requestId: "r3", sessionId: "s1", timeoutMs: 5000, signal: controller.signal });
  controller.abort();
  assert.equal(await aborted, "unavailable");
});

test("a page that starts (after a navigation) gets its session's badge and what it is being asked", async () => {
  const { overlay, fromPage } = setup({ pages: { 1: shown, 3: shown } });
  overlay.activity(1, `click  @e12   ${"x".repeat(200)}`);
  void overlay.askBorrow(3, { requestId: "r1", sessionId: "s1", timeoutMs: 5000 });
  void overlay.askHelp(1, { requestId: "h1", sessionId: "s1", title: "Log in", prompt: "Please log in", timeoutMs: 5000, rects: [{ x: 1, y: 2, width: 3, height: 4 }] });
  const agentTab = await fromPage(1, { kind: "overlay.hello" });
  assert.equal(agentTab.session.id, "s1");
  assert.equal(agentTab.session.paused, false);
  assert.ok(agentTab.session.activity.startsWith("click @e12 x") && agentTab.session.activity.length === 120);
  assert.equal(agentTab.borrow, null);
  assert.deepEqual({ ...agentTab.help, deadline: 0 }, {
    session_id: "s1", title: "Log in", prompt: "Please log in", rects: [{ x: 1, y: 2, width: 3, height: 4 }], request_id: "h1", token: "secret-2", deadline: 0,
  });
  const userTab = await fromPage(3, { kind: "overlay.hello" });
  assert.equal(userTab.session, null);
  assert.equal(userTab.borrow.request_id, "r1");
});

test("Stop in a page pauses that page's session for all its tabs; Resume and the agent's next call end it", async () => {
  const { overlay, sent, stops, resumes, fromPage } = setup({ pages: { 1: ok, 2: ok, 3: ok } });
  assert.deepEqual(await fromPage(3, { kind: "overlay.stop" }), { ok: false });
  assert.deepEqual(stops, []);
  assert.deepEqual(await fromPage(2, { kind: "overlay.stop" }), { ok: true });
  assert.deepEqual(stops, [["s1", 2]]);
  assert.ok(overlay.isPaused("s1"));
  await tick();
  const states = sent.filter(([, m]) => m.kind === "state").map(([tabId, m]) => [tabId, m.session.paused]);
  assert.deepEqual(states, [[1, true], [2, true]]);
  assert.deepEqual(await fromPage(1, { kind: "overlay.resume" }), { ok: true });
  assert.deepEqual(resumes, ["s1"]);
  overlay.stop("s1");
  assert.deepEqual(stops.at(-1), ["s1", null]);
  overlay.resumedByAgent("s1");
  assert.equal(overlay.isPaused("s1"), false);
  assert.deepEqual(resumes, ["s1"], "the agent resuming is no event of the person's");
});

test("the shield lets the agent's gesture through: the page opens it before the first input, and it closes when no more input comes", async () => {
  const log = [];
  const { overlay, sent } = setup({ pages: { 1: (m) => (log.push(`page ${m.kind} ${m.open ?? m.on ?? ""}`.trim()), { ok: true }) } });
  const cdp = (method) => (log.push(`cdp ${method}`), Promise.resolve({}));
  const shield = overlay.shield(1, { activity: "click @e3" });
  const send = shield.gate(cdp);
  await send("Runtime.evaluate", {});
  const gesture = () =>
    Promise.all([
      send("Input.dispatchMouseEvent", { type: "mouseMoved", x: 5, y: 6 }),
      send("Input.dispatchMouseEvent", { type: "mousePressed", x: 5, y: 6 }),
      send("Input.dispatchMouseEvent", { type: "mouseReleased", x: 5, y: 6 }),
    ]);
  await gesture();
  await new Promise((r) => setTimeout(r, 80));
  await gesture();
  shield.release();
  await tick();
  const input = "cdp Input.dispatchMouseEvent";
  assert.deepEqual(log, [
    "page shield true",
    "cdp Runtime.evaluate",
    "page pass true",
    input, input, input,
    "page pass false",
    "page pass true",
    input, input, input,
    "page shield false",
  ]);
  assert.equal(sent[0][1].activity, "click @e3");
  // the shield comes back with the agent's pointer left free (its hover stays), the next one too
  assert.deepEqual(sent.find(([, m]) => m.kind === "pass" && !m.open)[1].hole, { x: 5, y: 6 });
  overlay.shield(1).release();
  assert.deepEqual(sent.filter(([, m]) => m.kind === "shield" && m.on).at(-1)[1].hole, { x: 5, y: 6 });
});

test("the shield opens while the element is first looked at, and closes again when it was not ready", async () => {
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.open ?? m.on}`), { ok: true }) } });
  const shield = overlay.shield(1);
  shield.expect();
  await tick();
  shield.unexpect();
  shield.expect();
  await tick();
  const send = shield.gate(() => (log.push("input"), Promise.resolve({})));
  await send("Input.dispatchKeyEvent", {});
  assert.deepEqual(log, ["shield true", "pass true", "pass false", "pass true", "input"]);
});

test("a gesture right after the first look (click, hover): the shield comes up open for it, one message before the input", async () => {
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.on}${m.pass ? " pass" : ""}`), { ok: true }) } });
  const shield = overlay.shield(1, { activity: "click @e3", pass: true });
  shield.expect();
  const send = shield.gate(() => (log.push("input"), Promise.resolve({})));
  await send("Input.dispatchMouseEvent", { type: "mousePressed", x: 1, y: 2 });
  assert.deepEqual(log, ["shield true pass", "input"]);
  // not ready after all: closed until the gesture really comes
  shield.unexpect();
  await tick();
  assert.equal(log.at(-1), "pass undefined");
});

test("a gesture whose point the overlay does not cover goes without a message; the shield comes up closed once it is over, or only the badge is told after a quick action", async () => {
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.on ?? m.open ?? m.text}${m.pass ? " pass" : ""}`), { ok: true }) } });
  const quick = overlay.shield(1, { activity: "hover @e3", pass: true });
  quick.expect();
  quick.clear();
  const send = quick.gate(() => (log.push("input"), Promise.resolve({})));
  await send("Input.dispatchMouseEvent", { type: "mouseMoved", x: 1, y: 2 });
  assert.deepEqual(log, ["input"], "nothing before the gesture");
  quick.release();
  await tick();
  assert.deepEqual(log, ["input", "activity hover @e3"]);
  log.length = 0;
  const slow = overlay.shield(1, { activity: "click @e3", pass: true });
  slow.clear();
  await slow.gate(() => (log.push("input"), Promise.resolve({})))("Input.dispatchMouseEvent", { type: "mousePressed", x: 1, y: 2 });
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(log, ["input", "shield true"], "the action outlasted its gesture: the person is kept out");
  slow.release();
  await tick();
  assert.equal(log.at(-1), "shield false");
});

test("an unhindered gesture still waits until the page handled what it was told before (an earlier shield taken down)", async () => {
  let answer;
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.on}`), new Promise((r) => (answer = r))) } });
  overlay.shield(1).release();
  const next = overlay.shield(1, { pass: true });
  next.clear();
  const gesture = next.gate(() => (log.push("input"), Promise.resolve({})))("Input.dispatchMouseEvent", { type: "mousePressed", x: 1, y: 2 });
  await tick();
  assert.deepEqual(log, ["shield true", "shield false"]);
  answer({ ok: true });
  await gesture;
  assert.deepEqual(log, ["shield true", "shield false", "input"]);
});

test("a first look that finds the element not ready puts a gesture's shield up closed; the overlay at the point makes the gesture wait for it to open", async () => {
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.on ?? m.open}${m.pass ? " pass" : ""}`), { ok: true }) } });
  const shield = overlay.shield(1, { activity: "click @e3", pass: true });
  shield.expect();
  shield.unexpect();
  await tick();
  assert.deepEqual(log, ["shield true"]);
  shield.clear();
  await shield.gate(() => (log.push("input"), Promise.resolve({})))("Input.dispatchMouseEvent", { type: "mousePressed", x: 1, y: 2 });
  assert.deepEqual(log, ["shield true", "pass true", "input"], "once up, it is opened for the gesture, clear() or not");
});

test("opening the shield for an input does not wait for it to be up: the page takes both messages in order", async () => {
  const answers = [];
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.on ?? m.open}`), new Promise((r) => answers.push(r))) } });
  const shield = overlay.shield(1);
  const key = shield.gate(() => (log.push("input"), Promise.resolve({})))("Input.dispatchKeyEvent", { type: "keyDown" });
  await tick();
  assert.deepEqual(log, ["shield true", "pass true"]);
  answers[1]({ ok: true });
  await key;
  assert.deepEqual(log, ["shield true", "pass true", "input"]);
});

test("without a content script the gate adds nothing to the gesture once the page is known to have none", async () => {
  const { overlay, sent } = setup();
  const calls = [];
  const shield = overlay.shield(7);
  await tick();
  const send = shield.gate((method) => (calls.push(method), Promise.resolve({})));
  await send("Input.dispatchKeyEvent", { type: "keyDown" });
  assert.deepEqual(calls, ["Input.dispatchKeyEvent"]);
  assert.deepEqual(sent.map(([, m]) => m.kind), ["shield"]);
});

test("hidden keeps the overlay out of sight only while the work runs", async () => {
  const seen = [];
  const { overlay } = setup({ pages: { 1: (m) => (seen.push(m), { ok: true }) } });
  const value = await overlay.hidden(1, async () => {
    seen.push("work");
    return 42;
  });
  await tick();
  assert.equal(value, 42);
  assert.deepEqual(seen, [{ kind: "hide", hidden: true }, "work", { kind: "hide", hidden: false }]);
});

function fakeNotifications() {
  const log = [];
  return {
    log,
    api: {
      onButtonClicked: new FakeEvent(),
      onClosed: new FakeEvent(),
      onClicked: new FakeEvent(),
      async create(id, options) {
        log.push(["create", id, options]);
        return id;
      },
      async clear(id) {
        log.push(["clear", id]);
        return true;
      },
    },
  };
}

test("a notification's button is the answer, and it is cleared after", async () => {
  const { api, log } = fakeNotifications();
  const notify = createNotify({ notifications: api, iconUrl: "icon.png", log: quiet });
  const clicks = [];
  const answer = notify.ask({ id: "n1", title: "Borrow?", message: "Session s1 asks", buttons: ["Allow", "Deny"] }, { timeoutMs: 5000, onClick: () => clicks.push(1) });
  await tick();
  const [, id, options] = log[0];
  assert.equal(id, "n1");
  assert.deepEqual(options.buttons, [{ title: "Allow" }, { title: "Deny" }]);
  assert.equal(options.requireInteraction, true);
  assert.equal(options.iconUrl, "icon.png");
  api.onClicked.fire("n1");
  api.onButtonClicked.fire("other", 0);
  api.onButtonClicked.fire("n1", 1);
  assert.equal(await answer, 1);
  assert.deepEqual(clicks, [1]);
  assert.deepEqual(log.at(-1), ["clear", "n1"]);
});

test("a notification closed by the person is closed; closed by the system, or never answered, times out", async () => {
  const { api } = fakeNotifications();
  const notify = createNotify({ notifications: api, iconUrl: "i", log: quiet });
  const closed = notify.ask({ id: "n1", title: "t", message: "m", buttons: ["Done"] }, { timeoutMs: 5000 });
  api.onClosed.fire("n1", true);
  assert.equal(await closed, "closed");
  const expired = notify.ask({ id: "n2", title: "t", message: "m", buttons: ["Done"] }, { timeoutMs: 30 });
  api.onClosed.fire("n2", false);
  assert.equal(await expired, "timeout");
  const controller = new AbortController();
  const aborted = notify.ask({ id: "n3", title: "t", message: "m", buttons: ["Done"] }, { timeoutMs: 5000, signal: controller.signal });
  controller.abort();
  assert.equal(await aborted, "closed");
});

test("html leaves the overlay out, whatever it holds", () => {
  const page = '<html><body><p>a</p></body><tabpilot-overlay data-tabpilot-overlay=""><template shadowrootmode="closed"><div>Stop</div></template></tabpilot-overlay></html>';
  assert.equal(withoutOverlay(page), "<html><body><p>a</p></body></html>");
  assert.equal(withoutOverlay("a<tabpilot-overlay>b<tabpilot-overlay>c</tabpilot-overlay>d</tabpilot-overlay>e"), "ae");
  assert.equal(withoutOverlay("<p>nothing to take out</p>"), "<p>nothing to take out</p>");
});

test("the badge says what the agent does, never what it types", () => {
  assert.equal(activityOf("tool.click", { target: "@e12" }), "click @e12");
  assert.equal(activityOf("tool.fill", { target: "#password", value: "hunter2" }), "fill #password");
  assert.equal(activityOf("tool.type", { text: "secret" }), "type");
  assert.equal(activityOf("tool.press", { keys: ["Control+A", "Delete"] }), "press Control+A Delete");
  assert.equal(activityOf("tool.drag", { source: "#a", target: "#b" }), "drag #a");
  assert.equal(activityOf("tool.scroll", { direction: "down" }), "scroll down");
});

test("a gesture of keys goes without a message wherever the overlay is; a pointer gesture still waits for the shield unless its point is clear", async () => {
  const log = [];
  const { overlay } = setup({ pages: { 1: (m) => (log.push(`${m.kind} ${m.on ?? m.open ?? m.text}${m.pass ? " pass" : ""}`), { ok: true }) } });
  const keys = overlay.shield(1, { activity: "fill @e3", pass: true });
  const send = keys.gate(() => (log.push("input"), Promise.resolve({})));
  await send("Input.insertText", { text: "Ada" });
  await send("Input.dispatchKeyEvent", { type: "keyDown", key: "Tab" });
  assert.deepEqual(log, ["input", "input"], "nothing before the keys");
  keys.release();
  await tick();
  assert.deepEqual(log, ["input", "input", "activity fill @e3"]);
  log.length = 0;
  const pointer = overlay.shield(1, { activity: "click @e3", pass: true });
  await pointer.gate(() => (log.push("input"), Promise.resolve({})))("Input.dispatchMouseEvent", { type: "mousePressed", x: 1, y: 2 });
  assert.deepEqual(log, ["shield true pass", "input"], "the overlay may be at the point: the shield comes up open first");
  pointer.release();
});
