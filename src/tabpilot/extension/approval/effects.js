// @ts-check
// Effects, not guesses: what a side-panel agent's action really does to the world is held until the
// person allows it, whatever element it was done on (a select whose handler posts, a div that POSTs
// from script, the Enter inside a typed text, a reload that sends a form again).
//
// - Before: a panel session's action on a tab opens a hold on it; from then on every request the tab
//   starts is caught (the site guard owns the Fetch domain and asks `answer` about each). Starting an
//   action on a tab that is now on a site outside the turn's (a redirect, a script that set location)
//   asks first.
// - During, and for SETTLE_MS after the last action ended: a request that changes state (any method
//   but GET/HEAD/OPTIONS) or a navigation of the tab to a site outside the turn's waits, paused in the
//   browser, for the person's answer on a card that names the method, the address, the site and the
//   action that caused it. Yes continues it, no or no answer fails it; reads pass at once. A card the
//   person already allowed for this very action (approval/gate.js: its destination, or its site when
//   the card named none) covers what it said, and "Always on ‹site›" grants count as everywhere.
// - After: an action whose effect was refused fails with the person's no; the hold ends once the page
//   has been left alone for SETTLE_MS.
import { decide, grantable, grantedBy, changesState } from "./rules.js";
import { inScope, siteOf } from "./scope.js";

/** How long after an action its page's requests still count as its effects. */
export const SETTLE_MS = 1000;
/** How long an action waits, at most, for the interception to catch a request its page was seen to send. */
const CAUGHT_MS = 1000;
/** Calls that act on a page (the reads, and the help the person gives, cause nothing of the agent's). */
export const ACTIONS = new Set([
  "tool.click",
  "tool.hover",
  "tool.drag",
  "tool.focus",
  "tool.fill",
  "tool.type",
  "tool.press",
  "tool.select",
  "tool.check",
  "tool.scroll",
  "tool.upload",
  "tool.dialog",
  "tool.evaluate",
  "tool.navigate",
  "tool.navigate_back",
  "tool.navigate_forward",
  "tool.reload",
]);
/** Calls that take the tab away from where it is: the site it is on now is not theirs to act on. */
const LEAVING = new Set(["tool.navigate", "tool.navigate_back", "tool.navigate_forward"]);
/** Rules whose yes also lets through what the action sends: its form, its upload, the site it goes to. */
const SENDING = new Set(["form-submit", "consequential", "upload", "off-site", "send"]);
const CATCH_ALL = Object.freeze([{ urlPattern: "*", requestStage: /** @type {const} */ ("Request") }]);

/**
 * @typedef {import("./gate.js").Turn} Turn
 * @typedef {{method: string, url: string, site: string | null, leaves: boolean}} Effect
 *   leaves: a navigation of the tab to a site outside the turn's (else: a request that changes state)
 * @typedef {{rule: string, url: string | null, site: string | null}} Allowed
 * @typedef {{signal: AbortSignal, progress: (p: Record<string, unknown>) => void}} Call
 * @typedef {{call: Call, activity: string, allowed: Allowed[], judged: Promise<boolean>[], refused: unknown,
 *   sent: Set<string>, caught: Set<string>, wake: (() => void) | null}} Run
 *   one action's call: what the person allowed for it, the answers about what it caused, and the
 *   state-changing requests its page was seen to send (Network events) that the interception has not
 *   caught yet (they come on another channel, often after the action's own answer)
 * @typedef {{sessionId: string, turn: Turn, running: number, run: Run | null, last: Run | null,
 *   held: Map<string, Promise<boolean>>, timer: ReturnType<typeof setTimeout> | null}} Hold
 *   run: the call acting now; last: the latest, whose effects still count while the page settles
 */

/** An address without its fragment (what a server sees). @param {string} url */
const bare = (url) => url.split("#")[0];

/**
 * What a caught request is to the person: an effect to hold, or nothing (null). Pure.
 * @param {{method?: string, url?: string}} request
 * @param {{document: boolean, main: boolean, scope: import("./scope.js").Scope}} where
 *   document/main: it loads a document, in the tab's top frame
 * @returns {Effect | null}
 */
export function effectOf(request, { document, main, scope }) {
  const method = String(request.method ?? "GET").toUpperCase();
  const url = String(request.url ?? "");
  const site = siteOf(url);
  if (changesState(method)) return { method, url, site, leaves: false };
  if (document && main && site !== null && !inScope(site, scope)) return { method, url, site, leaves: true };
  return null;
}

/**
 * Does something the person allowed in this hold stand for the effect? A destination covers requests
 * to that address; a card that named none covers the site it named.
 * @param {Allowed[]} allowed @param {Effect} effect
 */
export function covered(allowed, effect) {
  return allowed.some((a) => SENDING.has(a.rule) && (a.url ? bare(a.url) === bare(effect.url) : a.site !== null && a.site === effect.site));
}

