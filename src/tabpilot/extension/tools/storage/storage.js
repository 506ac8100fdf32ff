// @ts-check
// tool.cookies (the current tab's site only), tool.storage (localStorage / sessionStorage of the current
// page's origin), tool.state_save / tool.state_load (cookies and storage as Playwright's storage-state
// JSON, managed browsers only). Cookie values that scripts cannot read (HttpOnly), and in the person's
// own browser every cookie value, leave only with show_secrets.
import { RpcError, fromPage, said } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool, requireString } from "../../link/params.js";

export const HIDDEN = "(hidden: --show-secrets shows it)";
const SAME_SITE = { Strict: "Strict", Lax: "Lax", None: "None" };

/** @param {string} message @param {string} [hint] */
const invalid = (message, hint) => new RpcError("invalid_params", message, undefined, hint ? { hint } : {});

/** The tab and its http(s) URL. @param {Record<string, any>} params @param {any} ctx */
async function webTab(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const url = tab.url ?? "";
  if (!/^https?:/.test(url)) throw invalid(`tab ${tab.id} shows ${url || "no page"}, which has no cookies or storage`, "Open an http(s) page first.");
  return { tab, url: new URL(url) };
}

/** @param {any} c a CDP cookie @param {boolean} hide */
function shownCookie(c, hide) {
  return {
    name: c.name,
    value: hide ? HIDDEN : c.value,
    domain: c.domain,
    path: c.path,
    expires: c.expires > 0 ? c.expires : -1,
    http_only: c.httpOnly === true,
    secure: c.secure === true,
    same_site: c.sameSite ?? null,
  };
}

/** @param {any} ctx */
const managed = (ctx) => (ctx.isManaged ? ctx.isManaged() : Promise.resolve(false));

/** @type {import("../../link/dispatcher.js").Handler} */
export async function cookies(params, ctx) {
  const action = params.action ?? "list";
  const { tab, url } = await webTab(params, ctx);
  const showSecrets = optionalBool(params, "show_secrets", false);
  const ownBrowser = !(await managed(ctx));
  const hide = (/** @type {any} */ c) => !showSecrets && (c.httpOnly === true || ownBrowser);
  const send = (/** @type {string} */ method, /** @type {object} */ p) => ctx.cdp.send(tab.id, method, p);
  const siteCookies = async () => (await send("Network.getCookies", { urls: [url.href] })).cookies ?? [];
  const base = { tab_id: tab.id, url: url.href };
  if (action === "list") return { ...base, cookies: (await siteCookies()).map((c) => shownCookie(c, hide(c))) };
  if (action === "get") {
    const name = requireString(params, "name");
    const found = (await siteCookies()).filter((c) => c.name === name);
    if (!found.length) throw new RpcError("not_found", `${url.host} has no cookie named ${JSON.stringify(name)}`, undefined, { hint: "`tabpilot cookies` lists them." });
    return { ...base, cookies: found.map((c) => shownCookie(c, hide(c))) };
  }
  if (action === "set") {
    const name = requireString(params, "name");
    const value = params.value;
    if (typeof value !== "string") throw invalid("value must be a string");
    const domain = params.domain ?? null;
    if (domain !== null) {
      const bare = String(domain).replace(/^\./, "").toLowerCase();
      if (!(url.hostname === bare || url.hostname.endsWith(`.${bare}`))) {
        throw new RpcError("permission_denied", `${domain} is not the current tab's site (${url.hostname})`, "agent_window_scope", {
          hint: "Cookies are set for the current tab's site only; open a page of that site first.",
        });
      }
    }
    const expires = params.expires ?? null;
    if (expires !== null && !(Number.isFinite(expires) && expires > 0)) throw invalid("expires must be seconds since the epoch");
    const sameSite = params.same_site ?? null;
    if (sameSite !== null && !Object.hasOwn(SAME_SITE, sameSite)) throw invalid("same_site must be Strict, Lax or None");
    const reply = await send("Network.setCookie", {
      name, value, url: url.origin,
      ...(domain ? { domain } : {}),
      path: typeof params.path === "string" && params.path ? params.path : "/",
      secure: optionalBool(params, "secure", false),
      httpOnly: optionalBool(params, "http_only", false),
      ...(expires ? { expires } : {}),
      ...(sameSite ? { sameSite } : {}),
    });
    if (reply?.success === false) throw new RpcError("cdp_failed", `the browser refused the cookie ${name}`, undefined, { hint: "A Secure cookie needs https, SameSite=None needs Secure." });
    return { ...base, set: name, cookies: (await siteCookies()).filter((c) => c.name === name).map((c) => shownCookie(c, hide(c))) };
  }
  if (action === "clear") {
    const name = params.name ?? null;
    const doomed = (await siteCookies()).filter((c) => name === null || c.name === name);
    for (const c of doomed) await send("Network.deleteCookies", { name: c.name, domain: c.domain, path: c.path });
    return { ...base, cleared: doomed.length };
  }
  throw invalid(`action must be list, get, set or clear, not ${JSON.stringify(action)}`);
}

/** In the page: one Web Storage area's work. */
const STORAGE_OP = `function (area, action, key, value) {
  const s = area === "session" ? sessionStorage : localStorage;
  if (action === "set") s.setItem(key, value);
  if (action === "clear") { if (key === null) s.clear(); else s.removeItem(key); }
  if (action === "get") return { value: s.getItem(key) };
  const items = [];
  for (let i = 0; i < s.length; i++) { const k = s.key(i); items.push([k, s.getItem(k)]); }
  return { items };
}`;

