// Observation helpers: the console log (sequence, levels, re-sent messages, restarts), the snapshot's
// reading text and line diff, and the image / HTML helpers of screenshot and html.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createConsoleLog, entryOf, argText, STORAGE_KEY } from "../../../src/tabpilot/extension/browser/console-log.js";
import { readableText, diffLines, countRefs } from "../../../src/tabpilot/extension/page/snapshots.js";
import { jpegSize, cutUtf8 } from "../../../src/tabpilot/extension/tools/observe/observation.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { FakeEvent } from "../helpers/fake-chrome.js";

function fakeCdp() {
  const listeners = [];
  return {
    listeners,
    onEvent(tabId, fn, options) {
      listeners.push({ fn, options });
      return () => {};
    },
    fire(method, params, tabId = 1, sessionId = null) {
      for (const l of listeners) if (sessionId === null || l.options?.children) l.fn(method, params, tabId, sessionId);
    },
  };
}

const log = (text, time, type = "log", line = 10) => ({
  type,
  args: [{ type: "string", value: text }],
  timestamp: time,
  stackTrace: { callFrames: [{ url: "http://a/p.html", lineNumber: line - 1, columnNumber: 4 }] },
});

test("console entries: levels, where they come from, 1-based positions", () => {
  assert.deepEqual(entryOf("Runtime.consoleAPICalled", log("hi", 5, "warning")), {
    level: "warning", source: "console", text: "hi", url: "http://a/p.html", line: 10, column: 5, time: 5,
  });
  const thrown = entryOf("Runtime.exceptionThrown", {
    timestamp: 9,
    exceptionDetails: { text: "Uncaught", url: "http://a/x.js", lineNumber: 3, columnNumber: 0, exception: { description: "TypeError: bad\n    at x" } },
  });
  assert.deepEqual(thrown, { level: "error", source: "exception", text: "Uncaught TypeError: bad", url: "http://a/x.js", line: 4, column: 1, time: 9 });
  assert.equal(entryOf("Log.entryAdded", { entry: { level: "verbose", text: "v", timestamp: 1 } }).level, "debug");
  assert.equal(entryOf("Runtime.consoleAPICalled", { type: "clear", args: [] }), null);
  assert.equal(entryOf("Page.loadEventFired", {}), null);
});

test("console arguments read like the DevTools console", () => {
  assert.equal(argText({ type: "number", value: 3 }), "3");
  assert.equal(argText({ type: "undefined" }), "undefined");
  assert.equal(argText({ type: "object", subtype: "null", value: null }), "null");
  assert.equal(argText({ type: "bigint", unserializableValue: "5n" }), "5n");
  const preview = { type: "object", properties: [{ name: "a", type: "number", value: "1" }, { name: "b", type: "string", value: "x" }] };
  assert.equal(argText({ type: "object", description: "Object", preview }), '{a: 1, b: "x"}');
  const array = { type: "object", subtype: "array", overflow: true, properties: [{ name: "0", type: "number", value: "1" }] };
  assert.equal(argText({ type: "object", subtype: "array", description: "Array(9)", preview: array }), "[1, …]");
  assert.equal(argText({ type: "object", className: "HTMLDivElement", description: "div#x" }), "div#x");
});

test("a tab's sequence never goes back; messages Chrome sends again after a re-attach are dropped", async () => {
  const cdp = fakeCdp();
  const consoleLog = createConsoleLog({ cdp, frameUrl: (tab, s) => (s === "S1" ? "http://other/frame.html" : undefined) });
  cdp.fire("Runtime.consoleAPICalled", log("one", 100));
  cdp.fire("Runtime.consoleAPICalled", log("two", 101, "error"));
  cdp.fire("Runtime.consoleAPICalled", log("in a frame", 102), 1, "S1");
  cdp.fire("Runtime.consoleAPICalled", log("other tab", 103), 2);
  // re-attach: the stored messages come again (objects without their preview), then a new one
  cdp.fire("Runtime.consoleAPICalled", { ...log("one", 100), args: [{ type: "object", description: "Object" }] });
  cdp.fire("Runtime.consoleAPICalled", log("two", 101, "error"));
  cdp.fire("Runtime.consoleAPICalled", log("three", 104, "debug"));
  const all = await consoleLog.read(1);
  assert.deepEqual(all.entries.map((e) => [e.seq, e.text, e.frame]), [[1, "one", undefined], [2, "two", undefined], [3, "in a frame", "http://other/frame.html"], [4, "three", undefined]]);
  assert.equal(all.next_since, 4);
  assert.deepEqual((await consoleLog.read(2)).entries.map((e) => e.seq), [1]);
  const errors = await consoleLog.read(1, { level: "warning" });
  assert.deepEqual(errors.entries.map((e) => e.text), ["two"]);
  const page = await consoleLog.read(1, { since: 1, limit: 2 });
  assert.deepEqual(page.entries.map((e) => e.seq), [2, 3]);
  assert.equal(page.next_since, 3);
  assert.equal(page.more, 1);
  const tail = await consoleLog.read(1, { limit: 1 });
  assert.deepEqual([tail.entries[0].seq, tail.more, tail.next_since], [4, 3, 4]);
  const none = await consoleLog.read(1, { since: 4 });
  assert.deepEqual([none.entries.length, none.next_since], [0, 4]);
});

