// @ts-check
// The one normaliser every blocked-site check goes through: a pattern's host and a request's address
// are both brought to the same canonical form before they are compared, so no spelling of an address
// the browser would still reach can slip past the list (vectors in tests/vectors/site-addresses.json).
//
// The browser's own URL parser already folds case, IDN (Unicode → punycode), percent-escapes in the
// host, IPv4 in every notation (127.1, 0x7f.0.0.1, 2130706433, 0177.0.0.1), IPv6 zero runs, userinfo
// and default ports. On top of that: trailing dots go, IPv4-mapped and -compatible IPv6 addresses are
// their IPv4 address, and every name of this machine (localhost, 127.0.0.0/8, ::1, 0.0.0.0, ::) is
// "localhost".

export const LOOPBACK = "localhost";

/** Schemes whose addresses are web sites; ws and wss reach the same servers as http and https. */
const WEB = /** @type {Record<string, {scheme: "http" | "https", port: string}>} */ ({
  "http:": { scheme: "http", port: "80" },
  "https:": { scheme: "https", port: "443" },
  "ws:": { scheme: "http", port: "80" },
  "wss:": { scheme: "https", port: "443" },
});
/** Schemes that wrap the address of the origin that made them. */
const WRAPPERS = new Set(["blob:", "filesystem:"]);

/**
 * @typedef {{scheme: "http" | "https", host: string, port: string, path: string}} SiteAddress
 *   host canonical; port always explicit; path: path and query
 */

/** @param {string} hex four hex digits or fewer @returns {number} */
const word = (hex) => Number.parseInt(hex, 16);

/**
 * An IPv6 literal (as the URL parser serialises it, without brackets) that is an IPv4 address in
 * disguise, as dotted IPv4; else null.
 * @param {string} v6
 */
function embeddedIPv4(v6) {
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6) ?? /^::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (!mapped) return null;
  const [hi, lo] = [word(mapped[1]), word(mapped[2])];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

/** @param {string} host canonical apart from loopback @returns {boolean} */
function isLoopback(host) {
  return host === LOOPBACK || host === "0.0.0.0" || host === "[::1]" || host === "[::]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Canonical form of a host the URL parser has already seen (lower case, punycode, IPv4 dotted).
 * @param {string} parsed URL.hostname
 */
function canonical(parsed) {
  let host = parsed.replace(/\.+$/, "");
  if (host.startsWith("[") && host.endsWith("]")) {
    const v4 = embeddedIPv4(host.slice(1, -1));
    if (v4 !== null) host = v4;
  }
  return isLoopback(host) ? LOOPBACK : host;
}

/**
 * The canonical form of a host as a person writes it in a pattern, or null when it is no host.
 * @param {string} text e.g. "Bücher.example.", "127.1", "[0:0::1]"
 * @returns {string | null}
 */
export function canonicalHost(text) {
  if (text === "" || /[\s/?#@\\%]/.test(text)) return null;
  let url;
  try {
    url = new URL(`http://${text}/`);
  } catch {
    return null;
  }
  if (url.port !== "" || url.hostname === "") return null;
  const host = canonical(url.hostname);
  return host === "" ? null : host;
}

/**
 * Whether a canonical host is this machine or a name under localhost (which the browser sends there).
 * @param {string} host
 */
export function onThisMachine(host) {
  return host === LOOPBACK || host.endsWith(`.${LOOPBACK}`);
}

/**
 * The web site an address belongs to, canonical; null for what is not on the web (about:, data:, …).
 * @param {string | undefined | null} raw
 * @returns {SiteAddress | null}
 */
export function siteAddress(raw) {
  if (!raw) return null;
  let url;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (WRAPPERS.has(url.protocol)) return siteAddress(url.pathname);
  const web = WEB[url.protocol];
  if (!web || url.hostname === "") return null;
  return { scheme: web.scheme, host: canonical(url.hostname), port: url.port || web.port, path: `${url.pathname}${url.search}` };
}
