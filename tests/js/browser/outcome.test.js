// What an action set off, from fake CDP events: navigations (waited for until they commit), new tabs,
// dialogs left open or accepted, and the page round trip that catches a link's late navigation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { watchOutcome } from "../../../src/tabpilot/extension/browser/outcome.js";
import { createDialogs } from "../../../src/tabpilot/extension/browser/dialogs.js";
import { urlMatcher } from "../../../src/tabpilot/extension/tools/interact/wait.js";
import { FakeEvent as Event } from "../helpers/fake-event.js";
import { fakeCdpEvents } from "../helpers/fake-cdp.js";

const TAB = 9;
const MAIN = "F-main";
const tick = () => new Promise((r) => setTimeout(r, 1));


function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

/** A handler context whose page the test plays: CDP events, the page's answers, tabs opening. */
function fakeContext({ page = { url: "https://site/next", title: "Next", status: 200 }, onFlush = () => {} } = {}) {
  const sent = [];
  const cdp = {
    ...fakeCdpEvents(TAB),
    sent,
    async send(tabId, method, params = {}) {
      sent.push([method, params]);
      if (method === "Runtime.evaluate" && params.contextId) return onFlush();
      if (method === "Runtime.evaluate") return { result: { value: page } };
      if (method === "Page.handleJavaScriptDialog") cdp.emit("Page.javascriptDialogClosed", { result: params.accept });
      return {};
    },
  };
  const created = new Event();
  const tabsInSession = [{ id: TAB }];
  const ctx = {
    cdp,
    dialogs: createDialogs({ cdp, log: { warn() {} } }),
    frames: { main: async () => ({ tabId: TAB, sessionId: null, frameId: MAIN }), agentWorld: async () => 77 },
    sessions: { tabs: async () => tabsInSession },
    tabs: {
      onCreated: created,
      async update(id, props) {
        return { id, active: props.active };
      },
      async get(id) {
        return { id, url: "https://site/popup" };
      },
    },
  };
  return { ctx, cdp, created, tabsInSession };
}

const later = (ms = 5000) => Date.now() + ms;

test("an action that sets nothing off reports nothing, after one round trip through the page", async () => {
  const { ctx, cdp } = fakeContext();
  const before = cdp.listenerCount(); // the dialogs module's own
  const watch = await watchOutcome(ctx, TAB, "s");
  const { value, outcome } = await watch.settle(Promise.resolve("done"), { deadline: later() });
  assert.equal(value, "done");
  assert.deepEqual(outcome, {});
  assert.deepEqual(cdp.sent.filter(([m]) => m === "Runtime.evaluate").map(([, p]) => p.contextId), [77]);
  assert.equal(cdp.listenerCount(), before, "the watch removed every listener it added");
});

test("a navigation asked for during the input is waited for until it commits, with its status", async () => {
  const { ctx, cdp } = fakeContext();
  const watch = await watchOutcome(ctx, TAB, "s");
  const input = deferred();
  const settled = watch.settle(input.promise, { deadline: later() });
  cdp.emit("Page.frameRequestedNavigation", { frameId: MAIN, url: "https://site/next", disposition: "currentTab" });
  input.resolve();
  await tick();
  cdp.emit("Page.frameNavigated", { frame: { id: MAIN, loaderId: "L2", url: "https://site/next" } });
  const { outcome } = await settled;
  assert.deepEqual(outcome.navigated, { url: "https://site/next", title: "Next", status: 200, same_document: false, committed: true });
  assert.equal(cdp.sent.some(([m, p]) => m === "Runtime.evaluate" && p.contextId), false, "no flush once a navigation is known");
});

test("a link's navigation scheduled just after the click is caught by the round trip through the page", async () => {
  const { ctx, cdp } = fakeContext({
    onFlush() {
      cdp.emit("Page.frameScheduledNavigation", { frameId: MAIN, delay: 0, url: "https://site/#b", reason: "anchorClick" });
      setTimeout(() => cdp.emit("Page.navigatedWithinDocument", { frameId: MAIN, url: "https://site/#b" }), 2);
      return {};
    },
  });
  const watch = await watchOutcome(ctx, TAB, "s");
  const { outcome } = await watch.settle(Promise.resolve(), { deadline: later() });
  assert.equal(outcome.navigated.same_document, true);
  assert.equal(outcome.navigated.status, null);
});

