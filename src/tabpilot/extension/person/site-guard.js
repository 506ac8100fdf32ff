// @ts-check
// Enforces the person's blocked sites (blocklist.js holds the grammar). Nothing here leaves the
// extension: a refusal names neither the list nor the pattern that matched.
//
// - Before a page command: the tab's address and pending address, and every frame of it
//   (sessions.resolveTab calls `admit`); before a navigation: where it goes (`refuseDestination`).
//   Navigating away is the way out of a blocked tab: `open` checks only the destination (and the
//   after-check below the page it lands on), so the agent can leave a page it may not touch.
// - While we debug a tab: requests to blocked sites never leave the browser. Every target we attach
//   to (tabs and their out-of-process frames) intercepts requests whose address could be blocked
//   (Fetch.enable with patterns made from the list) and fails those that are. While a side-panel
//   agent's action holds a tab (approval/effects.js), it catches every request, and asks the hold
//   about each that is not blocked before anything else.
// - After a command (`gate`): a result from a tab whose page tried to go to a blocked site, or is on
//   one, or that opened a tab on one (closed at once), is replaced by the refusal. A frame that could
//   not load a blocked page just stays empty: the page around it is still the agent's to use.
// The list is cached, and the cache follows storage.onChanged; a value that is not a valid list
// blocks every web page.
import { RpcError } from "../link/protocol.js";
import { STORAGE_KEY, blockedBy, cookieBlocked, parseBlockList } from "./blocklist.js";
import { LOOPBACK } from "./site-address.js";
import { isBrowserPage, notDebugged } from "../browser/urls.js";

export const HINT = "The person blocked this site for agents: do not try another way in; tell them the task needs it.";
/** For a tab that is on (or holds a frame of) a blocked site: the way out is to leave it, never to go in. */
export const LEAVE_HINT =
  "The person blocked a site this tab shows: do not try another way in. To go on, open another URL in it (`tabpilot open URL`) or close it (`tabpilot tab close`).";
const DAMAGED_HINT =
  "The person's blocked-sites list is damaged, so every site is blocked: ask them to fix it in the tabpilot extension's options.";

/** Methods that act on no page, or only give the session's tabs back or away. Everything else is gated. */
const UNGATED = new Set(["system.ping", "tool.session_start", "tool.session_stop", "tool.tab_list", "tool.tab_close", "tool.tab_return"]);

/**
 * What a canonical host can look like in a request's address (the browser writes loopback and IPv4
 * addresses its own ways; any IPv6 literal may embed an IPv4 address).
 * @param {string} host
 */
function spellings(host) {
  if (host === LOOPBACK) return [host, "127.", "0.0.0.0", "["];
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) ? [host, "["] : [host];
}

/**
 * The Fetch.enable patterns that catch every request the list could block (coarse: anything containing
 * a blocked host; the exact check runs on each caught request). null: nothing to intercept.
 * @param {unknown} storedValue
 * @returns {{urlPattern: string, requestStage: "Request"}[] | null}
 */
export function interceptPatterns(storedValue) {
  const parsed = parseBlockList(storedValue);
  if (!parsed.ok) return [{ urlPattern: "*", requestStage: "Request" }];
  const hosts = new Set(parsed.rules.flatMap((rule) => spellings(rule.host)));
  if (hosts.size === 0) return null;
  // Fetch patterns know only * and ?, escaped with a backslash.
  return [...hosts].map((host) => ({ urlPattern: `*${host.replace(/[*?\\]/g, "\\$&")}*`, requestStage: "Request" }));
}

/**
 * @typedef {{url?: string, pendingUrl?: string, id?: number}} TabLike
 * @typedef {{tabId: number, sessionId: string | null}} Target
 * @typedef {{
 *   onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number, sessionId: string | null) => void, options?: {children?: boolean}): () => void,
 *   sendToSession(tabId: number, sessionId: string | null, method: string, params?: object): Promise<any>,
 *   targets(): Target[],
 * }} CdpLike
 */

/**
 * @param {{
 *   storage: {get(key: string): Promise<Record<string, unknown>>},
 *   onChanged: {addListener(fn: (changes: Record<string, {newValue?: unknown}>, area: string) => void): void},
 *   cdp: CdpLike,
 *   tabs: {get(tabId: number): Promise<TabLike>, remove(tabId: number): Promise<void>},
 *   frameUrls: {of(tabId: number): Promise<string[]>, knownOf(tabId: number): string[]},
 *   mainFrameId: (tabId: number) => Promise<string>,
 *   routes?: {patterns(): {urlPattern: string, requestStage: "Request"}[], answer(tabId: number, paused: any): Promise<[string, object] | null>},
 *   effects?: {patterns(tabId: number): readonly {urlPattern: string, requestStage: "Request"}[], answer(tabId: number, paused: any, main: boolean, sessionId: string | null): Promise<boolean>},
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   routes: the agent's network routes, asked about every caught request that is not blocked (the
 *   guard owns the Fetch domain, so it catches their patterns too); effects: the holds of panel
 *   sessions' actions, asked first (false: the person did not let it go)
 */
