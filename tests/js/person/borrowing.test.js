// Borrowing the person's tabs: consent (first answer wins, no answer is a no), conflicts, giving back
// to the same place, and tabs coming back when the Agent Window closes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createBorrowing, firstAnswer, STORAGE_KEY } from "../../../src/tabpilot/extension/person/borrowing.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { fakeTabStrip } from "../helpers/fake-tabstrip.js";
import { waitFor } from "../helpers/wait.js";

const quiet = { warn() {} };

function setup({ storage = new FakeStorage(), strip = fakeTabStrip() } = {}) {
  const home = strip.addWindow();
  const [first, theirs, third] = ["a", "b", "c"].map((name) => strip.addTab(home, { url: `https://${name}.example/`, title: name.toUpperCase() }));
  strip.chrome.tabs.update(theirs.id, { active: true });
  const agent = strip.addWindow();
  const agentTab = strip.addTab(agent);
  const elsewhere = strip.addWindow();
  const otherAgentTab = strip.addTab(elsewhere);
  const windowsOf = { s1: agent, s2: elsewhere };
  const log = [];
  const page = [];
  const notes = [];
  const blocked = new Set();
  const deps = {
    tabs: strip.chrome.tabs,
    windows: strip.chrome.windows,
    recentlyClosed: strip.chrome.recentlyClosed,
    storage,
    sessions: {
      async get(id) {
        if (!windowsOf[id]) throw new Error(`unknown session ${id}`);
        return { windowId: windowsOf[id] };
      },
      ownerOf: async (tab) => Object.keys(windowsOf).find((id) => windowsOf[id] === tab.windowId) ?? null,
      list: () => Object.entries(windowsOf).map(([sessionId, windowId]) => ({ sessionId, windowId })),
    },
    cdp: {
      attach: async (id) => log.push(["attach", id]),
      detach: async (id) => log.push(["detach", id]),
    },
    dialogs: { dismissAll: async (ids) => log.push(["dismiss", [...ids]]) },
    overlay: {
      askBorrow(tabId, request) {
        return new Promise((resolve) => {
          page.push({ tabId, request, answer: resolve });
          request.signal?.addEventListener("abort", () => resolve("unavailable"));
        });
      },
      activate: async (id, session) => log.push(["badge", id, session]),
      deactivate: async (id) => log.push(["no badge", id]),
    },
    notify: {
      ask(question, options) {
        return new Promise((resolve) => {
          notes.push({ question, options, answer: resolve });
          options.signal?.addEventListener("abort", () => resolve("closed"));
        });
      },
    },
    sites: { isBlocked: async (url) => blocked.has(url) },
    random: () => "r",
    log: quiet,
  };
  const borrowing = createBorrowing(deps);
  return { borrowing, strip, home, agent, first, theirs, third, agentTab, otherAgentTab, log, page, notes, blocked, storage, deps };
}

/** Wait until the person is being asked, in the page and by notification. */
async function asked(t) {
  await waitFor(() => t.page.length > 0 && t.notes.length > 0, "the person to be asked");
  return { page: t.page.at(-1), note: t.notes.at(-1) };
}

test("first answer: the first real one wins; none at all is a timeout", async () => {
  assert.equal(await firstAnswer([new Promise(() => {}), Promise.resolve("deny")]), "deny");
  assert.equal(await firstAnswer([Promise.resolve(null), Promise.resolve("allow")]), "allow");
  assert.equal(await firstAnswer([Promise.resolve(null), Promise.reject(new Error("x"))]), "timeout");
});

