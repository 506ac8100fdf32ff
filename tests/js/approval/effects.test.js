// Effects held while a side-panel session's action runs: what counts as an effect, what a yes covers,
// and the hold around a call (reads pass at once, a POST waits for the person, a no fails the call).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createEffects, effectOf, covered } from "../../../src/tabpilot/extension/approval/effects.js";
import { decide } from "../../../src/tabpilot/extension/approval/rules.js";
import { createGrants } from "../../../src/tabpilot/extension/approval/grants.js";
import { FakeStorage } from "../helpers/fake-storage.js";

const scope = { sites: ["shop.test"], unconfined: false };
const doc = { document: true, main: true, scope };

test("a request that changes state is an effect wherever it goes; a read is one only when the tab leaves the turn's sites", () => {
  for (const method of ["POST", "put", "PATCH", "DELETE"]) {
    assert.deepEqual(effectOf({ method, url: "https://shop.test/api" }, { ...doc, document: false }), { method: method.toUpperCase(), url: "https://shop.test/api", site: "shop.test", leaves: false });
  }
  assert.equal(effectOf({ method: "GET", url: "https://cdn.evil.test/x.js" }, { ...doc, document: false }), null, "a subresource from anywhere");
  assert.equal(effectOf({ method: "GET", url: "https://evil.test/" }, { ...doc, main: false }), null, "a frame elsewhere");
  assert.equal(effectOf({ method: "GET", url: "https://app.shop.test/" }, doc), null, "a page of the turn's sites");
  assert.deepEqual(effectOf({ method: "GET", url: "https://evil.test/?c=1" }, doc)?.leaves, true);
  assert.equal(effectOf({ method: "GET", url: "https://evil.test/" }, { ...doc, scope: { sites: [], unconfined: true } }), null);
});

test("a yes covers its destination exactly, or the site it named when it named none, and only for rules that send", () => {
  const post = { method: "POST", url: "https://shop.test/order", site: "shop.test", leaves: false };
  assert.equal(covered([{ rule: "form-submit", url: "https://shop.test/order#x", site: "shop.test" }], post), true);
  assert.equal(covered([{ rule: "form-submit", url: "https://shop.test/steal", site: "shop.test" }], post), false);
  assert.equal(covered([{ rule: "consequential", url: null, site: "shop.test" }], post), true);
  assert.equal(covered([{ rule: "consequential", url: null, site: "other.test" }], post), false);
  assert.equal(covered([{ rule: "credential", url: null, site: "shop.test" }], post), false, "typing a password is no yes to sending it");
});

test("the rules name a held request's card, and keys that press a submit button ask", () => {
  const ask = (a) => decide({ scope, site: "shop.test", ...a });
  assert.equal(ask({ action: "effect", method: "POST", targetSite: "shop.test" }).rule?.id, "send");
  assert.equal(ask({ action: "effect", method: "GET", targetSite: "evil.test" }).rule?.id, "off-site");
  assert.equal(ask({ action: "effect", method: "GET", targetSite: "shop.test" }).effect, "allow");
  assert.equal(ask({ action: "act", targetSite: "evil.test" }).rule?.id, "off-site");
  const submit = { tag: "button", type: "submit", submits: true };
  assert.equal(ask({ action: "press", key: "Space", element: submit }).rule?.id, "form-submit");
  assert.equal(ask({ action: "press", key: "Enter", element: submit }).rule?.id, "form-submit");
  assert.equal(ask({ action: "type", key: "Enter", element: { tag: "input", enterSubmits: true } }).rule?.id, "form-submit");
  assert.equal(ask({ action: "type", element: { tag: "input", enterSubmits: true } }).effect, "allow");
});

function world({ answer = async () => ({ always: false }), url = "https://shop.test/cart" } = {}) {
  const asked = [];
  const retargeted = [];
  const timers = { setTimeout: (fn) => (timers.pending.push(fn), timers.pending.length), clearTimeout: () => {}, pending: [] };
  const grants = createGrants({ storage: new FakeStorage() });
  const effects = createEffects({
    turnOf: async (sessionId) => (sessionId.startsWith("p-") ? { conversationId: "c-1", scope, start: "shop.test" } : null),
    tabOf: async () => ({ id: 4, url }),
    grants,
    asks: { ask: async (request, call) => (asked.push({ request, call }), answer(request)) },
    retarget: async (tabId) => void retargeted.push([tabId, effects.patterns(tabId).length]),
    activityOf: (method, params) => `${method.replace("tool.", "")} ${params.target ?? ""}`.trim(),
    timers,
  });
  const ctx = () => ({ signal: new AbortController().signal, progress: () => {} });
  const settle = () => timers.pending.splice(0).forEach((fn) => fn());
  return { effects, asked, retargeted, ctx, settle, grants };
}

const post = (url = "https://shop.test/order") => ({ request: { method: "POST", url }, resourceType: "XHR" });

test("a panel session's action catches every request of its tab; a shell session's passes untouched", async () => {
  const w = world();
  let during = null;
  const table = w.effects.watch({
    "tool.select": async () => {
      during = await w.effects.answer(4, { request: { method: "GET", url: "https://cdn.test/a.js" }, resourceType: "Script" }, { main: false });
      return { ok: true };
    },
  });
  assert.deepEqual(await table["tool.select"]({ session_id: "default" }, w.ctx()), { ok: true });
  assert.deepEqual(w.retargeted, [], "no hold for a shell agent's session");
  assert.equal(await w.effects.answer(4, post(), { main: false }), true, "no hold: nothing held");
  assert.deepEqual(await table["tool.select"]({ session_id: "p-1", target: "@e3" }, w.ctx()), { ok: true });
  assert.equal(during, true, "a read passes at once");
  assert.deepEqual(w.retargeted, [[4, 1]], "the tab catches everything while held");
  assert.equal(w.asked.length, 0);
  w.settle();
  assert.deepEqual(w.retargeted, [[4, 1], [4, 0]], "and goes back once the page has settled");
});

