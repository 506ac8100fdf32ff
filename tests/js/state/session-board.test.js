// The popup's view of live sessions and the person's choices there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createSessionBoard } from "../../../src/tabpilot/extension/state/session-board.js";
import { FakeEvent as Event } from "../helpers/fake-event.js";


function setup() {
  const live = [
    { sessionId: "a", windowId: 10 },
    { sessionId: "b", windowId: 20 },
  ];
  const paused = new Set(["b"]);
  const calls = [];
  const stopListeners = [];
  const sessionListeners = new Set();
  const tabs = {
    onActivated: new Event(),
    onUpdated: new Event(),
    query: async ({ windowId }) => (windowId === 10 ? [{ id: 1, title: "Docs", url: "https://docs.example/" }] : []),
  };
  const board = createSessionBoard({
    sessions: {
      list: () => live,
      onChange(fn) {
        sessionListeners.add(fn);
        return () => sessionListeners.delete(fn);
      },
    },
    tabs,
    windows: { update: async (id, props) => calls.push(["focus", id, props]) },
    overlay: {
      stop: (id) => (calls.push(["stop", id]), paused.add(id), stopListeners.forEach((fn) => fn())),
      resume: (id) => (calls.push(["resume", id]), paused.delete(id)),
      isPaused: (id) => paused.has(id),
      onStop: (fn) => stopListeners.push(fn),
      onResume() {},
    },
    borrowing: { borrowedBy: (id) => (id === "a" ? [7] : []) },
  });
  return { board, calls, tabs, sessionListeners, paused };
}

test("each live session with its Agent Window, current tab, Stop state and borrowed tabs", async () => {
  const { board } = setup();
  assert.deepEqual(await board.describe(), [
    { sessionId: "a", windowId: 10, tab: { id: 1, title: "Docs", url: "https://docs.example/" }, paused: false, borrowed: 1 },
    { sessionId: "b", windowId: 20, tab: null, paused: true, borrowed: 0 },
  ]);
});

test("Stop, Resume and Show act on live sessions only; Stop all stops those still running", async () => {
  const { board, calls } = setup();
  await board.act("stop", "nope");
  await board.act("show", "a");
  await board.act("resume", "b");
  await board.act("stop_all");
  assert.deepEqual(calls, [
    ["focus", 10, { focused: true }],
    ["resume", "b"],
    ["stop", "a"],
    ["stop", "b"],
  ]);
});

test("watchers hear of tab and Stop changes while subscribed; the tab events are let go after", async () => {
  const { board, tabs, sessionListeners } = setup();
  let heard = 0;
  const off = board.onChange(() => heard++);
  tabs.onActivated.fire({ tabId: 1 });
  tabs.onUpdated.fire(1, { title: "x" });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(heard, 1, "a burst is one push");
  await board.act("stop", "a");
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(heard, 2);
  off();
  assert.equal(tabs.onActivated.listeners.size + tabs.onUpdated.listeners.size + sessionListeners.size, 0);
});
