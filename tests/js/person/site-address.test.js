// The one normaliser of blocked-site checks, over the shared table of address forms.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { canonicalHost, siteAddress } from "../../../src/tabpilot/extension/person/site-address.js";
import { blockedBy, compilePattern } from "../../../src/tabpilot/extension/person/blocklist.js";

const vectors = JSON.parse(readFileSync(new URL("../../vectors/site-addresses.json", import.meta.url), "utf8"));
const PORT = "8123";
const at = (/** @type {string} */ s) => s.replaceAll("{PORT}", PORT);

test("every form of one site's address is blocked by every way of writing its pattern", () => {
  const { patterns, forms, other_sites: others } = vectors.same_site;
  for (const pattern of patterns) {
    for (const form of forms) assert.ok(blockedBy([at(pattern)], at(form)) !== null, `${at(pattern)} must block ${at(form)}`);
    for (const other of others) assert.equal(blockedBy([at(pattern)], at(other)), null, `${at(pattern)} must not block ${at(other)}`);
  }
});

test("a pattern's host is brought to its canonical form, or refused", () => {
  for (const [written, canonical] of vectors.hosts) {
    assert.equal(canonicalHost(written), canonical, written);
    if (canonical === null && written !== "" && !written.includes("/")) assert.throws(() => compilePattern(written), /host|path/, written);
  }
});

test("pattern and address pairs", () => {
  for (const [pattern, url, blocked] of vectors.cases) assert.equal(blockedBy([pattern], url) !== null, blocked, `${pattern} vs ${url}`);
});

test("an address knows its site: canonical host, explicit port, ws as http", () => {
  assert.deepEqual(siteAddress("ws://LOCALHOST.:80/s?x=1"), { scheme: "http", host: "localhost", port: "80", path: "/s?x=1" });
  assert.deepEqual(siteAddress("https://[::ffff:7f00:1]/"), { scheme: "https", host: "localhost", port: "443", path: "/" });
  assert.equal(siteAddress("chrome://settings"), null);
  assert.equal(siteAddress("javascript:alert(1)"), null);
});
