// The tab cache: an answer is kept only for a tab the debugger is attached to, and forgotten at every
// tab event, every navigation CDP reports and every detach; tab events are listened to only while kept.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createTabCache } from "../../../src/tabpilot/extension/state/tab-cache.js";
import { FakeEvent } from "../helpers/fake-event.js";

const TAB_EVENTS = ["onActivated", "onUpdated", "onRemoved", "onCreated", "onAttached", "onDetached", "onReplaced"];
/** Each tab event as Chrome fires it about tab `id` in window `windowId`. */
const FIRED = {
  onActivated: (id, windowId) => [{ tabId: id, windowId }],
  onUpdated: (id, windowId) => [id, { status: "loading" }, { id, windowId }],
  onRemoved: (id, windowId) => [id, { windowId, isWindowClosing: false }],
  onCreated: (id, windowId) => [{ id, windowId }],
  onAttached: (id, windowId) => [id, { newWindowId: windowId, newPosition: 0 }],
  onDetached: (id, windowId) => [id, { oldWindowId: windowId, oldPosition: 0 }],
  onReplaced: (id) => [99, id],
};

function setup() {
  const browser = { active: { id: 1, windowId: 9, url: "https://a.example/" }, byId: new Map([[2, { id: 2, windowId: 9, url: "https://b.example/" }]]) };
  const asked = [];
  const tabs = Object.fromEntries(TAB_EVENTS.map((name) => [name, new FakeEvent()]));
  Object.assign(tabs, {
    async query(q) {
      asked.push(["query", q]);
      return browser.active ? [{ ...browser.active }] : [];
    },
    async get(id) {
      asked.push(["get", id]);
      if (!browser.byId.has(id)) throw new Error(`No tab with id: ${id}.`);
      return { ...browser.byId.get(id) };
    },
  });
  const windows = { onRemoved: new FakeEvent() };
  const cdpEvents = new Set();
  const detaches = new Set();
  const attached = new Set([1, 2]);
  const cdp = {
    onEvent: (tabId, fn) => void cdpEvents.add(fn),
    onDetach: (fn) => void detaches.add(fn),
    isAttached: (id) => attached.has(id),
    event: (method, tabId = 1) => [...cdpEvents].forEach((fn) => fn(method, {}, tabId, null)),
    detach: (id) => [...detaches].forEach((fn) => fn(id)),
  };
  const cache = createTabCache({ tabs, windows, cdp });
  const listening = () => TAB_EVENTS.filter((name) => tabs[name].listeners.size > 0).length + windows.onRemoved.listeners.size;
  return { cache, browser, asked, tabs, windows, cdp, attached, listening };
}

test("a second look at the same tab asks the browser nothing, until a tab event says something changed", async () => {
  const t = setup();
  assert.equal(t.listening(), 0, "nothing kept: no tab event is listened to");
  assert.equal((await t.cache.active(9)).id, 1);
  assert.equal((await t.cache.active(9)).id, 1);
  assert.equal((await t.cache.get(2)).url, "https://b.example/");
  assert.equal((await t.cache.get(2)).url, "https://b.example/");
  assert.equal((await t.cache.get(1)).id, 1, "the active tab is known by its id too");
  assert.deepEqual(t.asked, [["query", { windowId: 9, active: true }], ["get", 2]]);
  assert.equal(t.listening(), TAB_EVENTS.length + 1);
  for (const name of TAB_EVENTS) {
    await t.cache.active(9);
    t.asked.length = 0;
    t.tabs[name].fire(...FIRED[name](1, 9));
    t.browser.active = { id: 3, windowId: 9, url: `https://${name}.example/` };
    t.attached.add(3);
    assert.equal((await t.cache.active(9)).id, 3, `${name} makes the next look ask again`);
    assert.equal(t.asked.length, 1);
    t.browser.active = { id: 1, windowId: 9, url: "https://a.example/" };
    t.tabs.onActivated.fire({ tabId: 1, windowId: 9 });
  }
});

test("a change to another tab in another window forgets nothing", async () => {
  const t = setup();
  await t.cache.active(9);
  await t.cache.get(2);
  t.asked.length = 0;
  for (const name of TAB_EVENTS) t.tabs[name].fire(...FIRED[name](5, 40));
  t.windows.onRemoved.fire(40);
  t.cdp.event("Page.frameNavigated", 5);
  await t.cache.active(9);
  await t.cache.get(2);
  assert.deepEqual(t.asked, []);
  t.cdp.event("Page.frameNavigated", 2);
  await t.cache.active(9);
  await t.cache.get(2);
  assert.deepEqual(t.asked, [["get", 2]], "a navigation of tab 2 forgets tab 2 only");
});

test("a navigation CDP reports in the tab (before the browser's tab events tell of it), its detach, its window closing or forget() forget it", async () => {
  const t = setup();
  for (const change of [() => t.cdp.event("Page.frameStartedNavigating"), () => t.cdp.event("Page.navigatedWithinDocument"), () => t.cdp.detach(1), () => t.cache.forget(), () => t.windows.onRemoved.fire(9)]) {
    await t.cache.active(9);
    t.asked.length = 0;
    change();
    assert.equal(t.listening(), 0);
    await t.cache.active(9);
    assert.equal(t.asked.length, 1);
  }
  t.asked.length = 0;
  t.cdp.event("Runtime.consoleAPICalled");
  await t.cache.active(9);
  assert.equal(t.asked.length, 0, "other CDP events change nothing");
});

test("a tab the debugger is not attached to, an absent tab and an answer older than a change are not kept", async () => {
  const t = setup();
  t.attached.delete(1);
  await t.cache.active(9);
  await t.cache.active(9);
  assert.equal(t.asked.length, 2);
  assert.equal(await t.cache.get(7), null);
  assert.equal(await t.cache.get(7), null);
  assert.equal(t.asked.length, 4);
  t.attached.add(1);
  t.asked.length = 0;
  const pending = t.cache.active(9);
  t.tabs.onUpdated.fire(...FIRED.onUpdated(1, 9));
  await pending;
  await t.cache.active(9);
  assert.equal(t.asked.length, 2, "asked before the change: asked again after it");
});

test("without the browser's events (a stand-in), every look asks the browser", async () => {
  const tabs = { query: async () => [{ id: 1, windowId: 9 }], get: async (id) => ({ id }), onRemoved: new FakeEvent() };
  let asked = 0;
  const counting = { ...tabs, query: async (q) => (asked++, tabs.query(q)) };
  const cache = createTabCache({ tabs: counting, windows: { onRemoved: new FakeEvent() }, cdp: { detachSession: async () => {} } });
  await cache.active(9);
  await cache.active(9);
  assert.equal(asked, 2);
});
