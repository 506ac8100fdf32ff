// @ts-check
// Validation of tool params; every failure is invalid_params naming the param.
import { RpcError, WAIT_UNTIL } from "./protocol.js";

export const DEFAULT_TIMEOUT_MS = 30_000;

/** @param {string} message */
function invalid(message) {
  return new RpcError("invalid_params", message);
}

/** @param {Record<string, unknown>} params @param {string} name */
export function requireString(params, name) {
  const value = params[name];
  if (typeof value !== "string" || value === "") throw invalid(`${name} must be a non-empty string`);
  return value;
}

/** @param {Record<string, unknown>} params */
export function sessionIdOf(params) {
  return requireString(params, "session_id");
}

/** @param {Record<string, unknown>} params @param {string} name */
function tabIdIn(params, name) {
  const value = params[name];
  if (!Number.isSafeInteger(value) || /** @type {number} */ (value) < 0) throw invalid(`${name} must be a tab id (an integer)`);
  return /** @type {number} */ (value);
}

/** @param {Record<string, unknown>} params @returns {number | undefined} */
export function optionalTabId(params) {
  return params.tab_id === undefined || params.tab_id === null ? undefined : tabIdIn(params, "tab_id");
}

/** @param {Record<string, unknown>} params */
export function requireTabId(params) {
  if (params.tab_id === undefined || params.tab_id === null) throw invalid("tab_id is required");
  return tabIdIn(params, "tab_id");
}

/** @param {Record<string, unknown>} params @param {string} name @param {boolean} fallback */
export function optionalBool(params, name, fallback) {
  const value = params[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") throw invalid(`${name} must be true or false`);
  return value;
}

/** @param {Record<string, unknown>} params @returns {number} */
export function timeoutOf(params, fallback = DEFAULT_TIMEOUT_MS) {
  const value = params.timeout_ms;
  if (value === undefined || value === null) return fallback;
  if (!Number.isSafeInteger(value) || /** @type {number} */ (value) < 0) {
    throw invalid("timeout_ms must be a non-negative integer");
  }
  return /** @type {number} */ (value);
}

/** @param {Record<string, unknown>} params @returns {string} */
export function waitUntilOf(params) {
  const value = params.wait_until ?? "load";
  if (typeof value !== "string" || !WAIT_UNTIL.includes(value)) {
    throw invalid(`wait_until must be one of ${WAIT_UNTIL.join(", ")}`);
  }
  return value;
}
