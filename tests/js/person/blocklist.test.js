// Blocked-site patterns: what each form covers, and that every doubt blocks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { blockedBy, compilePattern, cookieBlocked, parseBlockList, parseBlockListText } from "../../../src/tabpilot/extension/person/blocklist.js";

/** @param {string[]} list @param {string} url */
const blocked = (list, url) => blockedBy(list, url) !== null;

test("a bare host covers the host and its subdomains, on any scheme, port and path", () => {
  const list = ["bank.example.com"];
  for (const url of ["https://bank.example.com/", "http://bank.example.com:8080/login?x=1", "https://www.bank.example.com/a", "https://BANK.Example.com/"]) {
    assert.ok(blocked(list, url), url);
  }
  for (const url of ["https://example.com/", "https://notbank.example.com/", "https://bank.example.com.evil.test/", "https://bank.example.community/"]) {
    assert.ok(!blocked(list, url), url);
  }
});

test("*.domain covers the domain and everything under it", () => {
  const list = ["*.corp.example"];
  assert.ok(blocked(list, "https://corp.example/"));
  assert.ok(blocked(list, "https://wiki.corp.example/page"));
  assert.ok(blocked(list, "https://a.b.corp.example/"));
  assert.ok(!blocked(list, "https://corp.example.org/"));
  assert.ok(!blocked(list, "https://xcorp.example/"));
});

test("a scheme names one exact host; the path is a glob", () => {
  const list = ["https://mail.example.com/private/*"];
  assert.ok(blocked(list, "https://mail.example.com/private/inbox"));
  assert.ok(blocked(list, "https://mail.example.com/private/a/b?c=d"));
  assert.ok(!blocked(list, "https://mail.example.com/public/inbox"));
  assert.ok(!blocked(list, "http://mail.example.com/private/inbox"), "other scheme");
  assert.ok(!blocked(list, "https://x.mail.example.com/private/inbox"), "no subdomains without *.");
  assert.ok(blocked(["https://*.example.com/x*"], "https://a.example.com/xyz"));
});

test("a path without * covers itself and what lies below it", () => {
  const list = ["example.com/admin"];
  assert.ok(blocked(list, "https://example.com/admin"));
  assert.ok(blocked(list, "https://example.com/admin/users"));
  assert.ok(blocked(list, "https://example.com/admin?tab=2"));
  assert.ok(!blocked(list, "https://example.com/administrator"));
  assert.ok(!blocked(list, "https://example.com/"));
  assert.ok(blocked(["example.com/a/"], "https://example.com/a/b"));
  assert.ok(!blocked(["example.com/a/"], "https://example.com/a"));
});

test("ports, addresses and loopback", () => {
  assert.ok(blocked(["localhost:8080"], "http://localhost:8080/x"));
  assert.ok(!blocked(["localhost:8080"], "http://localhost:8081/x"));
  assert.ok(blocked(["127.0.0.1"], "http://127.0.0.1:5000/"));
  assert.ok(blocked(["example.com:443"], "https://example.com/"));
  assert.ok(blocked(["[::1]"], "http://[::1]:8000/"));
});

test("blob: URLs count as their origin; pages that are not web pages are never blocked", () => {
  assert.ok(blocked(["example.com"], "blob:https://example.com/6f1c-22"));
  for (const url of ["about:blank", "data:text/html,hi", "", null, undefined, "not a url"]) {
    assert.ok(!blocked(["example.com"], url), String(url));
  }
});

test("comments and blank lines are ignored; an empty or absent list blocks nothing", () => {
  assert.ok(!blocked(["# nothing here", "  "], "https://example.com/"));
  assert.equal(blockedBy(undefined, "https://example.com/"), null);
  assert.equal(blockedBy([], "https://example.com/"), null);
  assert.equal(blockedBy(["example.com"], "https://example.com/"), "example.com");
});

test("a stored value that is not a valid list blocks every web page", () => {
  for (const value of ["example.com", { a: 1 }, 42, true, ["ok.example", 7], ["exa mple.com"], ["ftp://x.example"]]) {
    const why = blockedBy(value, "https://unrelated.test/");
    assert.ok(why !== null && why.startsWith("every site"), JSON.stringify(value));
  }
  assert.equal(parseBlockList("x").ok, false);
});

test("the options page refuses a bad line and names it", () => {
  assert.deepEqual(parseBlockListText("a.example\n\n# note\nb.example/x"), { ok: true, entries: ["a.example", "b.example/x"] });
  const bad = parseBlockListText("a.example\nexa mple.com");
  assert.equal(bad.ok, false);
  assert.equal(bad.ok === false && bad.line, 2);
  assert.throws(() => compilePattern("https://"), /not a host name/);
  assert.throws(() => compilePattern("javascript://x"), /only http and https/);
  assert.throws(() => compilePattern("host.example?q"), /a path must start with \//);
});

test("a cookie is the blocked site's whatever port or path its pattern names, and a domain cookie reaches the hosts under it", () => {
  const list = ["localhost:8080", "bank.example/private/*", "https://mail.example.org:8443/x", "*.corp.example"];
  for (const domain of ["localhost", "127.0.0.1", "app.localhost", "bank.example", ".bank.example", "mail.example.org", "a.corp.example", ".example.org", ".example"]) {
    assert.equal(cookieBlocked(list, domain), true, domain);
  }
  for (const domain of ["example.com", "notbank.example", "example.org", "www.mail.example.org", "corp.example.net"]) assert.equal(cookieBlocked(list, domain), false, domain);
  assert.equal(cookieBlocked([], "localhost"), false);
  assert.equal(cookieBlocked("damaged", "example.com"), true);
});
