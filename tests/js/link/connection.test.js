// Connection controller: handshake, mutual authentication, pairing, gating, liveness.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createConnection } from "../../../src/tabpilot/extension/link/connection.js";
import { createTransport } from "../../../src/tabpilot/extension/link/transport.js";
import { createConfig, KEYS } from "../../../src/tabpilot/extension/link/config.js";
import { createDispatcher } from "../../../src/tabpilot/extension/link/dispatcher.js";
import * as auth from "../../../src/tabpilot/extension/link/auth.js";
import { FakeStorage } from "../helpers/fake-storage.js";
import { FakeTimers } from "../helpers/fake-timers.js";
import { fakeWebSocketClass } from "../helpers/fake-websocket.js";
import { waitFor, settle } from "../helpers/wait.js";

const quiet = { info() {}, warn() {} };
const SECRET = "5f".repeat(32);
const INSTANCE = "1a2b3c4d";
const CODE = "ABCD-EFGH";

/**
 * A daemon that answers the handshake like docs/protocol.md §2 says, with proofs from auth.js.
 * options.refuse: an error object for system.handshake; options.badProof; options.protocol.
 */
function fakeDaemon(options = {}) {
  const log = [];
  return {
    log,
    async answer(ws, frame) {
      log.push(frame);
      if (frame.method === "system.handshake") {
        if (options.silent) return;
        if (options.refuse) return ws.receive({ id: frame.id, error: options.refuse });
        const p = frame.params;
        const secret = p.auth.mode === "pair" ? await auth.pairingSecret(CODE, p.instance_id, p.auth.nonce) : SECRET;
        if (p.auth.mode === "pair") {
          const expected = await auth.pairingCodeProof(CODE, p.instance_id, p.auth.nonce);
          if (expected !== p.auth.code_proof) {
            return ws.receive({ id: frame.id, error: { code: "auth_failed", message: "wrong pairing code", data: { reason: "wrong_pairing_code" } } });
          }
        }
        const daemonNonce = auth.newNonce();
        this.expectedExtProof = await auth.extensionProof(secret, p.instance_id, p.auth.nonce, daemonNonce);
        const proof = options.badProof ? "0".repeat(64) : await auth.daemonProof(secret, p.instance_id, p.auth.nonce, daemonNonce);
        options.beforeHello?.(ws);
        ws.receive({
          id: frame.id,
          result: {
            server: "tabpilot-daemon",
            version: "0.1.0",
            protocol_version: options.protocol ?? "1.0",
            min_compatible_protocol: "1.0",
            verdict: "connected",
            auth: { nonce: daemonNonce, proof },
          },
        });
      } else if (frame.method === "system.authenticate") {
        if (frame.params.proof !== this.expectedExtProof) {
          return ws.receive({ id: frame.id, error: { code: "auth_failed", message: "bad proof", data: { reason: "bad_proof" } } });
        }
        ws.receive({ id: frame.id, result: { authenticated: true, paired: false, instance_id: INSTANCE } });
        options.afterAuth?.(ws);
      }
    },
  };
}

function setup({ stored = {}, managed = null, daemon = fakeDaemon(), handlers } = {}) {
  const timers = new FakeTimers();
  const storage = new FakeStorage({ [KEYS.instanceId]: INSTANCE, ...stored });
  const config = createConfig({ storage, loadManaged: async () => managed });
  const { FakeWebSocket, sockets } = fakeWebSocketClass();
  // Every frame the extension sends reaches the fake daemon asynchronously, like a real socket.
  const originalSend = FakeWebSocket.prototype.send;
  FakeWebSocket.prototype.send = function (data) {
    originalSend.call(this, data);
    const frame = JSON.parse(data);
    setImmediate(() => daemon.answer(this, frame));
  };
  let connection;
  const transport = createTransport({ url: () => connection.url(), WebSocketImpl: FakeWebSocket, timers, log: quiet, random: () => 0.5 });
  const dispatcher = createDispatcher({ handlers: handlers ?? { "system.ping": () => ({}) }, context: {}, log: quiet });
  connection = createConnection({
    transport,
    config,
    dispatcher,
    sessionIds: async () => ["default"],
    extensionVersion: "0.1.0",
    browser: { name: "chromium", version: "156.0.0.0" },
    timers,
    log: quiet,
  });
  /** Start, open the first socket, and wait until the state leaves "connecting". */
  async function connect() {
    await connection.start();
    await waitFor(() => sockets.length === 1, "a socket");
    sockets[0].open();
    await waitFor(() => !["connecting"].includes(connection.status().state), "a handshake verdict");
  }
  return { timers, storage, sockets, transport, connection, daemon, connect };
}

