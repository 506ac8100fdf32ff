// Session manager: Agent Windows, persistence and re-adoption, ownership of tabs, popups.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSessionManager, STORAGE_KEY, AGENT_WINDOW } from "../../../src/tabpilot/extension/state/sessions.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { fakeBrowser, fakeCdp } from "../helpers/fake-chrome.js";
import { waitFor, settle } from "../helpers/wait.js";

const quiet = { warn() {} };

function setup({ storage = new FakeStorage(), browser = fakeBrowser() } = {}) {
  const cdp = fakeCdp();
  const events = [];
  const sessions = createSessionManager({
    windows: browser.chrome.windows,
    tabs: browser.chrome.tabs,
    storage,
    cdp,
    emit: (name, payload) => events.push([name, payload]),
    now: () => 1000,
    log: quiet,
  });
  return { sessions, storage, browser, cdp, events };
}

test("start opens an unfocused 1280×800 Agent Window on about:blank and persists it", async () => {
  const { sessions, storage, browser } = setup();
  const result = await sessions.start("s1");
  assert.deepEqual(browser.calls[0], ["windows.create", AGENT_WINDOW]);
  assert.deepEqual(AGENT_WINDOW, { url: "about:blank", focused: false, type: "normal", width: 1280, height: 800 });
  assert.equal(typeof result.window_id, "number");
  assert.equal(browser.tabs.get(result.tab_id).windowId, result.window_id);
  await waitFor(() => storage.data[STORAGE_KEY]?.s1, "the table to be saved");
  assert.deepEqual(storage.data[STORAGE_KEY], { s1: { windowId: result.window_id, createdAt: 1000, extraTabIds: [] } });
  assert.deepEqual(await sessions.listSessionIds(), ["s1"]);
});

test("a duplicate session id is refused, also while the first start is still running", async () => {
  const { sessions } = setup();
  const first = sessions.start("s1");
  await assert.rejects(sessions.start("s1"), { code: "invalid_params", reason: "session_exists" });
  await first;
  await assert.rejects(sessions.start("s1"), { reason: "session_exists" });
});

test("a start cancelled while the window opens closes that window", async () => {
  const { sessions, browser } = setup();
  const controller = new AbortController();
  const pending = sessions.start("s1", { signal: controller.signal });
  controller.abort(new Error("cancelled"));
  await assert.rejects(pending, /cancelled/);
  assert.equal(browser.windows.size, 0);
  assert.deepEqual(await sessions.listSessionIds(), []);
});

test("a restarted worker re-adopts windows that still exist and forgets the others", async () => {
  const browser = fakeBrowser();
  const storage = new FakeStorage();
  const first = setup({ storage, browser });
  const a = await first.sessions.start("a");
  const b = await first.sessions.start("b");
  await settle();
  browser.closeWindow(b.window_id); // closed while no worker was listening
  const second = setup({ storage, browser });
  assert.deepEqual(await second.sessions.listSessionIds(), ["a"]);
  assert.equal((await second.sessions.get("a")).windowId, a.window_id);
  await settle();
  assert.deepEqual(Object.keys(storage.data[STORAGE_KEY]), ["a"]);
});

test("stop detaches the session's tabs, closes the window, and emits nothing", async () => {
  const { sessions, browser, cdp, events } = setup();
  const { window_id, tab_id } = await sessions.start("s1");
  const second = browser.addTab(window_id);
  await sessions.stop("s1");
  assert.deepEqual(cdp.detached.sort(), [tab_id, second.id].sort());
  assert.equal(browser.windows.has(window_id), false);
  await settle();
  assert.deepEqual(events, []);
  await assert.rejects(sessions.stop("s1"), { code: "not_found", reason: "unknown_session" });
});

test("the person closing the Agent Window ends the session with an event", async () => {
  const { sessions, browser, events, storage } = setup();
  const { window_id } = await sessions.start("s1");
  browser.closeWindow(window_id);
  await waitFor(() => events.length === 1, "the event");
  assert.deepEqual(events[0], ["session.window_closed", { session_id: "s1", reason: "user_closed_window" }]);
  assert.deepEqual(await sessions.listSessionIds(), []);
  await settle();
  assert.deepEqual(storage.data[STORAGE_KEY], {});
});

test("resolveTab: the active tab by default; only the session's tabs by id", async () => {
  const { sessions, browser } = setup();
  const s1 = await sessions.start("s1");
  const s2 = await sessions.start("s2");
  const other = browser.addTab(browser.addWindow());
  assert.equal((await sessions.resolveTab("s1")).id, s1.tab_id);
  const fresh = browser.addTab(s1.window_id, { active: true });
  assert.equal((await sessions.resolveTab("s1")).id, fresh.id, "current tab follows the active tab");
  assert.equal((await sessions.resolveTab("s1", s1.tab_id)).id, s1.tab_id);
  for (const foreign of [s2.tab_id, 9999]) {
    await assert.rejects(sessions.resolveTab("s1", foreign), { code: "not_found", reason: "unknown_tab" });
  }
  // The person's own tab: out of scope until borrowed, and the error says how to ask for it.
  await assert.rejects(sessions.resolveTab("s1", other.id), (err) => {
    assert.equal(err.code, "permission_denied");
    assert.equal(err.reason, "agent_window_scope");
    assert.match(err.data.hint, new RegExp(`tabpilot tab borrow ${other.id}`));
    return true;
  });
  await assert.rejects(sessions.resolveTab("nope"), { reason: "unknown_session" });
});

