// @ts-check
// Where a request's time goes inside the worker, for the bench (bench/latency.py) and nobody else. Off
// unless a debugger of the worker sets `globalThis.tabpilotTimings` to an array: then each request
// appends {method, session_id, ms, marks} (ms since it came in; a mark keeps its first time), so the
// normal path pays one property read a request.

/** Records kept at most: a bench that forgets to read them does not grow the worker for ever. */
const MAX_RECORDS = 10000;

/**
 * @typedef {{method: string, session_id: string | null, ms: number, marks: Record<string, number>}} TimingRecord
 * @typedef {{mark(name: string): void, end(): void}} Timer
 */

/** @param {number} ms */
const round = (ms) => Math.round(ms * 1000) / 1000;

/**
 * A timer for one request, or null when nobody asked for timings.
 * @param {string} method @param {Record<string, any>} params
 * @returns {Timer | null}
 */
export function startTimer(method, params) {
  const log = /** @type {any} */ (globalThis).tabpilotTimings;
  if (!Array.isArray(log)) return null;
  const start = performance.now();
  /** @type {Record<string, number>} */
  const marks = {};
  return {
    mark(name) {
      marks[name] ??= round(performance.now() - start);
    },
    end() {
      const sessionId = typeof params.session_id === "string" ? params.session_id : null;
      log.push(/** @type {TimingRecord} */ ({ method, session_id: sessionId, ms: round(performance.now() - start), marks }));
      if (log.length > MAX_RECORDS) log.splice(0, log.length - MAX_RECORDS);
    },
  };
}
