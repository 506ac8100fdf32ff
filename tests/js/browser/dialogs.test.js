// The dialog policy: alerts accepted, confirm/prompt/beforeunload left open and answered by the agent,
// the dialog_open guard, and dismissal when a session ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createDialogs, describeDialog } from "../../../src/tabpilot/extension/browser/dialogs.js";
import { RpcError } from "../../../src/tabpilot/extension/link/protocol.js";
import { waitFor } from "../helpers/wait.js";
import { fakeCdpEvents } from "../helpers/fake-cdp.js";

const quiet = { warn() {} };

/** A CDP that records commands and lets the test emit events; handleJavaScriptDialog closes the dialog. */
function fakeCdp({ failHandle = false } = {}) {
  const sent = [];
  const cdp = {
    ...fakeCdpEvents(5),
    sent,
    async send(tabId, method, params = {}) {
      sent.push([method, tabId, params]);
      if (method === "Page.handleJavaScriptDialog") {
        if (failHandle) throw new RpcError("cdp_failed", "No dialog is showing");
        cdp.emit("Page.javascriptDialogClosed", { result: params.accept, userInput: params.promptText ?? "" }, tabId);
      }
      return {};
    },
  };
  return cdp;
}

const opening = (type, message = "", extra = {}) => ["Page.javascriptDialogOpening", { type, message, url: "https://a/", ...extra }];
const handled = (cdp) => cdp.sent.filter(([m]) => m === "Page.handleJavaScriptDialog");

test("alerts are accepted at once and remembered with a sequence number", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, now: () => 7, log: quiet });
  const cursor = dialogs.cursor(5);
  cdp.emit(...opening("alert", "hi"));
  await waitFor(() => dialogs.history(5)[0]?.handled === "accepted", "the accepted alert");
  assert.deepEqual(handled(cdp), [["Page.handleJavaScriptDialog", 5, { accept: true }]]);
  assert.deepEqual(dialogs.since(5, cursor), [
    { seq: 1, type: "alert", message: "hi", url: "https://a/", default_prompt: "", handled: "accepted", at: 7 },
  ]);
  assert.equal(dialogs.pending(5), null);
  assert.doesNotThrow(() => dialogs.guard(5));
});

test("confirm and prompt stay open, block page commands, and are answered by the agent", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, log: quiet });
  const watch = dialogs.whenOpen(5);
  cdp.emit(...opening("confirm", "Delete 3 files?"));
  const record = await watch.opened;
  assert.equal(record.type, "confirm");
  assert.equal(handled(cdp).length, 0);
  assert.throws(
    () => dialogs.guard(5),
    (err) => err.code === "invalid_params" && err.reason === "dialog_open" && /confirm "Delete 3 files\?"/.test(err.message) && /dialog accept/.test(err.data.hint),
  );
  assert.doesNotThrow(() => dialogs.guard(6), "another tab is not blocked");
  const answered = await dialogs.answer(5, { accept: false });
  assert.equal(answered.handled, "dismissed");
  assert.deepEqual(handled(cdp).at(-1), ["Page.handleJavaScriptDialog", 5, { accept: false }]);
  assert.doesNotThrow(() => dialogs.guard(5));

  cdp.emit(...opening("prompt", "Name?", { defaultPrompt: "Ann" }));
  assert.equal(dialogs.pending(5).default_prompt, "Ann");
  const prompt = await dialogs.answer(5, { accept: true, promptText: "Bob" });
  assert.equal(prompt.handled, "accepted");
  assert.deepEqual(handled(cdp).at(-1), ["Page.handleJavaScriptDialog", 5, { accept: true, promptText: "Bob" }]);
  assert.deepEqual(dialogs.history(5).map((d) => [d.seq, d.type, d.handled]), [
    [1, "confirm", "dismissed"],
    [2, "prompt", "accepted"],
  ]);
});

test("whenOpen resolves at once for a dialog already open after its cursor, and can be cancelled", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, log: quiet });
  const never = dialogs.whenOpen(5);
  never.cancel();
  cdp.emit(...opening("prompt", "x"));
  const now = await dialogs.whenOpen(5).opened;
  assert.equal(now.message, "x");
  // A watcher that started after this dialog waits for the next one.
  const later = dialogs.whenOpen(5, dialogs.cursor(5));
  await dialogs.answer(5, { accept: false });
  cdp.emit(...opening("confirm", "y"));
  assert.equal((await later.opened).message, "y");
});

test("answering without a dialog is not_found / no_dialog; a dialog the person closed is forgotten", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, log: quiet });
  await assert.rejects(dialogs.answer(5, { accept: true }), (err) => err.reason === "no_dialog" && err.code === "not_found");
  cdp.emit(...opening("confirm", "sure?"));
  cdp.emit("Page.javascriptDialogClosed", { result: true });
  assert.equal(dialogs.pending(5), null);
  assert.equal(dialogs.history(5)[0].handled, "accepted");
  await assert.rejects(dialogs.answer(5, { accept: true }), (err) => err.reason === "no_dialog");
});

test("beforeunload is accepted only while the agent is leaving that page", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, log: quiet });
  cdp.emit(...opening("beforeunload"));
  assert.equal(dialogs.pending(5).type, "beforeunload");
  await dialogs.answer(5, { accept: false });
  const release = dialogs.allowUnload(5);
  cdp.emit(...opening("beforeunload"));
  await waitFor(() => handled(cdp).length === 2, "the accept");
  assert.deepEqual(handled(cdp).at(-1)[2], { accept: true });
  release();
  release();
  cdp.emit(...opening("beforeunload"));
  await new Promise((r) => setImmediate(r));
  assert.equal(handled(cdp).length, 2);
  assert.equal(dialogs.pending(5).type, "beforeunload");
});

test("dismissAll dismisses what is open on the given tabs and never throws", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, log: quiet });
  cdp.emit(...opening("confirm", "a"), 5);
  cdp.emit(...opening("prompt", "b"), 6);
  await dialogs.dismissAll([5, 6, 7]);
  assert.deepEqual(handled(cdp).map(([, tab, p]) => [tab, p.accept]), [
    [5, false],
    [6, false],
  ]);
  assert.equal(dialogs.pending(5), null);
  assert.equal(dialogs.pending(6), null);

  const failing = fakeCdp({ failHandle: true });
  const stuck = createDialogs({ cdp: failing, log: quiet });
  failing.emit(...opening("confirm", "c"));
  await stuck.dismissAll([5]);
});

test("sequence numbers survive a detach; history and open dialogs do not", async () => {
  const cdp = fakeCdp();
  const dialogs = createDialogs({ cdp, log: quiet });
  cdp.emit(...opening("confirm", "one"));
  cdp.detach(5);
  assert.equal(dialogs.pending(5), null);
  assert.deepEqual(dialogs.history(5), []);
  const cursor = dialogs.cursor(5);
  assert.equal(cursor, 1);
  cdp.emit(...opening("confirm", "two"));
  assert.deepEqual(dialogs.since(5, cursor).map((d) => [d.seq, d.message]), [[2, "two"]]);
});

test("describeDialog names the type and a short message, the message kept apart as the page's", () => {
  const said = describeDialog({ type: "confirm", message: "Delete 3 files?" });
  assert.equal(said.text, 'confirm "Delete 3 files?"');
  assert.deepEqual(said.parts, ["confirm ", '"Delete 3 files?"', ""]);
  assert.equal(describeDialog({ type: "alert", message: "x".repeat(200) }).text.length, 6 + 2 + 120);
});
