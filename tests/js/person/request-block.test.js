// The browser-side request rules for blocked sites: what they match, and whom they spare.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequestBlock, ruleRegexes, sessionRules } from "../../../src/tabpilot/extension/person/request-block.js";
import { compilePattern } from "../../../src/tabpilot/extension/person/blocklist.js";
import { FakeEvent } from "../helpers/fake-chrome.js";

const vectors = JSON.parse(readFileSync(new URL("../../vectors/site-addresses.json", import.meta.url), "utf8"));
const PORT = "8123";
const at = (/** @type {string} */ s) => s.replaceAll("{PORT}", PORT);
/** What the rule sees: the address as the browser writes it (lower-case host, ASCII). */
const matches = (pattern, url) => ruleRegexes(compilePattern(pattern)).some((re) => new RegExp(re).test(new URL(url).href));

test("every network form of a blocked site's address matches its rule, other sites do not", () => {
  const { patterns, forms, other_sites: others } = vectors.same_site;
  for (const pattern of patterns) {
    for (const form of forms.filter((f) => !f.startsWith("blob:"))) assert.ok(matches(at(pattern), at(form)), `${at(pattern)} must match ${at(form)}`);
    for (const other of others.filter((f) => /^(https?|wss?):/.test(f))) assert.ok(!matches(at(pattern), at(other)), `${at(pattern)} must not match ${at(other)}`);
  }
  for (const [pattern, url, blocked] of vectors.cases) {
    if (!/^(https?|wss?):/.test(url)) continue;
    // a rule for a default port also holds the other scheme without a port: more, never less
    if (blocked || !/:(80|443)$/.test(pattern)) assert.equal(matches(pattern, url), blocked, `${pattern} vs ${url}`);
  }
});

test("the rules spare the person's tabs only; requests of no tab are held but for a named site's own", () => {
  const rules = sessionRules(["bank.example.com", "localhost:8080"], [4, 9], [7]);
  assert.equal(rules.length, 18, "three for the name, and for each of the five ways loopback is written");
  // documents: the person's and the debugged tabs are spared (the debugger decides there)
  assert.deepEqual(rules[0].condition.excludedTabIds, [4, 9, 7, -1]);
  assert.deepEqual(rules[0].condition.resourceTypes, ["main_frame", "sub_frame"]);
  // everything else, the person's tabs only
  assert.deepEqual(rules[1].condition.excludedTabIds, [4, 9, -1]);
  assert.ok(rules[1].condition.resourceTypes.includes("websocket") && rules[1].condition.resourceTypes.includes("ping"));
  assert.deepEqual(rules[2].condition.tabIds, [-1]);
  assert.deepEqual(rules[2].condition.excludedInitiatorDomains, ["bank.example.com"]);
  assert.equal(rules[5].condition.excludedInitiatorDomains, undefined, "loopback: no site's own worker is told apart");
  assert.deepEqual(new Set(rules.map((r) => r.id)).size, 18);
  assert.equal(sessionRules([], [1]).length, 0);
  assert.deepEqual(sessionRules(["localhost"], [], [], "ext-id")[2].condition.excludedInitiatorDomains, ["ext-id"], "the daemon link is never held");
  assert.equal(sessionRules("damaged", [1])[0].condition.regexFilter, "^(?:https?|wss?)://");
  // a site's own worker could read a blocked path of it for an agent tab's page: held too
  assert.equal(sessionRules(["bank.example.com/private/*"], [])[2].condition.excludedInitiatorDomains, undefined);
});

function setup({ stored = ["bank.example.com"] } = {}) {
  let rules = [];
  const updates = [];
  const dnr = {
    async getSessionRules() {
      return rules;
    },
    async updateSessionRules({ removeRuleIds = [], addRules = [] }) {
      updates.push({ removeRuleIds, addRules });
      rules = [...rules.filter((r) => !removeRuleIds.includes(r.id)), ...addRules];
    },
  };
  // tab 1: the person's; tab 2: in the Agent Window (window 10)
  const all = new Map([
    [1, { id: 1, windowId: 20 }],
    [2, { id: 2, windowId: 10 }],
  ]);
  const navigated = [];
  const tabs = {
    async query() {
      return [...all.values()];
    },
    async get(id) {
      const t = all.get(id);
      if (!t) throw new Error("no tab");
      return t;
    },
    async update(id, props) {
      navigated.push([id, props.url]);
    },
    onCreated: new FakeEvent(),
    onRemoved: new FakeEvent(),
    onAttached: new FakeEvent(),
  };
  let list = [];
  const sessionsChanged = new FakeEvent();
  const sessions = {
    list: () => list,
    async ownerOf(tab) {
      return list.length && tab.windowId === 10 ? "s1" : null;
    },
    onChange: (fn) => sessionsChanged.addListener(fn),
    ready: Promise.resolve(),
  };
  const navigationErrors = new FakeEvent();
  const block = createRequestBlock({
    dnr,
    tabs,
    navigationErrors,
    storage: { get: async () => ({ tp_blocked_sites: stored }) },
    onChanged: new FakeEvent(),
    sessions,
    isBlocked: async (url) => url.includes("bank.example.com"),
    log: { warn() {} },
  });
  const open = async () => {
    list = [{ sessionId: "s1", windowId: 10 }];
    sessionsChanged.listeners.forEach((fn) => fn());
    await block.refresh();
  };
  return { block, dnr, updates, all, tabs, navigationErrors, navigated, open, get rules() { return rules; }, close: async () => { list = []; sessionsChanged.listeners.forEach((fn) => fn()); await block.refresh(); } };
}

test("rules exist only while a session is open; tabs an agent tab opens are never spared", async () => {
  const t = setup();
  await t.block.refresh();
  assert.equal(t.rules.length, 0);
  await t.open();
  assert.deepEqual(t.rules[0].condition.excludedTabIds, [1, -1]);
  await t.block.debugged(2);
  assert.deepEqual(t.rules[0].condition.excludedTabIds, [1, 2, -1]);
  assert.deepEqual(t.rules[1].condition.excludedTabIds, [1, -1]);
  // a popup of the agent's tab opens in a window of its own: held; a tab the person's tab opens: spared
  t.all.set(3, { id: 3, windowId: 30, openerTabId: 2 });
  t.tabs.onCreated.listeners.forEach((fn) => fn(t.all.get(3)));
  t.all.set(4, { id: 4, windowId: 20, openerTabId: 1 });
  t.tabs.onCreated.listeners.forEach((fn) => fn(t.all.get(4)));
  await new Promise((r) => setTimeout(r, 5));
  await t.block.refresh();
  assert.deepEqual(t.rules[1].condition.excludedTabIds, [1, 4, -1]);
  // the person's new tab whose first page the rule held gets it again; the agent's popup does not
  for (const tabId of [3, 4]) t.navigationErrors.listeners.forEach((fn) => fn({ tabId, frameId: 0, url: "https://bank.example.com/", error: "net::ERR_BLOCKED_BY_CLIENT" }));
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(t.navigated, [[4, "https://bank.example.com/"]]);
  await t.close();
  assert.equal(t.rules.length, 0);
});