export function createSiteGuard({ storage, onChanged, cdp, tabs, frameUrls, mainFrameId, routes, effects, log = console }) {
  /** @type {Promise<unknown> | null} */
  let cached = null;
  /** Counts pages kept from going to a blocked site; `pageRefusals` holds the count at each tab's latest. */
  let refusals = 0;
  /** @type {Map<number, number>} */
  const pageRefusals = new Map();

  // Registered in the worker's first turn, like every listener.
  onChanged.addListener((changes, area) => {
    if (area !== "local" || !(STORAGE_KEY in changes)) return;
    cached = Promise.resolve(changes[STORAGE_KEY].newValue);
    void reapply();
  });
  cdp.onEvent(
    null,
    (method, params, tabId, sessionId) => {
      if (method === "Fetch.requestPaused") void decide(tabId, sessionId, params);
    },
    { children: true },
  );

  function storedValue() {
    cached ??= storage.get(STORAGE_KEY).then(
      (items) => items[STORAGE_KEY],
      // Unreadable counts as damaged: every site is blocked.
      () => ({ unreadable: true }),
    );
    return cached;
  }

  /** @param {string | undefined | null} url */
  async function isBlocked(url) {
    return blockedBy(await storedValue(), url) !== null;
  }

  /** @param {string} message @param {Record<string, unknown>} [data] @param {string} [hint] */
  async function refusal(message, data = {}, hint = HINT) {
    const damaged = !parseBlockList(await storedValue()).ok;
    return new RpcError("blocked_site", damaged ? `${message} (the blocked-sites list is damaged, so every site is blocked)` : message, "site_blocked", {
      ...data,
      hint: damaged ? DAMAGED_HINT : hint,
    });
  }

  /** A request caught by the Fetch patterns: let it go, or fail it before it leaves the browser. */
  async function decide(/** @type {number} */ tabId, /** @type {string | null} */ sessionId, /** @type {any} */ params) {
    let blocked = true;
    try {
      blocked = await isBlocked(params.request?.url);
    } catch (err) {
      log.warn("tabpilot: cannot check a request against the blocked sites; failing it", err);
    }
    const document = params.resourceType === "Document";
    const main = document && sessionId === null && params.frameId === (await mainFrameId(tabId).catch(() => null));
    const allowed = blocked || !effects ? !blocked : await effects.answer(tabId, params, main, sessionId).catch(() => false);
    const routed = allowed ? await routes?.answer(tabId, params).catch(() => null) : null;
    const answer = !allowed
      ? // Aborted leaves a page where it was (no error page is committed); a subresource just fails.
        ["Fetch.failRequest", { requestId: params.requestId, errorReason: document ? "Aborted" : "BlockedByClient" }]
      : routed ?? ["Fetch.continueRequest", { requestId: params.requestId }];
    if (blocked && main) pageRefusals.set(tabId, ++refusals);
    await cdp.sendToSession(tabId, sessionId, answer[0], answer[1]).catch(() => {
      // The request went away meanwhile (the frame navigated or closed).
    });
  }

  /** @param {(method: string, params?: object) => Promise<unknown>} send @param {number} [tabId] */
  async function intercept(send, tabId) {
    const held = tabId === undefined ? [] : effects?.patterns(tabId) ?? [];
    const caught = [...(interceptPatterns(await storedValue()) ?? []), ...(routes?.patterns() ?? []), ...held];
    await send(caught.length ? "Fetch.enable" : "Fetch.disable", caught.length ? { patterns: caught } : {});
  }

  /** The list changed (or one tab's hold did): every target we debug (of that tab) intercepts by the new patterns. @param {number} [only] */
  async function reapply(only) {
    await Promise.all(
      cdp.targets().filter(({ tabId }) => only === undefined || tabId === only).map(({ tabId, sessionId }) =>
        intercept((method, params) => cdp.sendToSession(tabId, sessionId, method, params), tabId).catch(() => {
          // A target that went away needs nothing.
        }),
      ),
    );
  }

  /**
   * Why the command's tab is refused after it ran, and the hint to give; or null.
   * @param {number} tabId @param {number} since the refusal count when the command started
   * @returns {Promise<[string, string] | null>}
   */
  async function landedOn(tabId, since) {
    if ((pageRefusals.get(tabId) ?? 0) > since) return [`the page in tab ${tabId} tried to go to a site the person blocked; it was stopped before reaching it`, HINT];
    const tab = await tabs.get(tabId).catch(() => null);
    if (!tab) return null;
    if (await isBlocked(tab.pendingUrl)) return [`tab ${tabId} is going to a site the person blocked`, LEAVE_HINT];
    for (const url of [tab.url, ...frameUrls.knownOf(tabId)]) {
      if (await isBlocked(url)) return [`tab ${tabId} is on a site the person blocked`, LEAVE_HINT];
    }
    return null;
  }

  /**
   * The after-check around one handler.
   * @param {import("../link/dispatcher.js").Handler} handler
   * @returns {import("../link/dispatcher.js").Handler}
   */
  function checked(handler) {
    return async (params, ctx) => {
      const since = refusals;
      let result;
      /** @type {unknown} */
      let failure = null;
      try {
        result = await handler(params, ctx);
      } catch (err) {
        failure = err ?? new Error("handler failed");
      }
      if (failure instanceof RpcError && failure.code === "blocked_site") throw failure;
      // The browser's request rules (request-block.js) held a page of a blocked site.
      if (failure instanceof RpcError && failure.reason === "navigation_failed" && /ERR_BLOCKED_BY_CLIENT/.test(String(failure.data?.error_text))) {
        const tabId = failure.data?.tab_id ?? params.tab_id;
        throw await refusal("the page tried to go to a site the person blocked; it was stopped before reaching it", Number.isInteger(tabId) ? { tab_id: tabId } : {});
      }
      const opened = /** @type {any} */ (result)?.opened_tab;
      if (opened && Number.isInteger(opened.tab_id)) {
        const tab = await tabs.get(opened.tab_id).catch(() => null);
        // A popup window's tab may not be known yet (or its page was held): where it was sent counts too.
        if ((await isBlocked(opened.url)) || (tab && ((await isBlocked(tab.url)) || (await isBlocked(tab.pendingUrl))))) {
          await tabs.remove(opened.tab_id).catch(() => {});
          throw await refusal(`the page opened a tab on a site the person blocked; tabpilot closed it`, { tab_id: /** @type {any} */ (result).tab_id });
        }
      }
      const tabId = /** @type {any} */ (result)?.tab_id ?? /** @type {any} */ (failure)?.data?.tab_id ?? params.tab_id ?? (await currentTab(ctx, params));
      const why = Number.isInteger(tabId) ? await landedOn(tabId, since) : null;
      if (why) throw await refusal(why[0], { tab_id: tabId }, why[1]);
      if (failure) throw failure;
      return result;
    };
  }

  return {
    isBlocked,

    /** Whether a cookie of this domain could go to a blocked site (whatever the pattern's port or path). @param {string} domain */
    cookieBlocked: async (domain) => cookieBlocked(await storedValue(), domain),

    /** The per-target setup cdp runs on every tab and frame session it attaches to. */
    intercept,

    /** What to catch changed (the agent's routes): every target we debug intercepts anew. */
    reapply,

    /**
     * Refuse a tab the agent may not use: its address, its pending address and, with `frames`, every
     * frame in it (this attaches to the tab).
     * @param {TabLike & {id: number}} tab
     * @param {{frames?: boolean}} [options]
     */
    async admit(tab, { frames = true } = {}) {
      const data = { tab_id: tab.id };
      for (const url of [tab.pendingUrl, tab.url]) if (isBrowserPage(url)) throw notDebugged(tab.id, /** @type {string} */ (url));
      if (await isBlocked(tab.pendingUrl)) throw await refusal(`tab ${tab.id} is going to a site the person blocked`, data, LEAVE_HINT);
      if (await isBlocked(tab.url)) throw await refusal(`tab ${tab.id} is on a site the person blocked`, data, LEAVE_HINT);
      if (!frames) return;
      for (const url of await frameUrls.of(tab.id)) {
        if (await isBlocked(url)) throw await refusal(`a frame in tab ${tab.id} is on a site the person blocked`, data, LEAVE_HINT);
      }
    },

    /**
     * Refuse a navigation to a blocked address before it starts; else make sure the tab's frames and
     * main frame are followed, so the after-check sees where the navigation really lands (a redirect).
     * @param {string} url @param {number} [tabId]
     */
    async refuseDestination(url, tabId) {
      if (await isBlocked(url)) throw await refusal(`${url} is on a site the person blocked`, tabId === undefined ? {} : { tab_id: tabId });
      if (tabId === undefined) return;
      // A page too busy to list its frames is still followed by its events; the gate checks after.
      await frameUrls.of(tabId).catch(() => {});
      await mainFrameId(tabId).catch(() => {});
    },

    /**
     * The method table with the after-check around every method that acts on a page.
     * @param {Readonly<Record<string, import("../link/dispatcher.js").Handler>>} handlers
     */
    gate(handlers) {
      return Object.freeze(Object.fromEntries(Object.entries(handlers).map(([method, h]) => [method, UNGATED.has(method) ? h : checked(h)])));
    },
  };
}

/** The session's current tab, for a command whose result names none. @param {any} ctx @param {Record<string, any>} params */
async function currentTab(ctx, params) {
  if (typeof params.session_id !== "string") return null;
  const tab = await ctx.sessions.resolveTab(params.session_id, undefined, { anyState: true, sites: "none" }).catch(() => null);
  return tab?.id ?? null;
}

