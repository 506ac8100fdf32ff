// The gate in front of a side-panel session's consequential actions: other sessions pass untouched,
// grants stand only for their rules and sites, and the person's answer decides.
import { test } from "node:test";
import assert from "node:assert/strict";
import { approve } from "../../../src/tabpilot/extension/approval/gate.js";
import { createGrants } from "../../../src/tabpilot/extension/approval/grants.js";
import { FakeStorage } from "../helpers/fake-storage.js";

const submit = { tag: "button", type: "submit", submits: true, formAction: "https://shop.test/order", name: "Place order" };

function setup({ answer = { always: false }, url = "https://shop.test/cart", panel = true } = {}) {
  const asked = [];
  const grants = createGrants({ storage: new FakeStorage() });
  const ctx = {
    approvals: {
      turnOf: async () => (panel ? { conversationId: "c-1", scope: { sites: ["shop.test"], unconfined: false }, start: "shop.test" } : null),
      grants,
      asks: { ask: async (request) => (asked.push(request), typeof answer === "function" ? answer() : answer) },
    },
    tabs: { get: async () => ({ url }) },
    sites: { isBlocked: async (u) => u.includes("blocked.test") },
    signal: new AbortController().signal,
    progress: () => {},
  };
  return { ctx, asked, grants };
}

test("a shell agent's session is never asked, and its element is never even read", async () => {
  const s = setup({ panel: false });
  let read = false;
  assert.equal(await approve(s.ctx, "default", 1, { action: "click", target: "x", facts: async () => ((read = true), submit) }), false);
  assert.equal(read, false);
  assert.equal(s.asked.length, 0);
});

test("a panel session's submit asks with the rule, the target and where it goes; an ordinary click does not", async () => {
  const s = setup();
  assert.equal(await approve(s.ctx, "p-1", 1, { action: "click", target: 'button "Place order"', facts: async () => submit }), true);
  assert.equal(s.asked[0].card.rule, "form-submit");
  assert.deepEqual(s.asked[0].card.rules, ["form-submit", "consequential"]);
  assert.equal(s.asked[0].card.target, 'button "Place order" → https://shop.test/order');
  assert.equal(s.asked[0].card.always, true);
  assert.equal(await approve(s.ctx, "p-1", 1, { action: "click", target: 'button "More"', facts: async () => ({ tag: "button", type: "button", name: "More" }) }), false);
  assert.equal(s.asked.length, 1);
});

test("Always is granted for (rule, start site, target site) and covers nothing else", async () => {
  const s = setup({ answer: { always: true } });
  // Each approve is a call of its own, as each tool call has its own context.
  const call = () => ({ ...s.ctx });
  await approve(call(), "p-1", 1, { action: "click", target: "b", facts: async () => submit });
  assert.equal(await approve(call(), "p-1", 1, { action: "click", target: "b", facts: async () => submit }), false, "granted: no second card");
  assert.equal(s.asked.length, 1);
  const elsewhere = { ...submit, formAction: "https://other.test/order" };
  assert.equal(await approve(call(), "p-1", 1, { action: "click", target: "b", facts: async () => elsewhere }), true, "another target site asks");
  assert.equal(await approve(call(), "p-1", 1, { action: "evaluate", target: "code", code: "1+1" }), true, "another rule asks");
  await s.grants.revoke();
  assert.equal(await approve(call(), "p-1", 1, { action: "click", target: "b", facts: async () => submit }), true, "revoked: asks again");
});

test("Always stores only the rule its card named: a Delete after a granted Place order asks", async () => {
  const s = setup({ answer: { always: true } });
  await approve({ ...s.ctx }, "p-1", 1, { action: "click", target: 'button "Place order"', facts: async () => submit });
  assert.deepEqual(s.asked[0].card.rule, "form-submit");
  assert.deepEqual((await s.grants.all()).map((g) => g.rule), ["form-submit"]);
  const remove = { tag: "button", type: "button", name: "Delete my account" };
  assert.equal(await approve({ ...s.ctx }, "p-1", 1, { action: "click", target: 'button "Delete my account"', facts: async () => remove }), true);
  assert.equal(s.asked[1].card.rule, "consequential");
});

test("after a yes the action is described again: the same facts pass, a re-pointed form asks anew", async () => {
  const s = setup();
  const covered = [];
  s.ctx.approvals.effects = { cover: (tabId, allowed) => covered.push([tabId, allowed]) };
  let facts = submit;
  const what = { action: "click", target: 'button "Place order"', facts: async () => facts };
  assert.equal(await approve(s.ctx, "p-1", 7, what), true);
  assert.equal(await approve(s.ctx, "p-1", 7, what), false, "the very card the person allowed");
  facts = { ...submit, formAction: "https://shop.test/steal" };
  assert.equal(await approve(s.ctx, "p-1", 7, what), true, "changed while the card was open");
  assert.equal(s.asked[1].card.target, 'button "Place order" → https://shop.test/steal');
  assert.equal(await approve(s.ctx, "p-1", 7, what), false);
  assert.equal(await approve({ ...s.ctx, approvals: s.ctx.approvals }, "p-1", 7, what), true, "another call asks again");
  assert.deepEqual(covered.slice(0, 2), [
    [7, { rule: "form-submit", url: "https://shop.test/order", site: "shop.test" }],
    [7, { rule: "form-submit", url: "https://shop.test/steal", site: "shop.test" }],
  ]);
});

test("code is shown whole and never offered Always; a blocked destination is a hard no", async () => {
  const s = setup();
  const code = "x".repeat(5000);
  await approve(s.ctx, "p-1", 1, { action: "evaluate", target: "the code below", code });
  assert.equal(s.asked[0].card.code, code);
  assert.equal(s.asked[0].card.always, false);
  await assert.rejects(approve(s.ctx, "p-1", 1, { action: "navigate", target: "https://blocked.test/", url: "https://blocked.test/" }), (err) => err.code === "blocked_site");
});

test("the person's no comes back to the tool as it is", async () => {
  const no = Object.assign(new Error("declined"), { code: "permission_denied" });
  const s = setup({ answer: () => Promise.reject(no) });
  await assert.rejects(approve(s.ctx, "p-1", 1, { action: "upload", target: "a.txt into file" }), (err) => err === no);
});
