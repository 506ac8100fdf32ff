// The approval rules over plain descriptors of actions: what asks, what does not, the most severe
// effect wins, and which rules an "Always" grant may stand for.
import { test } from "node:test";
import assert from "node:assert/strict";
import { decide, grantable, consequentialName, isCredential, RULES } from "../../../src/tabpilot/extension/approval/rules.js";

const scope = { sites: ["shop.test"], unconfined: false };
const button = (name, more = {}) => ({ tag: "button", type: "button", role: "button", name, ...more });
const ask = (action) => decide({ scope, site: "shop.test", ...action });

test("rule ids are unique and every rule has a title", () => {
  const ids = RULES.map((r) => r.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const r of RULES) assert.ok(r.title.length > 5, r.id);
});

test("a plain click, a link inside the turn's sites and a fill of an ordinary field do not ask", () => {
  assert.equal(ask({ action: "click", element: button("Show more") }).effect, "allow");
  assert.equal(ask({ action: "click", element: { tag: "a", name: "Pricing" }, targetSite: "shop.test" }).effect, "allow");
  assert.equal(ask({ action: "click", element: { tag: "a", name: "Docs" }, targetSite: "docs.shop.test" }).effect, "allow");
  assert.equal(ask({ action: "fill", element: { tag: "input", type: "text", field: "q search" } }).effect, "allow");
  assert.equal(ask({ action: "press", key: "Enter", element: { tag: "textarea" } }).effect, "allow");
  assert.equal(ask({ action: "press", key: "Tab", element: { tag: "input", enterSubmits: true } }).effect, "allow");
  assert.equal(ask({ action: "dialog", accept: true, dialog: "alert" }).effect, "allow");
  assert.equal(ask({ action: "dialog", accept: false, dialog: "beforeunload" }).effect, "allow");
});

test("each rule fires on its action and names itself", () => {
  const cases = [
    [{ action: "click", element: button("Continue", { type: "submit", submits: true }) }, "form-submit"],
    [{ action: "press", key: "Enter", element: { tag: "input", enterSubmits: true } }, "form-submit"],
    [{ action: "press", key: "Enter", element: { tag: "iframe", inFrame: true } }, "form-submit"],
    [{ action: "click", element: button("Place order") }, "consequential"],
    [{ action: "click", element: { tag: "a", name: "Delete account" }, targetSite: "shop.test" }, "consequential"],
    [{ action: "fill", element: { tag: "input", type: "password" } }, "credential"],
    [{ action: "type", element: { tag: "input", type: "text", autocomplete: "cc-number" } }, "credential"],
    [{ action: "fill", element: { tag: "input", type: "text", autocomplete: "one-time-code" } }, "credential"],
    [{ action: "fill", element: { tag: "input", type: "tel", field: "cardnumber" } }, "credential"],
    [{ action: "upload" }, "upload"],
    [{ action: "download", targetSite: "shop.test" }, "download"],
    [{ action: "navigate", targetSite: "evil.test" }, "off-site"],
    [{ action: "tab_create", targetSite: "shop.test.evil.test" }, "off-site"],
    [{ action: "click", element: { tag: "a", name: "Our partner" }, targetSite: "evil.test" }, "off-site"],
    [{ action: "evaluate" }, "run-code"],
    [{ action: "dialog", accept: true, dialog: "beforeunload" }, "leave-page"],
    [{ action: "dialog", accept: true, dialog: "confirm" }, "leave-page"],
  ];
  for (const [action, rule] of cases) {
    const d = ask(action);
    assert.equal(d.effect, "ask", JSON.stringify(action));
    assert.equal(d.rule?.id, rule, JSON.stringify(action));
  }
});

test("the most severe effect wins whatever the order, and every matching rule is listed", () => {
  const both = ask({ action: "click", element: button("Place order", { submits: true }) });
  assert.deepEqual([both.effect, both.rule?.id, both.rules], ["ask", "form-submit", ["form-submit", "consequential"]]);
  const blocked = ask({ action: "navigate", targetSite: "evil.test", blocked: true });
  assert.deepEqual([blocked.effect, blocked.rule?.id], ["deny", "blocked"]);
  const reversed = decide({ scope, action: "navigate", targetSite: "evil.test", blocked: true }, [...RULES].reverse());
  assert.equal(reversed.effect, "deny");
});

test("an unconfined turn (no start site, no site named) asks nothing about sites", () => {
  assert.equal(decide({ scope: { sites: [], unconfined: true }, action: "navigate", targetSite: "evil.test" }).effect, "allow");
});

test("Always is offered only when every rule that matched allows it: never for code", () => {
  assert.equal(grantable(ask({ action: "click", element: button("Buy", { submits: true }) })), true);
  assert.equal(grantable(ask({ action: "evaluate" })), false);
  assert.equal(grantable(ask({ action: "upload" })), false, "each upload card names its files");
  assert.equal(grantable(ask({ action: "click", element: button("More") })), false);
});

test("consequential names: verbs anywhere, and nouns only as the first word", () => {
  for (const name of ["Place order", "Buy now", "Pay $12.00", "Delete", "Yes, delete it", "Send message", "Publish post", "Sign up", "Create an account", "Subscribe", "Transfer funds", "Order now", "Post", "Post comment", "Confirm purchase", "Book a table"]) {
    assert.ok(consequentialName(name), name);
  }
  for (const name of ["Order history", "Post settings", "Blog posts", "Sender details", "Show more", "Bookmarks", "Subscriptions overview", "", undefined]) {
    assert.ok(!consequentialName(name), String(name));
  }
});

test("credential fields by type, autocomplete and name", () => {
  assert.ok(isCredential({ tag: "input", type: "password" }));
  assert.ok(isCredential({ tag: "input", autocomplete: "cc-csc" }));
  assert.ok(isCredential({ tag: "input", field: "cvv" }));
  assert.ok(!isCredential({ tag: "input", type: "email", autocomplete: "email", field: "email" }));
  assert.ok(!isCredential(null));
});
