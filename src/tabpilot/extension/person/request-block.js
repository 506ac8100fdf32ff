// @ts-check
// Blocked means no request leaves a tab the agent could drive: while any session is open, the
// browser's own request blocker (declarativeNetRequest session rules) fails every request to a
// blocked site — navigations, frames, fetch/XHR (keepalive too), beacons, WebSocket, EventSource,
// prefetches, workers' fetches — from every tab but the person's own. Rules name the tabs they spare
// (the person's) rather than the ones they hold (the agent's), so a tab that appears (a popup, a new
// tab from a link or window.open in an agent tab) is held from its first request on; a new tab the
// person opened is theirs as soon as the worker hears of it, and its first page is loaded again if the
// rule got to it first. Requests that belong to no tab (service workers) are held too, except a
// site's own worker fetching from its own (named, not loopback) host where no path of it is blocked.
//
// In a tab we debug, the debugger's interception (site-guard.js) decides about pages and frames: it
// leaves a page where it was instead of showing an error page, and tells the agent why. So documents
// are held by a rule of their own, which spares debugged tabs too; a tab is counted as debugged only
// once that rule says so (cdp.js waits for it when it attaches).
import { STORAGE_KEY, parseBlockList } from "./blocklist.js";
import { LOOPBACK } from "./site-address.js";

/** chrome.tabs.TAB_ID_NONE: a request no tab made. */
const NO_TAB = -1;
const DOCUMENTS = ["main_frame", "sub_frame"];
const SUBRESOURCES = ["stylesheet", "script", "image", "font", "object", "xmlhttprequest", "ping", "csp_report", "media", "websocket", "webtransport", "webbundle", "other"];
const RESOURCE_TYPES = [...DOCUMENTS, ...SUBRESOURCES];
const SCHEMES = /** @type {const} */ ({ http: "(?:http|ws)", https: "(?:https|wss)" });
const DEFAULT_PORTS = ["80", "443"];
// The browser writes a request's address in ASCII (punycode, percent-escapes), host in lower case. A
// rule's regex must compile into 2 KB, so its character classes are small and positive.
const USERINFO = "(?:[A-Za-z0-9%._~!$&'()*+,;=:-]*@)?";
const LABELS = "[a-z0-9_.-]*";

