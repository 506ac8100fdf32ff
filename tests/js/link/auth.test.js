// The WebCrypto twin of auth.py against the shared vectors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as auth from "../../../src/tabpilot/extension/link/auth.js";

const v = JSON.parse(readFileSync(new URL("../../vectors/auth.json", import.meta.url), "utf8"));

test("code normalisation matches the Python twin", () => {
  for (const [input, expected] of v.normalize) assert.equal(auth.normalizeCode(input), expected, input);
});

test("pairing proof and secret", async () => {
  assert.equal(await auth.pairingCodeProof(v.code, v.instance_id, v.extension_nonce), v.pairing_code_proof);
  assert.equal(
    await auth.pairingCodeProof(v.code.toLowerCase(), v.instance_id, v.extension_nonce),
    v.pairing_code_proof_lowercase_input,
  );
  assert.equal(await auth.pairingSecret(v.code, v.instance_id, v.extension_nonce), v.pairing_secret);
});

test("daemon and extension proofs", async () => {
  assert.equal(await auth.daemonProof(v.secret, v.instance_id, v.extension_nonce, v.daemon_nonce), v.daemon_proof);
  assert.equal(
    await auth.extensionProof(v.secret, v.instance_id, v.extension_nonce, v.daemon_nonce),
    v.extension_proof,
  );
  assert.equal(
    await auth.daemonProof(v.pairing_secret, v.instance_id, v.extension_nonce, v.daemon_nonce),
    v.daemon_proof_with_pairing_secret,
  );
});

test("an empty code or a non-hex secret is refused", async () => {
  await assert.rejects(auth.pairingCodeProof(" - ", v.instance_id, v.extension_nonce), /empty/);
  await assert.rejects(auth.daemonProof("xyz", v.instance_id, v.extension_nonce, v.daemon_nonce), /hex/);
});

test("nonces are 32 lowercase hex characters and differ", () => {
  const a = auth.newNonce();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, auth.newNonce());
});

test("proof comparison", () => {
  assert.ok(auth.proofsEqual("abcd", "abcd"));
  assert.ok(!auth.proofsEqual("abcd", "abce"));
  assert.ok(!auth.proofsEqual("abcd", "abc"));
  assert.ok(!auth.proofsEqual("abcd", null));
});