test("after a service-worker restart the numbering goes on and the saved entries are still there", async () => {
  const storage = new FakeStorage();
  const cdp1 = fakeCdp();
  const before = createConsoleLog({ cdp: cdp1, storage, tabs: { onRemoved: new FakeEvent() } });
  await before.ready;
  cdp1.fire("Runtime.consoleAPICalled", log("one", 100));
  cdp1.fire("Runtime.consoleAPICalled", log("two", 101));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(storage.data[STORAGE_KEY][1].nextSeq, 3);
  const cdp2 = fakeCdp();
  const after = createConsoleLog({ cdp: cdp2, storage });
  // the debugger attaches again and Chrome sends the old messages, then a new one is logged
  cdp2.fire("Runtime.consoleAPICalled", log("one", 100));
  cdp2.fire("Runtime.consoleAPICalled", log("two", 101));
  cdp2.fire("Runtime.consoleAPICalled", log("three", 102));
  const read = await after.read(1);
  assert.deepEqual(read.entries.map((e) => [e.seq, e.text]), [[1, "one"], [2, "two"], [3, "three"]]);
});

test("readable text: no refs, links as their text, controls keep their bracket, the cut notice stays", () => {
  const snapshot = [
    "--- navigation \"Site\" @e1",
    "[Home @e2] · [Help @e3 current] · [link \"Logo\" @e4 /]",
    "[button \"Save\" @e5 disabled] [textbox \"Email\" @e6 value=\"a@b.c\"] [clickable @e7] Card [card link @e8] end",
    "[… cut at ~10 tokens: ~5 more tokens (2 lines) not shown. Left out: ## B @e9. Read a part with --ref @eN, search with find TEXT, or save all with --out FILE.]",
  ].join("\n");
  assert.equal(
    readableText(snapshot),
    [
      "--- navigation \"Site\"",
      "Home · Help · [link \"Logo\" /]",
      "[button \"Save\" disabled] [textbox \"Email\" value=\"a@b.c\"] Card card link end",
      snapshot.split("\n")[3],
    ].join("\n"),
  );
  assert.equal(countRefs(snapshot), 8, "the notice's refs are not counted");
});

test("diff: what was removed and added, each hunk under the heading above it", () => {
  const before = ["# Shop", "## Cart", "[button \"Buy\" @e3]", "2 items", "## Footer", "bye"].join("\n");
  const after = ["# Shop", "## Cart", "[button \"Buy\" @e3 disabled]", "3 items", "## Footer", "bye", "[Thanks @e9]"].join("\n");
  assert.equal(
    diffLines(before, after),
    ["@@ ## Cart", "- [button \"Buy\" @e3]", "- 2 items", "+ [button \"Buy\" @e3 disabled]", "+ 3 items", "@@ ## Footer", "+ [Thanks @e9]"].join("\n"),
  );
  assert.equal(diffLines(before, before), "");
  assert.equal(diffLines("", "a"), "@@\n+ a");
});

test("JPEG size from its start-of-frame segment; UTF-8 cut on a character boundary", () => {
  // SOI, APP0 (length 4), SOF0 with height 0x0102 and width 0x0304
  const bytes = [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0x02, 0x03, 0x04, 0x03, 0, 0, 0, 0];
  assert.deepEqual(jpegSize(btoa(String.fromCharCode(...bytes))), { width: 0x0304, height: 0x0102 });
  assert.equal(jpegSize(btoa("not a jpeg at all")), null);
  assert.deepEqual(cutUtf8("aé€", 4), { text: "aé", bytes: 6, truncated: true });
  assert.deepEqual(cutUtf8("aé€", 0), { text: "aé€", bytes: 6, truncated: false });
  assert.deepEqual(cutUtf8("abc", 3), { text: "abc", bytes: 3, truncated: false });
});
