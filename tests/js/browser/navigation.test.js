// The navigation-wait engine, fed fake CDP events.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runNavigation } from "../../../src/tabpilot/extension/browser/navigation-wait.js";
import { navigateBack } from "../../../src/tabpilot/extension/tools/navigate/navigation.js";
import { RpcError } from "../../../src/tabpilot/extension/link/protocol.js";
import { fakeCdpEvents } from "../helpers/fake-cdp.js";

const TAB = 7;
const MAIN = "F-main";
const tick = () => new Promise((r) => setImmediate(r));

/** A CDP whose commands the test answers by hand, and whose events the test emits. */
function scriptedCdp() {
  const sent = [];
  const replies = new Map(); // method → function returning the reply (or a promise)
  const cdp = {
    ...fakeCdpEvents(TAB),
    sent,
    replies,
    async send(tabId, method, params = {}) {
      sent.push([method, params]);
      if (method === "Page.getFrameTree") return { frameTree: { frame: { id: MAIN, loaderId: "L-old" } } };
      const reply = replies.get(method);
      return reply ? reply(params) : {};
    },
    async detachError(tabId) {
      return new RpcError("not_found", `tab ${tabId} was closed`, "tab_closed");
    },
  };
  return cdp;
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

const lifecycle = (name, loaderId, frameId = MAIN) => ["Page.lifecycleEvent", { frameId, loaderId, name, timestamp: 1 }];
const committed = (loaderId, type = "Navigation", extra = {}) => [
  "Page.frameNavigated",
  { frame: { id: MAIN, loaderId, url: "https://example.com/next", ...extra }, type },
];

function navigate(cdp, { waitUntil = "load", timeoutMs = 1000, signal, reply } = {}) {
  return runNavigation({
    cdp,
    tabId: TAB,
    kind: "navigate",
    command: () => cdp.send(TAB, "Page.navigate", { url: "https://example.com/next" }).then(reply),
    waitUntil,
    timeoutMs,
    signal,
    requestedUrl: "https://example.com/next",
  });
}

test("waits for load of the loader Page.navigate returned, ignoring other loaders and child frames", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L-new" }));
  let done = false;
  const result = navigate(cdp).then((r) => ((done = true), r));
  await tick();
  cdp.emit(...lifecycle("load", "L-old"));
  cdp.emit(...lifecycle("load", "L-new", "F-child"));
  cdp.emit(...lifecycle("DOMContentLoaded", "L-new"));
  await tick();
  assert.equal(done, false);
  cdp.emit(...lifecycle("load", "L-new"));
  assert.deepEqual(await result, { sameDocument: false });
  assert.equal(cdp.listenerCount(), 0, "listeners removed");
});

test("events that arrive before Page.navigate answers are all kept", async () => {
  const cdp = scriptedCdp();
  const reply = deferred();
  cdp.replies.set("Page.navigate", () => reply.promise);
  const result = navigate(cdp);
  await tick();
  cdp.emit(...lifecycle("init", "L-new"));
  cdp.emit(...lifecycle("DOMContentLoaded", "L-new"));
  cdp.emit(...lifecycle("load", "L-new"));
  cdp.emit(...lifecycle("firstPaint", "L-new"));
  reply.resolve({ frameId: MAIN, loaderId: "L-new" });
  assert.deepEqual(await result, { sameDocument: false });
});

test("domcontentloaded is satisfied by load; networkidle needs load too", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L1" }));
  const dcl = navigate(cdp, { waitUntil: "domcontentloaded" });
  await tick();
  cdp.emit(...lifecycle("load", "L1"));
  assert.deepEqual(await dcl, { sameDocument: false });

  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L2" }));
  let done = false;
  const idle = navigate(cdp, { waitUntil: "networkidle" }).then((r) => ((done = true), r));
  await tick();
  cdp.emit(...lifecycle("networkIdle", "L2"));
  await tick();
  assert.equal(done, false);
  cdp.emit(...lifecycle("load", "L2"));
  assert.deepEqual(await idle, { sameDocument: false });
});

test("commit is reached when Page.navigate answers with a loader", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L-new" }));
  assert.deepEqual(await navigate(cdp, { waitUntil: "commit" }), { sameDocument: false });
});

test("no loader id means a same-document navigation: done at once", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN }));
  assert.deepEqual(await navigate(cdp), { sameDocument: true });
});

test("errorText fails with navigation_failed", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L", errorText: "net::ERR_NAME_NOT_RESOLVED" }));
  await assert.rejects(navigate(cdp), (err) => {
    assert.equal(err.code, "cdp_failed");
    assert.equal(err.reason, "navigation_failed");
    assert.equal(err.data.error_text, "net::ERR_NAME_NOT_RESOLVED");
    return true;
  });
  assert.equal(cdp.listenerCount(), 0);
});

test("timeout reports the furthest state reached and the committed URL", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L-new" }));
  // Long enough that a loaded machine still emits both events before the deadline.
  const result = navigate(cdp, { timeoutMs: 300 });
  await tick();
  cdp.emit(...committed("L-new"));
  cdp.emit(...lifecycle("DOMContentLoaded", "L-new"));
  await assert.rejects(result, (err) => {
    assert.equal(err.code, "timeout");
    assert.equal(err.reason, "navigation_timeout");
    assert.equal(err.data.last_state, "domcontentloaded");
    assert.equal(err.data.url, "https://example.com/next");
    return true;
  });
  assert.equal(cdp.listenerCount(), 0);
});

