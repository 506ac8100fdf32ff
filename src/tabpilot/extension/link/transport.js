// @ts-check
// The WebSocket to the daemon: one socket at a time, JSON frames in and out, reconnect with backoff.
// It knows nothing about methods or authentication; connection.js does.

/** Delays before reconnect attempts 1, 2, 3, 4 and every later one (docs/protocol.md §3). */
export const BACKOFF_MS = Object.freeze([500, 1000, 2000, 4000, 5000]);
const JITTER = 0.1;
const CONNECT_TIMEOUT_MS = 10_000;
const NORMAL_CLOSURE = 1000;

/**
 * @typedef {{setTimeout: (fn: () => void, ms: number) => any, clearTimeout: (handle: any) => void}} Timers
 * @typedef {{onOpen?: () => void, onFrame?: (frame: unknown) => void, onClose?: (info: {code: number, reason: string}) => void}} TransportListener
 */

/**
 * @param {number} attempt 0-based count of reconnects since the last successful authentication
 * @param {() => number} random
 */
export function backoffDelay(attempt, random = Math.random) {
  const base = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)];
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * @param {{
 *   url: () => string,
 *   WebSocketImpl?: typeof WebSocket,
 *   timers?: Timers,
 *   random?: () => number,
 *   log?: Pick<Console, "info" | "warn">,
 *   connectTimeoutMs?: number,
 * }} deps
 */
export function createTransport({
  url,
  WebSocketImpl = globalThis.WebSocket,
  timers = globalThis,
  random = Math.random,
  log = console,
  connectTimeoutMs = CONNECT_TIMEOUT_MS,
}) {
  /** @type {WebSocket | null} */
  let socket = null;
  let opened = false;
  let wanted = false;
  let attempt = 0;
  /** @type {any} */
  let retryTimer = null;
  /** @type {any} */
  let connectTimer = null;
  /** @type {Set<TransportListener>} */
  const listeners = new Set();

  /** @param {keyof TransportListener} name @param {any} [arg] */
  function emit(name, arg) {
    for (const l of [...listeners]) {
      try {
        l[name]?.(arg);
      } catch (err) {
        log.warn(`tabpilot transport: ${name} listener failed`, err);
      }
    }
  }

  function dial() {
    let ws;
    try {
      ws = new WebSocketImpl(url());
    } catch (err) {
      log.warn("tabpilot transport: cannot open WebSocket", err);
      scheduleRetry();
      return;
    }
    socket = ws;
    opened = false;
    // A listener that accepts TCP but never answers the upgrade would otherwise hold us forever.
    connectTimer = timers.setTimeout(() => {
      if (socket === ws && !opened) close(ws, "connect timeout");
    }, connectTimeoutMs);
    ws.onopen = () => {
      if (socket !== ws) return;
      opened = true;
      timers.clearTimeout(connectTimer);
      emit("onOpen");
    };
    ws.onmessage = (event) => {
      if (socket !== ws) return;
      let frame;
      try {
        frame = JSON.parse(typeof event.data === "string" ? event.data : "");
      } catch {
        log.warn("tabpilot transport: dropped a non-JSON message");
        return;
      }
      emit("onFrame", frame);
    };
    ws.onclose = (event) => {
      if (socket === ws) finish(event.code, event.reason);
    };
    ws.onerror = () => {}; // always followed by close, which carries what we need
  }

  /** @param {number} code @param {string} reason */
  function finish(code, reason) {
    socket = null;
    opened = false;
    timers.clearTimeout(connectTimer);
    emit("onClose", { code, reason });
    if (wanted) scheduleRetry();
  }

  /** @param {WebSocket} ws @param {string} reason */
  function close(ws, reason) {
    ws.onopen = ws.onmessage = ws.onclose = null;
    try {
      ws.close(NORMAL_CLOSURE, reason.slice(0, 120));
    } catch {
      // already closing
    }
    finish(NORMAL_CLOSURE, reason);
  }

  function scheduleRetry() {
    if (retryTimer !== null) return;
    const delay = backoffDelay(attempt++, random);
    retryTimer = timers.setTimeout(() => {
      retryTimer = null;
      if (wanted && socket === null) dial();
    }, delay);
  }

  return {
    /** "idle" (no socket, maybe a retry pending), "dialing" or "open". */
    get state() {
      if (socket === null) return "idle";
      return opened ? "open" : "dialing";
    },

    /** Start (or keep) connecting. Single flight: never a second socket while one exists. */
    connect() {
      wanted = true;
      if (socket !== null) return;
      if (retryTimer !== null) {
        timers.clearTimeout(retryTimer);
        retryTimer = null;
      }
      dial();
    },

    /** Close the current socket and stop reconnecting. */
    disconnect(reason = "disconnect") {
      wanted = false;
      if (retryTimer !== null) {
        timers.clearTimeout(retryTimer);
        retryTimer = null;
      }
      if (socket !== null) close(socket, reason);
    },

    /** Close the current socket; the backoff schedule reconnects. */
    drop(reason = "drop") {
      if (socket !== null) close(socket, reason);
    },

    /** After a successful authentication the next outage starts again at the shortest delay. */
    resetBackoff() {
      attempt = 0;
    },

    /** @param {unknown} frame @returns {boolean} whether it was handed to an open socket */
    send(frame) {
      if (socket === null || !opened) return false;
      try {
        socket.send(JSON.stringify(frame));
        return true;
      } catch (err) {
        log.warn("tabpilot transport: send failed", err);
        return false;
      }
    },

    /** @param {TransportListener} listener @returns {() => void} unsubscribe */
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
