// @ts-check
// Routes daemon requests to the handlers it is given (the table is tools/index.js): one
// AbortController per request, the cancel fast path, and exactly one response per request.
import { RpcError, classify, response, errorResponse, progress } from "./protocol.js";
import { startTimer } from "./timings.js";

/**
 * @typedef {{signal: AbortSignal, progress: (payload: Record<string, unknown>) => void} & Record<string, any>} HandlerContext
 *   progress: tell the daemon the request still runs (e.g. the person is being asked), with how long
 *   it may yet take (`deadline_ms`), so neither it nor the CLI gives up on it meanwhile
 * @typedef {(params: Record<string, any>, ctx: HandlerContext) => unknown} Handler
 */

function cancelledError(/** @type {string} */ why) {
  return new RpcError("cancelled", why, "rpc_cancelled");
}

/**
 * @param {unknown} err
 * @param {AbortSignal} signal
 */
function toRpcError(err, signal) {
  if (err instanceof RpcError) return err;
  if (signal.aborted) {
    return signal.reason instanceof RpcError ? signal.reason : cancelledError("request cancelled");
  }
  const message = err instanceof Error ? err.message : String(err);
  return new RpcError("protocol_error", message || "handler failed");
}

/**
 * @param {{handlers: Readonly<Record<string, Handler>>, context: Record<string, any>, log?: Pick<Console, "warn">,
 *          onRequest?: (method: string, params: Record<string, any>) => void}} deps
 *   onRequest: sees each request before its handler runs (a tool call for a session means the daemon let it run)
 */
export function createDispatcher({ handlers, context, log = console, onRequest = () => {} }) {
  /** @type {Map<string, {controller: AbortController, sessionId: unknown}>} */
  const inflight = new Map();
  let authenticated = false;

  /**
   * @param {string} id
   * @param {string} method
   * @param {Handler} handler
   * @param {Record<string, any>} params
   * @param {(frame: unknown) => void} send
   */
  async function run(id, method, handler, params, send) {
    const timer = startTimer(method, params);
    const controller = new AbortController();
    inflight.set(id, { controller, sessionId: params.session_id });
    const { signal } = controller;
    /** Run when the request is over, however it ended (e.g. take the input shield down). @type {((end: {ok: boolean}) => void)[]} */
    const atEnd = [];
    let ok = false;
    // Handlers compensate on abort themselves (close the window they opened, stop loading …);
    // racing here makes even a slow handler answer `cancelled` promptly.
    const aborted = new Promise((_, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    try {
      const ctx = {
        ...context,
        signal,
        method,
        atEnd: (/** @type {(end: {ok: boolean}) => void} */ fn) => void atEnd.push(fn),
        progress: (/** @type {Record<string, unknown>} */ payload) => {
          if (!signal.aborted) send(progress(id, payload));
        },
        // Only while the bench reads timings: handlers call ctx.mark?.(phase).
        mark: timer?.mark,
      };
      const result = await Promise.race([Promise.resolve().then(() => handler(params, ctx)), aborted]);
      send(response(id, result ?? null));
      ok = true;
    } catch (err) {
      const rpcError = toRpcError(err, signal);
      if (rpcError.code === "protocol_error") log.warn(`tabpilot: ${id} failed`, err);
      send(errorResponse(id, rpcError));
    } finally {
      timer?.mark("answered");
      inflight.delete(id);
      for (const fn of atEnd) {
        try {
          fn({ ok });
        } catch (err) {
          log.warn(`tabpilot: cleaning up after ${id} failed`, err);
        }
      }
      timer?.end();
    }
  }

  return {
    /** Opened by the connection controller once system.authenticate succeeded, closed on disconnect. */
    setAuthenticated(/** @type {boolean} */ value) {
      authenticated = value;
      if (!value) this.abortAll("connection closed");
    },

    /** Abort every in-flight request (their answers can no longer reach the daemon). */
    abortAll(why = "connection closed") {
      for (const { controller } of inflight.values()) controller.abort(cancelledError(why));
    },

    /** Abort the in-flight requests of one session with `error` (the person pressed Stop). @param {string} sessionId @param {RpcError} error */
    abortSession(sessionId, error) {
      for (const { controller, sessionId: owner } of inflight.values()) if (owner === sessionId) controller.abort(error);
    },

    /**
     * Handle one inbound frame. Returns false when the frame is not a request.
     * @param {unknown} frame
     * @param {(frame: unknown) => void} send bound to the socket the request came from
     */
    handle(frame, send) {
      if (classify(frame) !== "request") return false;
      const { id, method, params: rawParams } = /** @type {{id: string, method: string, params?: Record<string, any>}} */ (frame);
      if (!authenticated) {
        log.warn(`tabpilot: dropped ${method} received before authentication`);
        return true;
      }
      const params = rawParams ?? {};
      if (method === "cancel") {
        const target = typeof params.rpc_id === "string" ? inflight.get(params.rpc_id) : undefined;
        // Ack first: the cancelled request answers on a later microtask.
        send(response(id, { cancelled: target !== undefined }));
        target?.controller.abort(cancelledError("cancelled by the daemon"));
        return true;
      }
      if (inflight.has(id)) {
        send(errorResponse(id, new RpcError("protocol_error", `request id ${id} is already in flight`, "duplicate_rpc_id")));
        return true;
      }
      const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
      if (handler === undefined) {
        send(errorResponse(id, new RpcError("unknown_method", `${method} is not implemented by this extension`)));
        return true;
      }
      onRequest(method, params);
      void run(id, method, handler, params, send);
      return true;
    },
  };
}
