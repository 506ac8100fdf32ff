// The timeline reducer over a conversation's numbered events.
import { test } from "node:test";
import assert from "node:assert/strict";
import { emptyTimeline, applyEvent, applyEvents, agentText, targetOf } from "../../../src/tabpilot/extension/sidepanel/timeline.js";
import { fenceMessage } from "../../../src/tabpilot/extension/panel/fence.js";

let seq = 0;
const ev = (kind, data = {}) => ({ conversation_id: "c-1", seq: ++seq, turn_id: "t-1", kind, ts: 0, ...data });

test("a turn: the bubble, text in pieces, a tool row with its outcome, the end", () => {
  seq = 0;
  const t = emptyTimeline();
  const events = [
    ev("user", { text: "click sign in" }),
    ev("turn_start", { agent: "claude" }),
    ev("session", { agent_session_id: "s" }),
    ev("text", { delta: "Hel" }),
    ev("text", { delta: "lo" }),
    ev("tool", { call_id: "tp-1", name: "click", input: { target: "@e5" }, source: "tabpilot" }),
    ev("tool_result", { call_id: "tp-1", ok: true, summary: 'clicked button "Sign in" @e5\nmore', ms: 41.2, source: "tabpilot" }),
    ev("text", { delta: " done" }),
    ev("turn_end", { interrupted: false, reason: "done" }),
  ];
  applyEvents(t, events);
  assert.deepEqual(
    t.items.map((i) => i.type),
    ["user", "text", "tool", "text"],
  );
  assert.equal(t.items[0].text, "click sign in");
  assert.equal(t.items[1].text, "Hello");
  assert.deepEqual(
    { name: t.items[2].name, target: t.items[2].target, status: t.items[2].status, summary: t.items[2].summary, ms: t.items[2].ms },
    { name: "click", target: "@e5", status: "ok", summary: 'clicked button "Sign in" @e5', ms: 41.2 },
  );
  assert.equal(agentText(t), "Hello done");
  assert.equal(t.running, false);
  assert.equal(t.lastSeq, 9);
});

test("events already folded are dropped: a backlog overlapping live events shows each once", () => {
  seq = 0;
  const all = [ev("user", { text: "hi" }), ev("turn_start"), ev("text", { delta: "a" }), ev("text", { delta: "b" }), ev("text", { delta: "c" })];
  const t = emptyTimeline();
  applyEvents(t, all.slice(0, 4));
  assert.equal(applyEvent(t, all[2]), null);
  applyEvents(t, all);
  assert.equal(agentText(t), "abc");
  assert.equal(t.running, true);
});

test("Stop keeps the partial text, marked interrupted, with a Stopped notice; a failed call shows failed", () => {
  seq = 0;
  const t = emptyTimeline();
  applyEvents(t, [
    ev("user", { text: "go" }),
    ev("turn_start"),
    ev("text", { delta: "partial" }),
    ev("tool", { call_id: "x", name: "Bash", input: { command: "ls" } }),
    ev("turn_end", { interrupted: true, reason: "stopped" }),
  ]);
  const text = t.items.find((i) => i.type === "text");
  assert.equal(text.text, "partial");
  assert.equal(text.interrupted, true);
  assert.equal(t.items.at(-1).type, "notice");
  assert.equal(t.items.at(-1).text, "Stopped");
  assert.equal(t.items.find((i) => i.type === "tool").status, "failed", "a call left open by the end");
  applyEvents(t, [ev("user", { text: "again" }), ev("turn_start", { turn_id: "t-2" }), ev("error", { turn_id: "t-2", code: "agent_exited", message: "it died" }), ev("turn_end", { turn_id: "t-2", interrupted: true, reason: "agent_exited" })]);
  assert.ok(t.items.some((i) => i.type === "notice" && i.level === "error" && i.text === "The agent CLI exited unexpectedly: it died"));
  assert.match(t.items.at(-1).text, /^Interrupted/);
});

test("the bubble shows the person's words and what they attached, not the fenced page", () => {
  seq = 0;
  const t = emptyTimeline();
  const text = fenceMessage("summarise", [{ kind: "page", text: "- heading \"Shop\"", url: "http://shop.test/", title: "Shop" }]);
  applyEvent(t, ev("user", { text }));
  assert.equal(t.items[0].text, "summarise");
  assert.deepEqual(t.items[0].attachments, [{ kind: "page", title: "Shop" }]);
});

test("a tool's target is the most telling field of its input", () => {
  assert.equal(targetOf({ target: "@e3", timeout_ms: 5 }), "@e3");
  assert.equal(targetOf({ url: "https://a.test" }), "https://a.test");
  assert.equal(targetOf({ command: "ls -la" }), "ls -la");
  assert.equal(targetOf({}), "");
  assert.equal(targetOf(null), "");
});

test("a tabpilot call's outcome reads like the CLI's line, also from a clipped result", async () => {
  const { outcomeLine } = await import("../../../src/tabpilot/extension/sidepanel/outcome.js");
  const click = JSON.stringify({ tab_id: 1, target: { ref: "e1", label: 'button "Sign in"', name: "button" }, navigated: { url: "http://a.test/in", committed: true } });
  assert.equal(outcomeLine("click", "tabpilot", click), 'clicked button "Sign in" @e1 → navigated to http://a.test/in');
  assert.equal(outcomeLine("snapshot", "tabpilot", JSON.stringify({ title: "Shop", refs: 3, text: "…" })), 'read "Shop", 3 refs');
  const clipped = '{"tab_id":1,"url":"http://a.test/","title":"Panel \\"shop\\"","text":"# Panel shop\\n[button…';
  assert.equal(outcomeLine("snapshot", "tabpilot", clipped), 'read "Panel "shop""');
  assert.equal(outcomeLine("click", "tabpilot", '{"target":{"ref":"e1","label":"button \\"Go\\"","na…'), 'clicked button "Go"');
  assert.equal(outcomeLine("Bash", "agent", "line one\nline two"), "line one");
  assert.equal(outcomeLine("click", "tabpilot", "not_found: no element"), "not_found: no element");
});