/**
 * @param {{
 *   turnOf(sessionId: string): Promise<Turn | null>,
 *   tabOf(sessionId: string, params: Record<string, any>, ctx: Record<string, any>): Promise<{id: number, url?: string} | null>,
 *   grants: {cover(rules: string[], start: string, target: string): Promise<boolean>, add(rules: string[], start: string, target: string): Promise<void>},
 *   asks: {ask(request: any, call: Call): Promise<{always: boolean}>},
 *   retarget: (tabId: number) => Promise<void>,
 *   activityOf: (method: string, params: Record<string, any>) => string,
 *   timers?: {setTimeout: typeof setTimeout, clearTimeout: typeof clearTimeout},
 * }} deps
 *   tabOf: the tab a call acts on (null: the call finds out itself what is wrong); retarget: make the
 *   tab's targets intercept by `patterns` again; activityOf: how a card names the action
 */
export function createEffects({ turnOf, tabOf, grants, asks, retarget, activityOf, timers = globalThis }) {
  /** @type {Map<number, Hold>} */
  const holds = new Map();
  /** Sites outside a turn's the person let the agent act on, per conversation and turn start. @type {Map<string, Set<string>>} */
  const visited = new Map();

  const turnKey = (/** @type {Turn} */ turn) => `${turn.conversationId} ${turn.start ?? ""} ${turn.scope.sites.join(" ")}`;

  /** @param {Turn} turn @param {string | null} site */
  function mayBeOn(turn, site) {
    return site === null || inScope(site, turn.scope) || (visited.get(turnKey(turn))?.has(site) ?? false);
  }

  /** @param {Turn} turn @param {string} site */
  function visit(turn, site) {
    const key = turnKey(turn);
    if (!visited.has(key)) visited.set(key, new Set());
    /** @type {Set<string>} */ (visited.get(key)).add(site);
  }

  /**
   * Ask about one effect or one action off the turn's sites: resolves to true on a yes (stored as a
   * grant when the person chose Always), rejects with the refusal.
   * @param {Hold} hold @param {number} tabId @param {import("./rules.js").Action} action @param {string} target @param {Call} call
   */
  async function judge(hold, tabId, action, target, call) {
    const decision = decide(action);
    if (decision.effect !== "ask" || decision.rule === null) return false;
    const where = action.targetSite ?? action.site ?? "";
    const start = hold.turn.start ?? action.site ?? "";
    const always = grantable(decision) && start !== "" && where !== "";
    const granted = grantedBy(decision);
    if (always && (await grants.cover(granted, start, where))) return true;
    const card = { rule: decision.rule.id, title: decision.rule.title, rules: decision.rules, target, site: where || null, start: start || null, always };
    const answer = await asks.ask({ sessionId: hold.sessionId, conversationId: hold.turn.conversationId, tabId, card }, call);
    if (answer.always && always) await grants.add(granted, start, where);
    return true;
  }

  /** Wait (a little at most) until every request the action's page was seen to send has been caught. @param {Run} run */
  function caughtAll(run) {
    return new Promise((resolve) => {
      const done = () => {
        timers.clearTimeout(timer);
        run.wake = null;
        resolve(undefined);
      };
      const timer = timers.setTimeout(done, CAUGHT_MS);
      run.wake = () => run.sent.size === 0 && done();
      run.wake();
    });
  }

  /** @param {number} tabId @param {Hold} hold */
  function closeLater(tabId, hold) {
    if (hold.timer) timers.clearTimeout(hold.timer);
    hold.timer = timers.setTimeout(() => {
      if (hold.running > 0 || holds.get(tabId) !== hold) return;
      holds.delete(tabId);
      void retarget(tabId).catch(() => {});
    }, SETTLE_MS);
  }

  /**
   * Open (or keep open) the hold on the tab for one call; resolves once the tab catches every request.
   * @param {number} tabId @param {string} sessionId @param {Turn} turn @param {Run} run
   */
  async function open(tabId, sessionId, turn, run) {
    const known = holds.get(tabId);
    const hold = known && known.sessionId === sessionId ? known : { sessionId, turn, running: 0, run: null, last: null, held: new Map(), timer: null };
    if (hold !== known) holds.set(tabId, hold);
    if (hold.timer) timers.clearTimeout(hold.timer);
    hold.timer = null;
    hold.running++;
    hold.turn = turn;
    hold.run = run;
    hold.last = run;
    if (hold !== known) await retarget(tabId);
    return hold;
  }

  /**
   * The hold around one handler: open before, and after it wait for the answers about what it caused.
   * @param {string} method @param {import("../link/dispatcher.js").Handler} handler
   * @returns {import("../link/dispatcher.js").Handler}
   */
  function watched(method, handler) {
    return async (params, ctx) => {
      const sessionId = params.session_id;
      ctx.mark?.("effects");
      const turn = typeof sessionId === "string" ? await turnOf(sessionId) : null;
      const tab = turn ? await tabOf(sessionId, params, ctx).catch(() => null) : null;
      if (!turn || !tab) return handler(params, ctx);
      /** @type {Run} */
      const run = { call: { signal: ctx.signal, progress: ctx.progress }, activity: activityOf(method, params), allowed: [], judged: [], refused: null, sent: new Set(), caught: new Set(), wake: null };
      const hold = await open(tab.id, sessionId, turn, run);
      ctx.mark?.("effects_held");
      try {
        const site = siteOf(tab.url);
        if (!LEAVING.has(method) && !mayBeOn(turn, site)) {
          const action = { action: "act", site, targetSite: site, scope: turn.scope };
          await judge(hold, tab.id, action, `${run.activity} on ${tab.url}`, run.call);
          visit(turn, /** @type {string} */ (site));
        }
        /** @type {unknown} */
        let failure = null;
        const result = await Promise.resolve(handler(params, ctx)).catch((err) => {
          failure = err ?? new Error("handler failed");
        });
        ctx.mark?.("acted");
        if (run.sent.size > 0) await caughtAll(run);
        // The person's no says best what became of the action (its own wait may have run out meanwhile).
        await Promise.all(run.judged);
        ctx.mark?.("effects_settled");
        if (run.refused) throw run.refused;
        if (failure) throw failure;
        return result;
      } finally {
        if (hold.run === run) hold.run = null;
        hold.running--;
        closeLater(tab.id, hold);
      }
    };
  }

  return {
    /** The Fetch.enable patterns a tab needs for its hold (none while it has none). @param {number} tabId */
    patterns(tabId) {
      return holds.has(tabId) ? CATCH_ALL : [];
    },

    /**
     * A request the tab started (caught by the site guard, not blocked): true to let it go, false to
     * fail it. Waits for the person when it is an effect of a held action.
     * @param {number} tabId @param {{request?: {method?: string, url?: string}, resourceType?: string, networkId?: string}} paused
     * @param {{main: boolean, session?: string | null}} where main: in the tab's top frame; session: the
     *   CDP session of the frame's target (null: the tab's own)
     */
    async answer(tabId, paused, { main, session = null }) {
      const hold = holds.get(tabId);
      if (!hold) return true;
      if (hold.run && paused.networkId) {
        const id = `${session ?? ""}|${paused.networkId}`;
        hold.run.caught.add(id);
        hold.run.sent.delete(id);
        hold.run.wake?.();
      }
      const run = hold.run ?? hold.last;
      const effect = effectOf(paused.request ?? {}, { document: paused.resourceType === "Document", main, scope: hold.turn.scope });
      if (!effect || !run || covered(run.allowed, effect)) return true;
      if (effect.leaves && mayBeOn(hold.turn, effect.site)) return true;
      const key = `${effect.method} ${bare(effect.url)}`;
      const waiting = hold.held.get(key);
      if (waiting) return waiting;
      // After the action's call is over nobody waits on it: the card has a signal of its own.
      const live = hold.run === run;
      const call = live ? run.call : { signal: new AbortController().signal, progress: () => {} };
      const action = { action: "effect", method: effect.method, targetSite: effect.site, scope: hold.turn.scope };
      const target = `${effect.method} ${effect.url} (after ${run.activity})`;
      const judged = judge(hold, tabId, action, target, call).then(
        () => {
          run.allowed.push({ rule: "send", url: effect.url, site: effect.site });
          if (effect.leaves && effect.site) visit(hold.turn, effect.site);
          return true;
        },
        (err) => {
          run.refused ??= err;
          return false;
        },
      );
      if (live) run.judged.push(judged);
      hold.held.set(key, judged);
      void judged.finally(() => hold.held.delete(key));
      return judged;
    },

    /**
     * The tab's page sends a request (Network.requestWillBeSent): one that changes state, sent while
     * an action runs, is waited for by that action until the interception has caught it.
     * @param {number} tabId @param {string | null} session @param {{requestId?: string, request?: {method?: string}}} params
     */
    sent(tabId, session, params) {
      const run = holds.get(tabId)?.run;
      if (!run || !params.requestId || !changesState(params.request?.method)) return;
      const id = `${session ?? ""}|${params.requestId}`;
      if (!run.caught.has(id)) run.sent.add(id);
    },

    /** The person (or a grant) allowed an action of this tab's hold: what it sends passes. @param {number} tabId @param {Allowed} allowed */
    cover(tabId, allowed) {
      const hold = holds.get(tabId);
      if (!hold?.run) return;
      hold.run.allowed.push(allowed);
      if (allowed.rule === "off-site" && allowed.site) visit(hold.turn, allowed.site);
    },

    /**
     * The method table with the hold around every call that acts on a page.
     * @param {Readonly<Record<string, import("../link/dispatcher.js").Handler>>} handlers
     */
    watch(handlers) {
      return Object.freeze(Object.fromEntries(Object.entries(handlers).map(([method, h]) => [method, ACTIONS.has(method) ? watched(method, h) : h])));
    },
  };
}
