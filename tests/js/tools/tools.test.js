// Tool handlers against fake Chrome: sessions, tabs, evaluate, screenshot.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSessionManager } from "../../../src/tabpilot/extension/state/sessions.js";
import { sessionStart, sessionStop } from "../../../src/tabpilot/extension/tools/navigate/session.js";
import { tabList, tabCreate, tabClose, tabSelect } from "../../../src/tabpilot/extension/tools/navigate/tabs.js";
import { evaluate, describeException, valueOf } from "../../../src/tabpilot/extension/tools/observe/evaluate.js";
import { screenshot, pngSize } from "../../../src/tabpilot/extension/tools/observe/observation.js";
import { RpcError } from "../../../src/tabpilot/extension/link/protocol.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { fakeBrowser } from "../helpers/fake-chrome.js";

const ONE_BY_ONE_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

function setup({ cdpReply = () => ({}) } = {}) {
  const browser = fakeBrowser();
  const cdpCalls = [];
  const cdp = {
    detached: [],
    async send(tabId, method, params = {}) {
      cdpCalls.push([tabId, method, params]);
      return cdpReply(method, params, tabId);
    },
    async detach(tabId) {
      this.detached.push(tabId);
    },
    async detachSession(ids) {
      this.detached.push(...ids);
    },
  };
  const sessions = createSessionManager({
    windows: browser.chrome.windows,
    tabs: browser.chrome.tabs,
    storage: new FakeStorage(),
    cdp,
    emit() {},
    log: { warn() {} },
  });
  const blocked = new Set();
  const sites = {
    isBlocked: async (url) => blocked.has(url),
    async refuseDestination(url) {
      if (blocked.has(url)) throw new RpcError("blocked_site", `${url} is blocked`, "site_blocked");
    },
  };
  const borrowed = new Map();
  const borrowing = { borrowerOf: (tabId) => borrowed.get(tabId) ?? null };
  const ctx = (signal = new AbortController().signal) => ({ sessions, cdp, tabs: browser.chrome.tabs, sites, borrowing, signal });
  return { browser, cdp, cdpCalls, sessions, ctx, blocked, borrowed };
}

test("session_start and session_stop; bad ids are invalid_params", async () => {
  const { browser, ctx } = setup();
  const started = await sessionStart({ session_id: "s1" }, ctx());
  assert.deepEqual(Object.keys(started).sort(), ["tab_id", "window_id"]);
  await assert.rejects(sessionStart({ session_id: "s1" }, ctx()), { reason: "session_exists" });
  await assert.rejects(sessionStart({}, ctx()), { code: "invalid_params" });
  assert.deepEqual(await sessionStop({ session_id: "s1" }, ctx()), { closed: true });
  assert.equal(browser.windows.size, 0);
  await assert.rejects(sessionStop({ session_id: "s1" }, ctx()), { code: "not_found", reason: "unknown_session" });
});

test("tab_list: the session's tabs by default, the person's with scope user (title and address only), never blocked ones", async () => {
  const { browser, ctx, blocked, borrowed } = setup();
  const { tab_id, window_id } = await sessionStart({ session_id: "s1" }, ctx());
  const other = await sessionStart({ session_id: "s2" }, ctx());
  const theirs = browser.addTab(browser.addWindow(), { url: "https://theirs.example/", title: "Theirs", active: true, status: "loading" });
  const lent = browser.addTab(window_id, { url: "https://lent.example/", title: "Lent" });
  borrowed.set(lent.id, "s1");
  const secret = browser.addTab(browser.addWindow(), { url: "https://bank.example/" });
  const hidden = browser.addTab(window_id, { url: "https://bank.example/" });
  blocked.add("https://bank.example/");
  browser.tabs.get(tab_id).status = "loading";
  const own = { tab_id, url: "about:blank", title: "", active: true, loading: true, scope: "agent" };
  const borrowedEntry = { tab_id: lent.id, url: "https://lent.example/", title: "Lent", active: false, loading: false, scope: "borrowed" };
  const user = { tab_id: theirs.id, url: "https://theirs.example/", title: "Theirs", scope: "user" };
  assert.deepEqual(await tabList({ session_id: "s1" }, ctx()), { tabs: [own, borrowedEntry] });
  assert.deepEqual(await tabList({ session_id: "s1", scope: "user" }, ctx()), { tabs: [user] });
  const all = (await tabList({ session_id: "s1", scope: "all" }, ctx())).tabs;
  assert.deepEqual(all, [own, borrowedEntry, user]);
  for (const id of [other.tab_id, secret.id, hidden.id]) assert.ok(!all.some((t) => t.tab_id === id));
  await assert.rejects(tabList({ session_id: "s1", scope: "mine" }, ctx()), { code: "invalid_params" });
});

