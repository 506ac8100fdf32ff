// @ts-check
// Bounds a pending call by the request's abort signal and a timeout, whichever comes first.
import { RpcError } from "./protocol.js";

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {{
 *   signal?: AbortSignal,
 *   timeoutMs?: number,
 *   onTimeout?: () => Error,
 *   timers?: {setTimeout: typeof setTimeout, clearTimeout: typeof clearTimeout},
 * }} options onTimeout builds the error thrown when time runs out
 * @returns {Promise<T>}
 */
export function withDeadline(promise, { signal, timeoutMs, onTimeout, timers = globalThis }) {
  return new Promise((resolve, reject) => {
    /** @type {any} */
    let timer = null;
    const onAbort = () => settle(() => reject(signal?.reason ?? new RpcError("cancelled", "request cancelled", "rpc_cancelled")));
    /** @param {() => void} fn */
    function settle(fn) {
      if (timer !== null) timers.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn();
    }
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs !== undefined) {
      timer = timers.setTimeout(() => {
        timer = null;
        settle(() => reject(onTimeout ? onTimeout() : new RpcError("timeout", `no answer within ${timeoutMs} ms`)));
      }, timeoutMs);
    }
    promise.then(
      (value) => settle(() => resolve(value)),
      (err) => settle(() => reject(err)),
    );
  });
}
