// URL normalisation against the shared vectors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { normalizeUrl } from "../../../src/tabpilot/extension/browser/urls.js";
import { RpcError } from "../../../src/tabpilot/extension/link/protocol.js";

const { cases } = JSON.parse(readFileSync(new URL("../../vectors/urls.json", import.meta.url), "utf8"));

for (const c of cases) {
  const label = `${JSON.stringify(c.input)}${c.base ? ` against ${c.base}` : ""}${c.allow_file ? " (allow_file)" : ""}`;
  test(label, () => {
    const run = () => normalizeUrl(c.input, { allowFile: c.allow_file === true, base: c.base });
    if (typeof c.expect === "string") {
      assert.equal(run(), c.expect);
    } else {
      assert.throws(run, (err) => err instanceof RpcError && err.code === "invalid_params" && err.reason === c.expect.reason);
    }
  });
}

test("blob URLs of web pages are allowed, of extension pages refused", () => {
  assert.equal(normalizeUrl("blob:https://example.com/1234"), "blob:https://example.com/1234");
  assert.throws(() => normalizeUrl("blob:chrome-extension://abc/1234"), { reason: "url_scheme_refused" });
});

test("protocol-relative input", () => {
  assert.equal(normalizeUrl("//example.com/x"), "https://example.com/x");
  assert.equal(normalizeUrl("//localhost:8000/x"), "http://localhost:8000/x");
  assert.equal(normalizeUrl("//cdn.example.org/a", { base: "http://example.com/" }), "http://cdn.example.org/a");
});

test("relative input resolving to a refused scheme is refused", () => {
  assert.throws(() => normalizeUrl("/x", { base: "chrome://settings/" }), { reason: "url_scheme_refused" });
});