test("a good daemon proof connects; the handshake carries what the daemon needs", async () => {
  const { connection, daemon, sockets, connect } = setup({ stored: { [KEYS.secret]: SECRET, [KEYS.label]: "Work" } });
  await connect();
  assert.equal(connection.status().state, "connected");
  assert.equal(connection.status().daemonVersion, "0.1.0");
  assert.equal(connection.status().lastError, null);
  const [hello, authenticate] = daemon.log;
  assert.match(hello.id, /^hs-[0-9a-z]{8}$/);
  assert.equal(hello.method, "system.handshake");
  const p = hello.params;
  assert.deepEqual(
    [p.client, p.version, p.protocol_version, p.min_compatible_protocol, p.instance_id, p.label, p.session_ids, p.auth.mode],
    ["tabpilot-extension", "0.1.0", "1.0", "1.0", INSTANCE, "Work", ["default"], "secret"],
  );
  assert.match(p.auth.nonce, /^[0-9a-f]{32}$/);
  assert.equal("code_proof" in p.auth, false);
  assert.equal("launch_token" in p, false);
  assert.deepEqual(p.browser, { name: "chromium", version: "156.0.0.0" });
  assert.equal(authenticate.method, "system.authenticate");
  assert.equal(sockets[0].url, "ws://127.0.0.1:52830");
  assert.equal(sockets[0].closed, null);
});

test("a wrong daemon proof: auth_failed, socket closed, never authenticated", async () => {
  const { connection, daemon, sockets, connect, timers } = setup({ stored: { [KEYS.secret]: SECRET }, daemon: fakeDaemon({ badProof: true }) });
  await connect();
  assert.equal(connection.status().state, "auth_failed");
  assert.match(connection.status().lastError, /not the daemon this browser paired with/);
  assert.ok(sockets[0].closed, "socket closed");
  assert.deepEqual(daemon.log.map((f) => f.method), ["system.handshake"]);
  // It keeps trying on the normal schedule and stays in auth_failed meanwhile.
  timers.advance(500);
  assert.equal(sockets.length, 2);
  assert.equal(connection.status().state, "auth_failed");
});

test("pairing_required: not_paired, and the normal retry schedule continues", async () => {
  const refuse = { code: "pairing_required", message: "not paired", data: { reason: "not_paired" } };
  const { connection, sockets, connect, timers } = setup({ stored: { [KEYS.secret]: SECRET }, daemon: fakeDaemon({ refuse }) });
  await connect();
  assert.equal(connection.status().state, "not_paired");
  assert.ok(sockets[0].closed);
  assert.deepEqual(timers.delays(), [500]);
});

test("no secret and no code: not_paired without opening a socket", async () => {
  const { connection, sockets } = setup();
  await connection.start();
  await settle();
  assert.equal(connection.status().state, "not_paired");
  assert.equal(sockets.length, 0);
  await connection.ensureConnected();
  assert.equal(sockets.length, 0, "the keepalive does not dial either");
});

test("a compatible newer daemon is version_skew; an incompatible one is refused and closed", async () => {
  const skew = setup({ stored: { [KEYS.secret]: SECRET }, daemon: fakeDaemon({ protocol: "1.1" }) });
  await skew.connect();
  assert.equal(skew.connection.status().state, "version_skew");

  const old = setup({ stored: { [KEYS.secret]: SECRET }, daemon: fakeDaemon({ protocol: "2.0" }) });
  await old.connect();
  assert.equal(old.connection.status().state, "disconnected");
  assert.match(old.connection.status().lastError, /^version_too_old: protocol-major mismatch/);
  assert.ok(old.sockets[0].closed);
  assert.deepEqual(old.daemon.log.map((f) => f.method), ["system.handshake"]);
});

test("pair mode with a popup code stores the derived secret and forgets the code", async () => {
  const { connection, daemon, storage, connect } = setup({ stored: { [KEYS.pendingCode]: "abcd efgh" } });
  await connect();
  assert.equal(connection.status().state, "connected");
  const p = daemon.log[0].params;
  assert.equal(p.auth.mode, "pair");
  assert.equal(p.auth.code_proof, await auth.pairingCodeProof(CODE, INSTANCE, p.auth.nonce));
  assert.equal(storage.data[KEYS.secret], await auth.pairingSecret(CODE, INSTANCE, p.auth.nonce));
  assert.equal(KEYS.pendingCode in storage.data, false);
  assert.equal(connection.status().paired, true);
});

