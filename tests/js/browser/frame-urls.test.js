// The frames' addresses of a debugged tab, kept from CDP events after one listing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createFrameUrls } from "../../../src/tabpilot/extension/browser/frame-urls.js";

function setup(listed = [{ frameId: "M", sessionId: null, url: "https://a.example/" }]) {
  const events = [];
  const detaches = [];
  let lists = 0;
  /** @type {(value: any) => void} */
  let release = () => {};
  let hold = false;
  const urls = createFrameUrls({
    cdp: {
      onEvent: (tabId, fn) => (events.push(fn), () => {}),
      onDetach: (fn) => (detaches.push(fn), () => {}),
    },
    frames: {
      list() {
        lists++;
        if (!hold) return Promise.resolve(listed);
        hold = false;
        return new Promise((resolve) => (release = () => resolve(listed)));
      },
    },
  });
  const emit = (method, params, tabId = 1, sessionId = null) => events.forEach((fn) => fn(method, params, tabId, sessionId));
  return {
    urls,
    emit,
    detach: (tabId) => detaches.forEach((fn) => fn(tabId)),
    lists: () => lists,
    holdNextList: () => (hold = true),
    releaseList: () => release(),
  };
}

test("listed once, then kept from events: navigations, same-document moves, frames added and removed", async () => {
  const t = setup();
  assert.deepEqual(await t.urls.of(1), ["https://a.example/"]);
  t.emit("Page.frameNavigated", { frame: { id: "F", parentId: "M", url: "https://b.example/" } });
  t.emit("Page.navigatedWithinDocument", { frameId: "M", url: "https://a.example/#x" });
  assert.deepEqual(await t.urls.of(1), ["https://a.example/#x", "https://b.example/"]);
  t.emit("Page.frameDetached", { frameId: "F", reason: "swap" });
  assert.deepEqual(t.urls.knownOf(1), ["https://a.example/#x", "https://b.example/"], "a swap keeps the frame");
  t.emit("Page.frameDetached", { frameId: "F", reason: "remove" });
  assert.deepEqual(t.urls.knownOf(1), ["https://a.example/#x"]);
  assert.equal(t.lists(), 1);
});

test("an out-of-process frame: attached without an address, then told it; gone with its session", async () => {
  const t = setup();
  await t.urls.of(1);
  t.emit("Target.attachedToTarget", { sessionId: "S", targetInfo: { type: "iframe", targetId: "X", url: "" } });
  t.emit("Target.targetInfoChanged", { targetInfo: { type: "iframe", targetId: "X", url: "https://c.example/" } });
  t.emit("Page.frameNavigated", { frame: { id: "Y", parentId: "X", url: "https://d.example/" } }, 1, "S");
  assert.deepEqual(t.urls.knownOf(1), ["https://a.example/", "https://c.example/", "https://d.example/"]);
  t.emit("Target.detachedFromTarget", { sessionId: "S" });
  assert.deepEqual(t.urls.knownOf(1), ["https://a.example/"]);
});

test("events during the first listing win over it; a detached tab is listed again next time", async () => {
  const t = setup();
  t.holdNextList();
  const pending = t.urls.of(1);
  t.emit("Page.frameNavigated", { frame: { id: "M", url: "https://new.example/" } });
  t.releaseList();
  assert.deepEqual(await pending, ["https://new.example/"]);
  t.detach(1);
  assert.deepEqual(t.urls.knownOf(1), []);
  await t.urls.of(1);
  assert.equal(t.lists(), 2);
});

test("events of tabs never asked about are not kept", () => {
  const t = setup();
  t.emit("Page.frameNavigated", { frame: { id: "M", url: "https://x.example/" } }, 7);
  assert.deepEqual(t.urls.knownOf(7), []);
});
