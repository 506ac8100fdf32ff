// @ts-check
// Blocked sites: the person's list of places the agent must never read or touch. The list lives
// only in this extension's storage.local (no frame carries it) and every check fails closed: a
// stored value that is not a valid list blocks every web page.
//
// Grammar, one pattern per line (blank lines and lines starting with # are ignored):
//   bank.example.com                    that host and every subdomain, any scheme, port and path
//   *.corp.example                      the same, written the other common way
//   localhost:8080                      a host on one port
//   example.com/admin                   paths starting with /admin on that host (and subdomains)
//   https://mail.example.com/private/*  scheme, exact host, path glob (* matches anything, also /)
// Hosts on both sides go through site-address.js first (case, IDN, every IPv4 and IPv6 spelling,
// trailing dots, the names of this machine); paths are compared case-sensitively. A pattern with a
// scheme names exactly one host unless it starts with *. (https://*.example.com/…). ws: and wss:
// addresses count as http: and https:.
import { canonicalHost, onThisMachine, siteAddress, LOOPBACK } from "./site-address.js";

export const STORAGE_KEY = "tp_blocked_sites";

/**
 * @typedef {{
 *   source: string,
 *   scheme: string | null,
 *   host: string,
 *   subdomains: boolean,
 *   port: string | null,
 *   path: RegExp | null,
 * }} Rule
 */

/** @param {string} message @param {string} line */
function invalid(message, line) {
  return new Error(`${message}: ${line}`);
}

/** @param {string} text */
function escapeRegExp(text) {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A path pattern: with * it is a glob over path and query; without, it names itself and
 * everything below it (/admin covers /admin/users and /admin?tab=2, not /administrator).
 * @param {string} glob
 */
function pathMatcher(glob) {
  if (glob.includes("*")) return new RegExp(`^${glob.split("*").map(escapeRegExp).join(".*")}$`);
  const base = escapeRegExp(glob);
  return new RegExp(glob.endsWith("/") ? `^${base}` : `^${base}(?:[/?#].*)?$`);
}

/**
 * Compile one pattern; throws on anything that is not a pattern.
 * @param {string} text
 * @returns {Rule}
 */
export function compilePattern(text) {
  const line = text.trim();
  if (line === "") throw invalid("empty pattern", text);
  let rest = line;
  /** @type {string | null} */
  let scheme = null;
  const schemeMatch = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rest);
  if (schemeMatch) {
    scheme = schemeMatch[1].toLowerCase();
    if (scheme !== "http" && scheme !== "https") throw invalid("only http and https patterns are supported", line);
    rest = rest.slice(schemeMatch[0].length);
  }
  const slash = rest.search(/[/?#]/);
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const pathPart = slash === -1 ? "" : rest.slice(slash);
  let hostPart = authority;
  /** @type {string | null} */
  let port = null;
  const portMatch = /^(.*):(\d{1,5})$/.exec(authority);
  if (portMatch && !authority.endsWith("]")) {
    hostPart = portMatch[1];
    port = portMatch[2];
  }
  let subdomains = scheme === null;
  if (hostPart.startsWith("*.")) {
    hostPart = hostPart.slice(2);
    subdomains = true;
  }
  const host = canonicalHost(hostPart);
  if (host === null) throw invalid("not a host name", line);
  if (pathPart !== "" && !pathPart.startsWith("/")) throw invalid("a path must start with /", line);
  return {
    source: line,
    scheme,
    host,
    subdomains,
    port: port === null ? null : String(Number(port)),
    path: pathPart === "" || pathPart === "/" || pathPart === "/*" ? null : pathMatcher(pathPart),
  };
}

/**
 * Parse the stored value: a list of pattern strings.
 * @param {unknown} value
 * @returns {{ok: true, rules: Rule[]} | {ok: false, error: string}}
 */
export function parseBlockList(value) {
  if (value === undefined || value === null) return { ok: true, rules: [] };
  if (!Array.isArray(value)) return { ok: false, error: "the stored blocked-sites value is not a list" };
  /** @type {Rule[]} */
  const rules = [];
  for (const entry of value) {
    if (typeof entry !== "string") return { ok: false, error: "the stored blocked-sites list holds a non-text entry" };
    const line = entry.trim();
    if (line === "" || line.startsWith("#")) continue;
    try {
      rules.push(compilePattern(line));
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }
  return { ok: true, rules };
}

/**
 * Split the text of the options page's field into stored entries, or say what is wrong.
 * @param {string} text
 * @returns {{ok: true, entries: string[]} | {ok: false, error: string, line: number}}
 */
export function parseBlockListText(text) {
  /** @type {string[]} */
  const entries = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    try {
      compilePattern(line);
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err), line: i + 1 };
    }
    entries.push(line);
  }
  return { ok: true, entries };
}

/** @param {Rule} rule @param {import("./site-address.js").SiteAddress} site */
function matches(rule, site) {
  if (rule.scheme !== null && rule.scheme !== site.scheme) return false;
  const under = site.host.endsWith(`.${rule.host}`);
  // Every name under localhost reaches this machine, whatever the pattern says about subdomains.
  const sameMachine = rule.host === LOOPBACK && onThisMachine(site.host);
  if (site.host !== rule.host && !(rule.subdomains && under) && !sameMachine) return false;
  if (rule.port !== null && rule.port !== site.port) return false;
  return rule.path === null || rule.path.test(site.path);
}

/**
 * Why a URL is blocked under the stored value, or null when it may be used. Fails closed.
 * @param {unknown} storedValue what storage.local holds under STORAGE_KEY
 * @param {string | undefined | null} rawUrl
 * @returns {string | null} the matching pattern (or why every page is blocked)
 */
export function blockedBy(storedValue, rawUrl) {
  const site = siteAddress(rawUrl);
  if (site === null) return null;
  const parsed = parseBlockList(storedValue);
  if (!parsed.ok) return `every site (${parsed.error})`;
  const rule = parsed.rules.find((r) => matches(r, site));
  return rule ? rule.source : null;
}

/**
 * Whether a cookie of `domain` could go to a blocked address. Cookies know no port and a path only
 * narrows where they go, so a pattern's port and path do not spare the cookies of its host; a domain
 * cookie (leading dot) also goes to every blocked host under it. Fails closed.
 * @param {unknown} storedValue @param {string} domain a cookie's domain, as the browser gives it
 */
export function cookieBlocked(storedValue, domain) {
  const parsed = parseBlockList(storedValue);
  if (!parsed.ok) return true;
  const host = canonicalHost(domain.replace(/^\./, ""));
  if (host === null) return true;
  const wide = domain.startsWith(".");
  return parsed.rules.some(
    (rule) =>
      host === rule.host ||
      (rule.subdomains && host.endsWith(`.${rule.host}`)) ||
      (rule.host === LOOPBACK && onThisMachine(host)) ||
      (wide && rule.host.endsWith(`.${host}`)),
  );
}
