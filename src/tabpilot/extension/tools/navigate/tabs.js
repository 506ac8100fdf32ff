// @ts-check
// tool.tab_list / tab_create / tab_close / tab_select: the session's tabs (tab_list also names the
// person's own tabs, so the agent can ask to borrow one). Tabs on blocked sites, and browser and
// extension pages, are left out.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, requireTabId, optionalBool, timeoutOf } from "../../link/params.js";
import { isBrowserPage, normalizeUrl } from "../../browser/urls.js";
import { navigateTab } from "./navigation.js";
import { approve } from "../../approval/gate.js";

const SCOPES = ["agent", "user", "all"];

/** @param {{url?: string, pendingUrl?: string}} tab */
const urlOf = (tab) => tab.url || tab.pendingUrl || "";

/**
 * scope "agent" (default): the session's tabs, its own and the ones it borrowed; "user": the person's
 * tabs outside every Agent Window, with their title and address only; "all": both.
 * @type {import("../../link/dispatcher.js").Handler}
 */
export async function tabList(params, { sessions, tabs, borrowing, sites }) {
  const scope = params.scope ?? "agent";
  if (!SCOPES.includes(scope)) throw new RpcError("invalid_params", `scope must be one of ${SCOPES.join(", ")}`);
  const sessionId = sessionIdOf(params);
  // Browser and extension pages are never the agent's, nor pages on blocked sites.
  const visible = async (/** @type {any} */ t) =>
    !isBrowserPage(t.url) && !isBrowserPage(t.pendingUrl) && !(await sites.isBlocked(t.url)) && !(await sites.isBlocked(t.pendingUrl));
  /** @type {Record<string, unknown>[]} */
  const listed = [];
  if (scope !== "user") {
    for (const t of await sessions.tabs(sessionId)) {
      if (!(await visible(t))) continue;
      listed.push({
        tab_id: t.id,
        url: urlOf(t),
        title: t.title ?? "",
        active: t.active === true,
        loading: t.status === "loading",
        scope: borrowing.borrowerOf(t.id) === sessionId ? "borrowed" : "agent",
      });
    }
  }
  if (scope !== "agent") {
    // Normal windows only: a popup or app window cannot give up its tab, so it cannot be borrowed.
    for (const t of await tabs.query({ windowType: "normal" })) {
      if (t.id === undefined || (await sessions.ownerOf(t)) !== null || !(await visible(t))) continue;
      listed.push({ tab_id: t.id, url: urlOf(t), title: t.title ?? "", scope: "user" });
    }
  }
  return { tabs: listed };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function tabCreate(params, ctx) {
  const { sessions, tabs, signal } = ctx;
  const sessionId = sessionIdOf(params);
  const session = await sessions.get(sessionId);
  let url = null;
  if (params.url !== undefined && params.url !== null) {
    const current = await sessions.resolveTab(sessionId, undefined, { anyState: true, sites: "none" }).catch(() => null);
    url = normalizeUrl(params.url, { allowFile: optionalBool(params, "allow_file", false), base: current?.url || undefined });
    await ctx.sites.refuseDestination(url);
    if (current) await approve(ctx, sessionId, current.id, { action: "tab_create", target: url, url });
  }
  const timeoutMs = timeoutOf(params);
  // Opened blank and navigated over CDP, so a bad address fails like tool.navigate does.
  const tab = await tabs.create({ windowId: session.windowId, url: "about:blank", active: true });
  // A panel session's new tab opens beside the person's and joins the conversation there.
  await sessions.adopt(sessionId, tab.id, { current: true });
  if (signal.aborted) {
    await tabs.remove(tab.id).catch(() => {});
    throw signal.reason;
  }
  if (url === null) return { tab_id: tab.id, url: urlOf(tab) || "about:blank", title: tab.title ?? "" };
  try {
    const result = await navigateTab(ctx, tab.id, {
      command: () => ctx.cdp.send(tab.id, "Page.navigate", { url }),
      waitUntil: "load",
      timeoutMs,
      requestedUrl: url,
    });
    // The blank page the tab was opened on is no page the agent visited: `back` must not land on it.
    await ctx.cdp.send(tab.id, "Page.resetNavigationHistory").catch(() => {});
    return { tab_id: tab.id, url: result.url, title: result.title };
  } catch (err) {
    if (signal.aborted) {
      await tabs.remove(tab.id).catch(() => {});
      throw err;
    }
    // The tab stays open (it may show the browser's error page); tell the agent which one it is.
    if (err instanceof RpcError) err.data.tab_id = tab.id;
    throw err;
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function tabClose(params, { sessions, tabs, cdp, borrowing }) {
  const sessionId = sessionIdOf(params);
  const session = await sessions.get(sessionId);
  const tab = await sessions.resolveTab(sessionId, optionalTabId(params), { anyState: true, sites: "none" });
  if (borrowing.borrowerOf(tab.id) === sessionId) {
    throw new RpcError("invalid_params", `tab ${tab.id} is the person's, borrowed: it is not yours to close`, undefined, {
      tab_id: tab.id,
      hint: `Give it back instead: tabpilot tab return ${tab.id}`,
    });
  }
  if (session.panel?.anchorTabId === tab.id) {
    throw new RpcError("invalid_params", `tab ${tab.id} is the person's tab the panel is on: it is not yours to close`, undefined, {
      tab_id: tab.id,
      hint: "Close only the tabs you opened.",
    });
  }
  if (!session.panel && tab.windowId === session.windowId) {
    const inWindow = await tabs.query({ windowId: session.windowId });
    // Closing the last tab would close the window and end the session.
    if (inWindow.length <= 1) await tabs.create({ windowId: session.windowId, url: "about:blank", active: true });
  }
  await cdp.detach(tab.id);
  await tabs.remove(tab.id);
  const current = await sessions.resolveTab(sessionId, undefined, { anyState: true, sites: "none" }).catch(() => null);
  return { tab_id: tab.id, closed: true, current_tab_id: current?.id ?? null };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function tabSelect(params, { sessions, tabs }) {
  const sessionId = sessionIdOf(params);
  const tab = await sessions.resolveTab(sessionId, requireTabId(params), { anyState: true, sites: "address" });
  await sessions.select(sessionId, tab.id);
  const updated = await tabs.update(tab.id, { active: true });
  return { tab_id: tab.id, url: urlOf(updated ?? tab), title: (updated ?? tab).title ?? "" };
}
