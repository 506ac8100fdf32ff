// The pure parts of the agent kit: route patterns, download names, the refs an annotated screenshot
// boxes, and which headers count as credentials.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fetchPattern, patternRegExp, createNetworkRoutes } from "../../../src/tabpilot/extension/browser/network-routes.js";
import { safeName, sessionFolder } from "../../../src/tabpilot/extension/browser/downloads.js";
import { refsOf } from "../../../src/tabpilot/extension/tools/observe/annotate.js";
import { redacted, HIDDEN } from "../../../src/tabpilot/extension/tools/network/network.js";

test("a route pattern without a wildcard matches URLs containing it; * and ? are Fetch's", () => {
  assert.equal(fetchPattern("api/items"), "*api/items*");
  assert.ok(patternRegExp("api/items").test("http://a.test/api/items?page=2"));
  assert.ok(patternRegExp("**/items.json*").test("http://a.test/x/items.json?p=1"));
  assert.ok(patternRegExp("http://a.test/v?/x").test("http://a.test/v1/x"));
  assert.ok(!patternRegExp("http://a.test/v?/x").test("http://a.test/v12/x"));
  assert.ok(patternRegExp("a.b(c)").test("http://h/a.b(c)") && !patternRegExp("a.b").test("http://h/aXb"));
});

test("routes answer only their session's tabs, the newest route first, and go with the session", async () => {
  let changes = 0;
  const routes = createNetworkRoutes({ ownerOfTab: async (tabId) => (tabId === 1 ? "s1" : null), onChange: async () => void changes++ });
  await routes.add("s1", { pattern: "items", status: 200, body: btoa("old"), content_type: "text/plain", abort: false });
  await routes.add("s1", { pattern: "*items.json", status: 201, body: btoa("new"), content_type: "application/json", abort: false });
  const paused = { requestId: "r1", request: { url: "http://h/items.json" } };
  const [method, params] = /** @type {[string, any]} */ (await routes.answer(1, paused));
  assert.equal(method, "Fetch.fulfillRequest");
  assert.equal(params.responseCode, 201);
  assert.equal(atob(params.body), "new");
  assert.equal(await routes.answer(2, paused), null);
  assert.deepEqual(routes.patterns().map((p) => p.urlPattern).sort(), ["*items*", "*items.json"]);
  assert.equal(await routes.remove("s1", null), 2);
  assert.equal(await routes.answer(1, paused), null);
  assert.deepEqual(routes.patterns(), []);
  assert.equal(changes, 3);
});

test("download names are one plain file name; session folders are safe", () => {
  assert.equal(safeName("/etc/../passwd"), "passwd");
  assert.equal(safeName("..\\..\\x.txt"), "x.txt");
  assert.equal(safeName(".hidden"), "hidden");
  assert.equal(safeName('a<b>:"c".csv'), "a_b___c_.csv");
  assert.equal(safeName(""), "download");
  // devices on Windows, which Chrome refuses on every platform, and names no file system takes
  assert.equal(safeName("CON"), "_CON");
  assert.equal(safeName("lpt1.txt"), "_lpt1.txt");
  assert.equal(safeName("console.log"), "console.log");
  assert.equal(safeName("report. . "), "report");
  const long = safeName(`${"é".repeat(300)}.csv`);
  assert.ok(new TextEncoder().encode(long).length <= 200 && long.endsWith("é.csv"), long);
  assert.equal(sessionFolder("agent-1.x"), "agent-1.x");
  assert.equal(sessionFolder("../up"), "__up");
});

test("an annotated screenshot boxes each ref of the snapshot once, with its role and name", () => {
  const text = '# Files\n[link "Get the report" @e3] [button "Save" @e4 disabled]\n[textbox "Note" @e5] again [link "Get the report" @e3]';
  assert.deepEqual(refsOf(text), [
    { ref: "@e3", label: 'link "Get the report"' },
    { ref: "@e4", label: 'button "Save"' },
    { ref: "@e5", label: 'textbox "Note"' },
  ]);
});

test("credentials in headers are hidden unless asked for", () => {
  const headers = { Authorization: "Bearer x", cookie: "a=b", "Set-Cookie": "s=1", Accept: "*/*" };
  assert.deepEqual(redacted(headers, false), { Authorization: HIDDEN, cookie: HIDDEN, "Set-Cookie": HIDDEN, Accept: "*/*" });
  assert.deepEqual(redacted(headers, true), headers);
});

test("shaping adds an origin's headers and credentials to its requests only, replacing the request's own", async () => {
  const routes = createNetworkRoutes({ ownerOfTab: async (tabId) => (tabId === 1 ? "s1" : null), onChange: async () => {} });
  await routes.shape("s1", "https://api.test", { headers: { "X-Key": "k1", "user-agent": "Shaped/1" } });
  await routes.shape("s1", "https://api.test", { authorization: "Basic YTpi" });
  assert.deepEqual(routes.patterns().map((p) => p.urlPattern), ["https://api.test/*"]);
  const paused = (/** @type {string} */ url) => ({ requestId: "r", request: { url, headers: { "User-Agent": "Real", Accept: "*/*" } } });
  const [method, params] = /** @type {[string, any]} */ (await routes.answer(1, paused("https://api.test/v1?q=1")));
  assert.equal(method, "Fetch.continueRequest");
  assert.deepEqual(Object.fromEntries(params.headers.map((/** @type {any} */ h) => [h.name, h.value])), {
    Accept: "*/*",
    "X-Key": "k1",
    "user-agent": "Shaped/1",
    Authorization: "Basic YTpi",
  });
  // Another origin (a look-alike host, another port, another scheme), another session's tab: untouched.
  for (const url of ["https://api.test.evil/x", "https://api.test:8443/x", "http://api.test/x"]) assert.equal(await routes.answer(1, paused(url)), null);
  assert.equal(await routes.answer(2, paused("https://api.test/x")), null);
  assert.deepEqual(routes.shaping("s1"), [{ origin: "https://api.test", headers: ["X-Key", "user-agent"], credentials: true }]);
  await routes.shape("s1", "https://api.test", { headers: {}, authorization: null });
  assert.deepEqual(routes.shaping("s1"), []);
  assert.deepEqual(routes.patterns(), []);
});
