// @ts-check
// tool.navigate / navigate_back / navigate_forward / reload, all through browser/navigation-wait.js.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, requireString, optionalBool, timeoutOf, waitUntilOf } from "../../link/params.js";
import { normalizeUrl } from "../../browser/urls.js";
import { runNavigation } from "../../browser/navigation-wait.js";
import { describePage } from "../../browser/page-info.js";
import { approve } from "../../approval/gate.js";
import { announce } from "../../page/action.js";

/** How long `open` waits for the download an address started to be written. */
const DOWNLOAD_WAIT_MS = 5000;

/**
 * Run one navigation command on a tab and build the navigation result.
 * @param {Record<string, any>} ctx handler context
 * @param {number} tabId
 * @param {{command: () => Promise<any>, waitUntil: string, timeoutMs: number, kind?: import("../../browser/navigation-wait.js").NavigationKind, requestedUrl?: string}} options
 */
export async function navigateTab(ctx, tabId, { command, waitUntil, timeoutMs, kind = "navigate", requestedUrl }) {
  if (requestedUrl) await ctx.sites.refuseDestination(requestedUrl, tabId);
  const downloads = ctx.downloads;
  const cursor = downloads?.cursor() ?? 0;
  const navigation = runNavigation({
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
  let sameDocument;
  try {
    ({ sameDocument } = await navigation);
  } catch (err) {
    // An address that serves an attachment ends its navigation there (net::ERR_ABORTED): a download.
    if (!(err instanceof RpcError && err.reason === "navigation_failed" && downloads)) throw err;
    const download = await downloads.wait(null, { after: cursor, ms: DOWNLOAD_WAIT_MS, tabId, signal: ctx.signal });
    if (!download) throw err;
    const page = await describePage(ctx, tabId);
    return { tab_id: tabId, url: page.url, title: page.title, status: null, reached: "download", same_document: false, download };
  }
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

/** @type {import("../../link/dispatcher.js").Handler} */
export async function navigate(params, ctx) {
  // Leaving a page on (or framing) a blocked site is the way out: only the destination is checked
  // here, and the page it lands on after (site-guard's gate). Nothing of the old page is read.
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params), { sites: "none" });
  const url = normalizeUrl(requireString(params, "url"), {
    allowFile: optionalBool(params, "allow_file", false),
    base: tab.url || undefined,
  });
  await approve(ctx, sessionIdOf(params), tab.id, { action: "navigate", target: url, url });
  await announce(ctx, tab.id, params);
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
  // A way out of a blocked page too: the entry it goes to is checked as a destination.
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params), { sites: "none" });
  const waitUntil = waitUntilOf(params);
  const timeoutMs = timeoutOf(params);
  const { currentIndex, entries } = await ctx.cdp.send(tab.id, "Page.getNavigationHistory");
  const entry = entries[currentIndex + delta];
  if (!entry) {
    throw new RpcError("invalid_params", `tab ${tab.id} has no ${delta < 0 ? "previous" : "next"} history entry`, "no_history_entry", {
      tab_id: tab.id,
    });
  }
  await announce(ctx, tab.id, params);
  return navigateTab(ctx, tab.id, {
    kind: "history",
    command: () => ctx.cdp.send(tab.id, "Page.navigateToHistoryEntry", { entryId: entry.id }),
    waitUntil,
    timeoutMs,
    requestedUrl: entry.url,
  });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export const navigateBack = (params, ctx) => traverse(params, ctx, -1);

/** @type {import("../../link/dispatcher.js").Handler} */
export const navigateForward = (params, ctx) => traverse(params, ctx, 1);

/** @type {import("../../link/dispatcher.js").Handler} */
export async function reload(params, ctx) {
  // A blocked frame does not stop a reload (its request fails again); a blocked page does.
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params), { sites: "address" });
  const ignoreCache = optionalBool(params, "hard", false);
  await announce(ctx, tab.id, params);
  return navigateTab(ctx, tab.id, {
    kind: "reload",
    command: () => ctx.cdp.send(tab.id, "Page.reload", { ignoreCache }),
    waitUntil: waitUntilOf(params),
    timeoutMs: timeoutOf(params),
    requestedUrl: tab.url,
  });
}