test("Allow in the page: the tab moves to the end of the Agent Window as its current tab, attached, with the badge", async () => {
  const t = setup();
  const pending = t.borrowing.borrow("s1", t.theirs.id, { reason: "read the total", timeoutMs: 5000 });
  const { page, note } = await asked(t);
  assert.equal(page.tabId, t.theirs.id);
  assert.deepEqual([page.request.sessionId, page.request.reason, page.request.timeoutMs], ["s1", "read the total", 5000]);
  assert.deepEqual(note.question.buttons, ["Allow", "Deny"]);
  assert.match(note.question.message, /Session s1 asks to use “B”: read the total/);
  page.answer("allow");
  const result = await pending;
  assert.deepEqual(result, {
    tab_id: t.theirs.id,
    url: "https://b.example/",
    title: "B",
    window_id: t.agent,
    original_window_id: t.home,
    original_index: 1,
  });
  const now = t.strip.view(t.theirs.id);
  assert.deepEqual([now.windowId, now.index, now.active], [t.agent, 1, true]);
  assert.deepEqual(t.log, [["attach", t.theirs.id], ["badge", t.theirs.id, "s1"]]);
  assert.equal(t.borrowing.borrowerOf(t.theirs.id), "s1");
  assert.deepEqual(t.borrowing.borrowedBy("s1"), [t.theirs.id]);
  // the notification went away with the answer
  assert.ok(note.options.signal.aborted);
  await waitFor(() => t.storage.data[STORAGE_KEY]?.[t.theirs.id], "the loan to be saved");
});

test("the notification's buttons answer too; Deny, closing it and no answer are all a no", async () => {
  for (const [reply, reason] of [
    [1, "borrow_denied"],
    ["closed", "borrow_denied"],
    ["timeout", "borrow_timeout"],
  ]) {
    const t = setup();
    const pending = t.borrowing.borrow("s1", t.theirs.id, { timeoutMs: 5000 });
    const { page, note } = await asked(t);
    page.answer("unavailable");
    note.answer(reply);
    await assert.rejects(pending, { code: "permission_denied", reason });
    assert.equal(t.strip.view(t.theirs.id).windowId, t.home);
    assert.equal(t.borrowing.borrowerOf(t.theirs.id), null);
    assert.ok(page.request.signal.aborted, "the page's question goes away");
  }
  const t = setup();
  const pending = t.borrowing.borrow("s1", t.theirs.id, { timeoutMs: 5000 });
  (await asked(t)).note.answer(0);
  assert.equal((await pending).tab_id, t.theirs.id);
});

test("a cancelled borrow asks no more and moves nothing", async () => {
  const t = setup();
  const controller = new AbortController();
  const pending = t.borrowing.borrow("s1", t.theirs.id, { timeoutMs: 5000, signal: controller.signal });
  const { page } = await asked(t);
  controller.abort(new Error("cancelled"));
  await assert.rejects(pending, /cancelled/);
  assert.ok(page.request.signal.aborted);
  assert.equal(t.strip.view(t.theirs.id).windowId, t.home);
});

test("what cannot be borrowed is refused without asking", async () => {
  const t = setup();
  t.blocked.add("https://c.example/");
  const cases = [
    [t.third.id, { code: "blocked_site", reason: "site_blocked" }],
    [t.agentTab.id, { code: "invalid_params", reason: "already_borrowed" }],
    [t.otherAgentTab.id, { code: "not_found", reason: "unknown_tab" }],
    [9999, { code: "not_found", reason: "unknown_tab" }],
  ];
  for (const [tabId, error] of cases) await assert.rejects(t.borrowing.borrow("s1", tabId), error);
  const popup = t.strip.addTab(t.strip.addWindow("popup"), { url: "https://pop.example/" });
  await assert.rejects(t.borrowing.borrow("s1", popup.id), { code: "invalid_params" });
  assert.equal(t.page.length + t.notes.length, 0);
});

test("one tab, one borrower: another session's ask or loan is a conflict, a second ask of our own is already ours", async () => {
  const t = setup();
  const pending = t.borrowing.borrow("s1", t.theirs.id, { timeoutMs: 5000 });
  await asked(t);
  await assert.rejects(t.borrowing.borrow("s2", t.theirs.id), { code: "permission_denied", reason: "borrow_conflict" });
  t.page[0].answer("allow");
  await pending;
  await assert.rejects(t.borrowing.borrow("s2", t.theirs.id), { code: "permission_denied", reason: "borrow_conflict" });
  await assert.rejects(t.borrowing.borrow("s1", t.theirs.id), { code: "invalid_params", reason: "already_borrowed" });
  assert.equal(t.page.length, 1);
});