test("tab_close refuses a borrowed tab: it is given back, not closed", async () => {
  const { browser, ctx, borrowed } = setup();
  const { window_id } = await sessionStart({ session_id: "s1" }, ctx());
  const lent = browser.addTab(window_id, { url: "https://lent.example/" });
  borrowed.set(lent.id, "s1");
  await assert.rejects(tabClose({ session_id: "s1", tab_id: lent.id }, ctx()), (err) => {
    assert.equal(err.code, "invalid_params");
    assert.match(err.data.hint, new RegExp(`tabpilot tab return ${lent.id}`));
    return true;
  });
  assert.ok(browser.tabs.has(lent.id));
});

test("tab_create refuses a blocked address before opening anything", async () => {
  const { browser, ctx, blocked } = setup();
  await sessionStart({ session_id: "s1" }, ctx());
  blocked.add("https://bank.example/");
  await assert.rejects(tabCreate({ session_id: "s1", url: "https://bank.example/" }, ctx()), { code: "blocked_site", reason: "site_blocked" });
  assert.equal(browser.tabs.size, 1);
});

test("tab_create without a URL opens an active blank tab in the Agent Window", async () => {
  const { browser, ctx, cdpCalls } = setup();
  const { window_id } = await sessionStart({ session_id: "s1" }, ctx());
  const created = await tabCreate({ session_id: "s1" }, ctx());
  assert.deepEqual(created, { tab_id: created.tab_id, url: "about:blank", title: "" });
  const tab = browser.tabs.get(created.tab_id);
  assert.deepEqual([tab.windowId, tab.active], [window_id, true]);
  assert.equal(cdpCalls.length, 0);
});

test("tab_create refuses a bad URL before opening anything", async () => {
  const { browser, ctx } = setup();
  await sessionStart({ session_id: "s1" }, ctx());
  await assert.rejects(tabCreate({ session_id: "s1", url: "chrome://settings" }, ctx()), { reason: "url_scheme_refused" });
  await assert.rejects(tabCreate({ session_id: "s1", url: "file:///etc/passwd" }, ctx()), { reason: "file_url_refused" });
  assert.equal(browser.tabs.size, 1);
});

test("tab_create with a URL navigates the new tab over CDP and waits for load", async () => {
  let listener;
  const { ctx, cdpCalls } = setup({
    cdpReply: (method) => {
      if (method === "Page.getFrameTree") return { frameTree: { frame: { id: "F" } } };
      if (method === "Page.navigate") {
        setImmediate(() => listener("Page.lifecycleEvent", { frameId: "F", loaderId: "L", name: "load" }));
        return { frameId: "F", loaderId: "L" };
      }
      if (method === "Runtime.evaluate") return { result: { value: { url: "https://example.com/", title: "Example", status: 200 } } };
      return {};
    },
  });
  const base = ctx();
  base.cdp.onEvent = (tabId, fn) => ((listener = fn), () => {});
  base.cdp.onDetach = () => () => {};
  await sessionStart({ session_id: "s1" }, base);
  const created = await tabCreate({ session_id: "s1", url: "example.com" }, base);
  assert.deepEqual(created, { tab_id: created.tab_id, url: "https://example.com/", title: "Example" });
  assert.deepEqual(cdpCalls.find(([, m]) => m === "Page.navigate"), [created.tab_id, "Page.navigate", { url: "https://example.com/" }]);
});

test("tab_close of the last tab keeps the window alive with a blank tab", async () => {
  const { browser, ctx, cdp } = setup();
  const { window_id, tab_id } = await sessionStart({ session_id: "s1" }, ctx());
  const result = await tabClose({ session_id: "s1" }, ctx());
  assert.equal(result.tab_id, tab_id);
  assert.equal(result.closed, true);
  assert.notEqual(result.current_tab_id, tab_id);
  assert.equal(browser.tabs.get(result.current_tab_id).windowId, window_id);
  assert.ok(browser.windows.has(window_id));
  assert.deepEqual(cdp.detached, [tab_id]);
});

