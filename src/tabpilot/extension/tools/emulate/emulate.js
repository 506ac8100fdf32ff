// @ts-check
// tool.emulate: viewport and device, geolocation, timezone, locale, colour scheme and offline for one of
// the session's tabs, through CDP. Overrides belong to our debugging session: when it ends (the session
// stops, a borrowed tab is given back) Chrome drops them all, so the person's tab is as it was.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool } from "../../link/params.js";

/** @typedef {{width: number, height: number, dpr: number, mobile: boolean, ua: "android" | "iphone" | null}} Device */

/** @type {Record<string, Device>} */
export const DEVICES = Object.freeze({
  "iphone-15": { width: 393, height: 852, dpr: 3, mobile: true, ua: "iphone" },
  "iphone-se": { width: 375, height: 667, dpr: 2, mobile: true, ua: "iphone" },
  "pixel-7": { width: 412, height: 915, dpr: 2.625, mobile: true, ua: "android" },
  "galaxy-s23": { width: 360, height: 780, dpr: 3, mobile: true, ua: "android" },
  "ipad": { width: 820, height: 1180, dpr: 2, mobile: true, ua: "iphone" },
  "laptop": { width: 1366, height: 768, dpr: 1, mobile: false, ua: null },
  "desktop": { width: 1920, height: 1080, dpr: 1, mobile: false, ua: null },
});

/** @param {string} message @param {string} [hint] */
const invalid = (message, hint) => new RpcError("invalid_params", message, undefined, hint ? { hint } : {});

/** A mobile user agent of this browser's own version. @param {"android" | "iphone"} kind */
function mobileUserAgent(kind) {
  const version = /Chrome\/([\d.]+)/.exec(globalThis.navigator?.userAgent ?? "")?.[1] ?? "120.0.0.0";
  return kind === "iphone"
    ? `Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/${version} Mobile/15E148 Safari/604.1`
    : `Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version} Mobile Safari/537.36`;
}

/** @param {Record<string, any>} params */
function deviceOf(params) {
  if (params.device !== undefined && params.device !== null) {
    const device = DEVICES[String(params.device).toLowerCase()];
    if (!device) throw invalid(`unknown device ${JSON.stringify(params.device)}`, `Pick one of ${Object.keys(DEVICES).join(", ")}, or give a viewport.`);
    return device;
  }
  const v = params.viewport;
  if (v === undefined || v === null) return null;
  const ok = (/** @type {unknown} */ n, max = 10000) => Number.isInteger(n) && /** @type {number} */ (n) >= 1 && /** @type {number} */ (n) <= max;
  if (!ok(v.width) || !ok(v.height)) throw invalid("viewport must be {width, height} in CSS pixels, 1 to 10000");
  const dpr = params.dpr ?? 1;
  if (!(typeof dpr === "number" && dpr > 0 && dpr <= 10)) throw invalid("dpr must be a number from 0 to 10");
  const mobile = optionalBool(params, "mobile", false);
  return { width: v.width, height: v.height, dpr, mobile, ua: mobile ? "android" : null };
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
    await send("Emulation.setUserAgentOverride", { userAgent: "" });
    await send("Emulation.clearGeolocationOverride");
    await send("Emulation.setTimezoneOverride", { timezoneId: "" });
    await send("Emulation.setLocaleOverride", {});
    await send("Emulation.setEmulatedMedia", { features: [] });
    await send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    return { tab_id: tab.id, reset: true, emulating: {} };
  }
  const device = deviceOf(params);
  let changed = false;
  if (device) {
    await send("Emulation.setDeviceMetricsOverride", { width: device.width, height: device.height, deviceScaleFactor: device.dpr, mobile: device.mobile });
    await send("Emulation.setTouchEmulationEnabled", { enabled: device.mobile, ...(device.mobile ? { maxTouchPoints: 5 } : {}) });
    await send("Emulation.setUserAgentOverride", { userAgent: device.ua ? mobileUserAgent(device.ua) : "" });
    Object.assign(now, { viewport: `${device.width}x${device.height}`, dpr: device.dpr, mobile: device.mobile });
    if (params.device) now.device = String(params.device).toLowerCase();
    changed = true;
  }
  const geo = params.geolocation;
  if (geo !== undefined && geo !== null) {
    const { latitude, longitude } = geo;
    if (!(Number.isFinite(latitude) && Math.abs(latitude) <= 90 && Number.isFinite(longitude) && Math.abs(longitude) <= 180)) {
      throw invalid("geolocation must be {latitude (-90…90), longitude (-180…180)}");
    }
    await send("Emulation.setGeolocationOverride", { latitude, longitude, accuracy: 10 });
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
  if (!changed) throw invalid("nothing to emulate", "Give --viewport, --device, --geolocation, --timezone, --locale, --color-scheme, --offline or --reset.");
  return { tab_id: tab.id, reset: false, emulating: { ...now } };
}
