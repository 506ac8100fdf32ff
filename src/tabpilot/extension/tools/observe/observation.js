// @ts-check
// tool.screenshot (viewport, whole page, or one element; PNG or JPEG) and tool.html (the page's or an
// element's HTML, open shadow roots included), captured over CDP so background tabs work too.
import { RpcError, fromPage, said } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool, timeoutOf } from "../../link/params.js";
import { withDeadline } from "../../link/deadline.js";
import { resolveTarget } from "../../page/targets.js";
import { optionalCount, bounded } from "./snapshot.js";
import { refBoxes, drawBoxes } from "./annotate.js";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Chromium cannot paint a capture taller or wider than this (CSS px); longer pages are cut. */
const MAX_CAPTURE_SIDE = 16384;
/** How long a plain capture of the active tab may take before the tab is taken for one that paints nothing. */
const PLAIN_CAPTURE_MS = 1500;
export const DEFAULT_HTML_BYTES = 100_000;

/**
 * Width and height from a base64 PNG's IHDR chunk (device pixels); null if it is not a PNG.
 * @param {string} base64
 */
export function pngSize(base64) {
  let head;
  try {
    head = atob(base64.slice(0, 32)); // 24 bytes: signature, IHDR length and type, width, height
  } catch {
    return null;
  }
  if (head.length < 24 || PNG_SIGNATURE.some((b, i) => head.charCodeAt(i) !== b)) return null;
  const u32 = (/** @type {number} */ at) =>
    ((head.charCodeAt(at) << 24) | (head.charCodeAt(at + 1) << 16) | (head.charCodeAt(at + 2) << 8) | head.charCodeAt(at + 3)) >>> 0;
  return { width: u32(16), height: u32(20) };
}

/**
 * Width and height from a base64 JPEG's start-of-frame segment; null if it is not a JPEG.
 * @param {string} base64
 */
export function jpegSize(base64) {
  let bytes;
  try {
    bytes = atob(base64);
  } catch {
    return null;
  }
  const at = (/** @type {number} */ i) => bytes.charCodeAt(i);
  if (bytes.length < 4 || at(0) !== 0xff || at(1) !== 0xd8) return null;
  let i = 2;
  while (i + 9 < bytes.length) {
    if (at(i) !== 0xff) return null;
    const marker = at(i + 1);
    const length = (at(i + 2) << 8) | at(i + 3);
    // SOF0…SOF15 carry the size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: (at(i + 7) << 8) | at(i + 8), height: (at(i + 5) << 8) | at(i + 6) };
    }
    i += 2 + length;
  }
  return null;
}

/** @param {Record<string, unknown>} params */
function captureOptions(params) {
  const format = params.format ?? "png";
  if (format !== "png" && format !== "jpeg") throw new RpcError("invalid_params", `format must be png or jpeg, not ${JSON.stringify(format)}`);
  const quality = params.quality;
  if (quality !== undefined && quality !== null) {
    if (!Number.isSafeInteger(quality) || /** @type {number} */ (quality) < 0 || /** @type {number} */ (quality) > 100) {
      throw new RpcError("invalid_params", "quality must be an integer from 0 to 100");
    }
    if (format !== "jpeg") throw new RpcError("invalid_params", "quality applies to jpeg only", undefined, { hint: "Add format jpeg, or leave quality out." });
  }
  const fullPage = optionalBool(params, "full_page", false);
  const ref = params.ref ?? null;
  if (ref !== null && typeof ref !== "string") throw new RpcError("invalid_params", "ref must be a string such as @e12");
  if (fullPage && ref) throw new RpcError("invalid_params", "full_page and ref cannot be combined", undefined, { hint: "Pick one: the whole page, or one element." });
  const annotate = optionalBool(params, "annotate", false);
  if (annotate && (fullPage || ref || format !== "png")) {
    throw new RpcError("invalid_params", "annotate draws on a PNG of the viewport only", undefined, { hint: "Leave out full_page, ref and format jpeg." });
  }
  return { format, quality: /** @type {number | undefined} */ (quality ?? undefined), fullPage, ref, annotate };
}

/**
 * In the page: bring the element into view if it is not wholly in it, and return its box in its
 * frame's viewport.
 */
const ELEMENT_BOX = `function () {
  const r0 = this.getBoundingClientRect();
  const inView = r0.top >= 0 && r0.left >= 0 && r0.bottom <= innerHeight && r0.right <= innerWidth;
  if (!inView) this.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  const r = this.getBoundingClientRect();
  return { x: r.left, y: r.top, width: r.width, height: r.height };
}`;

