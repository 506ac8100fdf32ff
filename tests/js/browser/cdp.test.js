// chrome.debugger wrapper: attach once, enable domains, map Chrome's errors, events, detach.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createCdp, errorMessage } from "../../../src/tabpilot/extension/browser/cdp.js";
import { FakeEvent } from "../helpers/fake-chrome.js";
import { waitFor } from "../helpers/wait.js";

const quiet = { warn() {} };

function fakeDebugger({ attachError, commandError } = {}) {
  const calls = [];
  const attached = new Set();
  return {
    calls,
    attached,
    onEvent: new FakeEvent(),
    onDetach: new FakeEvent(),
    async attach({ tabId }, version) {
      calls.push(["attach", tabId, version]);
      await new Promise((r) => setImmediate(r));
      const err = typeof attachError === "function" ? attachError(tabId) : attachError;
      if (err) throw new Error(err);
      attached.add(tabId);
    },
    async detach({ tabId }) {
      calls.push(["detach", tabId]);
      if (!attached.delete(tabId)) throw new Error(`Debugger is not attached to the tab with id: ${tabId}.`);
    },
    async sendCommand({ tabId, sessionId }, method, params) {
      calls.push(sessionId ? [method, tabId, params, sessionId] : [method, tabId, params]);
      const err = typeof commandError === "function" ? commandError(method) : commandError;
      if (err) throw new Error(err);
      return { ok: method };
    },
  };
}

function setup(options = {}, { tabAlive = () => true } = {}) {
  const dbg = fakeDebugger(options);
  const cdp = createCdp({ debuggerApi: dbg, tabExists: async (id) => tabAlive(id), log: quiet });
  return { dbg, cdp };
}

test("concurrent sends attach once, with protocol 1.3, enable Page, Runtime, lifecycle and Log events, and auto-attach frames", async () => {
  const { dbg, cdp } = setup();
  await Promise.all([cdp.send(5, "Runtime.evaluate", { expression: "1" }), cdp.send(5, "Page.reload")]);
  assert.deepEqual(dbg.calls.slice(0, 6), [
    ["attach", 5, "1.3"],
    ["Page.enable", 5, {}],
    ["Runtime.enable", 5, {}],
    ["Page.setLifecycleEventsEnabled", 5, { enabled: true }],
    ["Log.enable", 5, {}],
    ["Target.setAutoAttach", 5, { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: "iframe" }] }],
  ]);
  assert.equal(dbg.calls.filter(([m]) => m === "attach").length, 1);
  assert.equal(cdp.isAttached(5), true);
});

test("protocol errors arrive as JSON text and are unwrapped", () => {
  assert.equal(errorMessage(new Error('{"code":-32000,"message":"Cannot navigate to invalid URL"}')), "Cannot navigate to invalid URL");
  assert.equal(errorMessage("plain"), "plain");
});

test("another debugger on the tab is a debugger_conflict with a hint", async () => {
  const { cdp } = setup({ attachError: "Another debugger is already attached to the tab with id: 5." });
  await assert.rejects(cdp.send(5, "Page.reload"), (err) => {
    assert.equal(err.code, "cdp_failed");
    assert.equal(err.reason, "debugger_conflict");
    assert.match(err.data.hint, /DevTools/);
    return true;
  });
  assert.equal(cdp.isAttached(5), false);
});

test("our own stale session (a restarted worker) is detached and attached again", async () => {
  let first = true;
  const { dbg, cdp } = setup({
    attachError: () => {
      if (!first) return null;
      first = false;
      return "Another debugger is already attached to the tab with id: 5.";
    },
  });
  dbg.attached.add(5); // the old worker's session
  await cdp.send(5, "Page.reload");
  assert.deepEqual(dbg.calls.slice(0, 3).map((c) => c[0]), ["attach", "detach", "attach"]);
});

test("browser pages are page_not_debuggable", async () => {
  const { cdp } = setup({ attachError: "Cannot access a chrome:// URL" });
  await assert.rejects(cdp.send(5, "Page.reload"), { code: "cdp_failed", reason: "page_not_debuggable" });
});

test("a closed tab is not_found/tab_closed; a person's cancel is debugger_detached", async () => {
  let alive = false;
  let dbg;
  // The person cancels the debugging bar while a command is running.
  const commandError = (method) => {
    if (method !== "Page.reload") return null;
    if (alive) dbg.onDetach.fire({ tabId: 5 }, "canceled_by_user");
    return "Detached while handling command.";
  };
  const made = setup({ commandError }, { tabAlive: () => alive });
  dbg = made.dbg;
  await assert.rejects(made.cdp.send(5, "Page.reload"), { code: "not_found", reason: "tab_closed" });
  alive = true;
  await assert.rejects(made.cdp.send(5, "Page.reload"), (err) => err.reason === "debugger_detached" && /person/.test(err.message));
});

test("other CDP failures are cdp_failed naming the command", async () => {
  const { cdp } = setup({ commandError: (m) => (m === "Page.navigate" ? '{"code":-32000,"message":"Cannot navigate to invalid URL"}' : null) });
  await assert.rejects(cdp.send(5, "Page.navigate", { url: "x" }), (err) => {
    assert.equal(err.code, "cdp_failed");
    assert.equal(err.message, "Page.navigate: Cannot navigate to invalid URL");
    assert.equal(err.reason, undefined);
    return true;
  });
});

