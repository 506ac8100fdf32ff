// @ts-check
// tool.snapshot, tool.find, tool.text: the page as the agent reads it (page/snapshots.js does the work).
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool, requireString, timeoutOf } from "../../link/params.js";
import { withDeadline } from "../../link/deadline.js";
import { readableText } from "../../page/snapshots.js";
import { DEFAULT_MAX_TOKENS } from "../../snapshot/index.js";

/** @param {string} message @param {string} [hint] */
function invalid(message, hint) {
  return new RpcError("invalid_params", message, undefined, hint ? { hint } : {});
}

/** @param {Record<string, unknown>} params @param {string} name @param {number} fallback */
export function optionalCount(params, name, fallback) {
  const value = params[name];
  if (value === undefined || value === null) return fallback;
  if (!Number.isSafeInteger(value) || /** @type {number} */ (value) < 0) throw invalid(`${name} must be a non-negative integer`);
  return /** @type {number} */ (value);
}

/** The `ref` param: any target (@e12, a CSS selector, text=…), or absent. @param {Record<string, unknown>} params */
export function optionalRef(params) {
  const value = params.ref;
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw invalid(`ref must be a target such as @e12, #main or text="Prices", not ${JSON.stringify(value)}`);
  return value;
}

/**
 * Bounds a tool's work by its timeout_ms and the request's cancel.
 * @template T @param {Promise<T>} work @param {number} timeoutMs @param {AbortSignal} signal @param {string} what
 */
export function bounded(work, timeoutMs, signal, what) {
  return withDeadline(work, {
    signal,
    timeoutMs,
    onTimeout: () =>
      new RpcError("timeout", `${what} did not finish within ${timeoutMs} ms`, "tool_timeout", {
        hint: "The page may be busy or very large; retry with a longer --timeout, or read a part with --ref @eN.",
      }),
  });
}

/** @param {Record<string, unknown>} params */
function snapshotOptions(params) {
  const mode = params.mode ?? "full";
  if (mode !== "full" && mode !== "interactive") throw invalid(`mode must be full or interactive, not ${JSON.stringify(mode)}`);
  return {
    mode: /** @type {"full" | "interactive"} */ (mode),
    maxTokens: optionalCount(params, "max_tokens", DEFAULT_MAX_TOKENS),
    rootRef: optionalRef(params),
    viewportOnly: optionalBool(params, "viewport", false),
    urls: optionalBool(params, "urls", false),
  };
}

/** @param {import("../../page/snapshots.js").TabSnapshot} s */
function snapshotResult(s) {
  return {
    tab_id: s.tabId,
    url: s.url,
    title: s.title,
    text: s.text,
    refs: s.refs,
    truncated: s.truncated,
    tokens: s.tokens,
    total_tokens: s.totalTokens,
    omitted_tokens: s.omittedTokens,
    frames: s.frames,
    ms: s.ms,
  };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function snapshot(params, { sessions, snapshots, signal }) {
  const options = snapshotOptions(params);
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  if (optionalBool(params, "diff", false)) {
    // Taken again with the last snapshot's own options, so only the page's changes show.
    const text = await bounded(snapshots.afterAction(tab.id, "diff"), timeoutMs, signal, "the snapshot");
    return { tab_id: tab.id, url: tab.url ?? "", title: tab.title ?? "", text, diff: true };
  }
  return snapshotResult(await bounded(snapshots.take(tab.id, options), timeoutMs, signal, "the snapshot"));
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function find(params, { sessions, snapshots, signal }) {
  const query = requireString(params, "text");
  if (query.trim() === "") throw invalid("text must contain more than spaces");
  const maxMatches = optionalCount(params, "max_matches", 50) || 50;
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const found = await bounded(snapshots.find(tab.id, query, { maxMatches }), timeoutMs, signal, "find");
  return { tab_id: found.tabId, text: found.text, matches: found.matches };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function text(params, { sessions, snapshots, signal }) {
  const rootRef = optionalRef(params);
  const maxTokens = optionalCount(params, "max_tokens", DEFAULT_MAX_TOKENS);
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const s = await bounded(snapshots.take(tab.id, { mode: "full", maxTokens, rootRef }, { remember: false }), timeoutMs, signal, "text");
  return { tab_id: s.tabId, url: s.url, title: s.title, text: readableText(s.text), truncated: s.truncated, omitted_tokens: s.omittedTokens };
}
