// @ts-check
// tool.emulate: viewport and device, user agent, geolocation, timezone, locale, colour scheme and offline for one of
// the session's tabs, through CDP. Overrides belong to our debugging session: when it ends (the session
// stops, a borrowed tab is given back) Chrome drops them all, so the person's tab is as it was.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool } from "../../link/params.js";
import { mobileUserAgent, setIdentity } from "./user-agent.js";

/** @typedef {{width: number, height: number, screen: [number, number] | null, dpr: number, mobile: boolean, touch: boolean, userAgent: string | null}} Device */

/** @param {string} message @param {string} [hint] */
const invalid = (message, hint) => new RpcError("invalid_params", message, undefined, hint ? { hint } : {});

const size = (/** @type {unknown} */ n, max = 10000) => Number.isInteger(n) && /** @type {number} */ (n) >= 1 && /** @type {number} */ (n) <= max;

/**
 * A viewport and what goes with it. The CLI resolves a device's name from its catalogue and sends the
 * device's facts; `device` is then only its name.
 * @param {Record<string, any>} params
 * @returns {Device | null}
 */
function deviceOf(params) {
  const v = params.viewport;
  if (v === undefined || v === null) {
    if (params.device !== undefined && params.device !== null) throw invalid("device needs its viewport", "Name the device with `tabpilot emulate --device NAME`.");
    return null;
  }
  if (!size(v.width) || !size(v.height)) throw invalid("viewport must be {width, height} in CSS pixels, 1 to 10000");
  const screen = params.screen;
  if (screen !== undefined && screen !== null && !(size(screen.width) && size(screen.height))) throw invalid("screen must be {width, height} in CSS pixels, 1 to 10000");
  const dpr = params.dpr ?? 1;
  if (!(typeof dpr === "number" && dpr > 0 && dpr <= 10)) throw invalid("dpr must be a number from 0 to 10");
  const mobile = optionalBool(params, "mobile", false);
  const touch = optionalBool(params, "touch", mobile);
  const userAgent = typeof params.device_user_agent === "string" && params.device_user_agent ? params.device_user_agent : mobile ? mobileUserAgent() : null;
  return { width: v.width, height: v.height, screen: screen ? [screen.width, screen.height] : null, dpr, mobile, touch, userAgent };
}

/** The page's origin, for a permission: null for a page that has none (about:blank, a file). @param {string | undefined} url */
function originOf(url) {
  try {
    const origin = new URL(String(url)).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function emulate(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const send = (/** @type {string} */ method, /** @type {object} */ p = {}) => ctx.cdp.send(tab.id, method, p);
  /** What this call set. @type {Record<string, unknown>} */
  const now = {};
  if (optionalBool(params, "reset", false)) {
    await send("Emulation.clearDeviceMetricsOverride");
    await send("Emulation.setTouchEmulationEnabled", { enabled: false });
    await setIdentity(ctx, tab.id, { userAgent: null, language: null });
    await send("Emulation.clearGeolocationOverride");
    const origin = originOf(tab.url);
    if (origin) await ctx.geolocationGrants.revoke(sessionIdOf(params), origin);
    await send("Emulation.setTimezoneOverride", { timezoneId: "" });
    await send("Emulation.setLocaleOverride", {});
    await send("Emulation.setEmulatedMedia", { features: [] });
    await send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    return { tab_id: tab.id, reset: true, emulating: {} };
  }
  const device = deviceOf(params);
  let changed = false;
  if (device) {
    const screen = device.screen ? { screenWidth: device.screen[0], screenHeight: device.screen[1] } : {};
    await send("Emulation.setDeviceMetricsOverride", { width: device.width, height: device.height, deviceScaleFactor: device.dpr, mobile: device.mobile, ...screen });
    await send("Emulation.setTouchEmulationEnabled", { enabled: device.touch, ...(device.touch ? { maxTouchPoints: 5 } : {}) });
    if (params.user_agent === undefined || params.user_agent === null) await setIdentity(ctx, tab.id, { userAgent: device.userAgent });
    Object.assign(now, { viewport: `${device.width}x${device.height}`, dpr: device.dpr, mobile: device.mobile });
    if (params.device) now.device = String(params.device);
    changed = true;
  }
  if (params.user_agent !== undefined && params.user_agent !== null) {
    if (typeof params.user_agent !== "string" || !params.user_agent.trim() || /[\r\n]/.test(params.user_agent)) throw invalid("user_agent must be one line of text");
    await setIdentity(ctx, tab.id, { userAgent: params.user_agent });
    now.user_agent = params.user_agent;
    changed = true;
  }
  const geo = params.geolocation;
  if (geo !== undefined && geo !== null) {
    const { latitude, longitude } = geo;
    if (!(Number.isFinite(latitude) && Math.abs(latitude) <= 90 && Number.isFinite(longitude) && Math.abs(longitude) <= 180)) {
      throw invalid("geolocation must be {latitude (-90…90), longitude (-180…180)}");
    }
    await send("Emulation.setGeolocationOverride", { latitude, longitude, accuracy: 10 });
    const origin = originOf(tab.url);
    if (origin) await ctx.geolocationGrants.grant(sessionIdOf(params), origin);
    now.geolocation = `${latitude},${longitude}`;
    changed = true;
  }
  if (params.timezone !== undefined && params.timezone !== null) {
    try {
      await send("Emulation.setTimezoneOverride", { timezoneId: String(params.timezone) });
    } catch {
      throw invalid(`unknown timezone ${JSON.stringify(params.timezone)}`, "Give an IANA name such as Europe/Paris or America/New_York.");
    }
    now.timezone = String(params.timezone);
    changed = true;
  }
  if (params.locale !== undefined && params.locale !== null) {
    try {
      await send("Emulation.setLocaleOverride", { locale: String(params.locale) });
    } catch {
      throw invalid(`unknown locale ${JSON.stringify(params.locale)}`, "Give a BCP 47 tag such as fr-FR or en-US.");
    }
    // Intl follows the locale override; navigator.language(s) and the Accept-Language header follow this.
    await setIdentity(ctx, tab.id, { language: String(params.locale) });
    now.locale = String(params.locale);
    changed = true;
  }
  if (params.color_scheme !== undefined && params.color_scheme !== null) {
    if (params.color_scheme !== "dark" && params.color_scheme !== "light") throw invalid("color_scheme must be dark or light");
    await send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: params.color_scheme }] });
    now.color_scheme = params.color_scheme;
    changed = true;
  }
  if (params.offline !== undefined && params.offline !== null) {
    const offline = optionalBool(params, "offline", false);
    await send("Network.emulateNetworkConditions", { offline, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    now.offline = offline;
    changed = true;
  }
  if (!changed) throw invalid("nothing to emulate", "Give --viewport, --device, --user-agent, --geolocation, --timezone, --locale, --color-scheme, --offline or --reset.");
  return { tab_id: tab.id, reset: false, emulating: { ...now } };
}
