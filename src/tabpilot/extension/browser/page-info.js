// @ts-check
// What a navigation or an action reports about the page it left the tab on.
import { withDeadline } from "../link/deadline.js";

const DESCRIBE_TIMEOUT_MS = 2000;
// One round trip for everything the result reports. responseStatus is 0 for about:blank, data:
// and file: documents, which have no HTTP status.
const DESCRIBE_PAGE = `(() => {
  const entry = performance.getEntriesByType("navigation")[0];
  return { url: location.href, title: document.title, status: entry && entry.responseStatus ? entry.responseStatus : null };
})()`;

/**
 * The page's address, title and HTTP status, in one round trip (the tabs API when the page cannot answer).
 * @param {Record<string, any>} ctx
 * @param {number} tabId
 * @returns {Promise<{url: string, title: string, status: number | null}>}
 */
export async function describePage(ctx, tabId) {
  try {
    const reply = await withDeadline(
      ctx.cdp.send(tabId, "Runtime.evaluate", { expression: DESCRIBE_PAGE, returnByValue: true }),
      { timeoutMs: DESCRIBE_TIMEOUT_MS },
    );
    const value = reply?.result?.value;
    if (value && typeof value.url === "string") return value;
  } catch {
    // A dialog left open or a busy page: the tabs API still knows the address and title.
  }
  const tab = await ctx.tabs.get(tabId);
  return { url: tab.url || tab.pendingUrl || "", title: tab.title ?? "", status: null };
}