/**
 * The clip of one element, in the coordinates Page.captureScreenshot takes (the top document's, i.e. the
 * viewport's plus the page's scroll offset), and whether it fits in the viewport.
 * @param {any} ctx @param {number} tabId @param {string} ref
 */
async function elementClip(ctx, tabId, ref) {
  const target = await resolveTarget(ctx, tabId, ref);
  const box = await ctx.frames.callOn(target.frame, target.objectId, ELEMENT_BOX);
  void ctx.frames.send(target.frame, "Runtime.releaseObject", { objectId: target.objectId }).catch(() => {});
  if (!(box.width > 0 && box.height > 0)) {
    throw new RpcError("not_found", said`${fromPage(target.label)} has no size on the page`, "element_not_visible", {
      hint: "It is hidden or empty; take a snapshot to find a visible element.",
    });
  }
  const [origin, metrics] = await Promise.all([ctx.frames.offset(target.frame), ctx.cdp.send(tabId, "Page.getLayoutMetrics")]);
  const view = metrics.cssVisualViewport;
  const x = box.x + origin.x;
  const y = box.y + origin.y;
  return {
    clip: { x: x + view.pageX, y: y + view.pageY, width: box.width, height: box.height, scale: 1 },
    fits: x >= 0 && y >= 0 && x + box.width <= view.clientWidth && y + box.height <= view.clientHeight,
    label: target.label,
    ref: target.ref,
  };
}

/**
 * Captures, quickly when the tab is painting. captureBeyondViewport makes Chrome lay out and paint the
 * page for the capture: needed beyond the viewport, and for a tab that paints no frames (a background
 * tab, a window the person covered), where a plain capture never answers; but on a long page it costs
 * most of a second. So the active tab is tried plainly first.
 * @param {any} cdp @param {{id: number, active?: boolean}} tab @param {Record<string, any>} request
 * @param {boolean} beyond the clip reaches outside the viewport
 */
