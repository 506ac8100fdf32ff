// @ts-check
// URL normalisation for navigate / tab_create (docs/protocol.md §4, vectors in tests/vectors/urls.json).
import { RpcError } from "../link/protocol.js";

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
// `localhost:3000/x` and `example.com:8443` look like a scheme followed by data; a run of digits
// after the colon, ending the input or followed by a path/query/fragment, makes it a port instead.
const HOST_AND_PORT = /^[^\s/?#@:]+:\d+(?:[/?#]|$)/;
// ...unless the name before the colon is a scheme that runs or wraps something (`javascript:1` is script,
// not a host called "javascript" on port 1).
const NOT_A_HOST = /^(?:javascript|vbscript|data|blob|filesystem|file|about|view-source|chrome|chrome-extension|devtools|edge|brave|moz-extension):/i;
const RELATIVE = /^(?:\/|\.{1,2}(?:\/|$)|[?#])/;
const WEB_SCHEMES = new Set(["http:", "https:"]);

/** Hosts a developer runs locally without TLS: default them to http://. */
function isLoopbackHost(/** @type {string} */ hostname) {
  return (
    hostname === "localhost" ||
    hostname.endsWith(".localhost") ||
    hostname === "[::1]" ||
    hostname === "0.0.0.0" ||
    /^127\.\d+\.\d+\.\d+$/.test(hostname)
  );
}

/** The Web Store: the browser lets no extension script it, and an agent has no business there. */
const WEB_STORE = /^https?:\/\/(?:chromewebstore\.google\.com(?:[:/?#]|$)|chrome\.google\.com(?::\d+)?\/webstore(?:[/?#]|$))/i;

/**
 * Whether an address is one of the browser's or an extension's own pages (chrome://, chrome-extension://,
 * devtools://, view-source:, edge://, the Web Store, …): never listed for the agent, never borrowed,
 * navigated to or attached. Web pages, files, about:blank, data: and blob: pages are not.
 * @param {string | undefined | null} raw
 */
export function isBrowserPage(raw) {
  if (!raw) return false;
  let url;
  try {
    url = new URL(raw);
  } catch {
    return true;
  }
  if (WEB_SCHEMES.has(url.protocol)) return WEB_STORE.test(url.href);
  if (url.protocol === "blob:") return isBrowserPage(url.pathname);
  return !["about:", "data:", "file:"].includes(url.protocol) || (url.protocol === "about:" && url.pathname !== "blank" && url.pathname !== "srcdoc");
}

/** @param {string} message */
function badUrl(message) {
  return new RpcError("invalid_params", message, "bad_url", {
    hint: "Give a full URL such as https://example.com/path.",
  });
}

/** @param {string} text @param {string} [base] */
function parse(text, base) {
  try {
    return new URL(text, base);
  } catch {
    throw badUrl(base === undefined ? `not a valid URL: ${text}` : `cannot resolve ${text} against ${base}`);
  }
}

/** @param {string} href @param {Record<string, unknown>} [data] */
export function browserPage(href, data = {}) {
  return new RpcError("permission_denied", `${href} is a browser or extension page, which the agent never gets`, "browser_page", {
    ...data,
    hint: "Browser settings, extension pages, DevTools, view-source and the Web Store are the person's: ask them to do it there.",
  });
}

/**
 * A tab of the agent's that shows a browser or extension page: tabpilot never debugs it (the agent can
 * only open another page in it, or close it).
 * @param {number} tabId @param {string} href
 */
export function notDebugged(tabId, href) {
  return new RpcError("cdp_failed", `tab ${tabId} shows ${href}, a browser or extension page, which tabpilot never debugs`, "page_not_debuggable", {
    tab_id: tabId,
    hint: "Browser and extension pages are the person's: use another tab, or ask the person to leave that page.",
  });
}

/**
 * @param {URL} url
 * @param {boolean} allowFile
 */
function checkScheme(url, allowFile) {
  const scheme = url.protocol;
  if (WEB_SCHEMES.has(scheme)) {
    if (url.hostname === "") throw badUrl(`URL has no host: ${url.href}`);
    // Chrome's URL parser escapes a space in the host ("exa%20mple.com") where Node's refuses it.
    if (/[%\s]/.test(url.hostname)) throw badUrl(`not a valid host name: ${url.hostname}`);
    if (isBrowserPage(url.href)) throw browserPage(url.href);
    return;
  }
  if (scheme === "about:" && url.pathname === "blank") return;
  if (scheme === "blob:" && WEB_SCHEMES.has(parse(url.pathname).protocol)) return;
  if (scheme === "file:") {
    if (allowFile) return;
    throw new RpcError("invalid_params", "file: URLs are refused unless allow_file is set", "file_url_refused", {
      hint: "Pass allow_file (the CLI's --allow-file) to open a local file.",
    });
  }
  throw new RpcError("invalid_params", `${scheme} URLs are refused`, "url_scheme_refused", {
    hint: "Use an http(s) URL; script, data:, browser-internal and extension pages cannot be opened by the agent.",
  });
}

/**
 * Normalise what an agent typed into the URL a tab should load.
 * @param {unknown} input
 * @param {{allowFile?: boolean, base?: string}} [options] base: the tab's current URL, for relative input
 * @returns {string}
 */
export function normalizeUrl(input, { allowFile = false, base } = {}) {
  const text = typeof input === "string" ? input.trim() : "";
  if (text === "") throw badUrl("URL is empty");
  let url;
  if (text.startsWith("//")) {
    url = base === undefined ? withDefaultScheme(text.slice(2)) : parse(text, base);
  } else if (RELATIVE.test(text)) {
    if (base === undefined) throw badUrl(`relative URL ${text} needs a page to resolve against`);
    url = parse(text, base);
  } else if (SCHEME.test(text) && (!HOST_AND_PORT.test(text) || NOT_A_HOST.test(text))) {
    url = parse(text);
  } else {
    url = withDefaultScheme(text);
  }
  checkScheme(url, allowFile);
  return url.href;
}

/** @param {string} text host[:port][/path] without a scheme */
function withDefaultScheme(text) {
  const url = parse(`https://${text}`);
  if (isLoopbackHost(url.hostname)) url.protocol = "http:";
  return url;
}
