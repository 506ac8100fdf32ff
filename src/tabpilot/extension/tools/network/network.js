// @ts-check
// tool.network_requests, tool.network_request, tool.network_route, tool.network_unroute: the current
// tab's requests (browser/network-log.js) and the session's routes (browser/network-routes.js).
// Credentials in headers (Authorization, Cookie, Set-Cookie…) leave only when asked for by name.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool, requireString } from "../../link/params.js";
import { optionalCount } from "../observe/snapshot.js";

const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"]);
export const HIDDEN = "(hidden: --show-secrets shows it)";
const DEFAULT_BODY_BYTES = 64 * 1024;
const MAX_ROUTE_BODY = 5 * 1024 * 1024;

/** @param {Uint8Array} bytes */
function base64Of(bytes) {
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(raw);
}

/** @param {Record<string, string>} headers @param {boolean} showSecrets */
export function redacted(headers, showSecrets) {
  if (showSecrets) return { ...headers };
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, SECRET_HEADERS.has(k.toLowerCase()) ? HIDDEN : v]));
}

/** @param {any} entry @param {boolean} detail @param {boolean} showSecrets */
function shown(entry, detail, showSecrets) {
  const { request_headers: req, response_headers: res, post_data: post, ...rest } = entry;
  if (!detail) return rest;
  return { ...rest, request_headers: redacted(req, showSecrets), response_headers: redacted(res, showSecrets), post_data: post };
}

/** @param {Record<string, any>} params @param {any} ctx */
async function tabOf(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params), { anyState: true });
  // The log starts when we attach (every page command attaches; this makes sure of it).
  await ctx.cdp.attach(tab.id);
  return tab;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function networkRequests(params, ctx) {
  const tab = await tabOf(params, ctx);
  const types = params.types ?? null;
  if (types !== null && (!Array.isArray(types) || types.some((t) => typeof t !== "string"))) throw new RpcError("invalid_params", "types must be a list of resource types");
  const text = params.filter ?? null;
  if (text !== null && typeof text !== "string") throw new RpcError("invalid_params", "filter must be a string");
  const limit = optionalCount(params, "limit", 100) || 100;
  const detail = optionalBool(params, "detail", false);
  const showSecrets = optionalBool(params, "show_secrets", false);
  const read = ctx.networkLog.read(tab.id, { since: optionalCount(params, "since", 0), text, types: types?.map((t) => t.toLowerCase()), limit });
  return { tab_id: tab.id, url: tab.url ?? "", ...read, entries: read.entries.map((e) => shown(e, detail, showSecrets)) };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function networkRequest(params, ctx) {
  const tab = await tabOf(params, ctx);
  const seq = optionalCount(params, "id", 0);
  const found = ctx.networkLog.get(tab.id, seq);
  if (!found) {
    throw new RpcError("not_found", `tab ${tab.id} has no request #${seq} (kept: the latest 500)`, undefined, {
      tab_id: tab.id,
      hint: "`tabpilot network requests` lists them with their numbers.",
    });
  }
  const showSecrets = optionalBool(params, "show_secrets", false);
  /** @type {Record<string, any>} */
  const result = { tab_id: tab.id, ...shown(found.entry, true, showSecrets) };
  if (optionalBool(params, "body", false)) {
    const maxBytes = optionalCount(params, "max_bytes", DEFAULT_BODY_BYTES);
    let got;
    try {
      got = await ctx.networkLog.body(tab.id, found.sessionId, found.requestId);
    } catch (err) {
      throw new RpcError("not_found", `the browser no longer holds the body of request #${seq}`, undefined, {
        tab_id: tab.id,
        hint: "Bodies live as long as their page and the browser's buffer; load the page again and read it sooner.",
      });
    }
    const size = got.base64 ? Math.floor((got.body.length * 3) / 4) : new TextEncoder().encode(got.body).length;
    const cut = maxBytes > 0 && size > maxBytes;
    const keep = got.base64 ? Math.ceil(maxBytes / 3) * 4 : maxBytes;
    Object.assign(result, { body: cut ? got.body.slice(0, keep) : got.body, body_base64: got.base64, body_bytes: size, body_truncated: cut });
  }
  return result;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function networkRoute(params, ctx) {
  const sessionId = sessionIdOf(params);
  await ctx.sessions.get(sessionId);
  const pattern = requireString(params, "pattern");
  const abort = optionalBool(params, "abort", false);
  const status = params.status ?? 200;
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new RpcError("invalid_params", "status must be an HTTP status from 100 to 599");
  const body = params.body ?? "";
  if (typeof body !== "string") throw new RpcError("invalid_params", "body must be a string (base64 with body_base64)");
  const base64 = optionalBool(params, "body_base64", false) ? body : base64Of(new TextEncoder().encode(body));
  if (base64.length > (MAX_ROUTE_BODY * 4) / 3) throw new RpcError("invalid_params", `a route's body is at most ${MAX_ROUTE_BODY} bytes`);
  const contentType = typeof params.content_type === "string" && params.content_type ? params.content_type : "text/plain; charset=utf-8";
  await ctx.networkRoutes.add(sessionId, { pattern, status, body: base64, content_type: contentType, abort });
  return { pattern, status: abort ? null : status, abort, routes: ctx.networkRoutes.list(sessionId) };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function networkUnroute(params, ctx) {
  const sessionId = sessionIdOf(params);
  await ctx.sessions.get(sessionId);
  const pattern = params.pattern ?? null;
  if (pattern !== null && typeof pattern !== "string") throw new RpcError("invalid_params", "pattern must be a string");
  const removed = await ctx.networkRoutes.remove(sessionId, pattern);
  return { removed, routes: ctx.networkRoutes.list(sessionId) };
}