test("a tab that went to a blocked site while the person was asked is not taken", async () => {
  const t = setup();
  const pending = t.borrowing.borrow("s1", t.theirs.id, { timeoutMs: 5000 });
  const { page } = await asked(t);
  t.blocked.add("https://b.example/");
  page.answer("allow");
  await assert.rejects(pending, { code: "blocked_site" });
  assert.equal(t.strip.view(t.theirs.id).windowId, t.home);
});

async function borrowed(t, tabId = t.theirs.id) {
  const pending = t.borrowing.borrow("s1", tabId, { timeoutMs: 5000 });
  await waitFor(() => t.page.some((p) => p.tabId === tabId), "the ask");
  t.page.find((p) => p.tabId === tabId).answer("allow");
  await pending;
  t.log.length = 0;
}

test("giving back: same window, index and active state; no debugger, badge or open dialog left", async () => {
  const t = setup();
  await borrowed(t);
  const result = await t.borrowing.giveBack("s1", t.theirs.id);
  assert.deepEqual(result, { tab_id: t.theirs.id, returned: true, window_id: t.home, index: 1, fallback: false, active: true });
  const now = t.strip.view(t.theirs.id);
  assert.deepEqual([now.windowId, now.index, now.active], [t.home, 1, true]);
  assert.deepEqual(t.log, [["dismiss", [t.theirs.id]], ["detach", t.theirs.id], ["no badge", t.theirs.id]]);
  await assert.rejects(t.borrowing.giveBack("s1", t.theirs.id), { code: "invalid_params", reason: "not_borrowed" });
});

test("a tab that was not the active one goes back behind the one the person looks at", async () => {
  const t = setup();
  await borrowed(t, t.third.id);
  await t.borrowing.giveBack("s1", t.third.id);
  assert.deepEqual([t.strip.view(t.third.id).index, t.strip.view(t.third.id).active], [2, false]);
  assert.equal(t.strip.view(t.theirs.id).active, true);
});

test("the last tab of the Agent Window is replaced by a blank one, so the window stays", async () => {
  const t = setup();
  await borrowed(t);
  await t.strip.chrome.tabs.move(t.agentTab.id, { windowId: t.home, index: -1 });
  await t.borrowing.giveBack("s1", t.theirs.id);
  const left = await t.strip.chrome.tabs.query({ windowId: t.agent });
  assert.deepEqual(left.map((x) => x.url), ["about:blank"]);
});

test("its window gone, a tab goes to the person's last window, else to a new one, never into an Agent Window", async () => {
  const t = setup();
  await borrowed(t);
  for (const id of [...t.strip.windows.get(t.home).order]) t.strip.tabs.delete(id);
  t.strip.windows.delete(t.home);
  const spare = t.strip.addWindow();
  t.strip.addTab(spare);
  const result = await t.borrowing.giveBack("s1", t.theirs.id);
  assert.deepEqual([result.window_id, result.fallback], [spare, true]);

  const u = setup();
  await borrowed(u);
  u.strip.windows.delete(u.home);
  await u.strip.chrome.windows.update(u.agent, { focused: true });
  const again = await u.borrowing.giveBack("s1", u.theirs.id);
  assert.equal(again.fallback, true);
  assert.ok(![u.agent, u.home].includes(again.window_id));
  assert.deepEqual(u.strip.calls.filter(([name]) => name === "windows.create"), [["windows.create", { tabId: u.theirs.id }]]);
});

