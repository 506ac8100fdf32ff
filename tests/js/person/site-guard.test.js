// Blocked sites enforced: before a command (tab, pending address, frames), on the wire (requests failed
// before they leave the browser), after a command (results replaced by the refusal), and failing closed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSiteGuard, interceptPatterns, HINT, LEAVE_HINT } from "../../../src/tabpilot/extension/person/site-guard.js";
import { STORAGE_KEY } from "../../../src/tabpilot/extension/person/blocklist.js";
import { waitFor } from "../helpers/wait.js";

const MAIN = "MAIN";

function setup({ stored = ["bank.example.com"], frames = {}, storageFails = false } = {}) {
  let value = stored;
  const reads = [];
  const changeListeners = [];
  const eventListeners = [];
  const sent = [];
  const tabs = new Map([[1, { id: 1, url: "https://news.example/", title: "News" }]]);
  const removed = [];
  const targets = [
    { tabId: 1, sessionId: null },
    { tabId: 1, sessionId: "child" },
  ];
  const guard = createSiteGuard({
    storage: {
      async get(key) {
        reads.push(key);
        if (storageFails) throw new Error("storage is gone");
        return value === undefined ? {} : { [key]: value };
      },
    },
    onChanged: { addListener: (fn) => changeListeners.push(fn) },
    cdp: {
      onEvent: (tabId, fn, options) => (eventListeners.push({ fn, options }), () => {}),
      async sendToSession(tabId, sessionId, method, params) {
        sent.push([tabId, sessionId, method, params]);
        return {};
      },
      targets: () => targets,
    },
    tabs: {
      async get(id) {
        if (!tabs.has(id)) throw new Error("no tab");
        return { ...tabs.get(id) };
      },
      async remove(id) {
        removed.push(id);
        tabs.delete(id);
      },
    },
    frameUrls: {
      of: async (tabId) => frames[tabId] ?? [],
      knownOf: (tabId) => frames[tabId] ?? [],
    },
    mainFrameId: async () => MAIN,
    log: { warn() {} },
  });
  const change = (newValue) => {
    value = newValue;
    for (const fn of changeListeners) fn({ [STORAGE_KEY]: { newValue } }, "local");
  };
  const paused = (params, tabId = 1, sessionId = null) => {
    for (const l of eventListeners) l.fn("Fetch.requestPaused", params, tabId, sessionId);
  };
  return { guard, tabs, sent, reads, change, paused, removed, eventListeners };
}

test("intercept patterns: one per blocked host, everything for a damaged list, nothing for an empty one", () => {
  assert.equal(interceptPatterns(undefined), null);
  assert.equal(interceptPatterns(["# only a comment"]), null);
  assert.deepEqual(interceptPatterns(["bank.example.com", "*.bank.example.com", "https://mail.example.com/private/*"]), [
    { urlPattern: "*bank.example.com*", requestStage: "Request" },
    { urlPattern: "*mail.example.com*", requestStage: "Request" },
  ]);
  assert.deepEqual(interceptPatterns("bank.example.com"), [{ urlPattern: "*", requestStage: "Request" }]);
});

test("admit refuses a tab on a blocked site, or going to one, or with a blocked frame, without naming the pattern", async () => {
  const t = setup({ frames: { 1: ["https://news.example/", "https://bank.example.com/widget"] } });
  for (const tab of [
    { id: 2, url: "https://www.bank.example.com/login" },
    { id: 2, url: "https://news.example/", pendingUrl: "https://bank.example.com/" },
  ]) {
    await assert.rejects(t.guard.admit(tab, { frames: false }), (err) => {
      assert.equal(err.code, "blocked_site");
      assert.equal(err.reason, "site_blocked");
      // The way out is named: leave the page, never another way in.
      assert.equal(err.data.hint, LEAVE_HINT);
      assert.match(err.data.hint, /tabpilot open URL/);
      assert.match(err.data.hint, /tabpilot tab close/);
      assert.equal(err.data.tab_id, 2);
      assert.doesNotMatch(JSON.stringify({ message: err.message, data: err.data }), /bank\.example\.com/);
      return true;
    });
  }
  await t.guard.admit({ id: 1, url: "https://news.example/" }, { frames: false });
  await assert.rejects(t.guard.admit({ id: 1, url: "https://news.example/" }), (err) => {
    assert.match(err.message, /a frame in tab 1/);
    assert.equal(err.data.hint, LEAVE_HINT);
    return true;
  });
  await t.guard.admit({ id: 3, url: "about:blank" });
});

test("a damaged or unreadable list blocks every web page and says why", async () => {
  for (const options of [{ stored: { not: "a list" } }, { storageFails: true }]) {
    const t = setup(options);
    await assert.rejects(t.guard.admit({ id: 1, url: "https://news.example/" }), (err) => {
      assert.equal(err.code, "blocked_site");
      assert.match(err.message, /damaged/);
      assert.match(err.data.hint, /fix it/);
      return true;
    });
    await t.guard.admit({ id: 1, url: "about:blank" }, { frames: false });
  }
});

