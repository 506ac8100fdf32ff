// @ts-check
// The sites a side-panel turn may act on without asking: the site of the tab the person started it on
// and every site named in what the person typed. Nothing read from a page can widen it (the agent
// never writes it: the worker works it out when the person's message passes through it).
// A turn with neither (a blank tab, no site named) is unconfined: "search for X" works from anywhere.
import { canonicalHost, siteAddress } from "../person/site-address.js";

/** Endings of names that are usually files, not sites ("see notes.md"). */
const FILE_ENDINGS = new Set(["txt", "md", "json", "csv", "pdf", "png", "jpg", "jpeg", "gif", "zip", "js", "ts", "sh", "py", "html", "htm", "css", "yaml", "yml", "toml", "xml", "log"]);
/** A bare domain or the host of a URL in prose: labels of letters, digits and hyphens, a dot between. */
const NAMED_HOST = /(?:https?:\/\/)?((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{1,62})(?::\d{1,5})?/gi;

/**
 * @typedef {{sites: string[], unconfined: boolean}} Scope  sites: canonical hosts
 */

/**
 * The canonical host a site is known by: lower case, no trailing dot, no leading `www.`.
 * @param {string} host canonical (site-address.js)
 */
export function siteName(host) {
  return host.startsWith("www.") ? host.slice(4) : host;
}

/** The site of an address, or null for what is not on the web (about:, data:, a relative URL…). @param {string | null | undefined} url */
export function siteOf(url) {
  const address = siteAddress(url);
  return address ? siteName(address.host) : null;
}

/** The sites a person's message names (bare domains and URLs), file names left out. @param {string} text */
export function sitesNamedIn(text) {
  /** @type {Set<string>} */
  const found = new Set();
  for (const match of String(text).matchAll(NAMED_HOST)) {
    const host = match[1].toLowerCase();
    const ending = host.slice(host.lastIndexOf(".") + 1);
    if (!match[0].includes("://") && FILE_ENDINGS.has(ending)) continue;
    const canonical = canonicalHost(host);
    if (canonical) found.add(siteName(canonical));
  }
  return [...found];
}

/**
 * The scope of a turn started on `startUrl` with the person's `text`.
 * @param {string | null | undefined} startUrl @param {string} text
 * @returns {Scope}
 */
export function turnScope(startUrl, text) {
  const start = siteOf(startUrl);
  const sites = [...new Set([...(start ? [start] : []), ...sitesNamedIn(text)])];
  return { sites, unconfined: sites.length === 0 };
}

/**
 * Is `site` one the turn may act on? A scope entry covers itself and its subdomains (shop.test covers
 * app.shop.test, not shop.test.evil.test).
 * @param {string | null} site @param {Scope} scope
 */
export function inScope(site, scope) {
  if (scope.unconfined || site === null) return true;
  return scope.sites.some((s) => site === s || site.endsWith(`.${s}`));
}
