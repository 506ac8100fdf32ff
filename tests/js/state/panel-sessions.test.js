// Panel sessions: a side-panel conversation acts on the person's own tab in place, no Agent Window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSessionManager, STORAGE_KEY } from "../../../src/tabpilot/extension/state/sessions.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { fakeBrowser, fakeCdp } from "../helpers/fake-chrome.js";
import { waitFor, settle } from "../helpers/wait.js";

function setup({ storage = new FakeStorage(), browser = fakeBrowser(), admit } = {}) {
  const cdp = fakeCdp();
  const events = [];
  const sessions = createSessionManager({
    windows: browser.chrome.windows,
    tabs: browser.chrome.tabs,
    storage,
    cdp,
    emit: (name, payload) => events.push([name, payload]),
    admit,
    now: () => 1000,
    log: { warn() {} },
  });
  return { sessions, storage, browser, cdp, events };
}

/** The person's window with two tabs; they look at the second. */
function personsWindow(browser) {
  const win = browser.addWindow();
  const other = browser.addTab(win, { url: "https://mail.test/" });
  const shop = browser.addTab(win, { url: "https://shop.test/", active: true });
  return { win, other, shop };
}

test("a panel session is bound to the person's tab in place: no window opens, nothing moves", async () => {
  const { sessions, browser, storage } = setup();
  const { win, other, shop } = personsWindow(browser);
  const started = await sessions.startPanel("p-abc", shop.id);
  assert.deepEqual(started, { window_id: win, tab_id: shop.id, kind: "panel" });
  assert.equal(browser.calls.some(([name]) => name === "windows.create" || name === "tabs.move"), false);
  // With no tab named, tools act on the panel's tab even when the person looks at another one.
  await browser.chrome.tabs.update(other.id, { active: true });
  assert.equal((await sessions.resolveTab("p-abc")).id, shop.id);
  assert.deepEqual((await sessions.tabs("p-abc")).map((t) => t.id), [shop.id]);
  // The person's other tab in the same window is not the conversation's.
  await assert.rejects(sessions.resolveTab("p-abc", other.id), { reason: "agent_window_scope" });
  assert.equal(await sessions.ownerOf(browser.tabs.get(other.id)), null);
  assert.equal(await sessions.ownerOf(browser.tabs.get(shop.id)), "p-abc");
  assert.deepEqual(sessions.list(), []); // the popup lists Agent Windows only
  await waitFor(() => storage.data[STORAGE_KEY]?.["p-abc"], "the table to be saved");
  assert.deepEqual(storage.data[STORAGE_KEY]["p-abc"].panel, { anchorTabId: shop.id, currentTabId: shop.id });
  // Binding again (every turn does) is fine; an Agent Window session's id is not taken over.
  await sessions.startPanel("p-abc", shop.id);
  await sessions.start("s1");
  await assert.rejects(sessions.startPanel("s1", shop.id), { reason: "session_exists" });
});

test("tabs the agent opens from the panel's tab are adopted where they are and become current", async () => {
  const { sessions, browser } = setup();
  const { win, shop } = personsWindow(browser);
  await sessions.startPanel("p-abc", shop.id);
  const opened = browser.addTab(win, { openerTabId: shop.id, active: true, url: "https://shop.test/cart" });
  browser.chrome.tabs.onCreated.fire({ ...opened });
  await waitFor(async () => (await sessions.tabs("p-abc")).length === 2, "the adoption");
  assert.equal(browser.tabs.get(opened.id).windowId, win);
  assert.equal(browser.calls.some(([name]) => name === "tabs.move"), false);
  assert.equal((await sessions.resolveTab("p-abc")).id, opened.id);
  await sessions.select("p-abc", shop.id);
  assert.equal((await sessions.resolveTab("p-abc")).id, shop.id);
  // A tab opened with no opener (the person's own) is not adopted.
  const theirs = browser.addTab(win, { url: "https://news.test/" });
  browser.chrome.tabs.onCreated.fire({ ...theirs });
  await settle();
  assert.equal((await sessions.tabs("p-abc")).length, 2);
  await sessions.adopt("p-abc", theirs.id, { current: true });
  assert.equal((await sessions.resolveTab("p-abc")).id, theirs.id);
  // Closing the current adopted tab falls back to the panel's tab.
  await browser.chrome.tabs.remove(theirs.id);
  await waitFor(async () => (await sessions.resolveTab("p-abc")).id === shop.id, "the fallback");
});

test("closing the panel's tab ends its session and tells the daemon; stopping leaves the tab open", async () => {
  const { sessions, browser, events, cdp } = setup();
  const { shop, other } = personsWindow(browser);
  await sessions.startPanel("p-one", shop.id);
  await browser.chrome.tabs.remove(shop.id);
  await waitFor(() => events.length === 1, "the event");
  assert.deepEqual(events[0], ["chat.tab_closed", { session_id: "p-one", tab_id: shop.id }]);
  await assert.rejects(sessions.get("p-one"), { reason: "unknown_session" });
  await sessions.startPanel("p-two", other.id);
  await sessions.stop("p-two");
  assert.equal(browser.tabs.has(other.id), true);
  assert.equal(browser.calls.some(([name]) => name === "windows.remove"), false);
  assert.ok(cdp.detached.includes(other.id));
});

test("a panel session is refused on a tab the agent may not use, and re-adopted after a worker restart", async () => {
  const browser = fakeBrowser();
  const storage = new FakeStorage();
  const blocked = async (tab) => {
    if (tab.url.includes("bank")) throw Object.assign(new Error("blocked"), { code: "blocked_site" });
  };
  const first = setup({ browser, storage, admit: blocked });
  const { shop } = personsWindow(browser);
  const bank = browser.addTab(browser.addWindow(), { url: "https://bank.test/" });
  await assert.rejects(first.sessions.startPanel("p-bank", bank.id), { code: "blocked_site" });
  await assert.rejects(first.sessions.startPanel("p-gone", 9999), { reason: "tab_closed" });
  await first.sessions.startPanel("p-abc", shop.id);
  await settle();
  const second = setup({ browser, storage });
  assert.deepEqual(await second.sessions.listSessionIds(), ["p-abc"]);
  assert.equal((await second.sessions.resolveTab("p-abc")).id, shop.id);
});
