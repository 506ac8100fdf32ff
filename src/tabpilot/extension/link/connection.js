// @ts-check
// The connection controller: runs the handshake and mutual authentication on every new socket
// (docs/protocol.md §2), opens the dispatcher only afterwards, watches the daemon's liveness and
// publishes the state the popup shows.
import {
  PROTOCOL_VERSION,
  MIN_COMPATIBLE_PROTOCOL,
  EXTENSION_CLIENT,
  HANDSHAKE_METHOD,
  AUTHENTICATE_METHOD,
  PANEL_METHODS,
  DAEMON_EVENTS,
  RpcError,
  classify,
  compatibilityVerdict,
  event as eventFrame,
  request,
} from "./protocol.js";
import * as auth from "./auth.js";

export const HANDSHAKE_TIMEOUT_MS = 10_000;
export const SILENCE_TIMEOUT_MS = 60_000;

/**
 * off: the person switched it off · connecting: first attempt after start or a change ·
 * connected / version_skew: authenticated · not_paired · auth_failed · disconnected.
 * @typedef {"off" | "connecting" | "connected" | "version_skew" | "not_paired" | "auth_failed" | "disconnected"} ConnectionState
 * @typedef {import("./config.js").Settings} Settings
 * @typedef {{mode: "secret", secret: string} | {mode: "pair", code: string, source: "popup" | "managed"}} Credentials
 */

/** Failure states that stay on display while we retry, until something succeeds. */
const STICKY = new Set(["not_paired", "auth_failed"]);

/** An error answer from the daemon (its codes are not ours to validate). */
class PeerError extends Error {
  /** @param {{code?: unknown, message?: unknown, data?: any}} error */
  constructor(error) {
    super(typeof error?.message === "string" ? error.message : "daemon refused");
    this.code = typeof error?.code === "string" ? error.code : "protocol_error";
    this.reason = typeof error?.data?.reason === "string" ? error.data.reason : undefined;
    this.data = error?.data ?? {};
  }
}

function randomId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => (b % 36).toString(36)).join("");
}

/**
 * @param {{
 *   transport: ReturnType<typeof import("./transport.js").createTransport>,
 *   config: ReturnType<typeof import("./config.js").createConfig>,
 *   dispatcher: ReturnType<typeof import("./dispatcher.js").createDispatcher>,
 *   sessionIds: () => Promise<string[]>,
 *   extensionVersion: string,
 *   browser: {name: string, version: string},
 *   timers?: {setTimeout: (fn: () => void, ms: number) => any, clearTimeout: (handle: any) => void},
 *   log?: Pick<Console, "info" | "warn">,
 *   handshakeTimeoutMs?: number,
 *   silenceTimeoutMs?: number,
 * }} deps
 */