test("tab_close of one of several tabs; the current tab moves on", async () => {
  const { browser, ctx } = setup();
  const { window_id, tab_id } = await sessionStart({ session_id: "s1" }, ctx());
  const second = browser.addTab(window_id, { active: true });
  const result = await tabClose({ session_id: "s1", tab_id: second.id }, ctx());
  assert.deepEqual(result, { tab_id: second.id, closed: true, current_tab_id: tab_id });
  assert.equal(browser.calls.filter(([name]) => name === "tabs.create").length, 0);
});

test("tab_select activates a session tab and refuses others", async () => {
  const { browser, ctx, sessions } = setup();
  const { window_id, tab_id } = await sessionStart({ session_id: "s1" }, ctx());
  browser.addTab(window_id, { active: true, url: "https://b.example/", title: "B" });
  assert.deepEqual(await tabSelect({ session_id: "s1", tab_id }, ctx()), { tab_id, url: "about:blank", title: "" });
  assert.equal((await sessions.resolveTab("s1")).id, tab_id);
  const theirs = browser.addTab(browser.addWindow());
  await assert.rejects(tabSelect({ session_id: "s1", tab_id: theirs.id }, ctx()), { code: "permission_denied", reason: "agent_window_scope" });
  await assert.rejects(tabSelect({ session_id: "s1", tab_id: 9999 }, ctx()), { code: "not_found", reason: "unknown_tab" });
  await assert.rejects(tabSelect({ session_id: "s1" }, ctx()), { code: "invalid_params" });
});

test("evaluate: value, unserialisable, undefined, exception", async () => {
  const replies = [
    { result: { type: "object", value: { a: 1 } } },
    { result: { type: "number", unserializableValue: "NaN" } },
    { result: { type: "undefined" } },
    {
      result: { type: "object" },
      exceptionDetails: { text: "Uncaught", lineNumber: 2, columnNumber: 4, exception: { description: "Error: boom\n    at <anonymous>:3:5" } },
    },
  ];
  const { ctx, cdpCalls } = setup({ cdpReply: (m) => (m === "Runtime.evaluate" ? replies.shift() : {}) });
  const { tab_id } = await sessionStart({ session_id: "s1" }, ctx());
  const run = (expression) => evaluate({ session_id: "s1", expression, timeout_ms: 5000 }, ctx());
  assert.deepEqual(await run("({a:1})"), { tab_id, ok: true, value: { a: 1 } });
  assert.deepEqual(await run("NaN"), { tab_id, ok: true, value: "NaN" });
  assert.deepEqual(await run("undefined"), { tab_id, ok: true, value: null });
  assert.deepEqual(await run("boom()"), { tab_id, ok: false, exception: { text: "Error: boom", line: 3, column: 5 } });
  assert.deepEqual(cdpCalls[0][2], { expression: "({a:1})", returnByValue: true, awaitPromise: true, userGesture: true, timeout: 5000 });
  await assert.rejects(evaluate({ session_id: "s1", expression: "" }, ctx()), { code: "invalid_params" });
});

test("evaluate: a cancel terminates the script", async () => {
  const { ctx, cdpCalls } = setup({ cdpReply: (m) => (m === "Runtime.evaluate" ? new Promise(() => {}) : {}) });
  await sessionStart({ session_id: "s1" }, ctx());
  const controller = new AbortController();
  const pending = evaluate({ session_id: "s1", expression: "while(1){}" }, ctx(controller.signal));
  await new Promise((r) => setImmediate(r));
  controller.abort(new Error("cancelled"));
  await assert.rejects(pending, /cancelled/);
  assert.equal(cdpCalls.at(-1)[1], "Runtime.terminateExecution");
});

test("evaluate: a script that outlives timeout_ms is a timeout", async () => {
  const { ctx, cdpCalls } = setup({ cdpReply: (m) => (m === "Runtime.evaluate" ? new Promise(() => {}) : {}) });
  await sessionStart({ session_id: "s1" }, ctx());
  await assert.rejects(evaluate({ session_id: "s1", expression: "new Promise(()=>{})", timeout_ms: 20 }, ctx()), { code: "timeout" });
  assert.equal(cdpCalls.at(-1)[1], "Runtime.terminateExecution");
});