test("managed config: its code pairs, its launch token and port are used", async () => {
  const managed = { port: 41234, pairingCode: CODE, launchToken: "tok", label: "managed" };
  const { connection, daemon, sockets, storage, connect } = setup({ managed });
  await connect();
  assert.equal(connection.status().state, "connected");
  assert.equal(sockets[0].url, "ws://127.0.0.1:41234");
  assert.equal(daemon.log[0].params.launch_token, "tok");
  assert.equal(daemon.log[0].params.label, "managed");
  assert.ok(storage.data[KEYS.secret]);
});

test("a refused pairing code is forgotten and not retried", async () => {
  const { connection, storage, sockets, timers, connect } = setup({ stored: { [KEYS.pendingCode]: "ZZZZ-ZZZZ" } });
  await connect();
  await waitFor(() => !(KEYS.pendingCode in storage.data), "the code to be cleared");
  assert.equal(connection.status().state, "auth_failed");
  assert.match(connection.status().lastError, /refused the pairing code/);
  timers.advance(60_000);
  assert.equal(sockets.length, 1, "no retry with nothing left to try");
});

test("the handshake times out after 10 s and the socket is closed", async () => {
  const { connection, sockets, timers } = setup({ stored: { [KEYS.secret]: SECRET }, daemon: fakeDaemon({ silent: true }) });
  await connection.start();
  await waitFor(() => sockets.length === 1, "a socket");
  sockets[0].open();
  await waitFor(() => sockets[0].sent.length === 1, "the handshake frame");
  timers.advance(10_000);
  assert.equal(connection.status().state, "disconnected");
  assert.match(connection.status().lastError, /handshake/);
  assert.ok(sockets[0].closed);
});

test("requests are not executed before authentication, and pings are answered after", async () => {
  let executed = 0;
  const handlers = { "system.ping": () => ({}), "tool.x": () => ++executed };
  const daemon = fakeDaemon({
    // A hostile peer slips a request in before the handshake answer.
    beforeHello: (ws) => ws.receive({ id: "d-0", method: "tool.x", params: {} }),
  });
  const { connection, sockets, connect } = setup({ stored: { [KEYS.secret]: SECRET }, daemon, handlers });
  await connect();
  assert.equal(connection.status().state, "connected");
  assert.equal(executed, 0);
  assert.equal(sockets[0].sent.some((f) => f.id === "d-0"), false, "not even answered");
  sockets[0].receive({ id: "d-1", method: "system.ping", params: {} });
  await waitFor(() => sockets[0].sent.some((f) => f.id === "d-1"), "the pong");
  assert.deepEqual(sockets[0].sent.find((f) => f.id === "d-1"), { id: "d-1", result: {} });
});

test("a daemon silent for 60 s is dropped and reconnected; traffic keeps it alive", async () => {
  const { connection, sockets, timers, connect } = setup({ stored: { [KEYS.secret]: SECRET } });
  await connect();
  timers.advance(50_000);
  sockets[0].receive({ event: "anything", payload: {} });
  timers.advance(50_000);
  assert.equal(sockets[0].closed, null, "a frame reset the watch");
  timers.advance(10_000);
  assert.ok(sockets[0].closed);
  assert.equal(connection.status().state, "disconnected");
  timers.advance(500);
  assert.equal(sockets.length, 2);
});

test("a label change is announced while connected", async () => {
  const { connection, sockets, storage, connect } = setup({ stored: { [KEYS.secret]: SECRET } });
  await connect();
  await connection.setLabel("Home");
  assert.equal(storage.data[KEYS.label], "Home");
  assert.deepEqual(sockets[0].sent.at(-1), { event: "browser.label_changed", payload: { label: "Home" } });
});

test("switching off closes the socket and stops reconnecting; on connects again", async () => {
  const { connection, sockets, timers, storage, connect } = setup({ stored: { [KEYS.secret]: SECRET } });
  await connect();
  await connection.setEnabled(false);
  assert.equal(connection.status().state, "off");
  assert.equal(storage.data[KEYS.enabled], false);
  assert.ok(sockets[0].closed);
  timers.advance(60_000);
  await connection.ensureConnected();
  assert.equal(sockets.length, 1);
  await connection.setEnabled(true);
  assert.equal(connection.status().state, "connecting");
  assert.equal(sockets.length, 2);
});

test("events for the daemon are dropped unless authenticated", async () => {
  const { connection, sockets, connect } = setup({ stored: { [KEYS.secret]: SECRET } });
  connection.emit("session.window_closed", { session_id: "s", reason: "user_closed_window" });
  await connect();
  connection.emit("session.window_closed", { session_id: "s", reason: "user_closed_window" });
  const events = sockets[0].sent.filter((f) => f.event);
  assert.equal(events.length, 1);
});

