// Settings in chrome.storage.local and the managed config file.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  createConfig,
  fetchManagedConfig,
  parseManagedConfig,
  KEYS,
} from "../../../src/tabpilot/extension/link/config.js";
import { FakeStorage } from "../helpers/fake-storage.js";

const noManaged = async () => null;

test("defaults on a fresh profile; the instance id is minted once and kept", async () => {
  const storage = new FakeStorage();
  const config = createConfig({ storage, loadManaged: noManaged });
  const [a, b] = await Promise.all([config.load(), config.load()]);
  assert.match(a.instanceId, /^[0-9a-f]{8}$/);
  assert.equal(a.instanceId, b.instanceId, "concurrent first loads agree");
  assert.equal(storage.data[KEYS.instanceId], a.instanceId);
  assert.deepEqual(
    { label: a.label, enabled: a.enabled, port: a.port, secret: a.secret, pendingCode: a.pendingCode, managed: a.managed },
    { label: "", enabled: true, port: 52830, secret: null, pendingCode: null, managed: false },
  );
  const again = await createConfig({ storage, loadManaged: noManaged }).load();
  assert.equal(again.instanceId, a.instanceId, "stable across service-worker restarts");
});

test("an invalid stored instance id is replaced", async () => {
  for (const bad of ["1A2B3C4D", "6f1d2c3e-0000-4000-8000-000000000000", 12345678, "abc"]) {
    const storage = new FakeStorage({ [KEYS.instanceId]: bad });
    const s = await createConfig({ storage, loadManaged: noManaged, newInstanceId: () => "0badc0de" }).load();
    assert.equal(s.instanceId, "0badc0de", String(bad));
    assert.equal(storage.data[KEYS.instanceId], "0badc0de");
  }
});

test("only a literal false disables the connection", async () => {
  for (const [stored, enabled] of [[false, false], ["false", true], [0, true], [null, true], [true, true]]) {
    const storage = new FakeStorage({ [KEYS.enabled]: stored });
    assert.equal((await createConfig({ storage, loadManaged: noManaged }).load()).enabled, enabled, String(stored));
  }
});

test("bad stored values fall back to defaults", async () => {
  const storage = new FakeStorage({ [KEYS.port]: "8080", [KEYS.label]: 7, [KEYS.secret]: "not hex", [KEYS.pendingCode]: "  " });
  const s = await createConfig({ storage, loadManaged: noManaged }).load();
  assert.deepEqual([s.port, s.label, s.secret, s.pendingCode], [52830, "", null, null]);
});

test("managed config: port overrides, label fills an empty one, code and token exposed", async () => {
  const storage = new FakeStorage({ [KEYS.port]: 40000 });
  const managed = parseManagedConfig({ port: 41000, pairing_code: "ABCD-EFGH", launch_token: "tok", label: "managed" });
  const s = await createConfig({ storage, loadManaged: async () => managed }).load();
  assert.deepEqual(
    [s.port, s.label, s.managedCode, s.launchToken, s.managed],
    [41000, "managed", "ABCD-EFGH", "tok", true],
  );
  assert.equal(storage.data[KEYS.label], "managed");
});

test("managed label never overrides one the person chose", async () => {
  const storage = new FakeStorage({ [KEYS.label]: "Work" });
  const s = await createConfig({ storage, loadManaged: async () => parseManagedConfig({ label: "managed" }) }).load();
  assert.equal(s.label, "Work");
});

test("managed config parsing keeps only well-typed fields", () => {
  assert.equal(parseManagedConfig(null), null);
  assert.equal(parseManagedConfig([1]), null);
  assert.deepEqual(parseManagedConfig({ port: 70000, pairing_code: 5, launch_token: "", label: "x" }), {
    port: null,
    pairingCode: null,
    launchToken: null,
    label: "x",
  });
});

test("fetchManagedConfig: absent file, bad JSON and a good file", async () => {
  const runtime = { getURL: (p) => `chrome-extension://id/${p}` };
  assert.equal(await fetchManagedConfig(runtime, async () => { throw new TypeError("Failed to fetch"); }), null);
  assert.equal(await fetchManagedConfig(runtime, async () => ({ ok: false })), null);
  const badJson = async () => ({ ok: true, json: async () => { throw new SyntaxError("x"); } });
  const originalWarn = console.warn;
  console.warn = () => {};
  try {
    assert.equal(await fetchManagedConfig(runtime, badJson), null);
  } finally {
    console.warn = originalWarn;
  }
  let asked;
  const good = async (url) => {
    asked = url;
    return { ok: true, json: async () => ({ port: 1234 }) };
  };
  assert.equal((await fetchManagedConfig(runtime, good)).port, 1234);
  assert.equal(asked, "chrome-extension://id/tabpilot-config.json");
});

test("pairing stores the secret and forgets the code", async () => {
  const storage = new FakeStorage();
  const config = createConfig({ storage, loadManaged: noManaged });
  await config.setPendingCode("ABCDEFGH");
  assert.equal((await config.load()).pendingCode, "ABCDEFGH");
  await config.storeSecret("ab".repeat(32));
  const s = await config.load();
  assert.equal(s.secret, "ab".repeat(32));
  assert.equal(s.pendingCode, null);
});