test("a navigation cancelled before it started, or never committed in time, does not hang", async () => {
  const { ctx, cdp } = fakeContext({
    onFlush() {
      cdp.emit("Page.frameScheduledNavigation", { frameId: MAIN, delay: 0, url: "https://site/x" });
      cdp.emit("Page.frameClearedScheduledNavigation", { frameId: MAIN });
      return {};
    },
  });
  const watch = await watchOutcome(ctx, TAB, "s");
  assert.equal((await watch.settle(Promise.resolve(), { deadline: later() })).outcome.navigated.committed, false);

  const slow = fakeContext();
  const watchSlow = await watchOutcome(slow.ctx, TAB, "s");
  const input = deferred();
  const settled = watchSlow.settle(input.promise, { deadline: later(60) });
  slow.cdp.emit("Page.frameRequestedNavigation", { frameId: MAIN, url: "https://slow/", disposition: "currentTab" });
  input.resolve();
  const started = Date.now();
  const { outcome } = await settled;
  assert.deepEqual(outcome.navigated, { url: "https://slow/", title: "", status: null, same_document: false, committed: false });
  assert.ok(Date.now() - started < 1000);
});

test("a confirm opened by the input ends the wait at once; the input is left pending", async () => {
  const { ctx, cdp } = fakeContext();
  const watch = await watchOutcome(ctx, TAB, "s");
  const stuck = new Promise(() => {});
  const settled = watch.settle(stuck, { deadline: later() });
  cdp.emit("Page.javascriptDialogOpening", { type: "confirm", message: "Delete 3 files?" });
  const { outcome } = await settled;
  assert.deepEqual(outcome, { dialog: { type: "confirm", message: "Delete 3 files?", default_prompt: "", handled: "open" } });
});

test("an alert during the action is reported as accepted; an older open dialog is not this action's", async () => {
  const { ctx, cdp } = fakeContext();
  const watch = await watchOutcome(ctx, TAB, "s");
  const input = deferred();
  const settled = watch.settle(input.promise, { deadline: later() });
  cdp.emit("Page.javascriptDialogOpening", { type: "alert", message: "Saved" });
  await tick();
  input.resolve();
  assert.deepEqual((await settled).outcome.dialog, { type: "alert", message: "Saved", default_prompt: "", handled: "accepted" });
});

/** The input opens https://site/popup, and tab 31 is created for it (then `others`, opened by others). */
async function windowOpened(ctx, cdp, created, others = []) {
  const watch = await watchOutcome(ctx, TAB, "s");
  const input = deferred();
  const settled = watch.settle(input.promise, { deadline: later() });
  cdp.emit("Page.windowOpen", { url: "https://site/popup" });
  input.resolve();
  await tick();
  created.fire({ id: 31, openerTabId: TAB });
  for (const tab of others) created.fire(tab);
  return settled;
}

test("a window the page opens is found as a tab of the session and made current", async () => {
  const { ctx, cdp, created, tabsInSession } = fakeContext();
  const settled = windowOpened(ctx, cdp, created, [{ id: 32, openerTabId: 1234 }]);
  setTimeout(() => tabsInSession.push({ id: 31 }), 30);
  const { outcome } = await settled;
  assert.deepEqual(outcome.opened_tab, { tab_id: 31, url: "https://site/popup", kept: true, current: true });
  assert.equal(created.listeners.size, 0);
});

test("a new tab made current is reported once its navigation has committed (not its initial about:blank)", async () => {
  const { ctx, cdp, created, tabsInSession } = fakeContext();
  let looks = 0;
  const committedAt = Date.now() + 120;
  ctx.tabs.get = async (id) => {
    looks += 1;
    return Date.now() < committedAt ? { id, url: "", pendingUrl: "https://site/popup" } : { id, url: "https://site/popup?landed" };
  };
  tabsInSession.push({ id: 31 });
  const { outcome } = await windowOpened(ctx, cdp, created);
  assert.ok(Date.now() >= committedAt, "settled before the new tab committed");
  assert.ok(looks > 1);
  assert.deepEqual(outcome.opened_tab, { tab_id: 31, url: "https://site/popup?landed", kept: true, current: true });
});

test("URL patterns: a part of the URL, or a glob over all of it", () => {
  assert.equal(urlMatcher("/done")("https://a/done?x"), true);
  assert.equal(urlMatcher("*/done")("https://a/done?x"), false);
  assert.equal(urlMatcher("*/done*")("https://a/done?x"), true);
  assert.equal(urlMatcher("https://a/*.html")("https://a/b/c.html"), true);
  assert.equal(urlMatcher("https://a/(x)*")("https://a/(x)y"), true);
  assert.equal(urlMatcher("https://a/(x)*")("https://a/xy"), false);
});
