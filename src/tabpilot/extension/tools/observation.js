// @ts-check
// tool.screenshot: the tab's viewport as PNG, captured over CDP so background tabs work too.
import { RpcError } from "../lib/protocol.js";
import { sessionIdOf, optionalTabId, timeoutOf } from "../lib/params.js";
import { withDeadline } from "../lib/deadline.js";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

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

/** @type {import("../lib/dispatcher.js").Handler} */
export async function screenshot(params, { sessions, cdp, signal }) {
  const format = params.format ?? "png";
  if (format !== "png") throw new RpcError("invalid_params", `format must be png, not ${format}`);
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  // A background tab paints no frames, so a plain capture waits forever; captureBeyondViewport
  // makes Chrome render one for the capture (checked on Chromium 156), still viewport-sized.
  const capture = cdp.send(tab.id, "Page.captureScreenshot", { format: "png", captureBeyondViewport: true });
  const { data } = await withDeadline(capture, {
    signal,
    timeoutMs,
    onTimeout: () =>
      new RpcError("timeout", `no screenshot of tab ${tab.id} within ${timeoutMs} ms`, undefined, {
        tab_id: tab.id,
        hint: "The tab may be hidden or busy; select it (tab_select) and retry.",
      }),
  });
  const size = typeof data === "string" ? pngSize(data) : null;
  if (!size) throw new RpcError("cdp_failed", "Page.captureScreenshot returned no PNG", undefined, { tab_id: tab.id });
  return { tab_id: tab.id, format, ...size, data };
}