test("a refused code over an existing pairing falls back to it and says so", async () => {
  const { connection, sockets, storage, timers, connect } = setup({ stored: { [KEYS.secret]: SECRET, [KEYS.pendingCode]: "ZZZZ-ZZZZ" } });
  await connect();
  await waitFor(() => connection.status().state === "auth_failed", "the refusal");
  assert.equal(KEYS.pendingCode in storage.data, false);
  timers.advance(500);
  sockets[1].open();
  await waitFor(() => connection.status().state === "connected", "the fallback connection");
  assert.match(connection.status().lastError, /refused the pairing code.*Still connected with the earlier pairing/);
  assert.equal(storage.data[KEYS.secret], SECRET);
});

test("a daemon that forgot our secret: the managed code pairs again", async () => {
  // The managed profile outlived the daemon's state: the old secret is refused, the config's code works.
  let refusedOnce = false;
  const inner = fakeDaemon();
  const daemon = {
    log: inner.log,
    async answer(ws, frame) {
      if (frame.method === "system.handshake" && frame.params.auth.mode === "secret" && !refusedOnce) {
        refusedOnce = true;
        inner.log.push(frame);
        return ws.receive({ id: frame.id, error: { code: "pairing_required", message: "not paired", data: { reason: "not_paired" } } });
      }
      return inner.answer.call(inner, ws, frame);
    },
  };
  const { connection, sockets, timers, storage, connect } = setup({
    stored: { [KEYS.secret]: "ab".repeat(32) },
    managed: { port: 52830, pairingCode: CODE, launchToken: "tok", label: "managed" },
    daemon,
  });
  await connect();
  assert.equal(connection.status().state, "not_paired");
  timers.advance(1000);
  await waitFor(() => sockets.length === 2, "a second socket");
  sockets[1].open();
  await waitFor(() => connection.status().state === "connected", "connected with the managed code");
  const modes = daemon.log.filter((f) => f.method === "system.handshake").map((f) => f.params.auth.mode);
  assert.deepEqual(modes, ["secret", "pair"]);
  const expected = await auth.pairingSecret(CODE, INSTANCE, daemon.log.filter((f) => f.method === "system.handshake")[1].params.auth.nonce);
  assert.equal(await storage.get(KEYS.secret).then((v) => v[KEYS.secret]), expected);
});

test("a request sent right after the authenticate reply is served, even while a new pairing is stored", async () => {
  // The daemon registers the browser as soon as it has answered; its first request can follow at once.
  const daemon = fakeDaemon({
    afterAuth: (ws) => setImmediate(() => ws.receive({ id: "d-1", method: "system.ping", params: {} })),
  });
  const { connection, sockets, storage, connect } = setup({ stored: { [KEYS.pendingCode]: CODE }, daemon });
  // chrome.storage is an IPC round trip: make storing the new secret take a while.
  const store = storage.set.bind(storage);
  storage.set = async (items) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return store(items);
  };
  await connect();
  assert.equal(connection.status().state, "connected");
  await waitFor(() => sockets[0].sent.some((f) => f.id === "d-1"), "the ping answered");
  assert.deepEqual(sockets[0].sent.find((f) => f.id === "d-1"), { id: "d-1", result: {} });
});

test("the side panel's requests go to the daemon only once authenticated; its chat events come back", async () => {
  const daemon = fakeDaemon();
  const answer = daemon.answer.bind(daemon);
  daemon.answer = async (ws, frame) => {
    if (frame.method === "chat.list") {
      daemon.log.push(frame);
      ws.receive({ event: "chat.event", payload: { conversation_id: "c-1", seq: 1, kind: "user" } });
      ws.receive({ event: "tool.unknown", payload: {} });
      return ws.receive({ id: frame.id, result: { conversations: [] } });
    }
    return answer(ws, frame);
  };
  const { connection, connect } = setup({ stored: { [KEYS.secret]: SECRET }, daemon });
  await assert.rejects(connection.request("chat.list", {}), { code: "daemon_unreachable" });
  await connect();
  const seen = [];
  connection.onEvent((name, payload) => seen.push([name, payload.seq]));
  await assert.rejects(connection.request("tool.click", {}), { code: "unknown_method" });
  assert.deepEqual(await connection.request("chat.list", {}), { conversations: [] });
  assert.deepEqual(seen, [["chat.event", 1]]);
  assert.ok(daemon.log.some((f) => f.method === "chat.list" && f.id.startsWith("x-")));
});