test("exception text falls back to the details text", () => {
  assert.deepEqual(describeException({ text: "Uncaught SyntaxError", lineNumber: 0, columnNumber: 0 }), { text: "Uncaught SyntaxError", line: 1, column: 1 });
  assert.equal(valueOf(undefined), null);
});

test("PNG size comes from the IHDR header", () => {
  assert.deepEqual(pngSize(ONE_BY_ONE_PNG), { width: 1, height: 1 });
  assert.equal(pngSize("aGVsbG8gd29ybGQgdGhpcyBpcyBub3QgYSBwbmcgZmlsZQ=="), null);
  assert.equal(pngSize("!!!"), null);
});

const LAYOUT = {
  cssVisualViewport: { pageX: 0, pageY: 500, clientWidth: 1280, clientHeight: 700 },
  cssContentSize: { width: 1280, height: 20000 },
};

test("screenshot: the viewport by its own clip, the whole page painted beyond the viewport and cut at 16384 px", async () => {
  const { ctx, cdpCalls } = setup({
    cdpReply: (m) => (m === "Page.captureScreenshot" ? { data: ONE_BY_ONE_PNG } : m === "Page.getLayoutMetrics" ? LAYOUT : {}),
  });
  const { tab_id } = await sessionStart({ session_id: "s1" }, ctx());
  assert.deepEqual(await screenshot({ session_id: "s1" }, ctx()), { tab_id, format: "png", width: 1, height: 1, data: ONE_BY_ONE_PNG });
  assert.deepEqual(cdpCalls[1], [tab_id, "Page.captureScreenshot", { format: "png", clip: { x: 0, y: 500, width: 1280, height: 700, scale: 1 } }]);
  const full = await screenshot({ session_id: "s1", full_page: true, format: "jpeg", quality: 60 }, ctx()).catch((err) => err);
  assert.equal(full.code, "cdp_failed", "a PNG answer to a JPEG request is not taken for a JPEG");
  assert.deepEqual(cdpCalls.at(-1)[2], { format: "jpeg", quality: 60, clip: { x: 0, y: 0, width: 1280, height: 16384, scale: 1 }, captureBeyondViewport: true });
  await assert.rejects(screenshot({ session_id: "s1", format: "webp" }, ctx()), { code: "invalid_params" });
  await assert.rejects(screenshot({ session_id: "s1", quality: 50 }, ctx()), { code: "invalid_params" }, "quality is for jpeg");
  await assert.rejects(screenshot({ session_id: "s1", full_page: true, ref: "@e1" }, ctx()), { code: "invalid_params" });
});

test("screenshot: a tab that paints no frames (a covered window) is painted for the capture", async () => {
  const { ctx, cdpCalls } = setup({
    cdpReply: (m, params) => {
      if (m === "Page.getLayoutMetrics") return LAYOUT;
      if (m === "Page.captureScreenshot") return params.captureBeyondViewport ? { data: ONE_BY_ONE_PNG } : new Promise(() => {});
      return {};
    },
  });
  await sessionStart({ session_id: "s1" }, ctx());
  const shot = await screenshot({ session_id: "s1" }, ctx());
  assert.equal(shot.width, 1);
  assert.deepEqual(cdpCalls.filter(([, m]) => m === "Page.captureScreenshot").map(([, , p]) => !!p.captureBeyondViewport), [false, true]);
});

test("evaluate: a result that cannot travel as JSON is the agent's invalid_params", async () => {
  const { ctx } = setup({
    cdpReply: (m) => {
      if (m === "Runtime.evaluate") throw new RpcError("cdp_failed", "Runtime.evaluate: Object reference chain is too long");
      return {};
    },
  });
  await sessionStart({ session_id: "s1" }, ctx());
  await assert.rejects(evaluate({ session_id: "s1", expression: "window" }, ctx()), (err) => {
    assert.equal(err.code, "invalid_params");
    assert.match(err.message, /cannot be returned as JSON/);
    assert.match(err.data.hint, /JSON/);
    return true;
  });
});