test("events reach listeners of that tab or of all tabs, until unsubscribed", () => {
  const { dbg, cdp } = setup();
  const seen = [];
  const off = cdp.onEvent(5, (method, params, tabId) => seen.push(["tab5", method, tabId]));
  cdp.onEvent(null, (method, params, tabId) => seen.push(["all", method, tabId]));
  dbg.onEvent.fire({ tabId: 5 }, "Page.loadEventFired", {});
  dbg.onEvent.fire({ tabId: 6 }, "Page.loadEventFired");
  off();
  dbg.onEvent.fire({ tabId: 5 }, "Page.frameNavigated", {});
  assert.deepEqual(seen, [
    ["tab5", "Page.loadEventFired", 5],
    ["all", "Page.loadEventFired", 5],
    ["all", "Page.loadEventFired", 6],
    ["all", "Page.frameNavigated", 5],
  ]);
});

test("Chrome ending our session clears it; the next command attaches again", async () => {
  const { dbg, cdp } = setup();
  await cdp.send(5, "Page.reload");
  dbg.onDetach.fire({ tabId: 5 }, "target_closed");
  assert.equal(cdp.isAttached(5), false);
  await cdp.send(5, "Page.reload");
  assert.equal(dbg.calls.filter(([m]) => m === "attach").length, 2);
});

test("detachSession detaches only attached tabs and never throws", async () => {
  const { dbg, cdp } = setup();
  await cdp.send(5, "Page.reload");
  await cdp.detachSession([5, 6]);
  assert.deepEqual(dbg.calls.filter(([m]) => m === "detach"), [["detach", 5]]);
  assert.equal(cdp.isAttached(5), false);
});

test("an out-of-process frame becomes a child session: set up like the tab, listed, and addressable", async () => {
  const { dbg, cdp } = setup();
  await cdp.attach(5);
  dbg.onEvent.fire({ tabId: 5 }, "Target.attachedToTarget", {
    sessionId: "S1",
    targetInfo: { type: "iframe", targetId: "F1", url: "http://localhost:9/child.html" },
  });
  dbg.onEvent.fire({ tabId: 5 }, "Target.attachedToTarget", { sessionId: "W1", targetInfo: { type: "worker", targetId: "W" } });
  assert.deepEqual(cdp.childSessions(5), [{ sessionId: "S1", targetId: "F1", url: "http://localhost:9/child.html", parentSessionId: null }]);
  await waitFor(() => dbg.calls.some(([m, , , sid]) => m === "Target.setAutoAttach" && sid === "S1"));
  assert.deepEqual(
    dbg.calls.filter((c) => c[3] === "S1").map(([m]) => m),
    ["Runtime.enable", "Page.enable", "Target.setAutoAttach"],
  );
  await cdp.sendToSession(5, "S1", "Page.getFrameTree");
  assert.deepEqual(dbg.calls.at(-1), ["Page.getFrameTree", 5, {}, "S1"]);
  await cdp.sendToSession(5, null, "Page.getFrameTree");
  assert.deepEqual(dbg.calls.at(-1), ["Page.getFrameTree", 5, {}]);
});

test("child-session events reach only listeners that ask for them, with the session id", async () => {
  const { dbg, cdp } = setup();
  const plain = [];
  const all = [];
  cdp.onEvent(5, (method, _params, _tab, sessionId) => plain.push([method, sessionId]));
  cdp.onEvent(null, (method, _params, _tab, sessionId) => all.push([method, sessionId]), { children: true });
  dbg.onEvent.fire({ tabId: 5 }, "Page.loadEventFired", {});
  dbg.onEvent.fire({ tabId: 5, sessionId: "S1" }, "Runtime.consoleAPICalled", { type: "log" });
  assert.deepEqual(plain, [["Page.loadEventFired", null]]);
  assert.deepEqual(all, [["Page.loadEventFired", null], ["Runtime.consoleAPICalled", "S1"]]);
});

test("a command to a child session that went away is frame_detached; a detach forgets the children", async () => {
  const { dbg, cdp } = setup({ commandError: (method) => (method === "DOM.describeNode" ? "No session with given id" : null) });
  await cdp.attach(5);
  dbg.onEvent.fire({ tabId: 5 }, "Target.attachedToTarget", { sessionId: "S1", targetInfo: { type: "iframe", targetId: "F1" } });
  dbg.onEvent.fire({ tabId: 5 }, "Target.detachedFromTarget", { sessionId: "S1" });
  assert.deepEqual(cdp.childSessions(5), []);
  await assert.rejects(cdp.sendToSession(5, "S1", "DOM.describeNode"), (err) => {
    assert.equal(err.code, "not_found");
    assert.equal(err.reason, "frame_detached");
    assert.match(err.data.hint, /snapshot/);
    return true;
  });
  dbg.onEvent.fire({ tabId: 5 }, "Target.attachedToTarget", { sessionId: "S2", targetInfo: { type: "iframe", targetId: "F2" } });
  await cdp.detach(5);
  assert.deepEqual(cdp.childSessions(5), []);
});