/** @param {string} text */
function escapeRe(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** @param {number} n */
const hex = (n) => n.toString(16);

/**
 * Every way the browser may write a canonical host in a request's address (it folds case, IDN and
 * IPv4 notations itself; it keeps trailing dots, and IPv6 literals may embed an IPv4 address): one
 * regex each, as a rule's regex must compile into 2 KB.
 * @param {import("./blocklist.js").Rule} rule
 * @returns {string[]}
 */
function hostPatterns(rule) {
  const { host } = rule;
  const embedded = (/** @type {number[]} */ [a, b, c, d]) => `\\[::(?:ffff:)?${hex((a << 8) | b)}:${hex((c << 8) | d)}\\]`;
  if (host === LOOPBACK) return [`(?:${LABELS}\\.)?localhost`, "127\\.[0-9.]+", "0\\.0\\.0\\.0", "\\[::1?\\]", "\\[::(?:ffff:)?7f[0-9a-f]+:[0-9a-f]+\\]"];
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return [escapeRe(host), embedded(host.split(".").map(Number))];
  return [rule.subdomains ? `(?:${LABELS}\\.)?${escapeRe(host)}` : escapeRe(host)];
}

/**
 * The regexFilters (RE2, matched against the whole address) of one blocked-sites rule.
 * @param {import("./blocklist.js").Rule} rule
 * @returns {string[]}
 */
export function ruleRegexes(rule) {
  const scheme = rule.scheme === null ? "(?:https?|wss?)" : SCHEMES[/** @type {"http" | "https"} */ (rule.scheme)];
  // A default port is not written: a rule for port 80 or 443 also holds the other scheme's addresses
  // without a port (more than the list says, never less; the exact check runs in attached tabs).
  const port = rule.port === null ? "(?::[0-9]+)?" : DEFAULT_PORTS.includes(rule.port) ? `(?::${rule.port})?` : `:${rule.port}`;
  const path = rule.path === null ? "(?:[/?#]|$)" : `(?:${rule.path.source.replace(/^\^/, "")})`;
  return hostPatterns(rule).map((host) => `^${scheme}://${USERINFO}${host}\\.*${port}${path}`);
}

/**
 * The session rules for a stored list, sparing the given tabs. Empty: nothing to block.
 * @param {unknown} storedValue @param {number[]} spared the person's tabs
 * @param {number[]} [debugged] tabs whose documents the debugger's interception looks after
 * @param {string} [self] this extension's id: its own requests (the daemon link) are never held
 * @returns {chrome.declarativeNetRequest.Rule[]}
 */
export function sessionRules(storedValue, spared, debugged = [], self = "") {
  const parsed = parseBlockList(storedValue);
  // A damaged list blocks every web address, as every other check does.
  const filters = parsed.ok
    ? parsed.rules.flatMap((rule) => ruleRegexes(rule).map((regex) => ({ regex, host: rule.host, path: rule.path !== null })))
    : [{ regex: "^(?:https?|wss?)://", host: "", path: false }];
  /** @type {any[]} */
  const rules = [];
  for (const { regex, host, path } of filters) {
    // A site's own worker may fetch from its own host, but not from a path of it the person blocked: an
    // agent tab's page could have it read that path for it.
    const named = host !== "" && host !== LOOPBACK && !/^[\d.]+$|^\[/.test(host) && !path;
    const common = { regexFilter: regex, isUrlFilterCaseSensitive: true };
    rules.push(
      { id: rules.length + 1, priority: 1, action: { type: "block" }, condition: { ...common, resourceTypes: DOCUMENTS, excludedTabIds: [...spared, ...debugged, NO_TAB] } },
      { id: rules.length + 2, priority: 1, action: { type: "block" }, condition: { ...common, resourceTypes: SUBRESOURCES, excludedTabIds: [...spared, NO_TAB] } },
      {
        id: rules.length + 3,
        priority: 1,
        action: { type: "block" },
        condition: {
          regexFilter: regex,
          isUrlFilterCaseSensitive: true,
          resourceTypes: RESOURCE_TYPES,
          tabIds: [NO_TAB],
          ...(named || self ? { excludedInitiatorDomains: [...(named ? [host] : []), ...(self ? [self] : [])] } : {}),
        },
      },
    );
  }
  return rules;
}

/**
 * @typedef {{id?: number, windowId?: number, openerTabId?: number, url?: string, pendingUrl?: string}} Tab
 * @typedef {{addListener(fn: (...args: any[]) => void): void}} ChromeEvent
 */

/**
 * Register in the worker's first turn.
 * @param {{
 *   dnr: {getSessionRules(): Promise<{id: number}[]>, updateSessionRules(u: {removeRuleIds?: number[], addRules?: any[]}): Promise<void>},
 *   tabs: {query(q: object): Promise<Tab[]>, get(tabId: number): Promise<Tab>, update(tabId: number, props: object): Promise<unknown>,
 *          onCreated: ChromeEvent, onRemoved: ChromeEvent, onAttached: ChromeEvent},
 *   navigationErrors: ChromeEvent,
 *   storage: {get(key: string): Promise<Record<string, unknown>>},
 *   onChanged: ChromeEvent,
 *   sessions: {list(): {sessionId: string, windowId: number}[], ownerOf(tab: Tab): Promise<string | null>, onChange(fn: () => void): () => void, ready: Promise<unknown>},
 *   isBlocked: (url: string | undefined) => Promise<boolean>,
 *   onDetach?: (fn: (tabId: number) => void) => void,
 *   self?: string,
 *   log?: Pick<Console, "warn">,
 * }} deps
 *   navigationErrors: webNavigation.onErrorOccurred (a person's first page the rule got to is loaded again)
 */
export function createRequestBlock({ dnr, tabs, navigationErrors, storage, onChanged, sessions, isBlocked, onDetach = () => {}, self = "", log = console }) {
  /** Tabs opened by a tab the agent could drive: never the person's, wherever they open. @type {Set<number>} */
  const agentOpened = new Set();
  /** The person's tabs, as the rules last spared them. @type {Set<number>} */
  let spared = new Set();
  // Events come in the worker's first turn; the rules are brought in line once the sessions are known.
  let updates = Promise.resolve();
  /** Tabs the debugger is attached to. @type {Set<number>} */
  const debuggedTabs = new Set();
  onDetach((tabId) => {
    if (debuggedTabs.delete(tabId)) refresh();
  });

  tabs.onCreated.addListener((/** @type {Tab} */ tab) => void created(tab));
  tabs.onRemoved.addListener((/** @type {number} */ tabId) => {
    agentOpened.delete(tabId);
    debuggedTabs.delete(tabId);
    refresh();
  });
  tabs.onAttached.addListener(() => refresh());
  onChanged.addListener((/** @type {Record<string, unknown>} */ changes, /** @type {string} */ area) => {
    if (area === "local" && STORAGE_KEY in changes) refresh();
  });
  navigationErrors.addListener((/** @type {{tabId: number, frameId: number, url: string, error: string}} */ details) => void retry(details));
  sessions.onChange(() => refresh());
  void sessions.ready.then(() => refresh());

  /** @param {Tab} tab */
  async function created(tab) {
    if (tab.id === undefined) return;
    const opener = tab.openerTabId === undefined ? null : await tabs.get(tab.openerTabId).catch(() => null);
    if (opener && !(await isPersons(opener))) agentOpened.add(tab.id);
    await refresh();
  }

  /** A person's tab whose first page the rule held before the tab was known to be theirs. */
  async function retry(/** @type {{tabId: number, frameId: number, url: string, error: string}} */ { tabId, frameId, url, error }) {
    if (frameId !== 0 || !/ERR_BLOCKED_BY_CLIENT/.test(error)) return;
    await updates;
    if (!spared.has(tabId) || !(await isBlocked(url))) return;
    await tabs.update(tabId, { url }).catch(() => {});
  }

  /** @param {Tab} tab */
  async function isPersons(tab) {
    if (tab.id === undefined || agentOpened.has(tab.id)) return false;
    return (await sessions.ownerOf(tab)) === null;
  }

  /** Bring the rules in line with the list, the sessions and the tabs (one update at a time, each from scratch). */
  function refresh() {
    updates = updates.then(apply).catch((err) => log.warn("tabpilot: cannot update the blocked-site request rules", err));
    return updates;
  }

  async function apply() {
    await sessions.ready;
    const open = sessions.list().length > 0;
    const stored = open ? (await storage.get(STORAGE_KEY).catch(() => ({ [STORAGE_KEY]: { unreadable: true } })))[STORAGE_KEY] : undefined;
    const persons = new Set();
    // With nothing blocked there is no tab to tell apart.
    const listed = parseBlockList(stored);
    const any = open && (!listed.ok || listed.rules.length > 0);
    if (any) for (const tab of await tabs.query({})) if (await isPersons(tab)) persons.add(/** @type {number} */ (tab.id));
    const sorted = (/** @type {Set<number>} */ set) => [...set].sort((a, b) => a - b);
    const rules = any ? sessionRules(stored, sorted(persons), sorted(debuggedTabs), self) : [];
    const old = await dnr.getSessionRules();
    spared = persons;
    if (old.length === 0 && rules.length === 0) return;
    await dnr.updateSessionRules({ removeRuleIds: old.map((r) => r.id), addRules: rules });
  }

  return {
    refresh,

    /** The debugger attached to the tab: its documents are the interception's from when this resolves. @param {number} tabId */
    async debugged(tabId) {
      if (debuggedTabs.has(tabId)) return;
      debuggedTabs.add(tabId);
      await refresh();
    },
  };
}