test("a tab that cannot go back stays lent, so it still comes back if its Agent Window closes", async () => {
  const t = setup();
  await borrowed(t);
  const move = t.strip.chrome.tabs.move;
  t.strip.chrome.tabs.move = async () => {
    throw new Error("Tabs cannot be edited right now (user may be dragging a tab).");
  };
  await assert.rejects(t.borrowing.giveBack("s1", t.theirs.id, { closing: true }), { code: "cdp_failed", message: /dragging/ });
  assert.equal(t.borrowing.borrowerOf(t.theirs.id), "s1");
  t.strip.chrome.tabs.move = move;
  t.strip.closeWindow(t.agent);
  await waitFor(() => (t.strip.windows.get(t.home)?.order.length ?? 0) === 3, "the tab to come back");
});

test("the session stopping gives every borrowed tab back", async () => {
  const t = setup();
  await borrowed(t);
  await borrowed(t, t.third.id);
  await t.borrowing.giveBackAll("s1");
  assert.deepEqual([t.strip.view(t.theirs.id).windowId, t.strip.view(t.third.id).windowId], [t.home, t.home]);
  assert.deepEqual(t.strip.windows.get(t.home).order, [t.first.id, t.theirs.id, t.third.id]);
  assert.deepEqual(t.borrowing.borrowedBy("s1"), []);
});

test("the person closing the Agent Window: borrowed tabs reopen from the recently closed list, in place", async () => {
  const t = setup();
  await borrowed(t);
  t.strip.tabs.get(t.theirs.id).url = "https://b.example/later";
  t.strip.chrome.tabs.onUpdated.fire(t.theirs.id, { url: "https://b.example/later" });
  t.strip.closeWindow(t.agent);
  await waitFor(() => (t.strip.windows.get(t.home)?.order.length ?? 0) === 3, "the tab to come back");
  const back = [...t.strip.tabs.values()].find((x) => x.restored);
  const view = t.strip.view(back.id);
  assert.deepEqual([view.windowId, view.index, view.active, view.url], [t.home, 1, true, "https://b.example/later"]);
  assert.ok(t.strip.calls.some(([name]) => name === "sessions.restore"));
});

test("a tab not in the recently closed list is opened again by its address", async () => {
  const t = setup();
  await borrowed(t);
  t.strip.chrome.recentlyClosed.getRecentlyClosed = async () => [];
  t.strip.closeWindow(t.agent);
  await waitFor(() => (t.strip.windows.get(t.home)?.order.length ?? 0) === 3, "the tab to come back", 3000);
  const urls = (await t.strip.chrome.tabs.query({ windowId: t.home })).map((x) => x.url);
  assert.deepEqual(urls, ["https://a.example/", "https://b.example/", "https://c.example/"]);
});

test("a tab the person drags out of the Agent Window or closes is theirs again", async () => {
  const t = setup();
  await borrowed(t);
  await t.strip.chrome.tabs.move(t.theirs.id, { windowId: t.home, index: 0 });
  await waitFor(() => t.borrowing.borrowerOf(t.theirs.id) === null, "the loan to end");
  await waitFor(() => t.log.some(([what]) => what === "detach"), "the debugger to let go");
  await borrowed(t, t.third.id);
  t.strip.tabs.delete(t.third.id);
  t.strip.chrome.tabs.onRemoved.fire(t.third.id, { windowId: t.agent, isWindowClosing: false });
  await waitFor(() => t.borrowing.borrowerOf(t.third.id) === null, "the loan to end");
});

test("a restarted worker keeps the loans of tabs that still exist", async () => {
  const t = setup();
  await borrowed(t);
  await waitFor(() => t.storage.data[STORAGE_KEY]?.[t.theirs.id], "the loan to be saved");
  t.storage.data[STORAGE_KEY][4242] = { ...t.storage.data[STORAGE_KEY][t.theirs.id] };
  const again = createBorrowing({ ...t.deps, storage: t.storage });
  await again.ready;
  assert.equal(again.borrowerOf(t.theirs.id), "s1");
  assert.equal(again.borrowerOf(4242), null);
  await again.giveBack("s1", t.theirs.id);
  assert.equal(t.strip.view(t.theirs.id).windowId, t.home);
});