test("a tab opened from an agent tab into another window is moved into the Agent Window", async () => {
  const { sessions, browser } = setup();
  const { window_id, tab_id } = await sessions.start("s1");
  const elsewhere = browser.addTab(browser.addWindow(), { openerTabId: tab_id });
  browser.chrome.tabs.onCreated.fire({ ...elsewhere });
  await waitFor(() => browser.tabs.get(elsewhere.id).windowId === window_id, "the move");
  assert.deepEqual((await sessions.tabs("s1")).map((t) => t.id).sort(), [tab_id, elsewhere.id].sort());
});

test("a popup that cannot be moved stays in the session as an extra tab until closed", async () => {
  const { sessions, browser, storage } = setup();
  const { tab_id } = await sessions.start("s1");
  const popup = browser.addTab(browser.addWindow("popup"), { openerTabId: tab_id, active: true });
  browser.chrome.tabs.onCreated.fire({ ...popup });
  await waitFor(() => storage.data[STORAGE_KEY]?.s1?.extraTabIds?.length === 1, "the extra tab to be saved");
  assert.equal((await sessions.resolveTab("s1", popup.id)).id, popup.id);
  assert.equal((await sessions.tabs("s1")).length, 2);
  await browser.chrome.tabs.remove(popup.id);
  await waitFor(() => storage.data[STORAGE_KEY].s1.extraTabIds.length === 0, "the extra tab to be dropped");
});

test("tabs the person opens from their own tabs are left alone", async () => {
  const { sessions, browser } = setup();
  await sessions.start("s1");
  const win = browser.addWindow();
  const theirs = browser.addTab(win);
  const child = browser.addTab(browser.addWindow(), { openerTabId: theirs.id });
  browser.chrome.tabs.onCreated.fire({ ...child });
  await settle();
  assert.equal(browser.calls.some(([name]) => name === "tabs.move"), false);
});

test("resolveTab asks the guard about the tab unless anyState; stop runs beforeStop before detaching", async () => {
  const browser = fakeBrowser();
  const cdp = fakeCdp();
  const order = [];
  const blocked = new Set();
  const detachSession = cdp.detachSession.bind(cdp);
  cdp.detachSession = async (ids) => {
    order.push(["detach", [...ids]]);
    return detachSession(ids);
  };
  const sessions = createSessionManager({
    windows: browser.chrome.windows,
    tabs: browser.chrome.tabs,
    storage: new FakeStorage(),
    cdp,
    emit() {},
    guard(tabId) {
      if (blocked.has(tabId)) throw new Error(`tab ${tabId} is blocked`);
    },
    async beforeStop(tabIds, sessionId) {
      order.push(["beforeStop", tabIds, sessionId]);
    },
    log: quiet,
  });
  const { tab_id } = await sessions.start("s1");
  blocked.add(tab_id);
  await assert.rejects(sessions.resolveTab("s1"), /blocked/);
  await assert.rejects(sessions.resolveTab("s1", tab_id), /blocked/);
  assert.equal((await sessions.resolveTab("s1", tab_id, { anyState: true })).id, tab_id);
  await sessions.stop("s1");
  assert.deepEqual(order, [
    ["beforeStop", [tab_id], "s1"],
    ["detach", [tab_id]],
  ]);
});

test("resolveTab has every tab admitted (blocked sites) first: page and frames, the address only, or not at all", async () => {
  const browser = fakeBrowser();
  const admitted = [];
  let refuse = false;
  const sessions = createSessionManager({
    windows: browser.chrome.windows,
    tabs: browser.chrome.tabs,
    storage: new FakeStorage(),
    cdp: fakeCdp(),
    emit() {},
    guard() {
      throw new Error("dialog open");
    },
    async admit(tab, options) {
      admitted.push([tab.id, options]);
      if (refuse) throw new Error("blocked site");
    },
    log: quiet,
  });
  const { tab_id } = await sessions.start("s1");
  await sessions.resolveTab("s1", tab_id, { anyState: true });
  await sessions.resolveTab("s1", tab_id, { anyState: true, sites: "address" });
  await sessions.resolveTab("s1", tab_id, { anyState: true, sites: "none" });
  assert.deepEqual(admitted, [
    [tab_id, { frames: true }],
    [tab_id, { frames: false }],
  ]);
  // A blocked site is refused before the dialog guard is asked.
  refuse = true;
  await assert.rejects(sessions.resolveTab("s1", tab_id), /blocked site/);
});