export function createConnection({
  transport,
  config,
  dispatcher,
  sessionIds,
  extensionVersion,
  browser,
  timers = globalThis,
  log = console,
  handshakeTimeoutMs = HANDSHAKE_TIMEOUT_MS,
  silenceTimeoutMs = SILENCE_TIMEOUT_MS,
}) {
  /** @type {ConnectionState} */
  let state = "connecting";
  /** @type {string | null} */
  let lastError = null;
  /** @type {string | null} */
  let daemonVersion = null;
  /** @type {Settings | null} */
  let settings = null;
  let authenticated = false;
  /** Bumped for every socket, so late answers of an old one are ignored. */
  let generation = 0;
  /** A managed pairing code the daemon refused is not offered again until the worker restarts. */
  let managedCodeRefused = false;
  /** The daemon no longer knows our secret (its state was reset): a managed code may pair afresh. */
  let secretRefused = false;
  /** Shown once we are connected again with the earlier secret, so a refused code is not silent. */
  /** @type {string | null} */
  let refusedCodeNote = null;
  /** @type {Map<string, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const pending = new Map();
  /** @type {any} */
  let silenceTimer = null;
  /** @type {Set<() => void>} */
  const listeners = new Set();
  /** @type {Set<(name: string, payload: Record<string, any>) => void>} */
  const eventListeners = new Set();

  function notify() {
    for (const fn of [...listeners]) fn();
  }

  /** @param {ConnectionState} next @param {string | null} [error] */
  function setState(next, error = lastError) {
    if (next === state && error === lastError) return;
    state = next;
    lastError = error;
    notify();
  }

  /** @param {Settings} s @returns {Credentials | null} */
  function credentialsOf(s) {
    // A code typed in the popup means "pair again", even over an existing secret.
    if (s.pendingCode && auth.normalizeCode(s.pendingCode)) return { mode: "pair", code: s.pendingCode, source: "popup" };
    /** @type {Credentials | null} */
    const managed =
      s.managedCode && !managedCodeRefused && auth.normalizeCode(s.managedCode)
        ? { mode: "pair", code: s.managedCode, source: "managed" }
        : null;
    if (s.secret && !(secretRefused && managed)) return { mode: "secret", secret: s.secret };
    return managed;
  }

  async function reload() {
    settings = await config.load();
    notify();
    return settings;
  }

  function url() {
    return `ws://127.0.0.1:${settings?.port}`;
  }

  /** @param {string} method @param {Record<string, unknown>} params @param {string} prefix */
  function call(method, params, prefix) {
    const id = `${prefix}-${randomId()}`;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      if (!transport.send(request(id, method, params))) {
        pending.delete(id);
        reject(new Error("the socket to the daemon closed"));
      }
    });
  }

  function armSilenceWatch() {
    timers.clearTimeout(silenceTimer);
    silenceTimer = timers.setTimeout(() => {
      log.warn("tabpilot: the daemon went silent; reconnecting");
      setState("disconnected", `no message from the daemon for ${Math.round(silenceTimeoutMs / 1000)} s`);
      transport.drop("daemon silent");
    }, silenceTimeoutMs);
  }

  /**
   * End a handshake that failed. retry=false stops reconnecting: there is nothing new to try
   * until the person pairs (the popup and the keepalive alarm start us again).
   * @param {ConnectionState} next
   * @param {string} error
   * @param {boolean} retry
   */
  function fail(next, error, retry) {
    log.warn(`tabpilot: ${next}: ${error}`);
    setState(next, error);
    if (retry) transport.drop(next);
    else transport.disconnect(next);
  }

  /** @param {PeerError} err @param {Credentials} creds */
  async function onRefused(err, creds) {
    if (err.code === "pairing_required") {
      if (creds.mode === "secret") secretRefused = true;
      fail("not_paired", "This browser is not paired with the daemon: run `tabpilot pair` and enter the code.", true);
      return;
    }
    if (err.code === "auth_failed" && err.reason === "wrong_pairing_code" && creds.mode === "pair") {
      // Never retry a refused code: five failures lock pairing on the daemon for a minute.
      if (creds.source === "popup") await config.clearPendingCode();
      else managedCodeRefused = true;
      const next = await reload();
      const message = "The daemon refused the pairing code (wrong or expired): run `tabpilot pair` for a new one.";
      const fallback = credentialsOf(next) !== null;
      if (fallback) refusedCodeNote = `${message} Still connected with the earlier pairing.`;
      fail("auth_failed", message, fallback);
      return;
    }
    if (err.code === "auth_failed") {
      const wait = err.data?.retry_after_s ? ` (retry in ${err.data.retry_after_s} s)` : "";
      fail("auth_failed", `${err.message}${wait}`, true);
      return;
    }
    fail("disconnected", `${err.code}: ${err.message}`, true);
  }

  async function handshake() {
    const gen = ++generation;
    const current = () => gen === generation;
    const s = await reload();
    const creds = credentialsOf(s);
    if (!current()) return;
    if (creds === null) {
      fail("not_paired", "Not paired yet: run `tabpilot pair` and enter the code shown.", false);
      return;
    }
    const extNonce = auth.newNonce();
    const timeout = timers.setTimeout(() => {
      if (current() && !authenticated) fail("disconnected", "the daemon did not complete the handshake within 10 s", true);
    }, handshakeTimeoutMs);
    try {
      /** @type {Record<string, unknown>} */
      const authBlock = { mode: creds.mode, nonce: extNonce };
      if (creds.mode === "pair") authBlock.code_proof = await auth.pairingCodeProof(creds.code, s.instanceId, extNonce);
      /** @type {Record<string, unknown>} */
      const params = {
        client: EXTENSION_CLIENT,
        version: extensionVersion,
        protocol_version: PROTOCOL_VERSION,
        min_compatible_protocol: MIN_COMPATIBLE_PROTOCOL,
        instance_id: s.instanceId,
        browser,
        label: s.label,
        session_ids: await sessionIds(),
        auth: authBlock,
      };
      if (s.launchToken) params.launch_token = s.launchToken;
      if (!current()) return;
      const hello = await call(HANDSHAKE_METHOD, params, "hs");
      if (!current()) return;

      const [verdict, why] = compatibilityVerdict(
        PROTOCOL_VERSION,
        MIN_COMPATIBLE_PROTOCOL,
        hello?.protocol_version,
        hello?.min_compatible_protocol,
      );
      if (verdict === "rejected") {
        fail("disconnected", `version_too_old: ${why}`, true);
        return;
      }
      const secret = creds.mode === "pair" ? await auth.pairingSecret(creds.code, s.instanceId, extNonce) : creds.secret;
      const daemonNonce = hello?.auth?.nonce;
      const expected = typeof daemonNonce === "string" ? await auth.daemonProof(secret, s.instanceId, extNonce, daemonNonce) : "";
      if (!current()) return;
      if (expected === "" || !auth.proofsEqual(expected, hello.auth.proof)) {
        // Whatever answers on this port cannot prove it holds our secret: never serve it.
        fail("auth_failed", `the program on port ${s.port} is not the daemon this browser paired with`, true);
        return;
      }
      const proof = await auth.extensionProof(secret, s.instanceId, extNonce, daemonNonce);
      await call(AUTHENTICATE_METHOD, { proof }, "au");
      if (!current()) return;
      // The daemon counts us as a browser from its reply on and may send a request at once:
      // open the gate before anything else is awaited.
      authenticated = true;
      secretRefused = false;
      daemonVersion = typeof hello.version === "string" ? hello.version : null;
      transport.resetBackoff();
      dispatcher.setAuthenticated(true);
      armSilenceWatch();
      if (creds.mode === "pair") {
        await config.storeSecret(secret);
        await reload();
      }
      if (!current()) return;
      setState(verdict, creds.mode === "secret" ? refusedCodeNote : null);
      refusedCodeNote = null;
      log.info(`tabpilot: ${verdict} to daemon ${daemonVersion ?? "?"} on port ${s.port}`);
    } catch (err) {
      if (!current()) return;
      if (err instanceof PeerError) await onRefused(err, creds);
      else fail("disconnected", `handshake failed: ${err instanceof Error ? err.message : err}`, true);
    } finally {
      timers.clearTimeout(timeout);
    }
  }

  /** @param {unknown} frame */
  function onFrame(frame) {
    if (authenticated) armSilenceWatch();
    const kind = classify(frame);
    if (kind === "response") {
      const f = /** @type {{id: string, result?: any, error?: any}} */ (frame);
      const waiter = pending.get(f.id);
      if (!waiter) return;
      pending.delete(f.id);
      if ("error" in f) waiter.reject(new PeerError(f.error));
      else waiter.resolve(f.result);
      return;
    }
    if (kind === "event") {
      const f = /** @type {{event: string, payload?: Record<string, any>}} */ (frame);
      if (authenticated && DAEMON_EVENTS.has(f.event)) for (const fn of [...eventListeners]) fn(f.event, f.payload ?? {});
      return;
    }
    if (kind === "request") {
      const gen = generation;
      // Answers go only to the socket the request came on: ids are unique per connection.
      dispatcher.handle(frame, (out) => {
        if (gen === generation && authenticated) transport.send(out);
      });
    }
  }

  function onClose() {
    generation++;
    authenticated = false;
    daemonVersion = null;
    timers.clearTimeout(silenceTimer);
    dispatcher.setAuthenticated(false);
    for (const waiter of pending.values()) waiter.reject(new Error("the socket to the daemon closed"));
    pending.clear();
    if (state === "connecting" || state === "connected" || state === "version_skew") setState("disconnected");
  }

  transport.subscribe({ onOpen: () => void handshake(), onFrame, onClose });

  /** Connect now if switched on, idle and holding something to authenticate with. */
  async function ensureConnected() {
    const s = await reload();
    if (!s.enabled) return;
    if (transport.state !== "idle") return;
    if (credentialsOf(s) === null) {
      if (!STICKY.has(state)) setState("not_paired", "Not paired yet: run `tabpilot pair` and enter the code shown.");
      return;
    }
    transport.connect();
  }

  /** A change the person made: show "connecting" and start over on a fresh socket. */
  async function restart() {
    transport.disconnect("settings changed");
    const s = await reload();
    if (!s.enabled) {
      setState("off", null);
      return;
    }
    setState("connecting", null);
    await ensureConnected();
  }

  return {
    url,
    start: restart,
    ensureConnected,

    /** @param {boolean} enabled */
    async setEnabled(enabled) {
      await config.setEnabled(enabled);
      await restart();
    },

    /** @param {number} port */
    async setPort(port) {
      await config.setPort(port);
      await restart();
    },

    /** @param {string} code as typed; pairing starts on a fresh socket */
    async pair(code) {
      managedCodeRefused = false;
      refusedCodeNote = null;
      await config.setPendingCode(code);
      await restart();
    },

    /** @param {string} label */
    async setLabel(label) {
      await config.setLabel(label);
      await reload();
      if (authenticated) transport.send(eventFrame("browser.label_changed", { label }));
    },

    /**
     * Ask the daemon one of the side panel's methods (agent.list, chat.*); only once authenticated.
     * @param {string} method @param {Record<string, unknown>} params
     */
    request(method, params) {
      if (!PANEL_METHODS.has(method)) return Promise.reject(new RpcError("unknown_method", `the daemon serves no ${method} to the panel`));
      if (!authenticated) {
        return Promise.reject(new RpcError("daemon_unreachable", "tabpilot's daemon is not connected", "daemon_not_running", { hint: "Start it with `tabpilot daemon start`, and pair this browser." }));
      }
      return call(method, params, "x");
    },

    /** Events the daemon pushes (chat.event). @param {(name: string, payload: Record<string, any>) => void} fn @returns {() => void} */
    onEvent(fn) {
      eventListeners.add(fn);
      return () => eventListeners.delete(fn);
    },

    /** Push an event to the daemon; dropped when not authenticated (the next handshake resyncs). */
    emit(/** @type {string} */ name, /** @type {Record<string, unknown>} */ payload) {
      if (authenticated) transport.send(eventFrame(name, payload));
    },

    status() {
      return {
        state,
        lastError,
        instanceId: settings?.instanceId ?? "",
        label: settings?.label ?? "",
        port: settings?.port ?? null,
        enabled: settings?.enabled ?? true,
        paired: Boolean(settings?.secret),
        managed: settings?.managed ?? false,
        extensionVersion,
        daemonVersion,
      };
    },

    /** @param {() => void} fn @returns {() => void} */
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
