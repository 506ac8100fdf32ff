// The toolbar badge: whether an agent works, whatever the pages do.
import { test } from "node:test";
import assert from "node:assert/strict";
import { badgeOf, wireToolbar, WORKING, STOPPED } from "../../../src/tabpilot/extension/person/toolbar.js";

test("the badge counts working sessions, says when all are stopped, and is empty without a session", () => {
  assert.deepEqual(badgeOf([]), { text: "", color: WORKING });
  assert.deepEqual(badgeOf([{ paused: false }, { paused: true }]), { text: "1", color: WORKING });
  assert.deepEqual(badgeOf([{ paused: true }]), { text: "❚❚", color: STOPPED });
});

test("it follows sessions starting and stopping, and Stop and Resume from anywhere", async () => {
  const badge = [];
  const action = {
    async setBadgeText({ text }) {
      badge.push(text);
    },
    async setBadgeBackgroundColor() {},
    async setTitle() {},
  };
  let list = [];
  const paused = new Set();
  const listeners = { sessions: [], pause: [] };
  const sessions = { list: () => list, onChange: (fn) => listeners.sessions.push(fn), ready: Promise.resolve() };
  const overlay = { isPaused: (id) => paused.has(id), onPauseChange: (fn) => listeners.pause.push(fn) };
  const { update } = wireToolbar({ action, sessions, overlay });
  const settle = () => new Promise((r) => setTimeout(r, 5));
  await settle();
  list = [{ sessionId: "a" }];
  listeners.sessions.forEach((fn) => fn());
  paused.add("a");
  listeners.pause.forEach((fn) => fn());
  update();
  list = [];
  listeners.sessions.forEach((fn) => fn());
  await settle();
  assert.deepEqual(badge, ["", "1", "❚❚", ""]);
});
