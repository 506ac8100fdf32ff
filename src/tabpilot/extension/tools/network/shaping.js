// @ts-check
// tool.network_headers / tool.network_credentials: what the session's requests to one origin carry,
// extra headers and HTTP basic credentials (browser/network-routes.js adds them as each request leaves).
// Nothing here answers with a value it was given: listings name headers and say whether credentials are set.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalBool } from "../../link/params.js";

/** @param {string} message @param {string} [hint] */
const invalid = (message, hint) => new RpcError("invalid_params", message, undefined, hint ? { hint } : {});

// The browser owns these; a request that carried ours would not be the request the page makes.
const RESERVED = new Set(["host", "content-length", "cookie", "connection", "transfer-encoding", "origin"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An http(s) origin exactly as the browser writes it. @param {unknown} value */
function originOf(value) {
  let url = null;
  try {
    url = new URL(String(value));
  } catch {
    // reported below
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.origin !== value) throw invalid("origin must be an http(s) origin such as https://example.com", "No path, no trailing slash: scheme://host[:port].");
  return url.origin;
}

/** @param {unknown} headers */
function headersOf(headers) {
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) throw invalid("headers must be an object of names to values");
  /** @type {Record<string, string>} */
  const checked = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name) || RESERVED.has(name.toLowerCase())) throw invalid(`${JSON.stringify(name)} is not a header the agent may set`);
    if (typeof value !== "string" || /[\r\n\0]/.test(value) || value.length > 8192) throw invalid(`header ${name} must be one line of text`);
    checked[name] = value;
  }
  return checked;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function networkHeaders(params, ctx) {
  const sessionId = sessionIdOf(params);
  await ctx.sessions.get(sessionId);
  if (params.origin !== undefined && params.origin !== null) {
    const origin = originOf(params.origin);
    const headers = optionalBool(params, "clear", false) ? {} : headersOf(params.headers);
    await ctx.networkRoutes.shape(sessionId, origin, { headers });
  }
  return { shaping: ctx.networkRoutes.shaping(sessionId) };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function networkCredentials(params, ctx) {
  const sessionId = sessionIdOf(params);
  await ctx.sessions.get(sessionId);
  const origin = originOf(params.origin);
  let authorization = null;
  if (!optionalBool(params, "clear", false)) {
    const { username, password } = params;
    if (typeof username !== "string" || !username || username.includes(":") || typeof password !== "string" || /[\r\n\0]/.test(username + password)) {
      throw invalid("credentials are a username (no colon) and a password, each one line");
    }
    const bytes = new TextEncoder().encode(`${username}:${password}`);
    authorization = `Basic ${btoa(String.fromCharCode(...bytes))}`;
  }
  await ctx.networkRoutes.shape(sessionId, origin, { authorization });
  return { origin, credentials: authorization !== null, shaping: ctx.networkRoutes.shaping(sessionId) };
}