test("a timeout before anything happened reports none and the requested URL", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => new Promise(() => {}));
  await assert.rejects(navigate(cdp, { timeoutMs: 20 }), (err) => err.data.last_state === "none" && err.data.url === "https://example.com/next");
});

test("abort stops loading and answers cancelled", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L-new" }));
  const controller = new AbortController();
  const result = navigate(cdp, { signal: controller.signal });
  await tick();
  controller.abort(new RpcError("cancelled", "cancelled by the daemon", "rpc_cancelled"));
  await assert.rejects(result, { code: "cancelled", reason: "rpc_cancelled" });
  assert.deepEqual(cdp.sent.at(-1), ["Page.stopLoading", {}]);
  assert.equal(cdp.listenerCount(), 0);
});

test("an already aborted request sends nothing", async () => {
  const cdp = scriptedCdp();
  const controller = new AbortController();
  controller.abort(new RpcError("cancelled", "x", "rpc_cancelled"));
  await assert.rejects(navigate(cdp, { signal: controller.signal }), { code: "cancelled" });
  assert.deepEqual(cdp.sent, []);
});

test("the tab closing mid-wait fails with tab_closed", async () => {
  const cdp = scriptedCdp();
  cdp.replies.set("Page.navigate", () => ({ frameId: MAIN, loaderId: "L-new" }));
  const result = navigate(cdp);
  await tick();
  cdp.detach();
  await assert.rejects(result, { code: "not_found", reason: "tab_closed" });
});

function history(cdp, { waitUntil = "load", kind = "history", timeoutMs = 1000 } = {}) {
  return runNavigation({
    cdp,
    tabId: TAB,
    kind,
    command: () => cdp.send(TAB, kind === "reload" ? "Page.reload" : "Page.navigateToHistoryEntry", {}),
    waitUntil,
    timeoutMs,
  });
}

test("reload learns its loader from the main frame's commit", async () => {
  const cdp = scriptedCdp();
  const result = history(cdp, { kind: "reload" });
  await tick();
  cdp.emit(...lifecycle("load", "L-old"));
  cdp.emit(...committed("L-new"));
  cdp.emit(...lifecycle("DOMContentLoaded", "L-new"));
  cdp.emit(...lifecycle("load", "L-new"));
  assert.deepEqual(await result, { sameDocument: false });
});

test("a child frame's commit does not name the loader", async () => {
  const cdp = scriptedCdp();
  const result = history(cdp, { kind: "reload", timeoutMs: 300 });
  await tick();
  cdp.emit("Page.frameNavigated", { frame: { id: "F-child", parentId: MAIN, loaderId: "L-child", url: "x" }, type: "Navigation" });
  cdp.emit(...lifecycle("load", "L-child", "F-child"));
  await assert.rejects(result, { reason: "navigation_timeout" });
});

test("a back-forward-cache restore is done at once", async () => {
  const cdp = scriptedCdp();
  const result = history(cdp);
  await tick();
  cdp.emit(...committed("L-cached", "BackForwardCacheRestore"));
  assert.deepEqual(await result, { sameDocument: false });
});

test("a same-document history entry is done at once", async () => {
  const cdp = scriptedCdp();
  const result = history(cdp);
  await tick();
  cdp.emit("Page.navigatedWithinDocument", { frameId: MAIN, url: "https://example.com/#a" });
  assert.deepEqual(await result, { sameDocument: true });
});

test("commit for history is the main frame's commit", async () => {
  const cdp = scriptedCdp();
  const result = history(cdp, { waitUntil: "commit" });
  await tick();
  cdp.emit(...committed("L-new"));
  assert.deepEqual(await result, { sameDocument: false });
});

test("back with no previous entry is no_history_entry; with one it navigates to that entry", async () => {
  const cdp = scriptedCdp();
  const ctx = {
    cdp,
    sessions: { resolveTab: async () => ({ id: TAB, url: "https://example.com/b" }) },
    tabs: { get: async () => ({ url: "https://example.com/a", title: "A" }) },
    sites: { refuseDestination: async () => {} },
    signal: new AbortController().signal,
  };
  cdp.replies.set("Page.getNavigationHistory", () => ({ currentIndex: 0, entries: [{ id: 11, url: "https://example.com/b" }] }));
  await assert.rejects(navigateBack({ session_id: "s" }, ctx), { code: "invalid_params", reason: "no_history_entry" });

  cdp.replies.set("Page.getNavigationHistory", () => ({
    currentIndex: 1,
    entries: [{ id: 10, url: "https://example.com/a" }, { id: 11, url: "https://example.com/b" }],
  }));
  cdp.replies.set("Page.navigateToHistoryEntry", () => {
    setImmediate(() => cdp.emit(...committed("L-a", "BackForwardCacheRestore", { url: "https://example.com/a" })));
    return {};
  });
  cdp.replies.set("Runtime.evaluate", () => ({ result: { value: { url: "https://example.com/a", title: "A", status: 200 } } }));
  const result = await navigateBack({ session_id: "s" }, ctx);
  assert.deepEqual(cdp.sent.find(([m]) => m === "Page.navigateToHistoryEntry"), ["Page.navigateToHistoryEntry", { entryId: 10 }]);
  assert.deepEqual(result, { tab_id: TAB, url: "https://example.com/a", title: "A", status: 200, reached: "load", same_document: false });
});