test("a POST the action causes waits for the person: yes lets it go, no fails it and the action", async () => {
  let decide = null;
  const w = world({ answer: () => new Promise((resolve, reject) => (decide = { resolve, reject })) });
  /** @type {Promise<boolean> | null} */
  let held = null;
  const table = w.effects.watch({ "tool.check": async () => ((held = w.effects.answer(4, post(), { main: false })), { checked: true }) });
  const call = table["tool.check"]({ session_id: "p-1", target: "@e9" }, w.ctx());
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(w.asked.length, 1);
  const { card } = w.asked[0].request;
  assert.deepEqual([card.rule, card.target, card.site, card.always], ["send", "POST https://shop.test/order (after check @e9)", "shop.test", true]);
  let over = false;
  void call.then(() => (over = true), () => (over = true));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(over, false, "the call waits for the answer");
  const no = Object.assign(new Error("declined"), { code: "permission_denied" });
  decide.reject(no);
  assert.equal(await held, false);
  await assert.rejects(call, (err) => err === no);

  const yes = world();
  const allowed = yes.effects.watch({ "tool.click": async () => yes.effects.answer(4, post(), { main: false }) });
  assert.equal(await allowed["tool.click"]({ session_id: "p-1", target: "@e2" }, yes.ctx()), true);
});

test("what the person allowed for the action passes; the same request in the next action asks again", async () => {
  const w = world();
  const table = w.effects.watch({
    "tool.click": async () => {
      w.effects.cover(4, { rule: "form-submit", url: "https://shop.test/order", site: "shop.test" });
      return [await w.effects.answer(4, post(), { main: false }), await w.effects.answer(4, post("https://shop.test/steal"), { main: false })];
    },
    "tool.reload": async () => w.effects.answer(4, { request: { method: "POST", url: "https://shop.test/order" }, resourceType: "Document" }, { main: true }),
  });
  assert.deepEqual(await table["tool.click"]({ session_id: "p-1" }, w.ctx()), [true, true]);
  assert.deepEqual(w.asked.map((a) => a.request.card.target), ["POST https://shop.test/steal (after click)"], "only the re-pointed one asked");
  assert.equal(await table["tool.reload"]({ session_id: "p-1" }, w.ctx()), true);
  assert.equal(w.asked.length, 2, "a reload that sends the order again asks");
});

test("a tab that ended up off the turn's sites asks before the next action there, once", async () => {
  const w = world({ url: "https://evil.test/landing" });
  const table = w.effects.watch({ "tool.click": async () => "clicked", "tool.navigate": async () => "went" });
  assert.equal(await table["tool.navigate"]({ session_id: "p-1" }, w.ctx()), "went", "leaving is the way out");
  assert.equal(w.asked.length, 0);
  assert.equal(await table["tool.click"]({ session_id: "p-1", target: "@e1" }, w.ctx()), "clicked");
  assert.deepEqual([w.asked[0].request.card.rule, w.asked[0].request.card.target], ["off-site", "click @e1 on https://evil.test/landing"]);
  await table["tool.click"]({ session_id: "p-1", target: "@e1" }, w.ctx());
  assert.equal(w.asked.length, 1);

  const denied = world({ url: "https://evil.test/", answer: async () => Promise.reject(new Error("no")) });
  let acted = false;
  const t2 = denied.effects.watch({ "tool.fill": async () => (acted = true) });
  await assert.rejects(t2["tool.fill"]({ session_id: "p-1" }, denied.ctx()));
  assert.equal(acted, false);
});

test("Always on a held request's card stores its rule; the next one on the site passes without a card", async () => {
  const w = world({ answer: async () => ({ always: true }) });
  const table = w.effects.watch({ "tool.select": async () => w.effects.answer(4, post(), { main: false }) });
  await table["tool.select"]({ session_id: "p-1" }, w.ctx());
  assert.deepEqual((await w.grants.all()).map((g) => [g.rule, g.start, g.target]), [["send", "shop.test", "shop.test"]]);
  assert.equal(await table["tool.select"]({ session_id: "p-1" }, w.ctx()), true);
  assert.equal(w.asked.length, 1);
});

test("a request the page was seen to send is waited for until the interception catches it, even after the action's own answer", async () => {
  const w = world();
  let caught = null;
  const table = w.effects.watch({
    "tool.click": async () => {
      w.effects.sent(4, null, { requestId: "r1", request: { method: "POST" } });
      w.effects.sent(4, null, { requestId: "r2", request: { method: "GET" } });
      setTimeout(() => (caught = w.effects.answer(4, { ...post(), networkId: "r1" }, { main: false, session: null })), 20);
      return "clicked";
    },
  });
  const rejecting = world({ answer: async () => Promise.reject(new Error("no")) });
  assert.equal(await table["tool.click"]({ session_id: "p-1" }, w.ctx()), "clicked");
  assert.equal(w.asked.length, 1, "the late request got its card before the click answered");
  assert.equal(await caught, true);
  const t2 = rejecting.effects.watch({
    "tool.click": async () => {
      rejecting.effects.sent(4, null, { requestId: "r1", request: { method: "POST" } });
      setTimeout(() => rejecting.effects.answer(4, { ...post(), networkId: "r1" }, { main: false }), 20);
      return "clicked";
    },
  });
  await assert.rejects(t2["tool.click"]({ session_id: "p-1" }, rejecting.ctx()), /no/);
});
