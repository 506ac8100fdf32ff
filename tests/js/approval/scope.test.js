// A turn's sites: where it started and what the person named; nothing else widens it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { turnScope, sitesNamedIn, inScope, siteOf } from "../../../src/tabpilot/extension/approval/scope.js";

test("the start site and the sites named in the message, www. dropped, files left out", () => {
  const scope = turnScope("https://www.Shop.test/cart?x=1", "compare with docs.test and https://Evil.Example/x, see notes.md");
  assert.deepEqual(scope, { sites: ["shop.test", "docs.test", "evil.example"], unconfined: false });
  assert.deepEqual(sitesNamedIn("open http://data.json/ and read report.pdf"), ["data.json"]);
});

test("a blank tab and no site named: unconfined", () => {
  assert.deepEqual(turnScope("about:blank", "search for cheap flights"), { sites: [], unconfined: true });
});

test("a scope entry covers itself and its subdomains, nothing that merely ends like it", () => {
  const scope = { sites: ["shop.test"], unconfined: false };
  assert.ok(inScope("shop.test", scope));
  assert.ok(inScope("app.shop.test", scope));
  assert.ok(!inScope("shop.test.evil.test", scope));
  assert.ok(!inScope("evilshop.test", scope));
});

test("every spelling of a host is one site", () => {
  assert.equal(siteOf("http://SHOP.test./a"), "shop.test");
  assert.equal(siteOf("http://127.0.0.1:8000/"), "localhost");
  assert.equal(siteOf("http://shop.localhost:8000/"), "shop.localhost");
  assert.equal(siteOf("data:text/html,hi"), null);
});
