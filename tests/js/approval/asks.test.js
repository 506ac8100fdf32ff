// The cards of a side-panel agent's actions: where they show, who may answer, and that every way of
// not answering is a no.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createAsks } from "../../../src/tabpilot/extension/approval/asks.js";

const tick = () => new Promise((r) => setTimeout(r, 5));
const card = { rule: "form-submit", title: "Submit a form", rules: ["form-submit"], target: 'button "Place order"', site: "shop.test", start: "shop.test", always: true };

function setup({ panel = true, waitMs = 5000 } = {}) {
  const emitted = [];
  const progress = [];
  const pageAsks = [];
  const notes = [];
  const shows = { value: panel };
  const asks = createAsks({
    timeoutMs: async () => waitMs,
    page: {
      askApproval: (tabId, request) =>
        new Promise((resolve) => {
          pageAsks.push({ tabId, request, resolve });
          request.signal?.addEventListener("abort", () => resolve("unavailable"));
        }),
    },
    notify: {
      ask: (question, options) =>
        new Promise((resolve) => {
          notes.push({ question, options, resolve });
          options.signal?.addEventListener("abort", () => resolve("closed"));
        }),
    },
    panelShows: () => shows.value,
    tabInView: async () => 7,
    showTab: () => {},
    emit: (name, payload) => emitted.push([name, payload]),
    random: () => "x1",
  });
  const controller = new AbortController();
  const ask = () => asks.ask({ sessionId: "p-s", conversationId: "c-1", tabId: 3, card }, { signal: controller.signal, progress: (p) => progress.push(p) });
  return { asks, ask, emitted, progress, pageAsks, notes, shows, controller };
}

test("a card shown in the panel: its asking is told to the daemon, the call is kept alive, Allow lets it go", async () => {
  const s = setup();
  const waiting = s.ask();
  await tick();
  assert.deepEqual(s.progress, [{ waiting: "approval", deadline_ms: 5000 }]);
  assert.equal(s.emitted[0][1].state, "asked");
  assert.equal(s.emitted[0][1].target, 'button "Place order"');
  assert.equal(s.pageAsks.length + s.notes.length, 0, "a panel shows it: nothing in the page");
  assert.equal(s.asks.answer("ap-x1", "allow", { conversationId: "c-other" }), false, "another conversation's panel cannot answer");
  assert.equal(s.asks.answer("ap-x1", "allow", { conversationId: "c-1", always: true }), true);
  assert.deepEqual(await waiting, { always: true });
  assert.equal(s.asks.answer("ap-x1", "deny", { conversationId: "c-1" }), false, "the first answer wins");
  assert.deepEqual(s.emitted.at(-1)[1], { session_id: "p-s", conversation_id: "c-1", approval_id: "ap-x1", state: "answered", decision: "allow", via: "panel", always: true });
});

test("Deny is user_declined with the hint not to look for another way", async () => {
  const s = setup();
  const waiting = s.ask();
  await tick();
  s.asks.answer("ap-x1", "deny", { conversationId: "c-1" });
  await assert.rejects(waiting, (err) => err.code === "permission_denied" && err.reason === "user_declined" && /do not retry/.test(err.data.hint));
});

test("no panel: the card goes to the page in view and a notification; the first answer wins and the other goes away", async () => {
  const s = setup({ panel: false });
  const waiting = s.ask();
  await tick();
  assert.equal(s.pageAsks.length, 1);
  assert.equal(s.pageAsks[0].tabId, 7, "the page the person looks at");
  assert.equal(s.notes.length, 1);
  assert.deepEqual(s.notes[0].question.buttons, ["Allow", "Deny"]);
  s.notes[0].resolve(0);
  assert.deepEqual(await waiting, { always: false });
  await tick();
  assert.ok(s.pageAsks[0].request.signal.aborted, "the page's card is withdrawn");
  assert.equal(s.emitted.at(-1)[1].via, "notification");
});

test("the last panel closing moves an open card to the page and a notification", async () => {
  const s = setup();
  const waiting = s.ask();
  await tick();
  s.shows.value = false;
  s.asks.panelGone("c-1");
  await tick();
  assert.equal(s.pageAsks.length, 1);
  s.pageAsks[0].resolve("deny");
  await assert.rejects(waiting, (err) => err.reason === "user_declined");
});

test("no answer in time, the tab closing and Stop are each a no; a page that cannot show it changes nothing", async () => {
  const late = setup({ panel: false, waitMs: 30 });
  const waiting = late.ask();
  await tick();
  late.pageAsks[0].resolve("unavailable");
  await assert.rejects(waiting, (err) => err.code === "permission_denied" && err.reason === "approval_timeout");
  assert.equal(late.emitted.at(-1)[1].decision, "timeout");

  const closed = setup();
  const onClosed = closed.ask();
  await tick();
  closed.asks.tabClosed(3);
  await assert.rejects(onClosed, (err) => err.reason === "approval_timeout" && /tab closed/.test(err.message));

  const stopped = setup();
  const onStop = stopped.ask();
  await tick();
  const why = new Error("stopped by the person");
  stopped.controller.abort(why);
  await assert.rejects(onStop, (err) => err === why);
  assert.equal(stopped.emitted.at(-1)[1].decision, "stopped");
  assert.deepEqual(stopped.asks.pending(), []);
});

test("Always is kept only where the card offered it", async () => {
  const s = setup();
  const waiting = s.asks.ask({ sessionId: "p-s", conversationId: "c-1", tabId: 3, card: { ...card, rule: "run-code", always: false } }, { signal: s.controller.signal, progress: () => {} });
  await tick();
  s.asks.answer("ap-x1", "allow", { conversationId: "c-1", always: true });
  assert.deepEqual(await waiting, { always: false });
});