test("the list is read once and follows storage changes; every target we debug intercepts by the new list", async () => {
  const t = setup();
  await t.guard.refuseDestination("https://news.example/");
  await assert.rejects(t.guard.refuseDestination("https://bank.example.com/x", 4), (err) => {
    // Going to a blocked site: no way in, and no "open another URL" either.
    assert.equal(err.code, "blocked_site");
    assert.equal(err.data.hint, HINT);
    return true;
  });
  assert.equal(t.reads.length, 1);
  t.change(["news.example"]);
  await waitFor(() => t.sent.length === 2, "the targets to follow");
  assert.deepEqual(t.sent, [
    [1, null, "Fetch.enable", { patterns: [{ urlPattern: "*news.example*", requestStage: "Request" }] }],
    [1, "child", "Fetch.enable", { patterns: [{ urlPattern: "*news.example*", requestStage: "Request" }] }],
  ]);
  await assert.rejects(t.guard.refuseDestination("https://news.example/"), { code: "blocked_site" });
  await t.guard.refuseDestination("https://bank.example.com/");
  t.change([]);
  await waitFor(() => t.sent.length === 4, "interception to stop");
  assert.equal(t.sent.at(-1)[2], "Fetch.disable");
  assert.equal(t.reads.length, 1);
});

test("a new target intercepts before anything else: requests caught are failed when blocked, let go when not", async () => {
  const t = setup();
  const setup_ = [];
  await t.guard.intercept(async (method, params) => setup_.push([method, params]));
  assert.deepEqual(setup_, [["Fetch.enable", { patterns: [{ urlPattern: "*bank.example.com*", requestStage: "Request" }] }]]);
  assert.ok(t.eventListeners.every((l) => l.options?.children));
  t.paused({ requestId: "r1", resourceType: "Document", frameId: MAIN, request: { url: "https://bank.example.com/" } });
  t.paused({ requestId: "r2", resourceType: "Image", frameId: MAIN, request: { url: "https://bank.example.com/logo.png" } });
  t.paused({ requestId: "r3", resourceType: "Document", frameId: "F2", request: { url: "https://notbank.example.com.evil/" } }, 1, "child");
  await waitFor(() => t.sent.length === 3, "three answers");
  assert.deepEqual(t.sent.sort((a, b) => a[3].requestId.localeCompare(b[3].requestId)), [
    [1, null, "Fetch.failRequest", { requestId: "r1", errorReason: "Aborted" }],
    [1, null, "Fetch.failRequest", { requestId: "r2", errorReason: "BlockedByClient" }],
    [1, "child", "Fetch.continueRequest", { requestId: "r3" }],
  ]);
});

test("the gate replaces a result whose page tried to go to a blocked site; a blocked frame alone does not", async () => {
  const t = setup();
  const handlers = t.guard.gate({
    "tool.click": async () => {
      t.paused({ requestId: "r", resourceType: "Document", frameId: MAIN, request: { url: "https://bank.example.com/" } });
      await new Promise((r) => setTimeout(r, 5));
      return { tab_id: 1, navigated: { committed: false } };
    },
    "tool.navigate": async () => {
      t.paused({ requestId: "r", resourceType: "Document", frameId: "FRAME", request: { url: "https://bank.example.com/" } });
      await new Promise((r) => setTimeout(r, 5));
      return { tab_id: 1, url: "https://news.example/" };
    },
    "tool.reload": async () => {
      t.paused({ requestId: "r", resourceType: "Document", frameId: MAIN, request: { url: "https://bank.example.com/" } });
      await new Promise((r) => setTimeout(r, 5));
      throw Object.assign(new Error("navigation failed: net::ERR_ABORTED"), { data: { tab_id: 1 } });
    },
  });
  await assert.rejects(handlers["tool.click"]({ session_id: "s" }, {}), { code: "blocked_site", message: /tried to go to a site the person blocked/ });
  assert.deepEqual(await handlers["tool.navigate"]({ session_id: "s" }, {}), { tab_id: 1, url: "https://news.example/" });
  await assert.rejects(handlers["tool.reload"]({ session_id: "s" }, {}), { code: "blocked_site" });
});

test("the gate refuses a result from a tab that is now on a blocked site, and closes a tab opened on one", async () => {
  const t = setup();
  t.tabs.set(5, { id: 5, url: "https://bank.example.com/" });
  const handlers = t.guard.gate({
    "tool.evaluate": async () => {
      t.tabs.get(1).pendingUrl = "https://bank.example.com/";
      return { tab_id: 1, ok: true, value: 1 };
    },
    "tool.click": async () => ({ tab_id: 1, opened_tab: { tab_id: 5, url: "https://bank.example.com/" } }),
    "tool.tab_list": async () => ({ tabs: [] }),
  });
  await assert.rejects(handlers["tool.click"]({}, {}), { code: "blocked_site", message: /opened a tab/ });
  assert.deepEqual(t.removed, [5]);
  await assert.rejects(handlers["tool.evaluate"]({}, {}), { code: "blocked_site", message: /going to a site/ });
  // methods that touch no page are not gated
  assert.deepEqual(await handlers["tool.tab_list"]({}, {}), { tabs: [] });
});

test("the gate lets other errors through, and finds the session's current tab when a result names none", async () => {
  const t = setup();
  const asked = [];
  const ctx = {
    sessions: {
      async resolveTab(sessionId, tabId, options) {
        asked.push([sessionId, tabId, options]);
        return { id: 1 };
      },
    },
  };
  const handlers = t.guard.gate({
    "tool.wait": async () => {
      throw new Error("timeout");
    },
  });
  await assert.rejects(handlers["tool.wait"]({ session_id: "s" }, ctx), /timeout/);
  assert.deepEqual(asked, [["s", undefined, { anyState: true, sites: "none" }]]);
});