async function capture(cdp, tab, request, beyond) {
  const painted = () => cdp.send(tab.id, "Page.captureScreenshot", { ...request, captureBeyondViewport: true });
  if (beyond || !tab.active) return painted();
  const noFrame = () => new RpcError("timeout", "no frame painted", "tool_timeout");
  try {
    return await withDeadline(cdp.send(tab.id, "Page.captureScreenshot", request), { timeoutMs: PLAIN_CAPTURE_MS, onTimeout: noFrame });
  } catch (err) {
    if (!(err instanceof RpcError && err.reason === "tool_timeout")) throw err;
    return painted();
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function screenshot(params, ctx) {
  const { sessions, cdp, signal } = ctx;
  const { format, quality, fullPage, ref, annotate } = captureOptions(params);
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  /** @type {Record<string, any>} */
  const extra = {};
  /** @type {Record<string, any>} */
  const request = { format, ...(quality !== undefined ? { quality } : {}) };
  // The person's overlay (the badge) is not part of the page: out of sight while the capture is taken.
  const shoot = async () => {
    if (ref) {
      const element = await elementClip(ctx, tab.id, ref);
      Object.assign(extra, { label: element.label, ref: element.ref ? `@${element.ref}` : null });
      return capture(cdp, tab, { ...request, clip: element.clip }, !element.fits);
    }
    const metrics = await cdp.send(tab.id, "Page.getLayoutMetrics");
    if (fullPage) {
      const size = metrics.cssContentSize ?? metrics.contentSize;
      const width = Math.min(Math.ceil(size.width), MAX_CAPTURE_SIDE);
      const height = Math.min(Math.ceil(size.height), MAX_CAPTURE_SIDE);
      Object.assign(extra, { full_page: true, cut: size.height > MAX_CAPTURE_SIDE || size.width > MAX_CAPTURE_SIDE });
      return capture(cdp, tab, { ...request, clip: { x: 0, y: 0, width, height, scale: 1 } }, true);
    }
    // The viewport by its own clip: a painted capture without one would take the whole page.
    const view = metrics.cssVisualViewport;
    if (annotate) {
      // Boxes are measured first: the capture must show the page as they were measured.
      const boxes = await refBoxes(ctx, tab.id);
      const shot = await capture(cdp, tab, { ...request, clip: { x: view.pageX, y: view.pageY, width: view.clientWidth, height: view.clientHeight, scale: 1 } }, false);
      extra.legend = boxes;
      return { data: await drawBoxes(shot.data, boxes, view.clientWidth) };
    }
    // At the page's own zoom: a phone lays out a page with no viewport tag 980 px wide and shows it
    // zoomed out, so the capture is the phone's screen, not three times that layout.
    return capture(cdp, tab, { ...request, clip: { x: view.pageX, y: view.pageY, width: view.clientWidth, height: view.clientHeight, scale: view.scale ?? 1 } }, false);
  };
  // The action cue is not part of the page either: gone before the capture.
  const cleared = () => Promise.resolve(ctx.cues?.clear(tab.id)).then(shoot);
  const work = ctx.overlay ? ctx.overlay.hidden(tab.id, cleared) : cleared();
  const { data } = await withDeadline(work, {
    signal,
    timeoutMs,
    onTimeout: () =>
      new RpcError("timeout", `no screenshot of tab ${tab.id} within ${timeoutMs} ms`, undefined, {
        tab_id: tab.id,
        hint: "The tab may be hidden or busy; select it (tab_select) and retry.",
      }),
  });
  const size = typeof data === "string" ? (format === "png" ? pngSize(data) : jpegSize(data)) : null;
  if (!size) throw new RpcError("cdp_failed", `Page.captureScreenshot returned no ${format}`, undefined, { tab_id: tab.id });
  return { tab_id: tab.id, format, ...size, ...extra, data };
}

const OVERLAY_TAG = "tabpilot-overlay";

/**
 * The HTML without the person's overlay (its host element and the shadow root serialised in it).
 * @param {string} html
 */
export function withoutOverlay(html) {
  const open = `<${OVERLAY_TAG}`;
  const close = `</${OVERLAY_TAG}>`;
  let out = "";
  let at = 0;
  for (let start = html.indexOf(open); start !== -1; start = html.indexOf(open, at)) {
    out += html.slice(at, start);
    // Its end tag, counting any element of the same name inside it.
    let depth = 0;
    let i = start;
    for (;;) {
      const nextOpen = html.indexOf(open, i + 1);
      const nextClose = html.indexOf(close, i + 1);
      if (nextClose === -1) return out;
      if (nextOpen !== -1 && nextOpen < nextClose) {
        depth++;
        i = nextOpen;
      } else if (depth > 0) {
        depth--;
        i = nextClose;
      } else {
        at = nextClose + close.length;
        break;
      }
    }
  }
  return out + html.slice(at);
}

/**
 * At most `maxBytes` of UTF-8, cut on a character boundary.
 * @param {string} text @param {number} maxBytes 0 = no limit
 */
export function cutUtf8(text, maxBytes) {
  const bytes = new TextEncoder().encode(text);
  if (maxBytes === 0 || bytes.length <= maxBytes) return { text, bytes: bytes.length, truncated: false };
  let cut = maxBytes;
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--;
  return { text: new TextDecoder().decode(bytes.subarray(0, cut)), bytes: bytes.length, truncated: true };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function html(params, ctx) {
  const { sessions, frames, signal } = ctx;
  const maxBytes = optionalCount(params, "max_bytes", DEFAULT_HTML_BYTES);
  const ref = params.ref ?? null;
  if (ref !== null && (typeof ref !== "string" || ref === "")) throw new RpcError("invalid_params", "ref must be a string such as @e12");
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const work = (async () => {
    let frame;
    let objectId;
    /** @type {Record<string, any>} */
    const about = {};
    if (ref) {
      const target = await resolveTarget(ctx, tab.id, ref);
      ({ frame, objectId } = target);
      Object.assign(about, { label: target.label, ref: target.ref ? `@${target.ref}` : null });
    } else {
      frame = await frames.main(tab.id);
      objectId = (await frames.evaluate(frame, "document", { returnByValue: false })).objectId;
    }
    const { outerHTML } = await frames.send(frame, "DOM.getOuterHTML", { objectId, includeShadowDOM: true });
    void frames.send(frame, "Runtime.releaseObject", { objectId }).catch(() => {});
    return { outerHTML, about };
  })();
  const { outerHTML, about } = await bounded(work, timeoutMs, signal, "html");
  const cut = cutUtf8(withoutOverlay(outerHTML), maxBytes);
  return { tab_id: tab.id, ...about, html: cut.text, bytes: cut.bytes, truncated: cut.truncated };
}
