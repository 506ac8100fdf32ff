// @ts-check
// tool.navigate / navigate_back / navigate_forward / reload, all through lib/navigation-wait.js.
import { RpcError } from "../lib/protocol.js";
import { sessionIdOf, optionalTabId, requireString, optionalBool, timeoutOf, waitUntilOf } from "../lib/params.js";
import { normalizeUrl } from "../lib/urls.js";
import { runNavigation } from "../lib/navigation-wait.js";
import { withDeadline } from "../lib/deadline.js";

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

/**
 * Run one navigation command on a tab and build the navigation result.
 * @param {Record<string, any>} ctx handler context
 * @param {number} tabId
 * @param {{command: () => Promise<any>, waitUntil: string, timeoutMs: number, kind?: import("../lib/navigation-wait.js").NavigationKind, requestedUrl?: string}} options
 */
export async function navigateTab(ctx, tabId, { command, waitUntil, timeoutMs, kind = "navigate", requestedUrl }) {
  if (requestedUrl) await ctx.sites.refuseDestination(requestedUrl, tabId);
  const { sameDocument } = await runNavigation({
    cdp: ctx.cdp,
    dialogs: ctx.dialogs,
    tabId,
    kind,
    command,
    waitUntil,
    timeoutMs,
    signal: ctx.signal,
    requestedUrl,
  });
  const page = await describePage(ctx, tabId);
  return {
    tab_id: tabId,
    url: page.url,
    title: page.title,
    status: sameDocument ? null : page.status,
    reached: waitUntil,
    same_document: sameDocument,
  };
}

/** @type {import("../lib/dispatcher.js").Handler} */
export async function navigate(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const url = normalizeUrl(requireString(params, "url"), {
    allowFile: optionalBool(params, "allow_file", false),
    base: tab.url || undefined,
  });
  return navigateTab(ctx, tab.id, {
    command: () => ctx.cdp.send(tab.id, "Page.navigate", { url }),
    waitUntil: waitUntilOf(params),
    timeoutMs: timeoutOf(params),
    requestedUrl: url,
  });
}

/**
 * @param {Record<string, any>} params
 * @param {Record<string, any>} ctx
 * @param {-1 | 1} delta
 */
async function traverse(params, ctx, delta) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const waitUntil = waitUntilOf(params);
  const timeoutMs = timeoutOf(params);
  const { currentIndex, entries } = await ctx.cdp.send(tab.id, "Page.getNavigationHistory");
  const entry = entries[currentIndex + delta];
  if (!entry) {
    throw new RpcError("invalid_params", `tab ${tab.id} has no ${delta < 0 ? "previous" : "next"} history entry`, "no_history_entry", {
      tab_id: tab.id,
    });
  }
  return navigateTab(ctx, tab.id, {
    kind: "history",
    command: () => ctx.cdp.send(tab.id, "Page.navigateToHistoryEntry", { entryId: entry.id }),
    waitUntil,
    timeoutMs,
    requestedUrl: entry.url,
  });
}

/** @type {import("../lib/dispatcher.js").Handler} */
export const navigateBack = (params, ctx) => traverse(params, ctx, -1);

/** @type {import("../lib/dispatcher.js").Handler} */
export const navigateForward = (params, ctx) => traverse(params, ctx, 1);

/** @type {import("../lib/dispatcher.js").Handler} */
export async function reload(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const ignoreCache = optionalBool(params, "hard", false);
  return navigateTab(ctx, tab.id, {
    kind: "reload",
    command: () => ctx.cdp.send(tab.id, "Page.reload", { ignoreCache }),
    waitUntil: waitUntilOf(params),
    timeoutMs: timeoutOf(params),
    requestedUrl: tab.url,
  });
}