/** @param {any} ctx @param {number} tabId @param {"local" | "session"} area @param {string} action @param {string | null} key @param {string | null} value */
async function storageOp(ctx, tabId, area, action, key, value) {
  const frame = await ctx.frames.main(tabId);
  const args = [area, action, key, value].map((v) => JSON.stringify(v)).join(", ");
  try {
    return await ctx.frames.evaluate(frame, `(${STORAGE_OP})(${args})`);
  } catch (err) {
    throw new RpcError("cdp_failed", said`the page refused its ${area}Storage: ${fromPage(err instanceof Error ? err.message : err)}`, undefined, { tab_id: tabId });
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function storage(params, ctx) {
  const area = params.area;
  if (area !== "local" && area !== "session") throw invalid("area must be local or session");
  const action = params.action ?? "list";
  if (!["list", "get", "set", "clear"].includes(action)) throw invalid(`action must be list, get, set or clear, not ${JSON.stringify(action)}`);
  const { tab, url } = await webTab(params, ctx);
  const key = action === "get" || action === "set" ? requireString(params, "key") : typeof params.key === "string" ? params.key : null;
  const value = action === "set" ? params.value : null;
  if (action === "set" && typeof value !== "string") throw invalid("value must be a string");
  const done = await storageOp(ctx, tab.id, area, action, key, value);
  return { tab_id: tab.id, origin: url.origin, area, action, key, ...done };
}

/** @param {any} ctx */
async function requireManaged(ctx) {
  if (!(await managed(ctx))) {
    throw new RpcError("permission_denied", "state save and load work in a managed browser only: this is the person's own profile", undefined, {
      hint: "Start one with `tabpilot browser launch` and pass --browser managed.",
    });
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function stateSave(params, ctx) {
  await requireManaged(ctx);
  const sessionId = sessionIdOf(params);
  const current = await ctx.sessions.resolveTab(sessionId, optionalTabId(params));
  const { cookies: all } = await ctx.cdp.send(current.id, "Network.getAllCookies");
  const kept = [];
  for (const c of all ?? []) {
    if (await ctx.sites.cookieBlocked(String(c.domain))) continue;
    kept.push({
      name: c.name, value: c.value, domain: c.domain, path: c.path, expires: c.expires > 0 ? c.expires : -1,
      httpOnly: c.httpOnly === true, secure: c.secure === true, sameSite: c.sameSite ?? "Lax",
    });
  }
  /** @type {Map<string, {name: string, value: string}[]>} */
  const origins = new Map();
  for (const tab of await ctx.sessions.tabs(sessionId)) {
    if (!/^https?:/.test(tab.url ?? "") || (await ctx.sites.isBlocked(tab.url))) continue;
    const origin = new URL(/** @type {string} */ (tab.url)).origin;
    if (origins.has(origin)) continue;
    const read = await storageOp(ctx, tab.id, "local", "list", null, null).catch(() => null);
    if (read) origins.set(origin, read.items.map((/** @type {[string, string]} */ [name, value]) => ({ name, value })));
  }
  return { state: { cookies: kept, origins: [...origins].map(([origin, localStorage]) => ({ origin, localStorage })) } };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function stateLoad(params, ctx) {
  await requireManaged(ctx);
  const sessionId = sessionIdOf(params);
  const state = params.state;
  if (!state || typeof state !== "object" || !Array.isArray(state.cookies)) throw invalid("state must be {cookies: [...], origins: [...]}", "Give a file written by `tabpilot state save` (Playwright's storage-state JSON).");
  const current = await ctx.sessions.resolveTab(sessionId, optionalTabId(params));
  const cookieList = [];
  for (const c of state.cookies) {
    if (!c || typeof c.name !== "string" || typeof c.value !== "string" || typeof c.domain !== "string") throw invalid("every cookie needs name, value and domain");
    if (await ctx.sites.cookieBlocked(c.domain)) continue;
    cookieList.push({
      name: c.name, value: c.value, domain: c.domain, path: typeof c.path === "string" ? c.path : "/",
      secure: c.secure === true, httpOnly: c.httpOnly === true,
      ...(Number.isFinite(c.expires) && c.expires > 0 ? { expires: c.expires } : {}),
      ...(Object.hasOwn(SAME_SITE, c.sameSite) ? { sameSite: c.sameSite } : {}),
    });
  }
  if (cookieList.length) await ctx.cdp.send(current.id, "Network.setCookies", { cookies: cookieList });
  // Web Storage belongs to a page's origin: it is filled in the session's tabs that show each origin.
  const tabs = await ctx.sessions.tabs(sessionId);
  const restored = [];
  const skipped = [];
  for (const o of Array.isArray(state.origins) ? state.origins : []) {
    const tab = tabs.find((t) => /^https?:/.test(t.url ?? "") && new URL(/** @type {string} */ (t.url)).origin === o?.origin);
    if (!tab || (await ctx.sites.isBlocked(tab.url))) {
      skipped.push(String(o?.origin));
      continue;
    }
    for (const item of Array.isArray(o.localStorage) ? o.localStorage : []) {
      if (typeof item?.name === "string" && typeof item?.value === "string") await storageOp(ctx, tab.id, "local", "set", item.name, item.value);
    }
    restored.push(o.origin);
  }
  return { tab_id: current.id, cookies: cookieList.length, origins: restored, skipped_origins: skipped };
}
