// @ts-check
// The gate every consequential tool of a side-panel session goes through, after it found its element
// and before it acts: the action is described, decided by the rules, and when they say ask, the
// person is asked (asks.js) while the call waits. Sessions of shell and MCP agents pass untouched:
// the gate costs them one lookup in the session table.
//
// Check, then act, on the same facts: after a yes the caller looks at the page again and comes back
// here; the action is described anew, and only the very card the person allowed passes without asking
// (a form re-pointed while the card was open asks again, with the new destination). What the action
// then really sends is held and judged by effects.js.
import { RpcError, fromPage, said } from "../link/protocol.js";
import { decide, grantable, grantedBy } from "./rules.js";
import { siteOf } from "./scope.js";

/** The cards allowed in each call, as they read: a second look that finds the same facts passes. @type {WeakMap<object, Set<string>>} */
const allowedIn = new WeakMap();

/**
 * @typedef {import("./rules.js").ElementFacts} ElementFacts
 * @typedef {{conversationId: string, scope: import("./scope.js").Scope, start: string | null}} Turn
 *   start: the site the turn began on (grants are keyed by it)
 * @typedef {{
 *   turnOf(sessionId: string): Promise<Turn | null>,
 *   grants: {cover(rules: string[], start: string, target: string): Promise<boolean>, add(rules: string[], start: string, target: string): Promise<void>},
 *   asks: {ask(request: any, call: {signal: AbortSignal, progress: (p: Record<string, unknown>) => void}): Promise<{always: boolean}>},
 *   effects?: {cover(tabId: number, allowed: {rule: string, url: string | null, site: string | null}): void},
 * }} Approvals
 *   effects: told what the person (or their grant) allowed, so the requests that very action makes pass
 * @typedef {{action: string, target: string, facts?: () => Promise<ElementFacts | null>, url?: string | null,
 *   key?: string, dialog?: string, accept?: boolean, code?: string}} What
 *   target: how the card names what is acted on (never a typed value); facts: reads the element acted
 *   on in its page (only a panel session's action pays for that); url: where the action sends the tab
 */

/** Where an action sends the tab: a navigation's address, a link's, a submitted form's. @param {What} what @param {ElementFacts | null} el */
function destinationOf(what, el) {
  if (what.url) return what.url;
  if (!el) return null;
  if (el.href) return el.href;
  return el.submits || (what.key === "Enter" && el.enterSubmits) ? (el.formAction ?? null) : null;
}

/**
 * Decide, and ask when the rules say so. Returns true when the person was asked and said yes: the
 * caller then looks at the page again (it may have changed while they decided) and calls this again,
 * until it returns false. False: nothing to ask, a grant stands, or the person allowed these very facts
 * in this call. Throws the refusal otherwise.
 * @param {Record<string, any>} ctx handler context: approvals, tabs, sites, signal, progress
 * @param {string} sessionId @param {number} tabId @param {What} what
 */
export async function approve(ctx, sessionId, tabId, what) {
  /** @type {Approvals | undefined} */
  const approvals = ctx.approvals;
  const turn = approvals ? await approvals.turnOf(sessionId) : null;
  if (!approvals || !turn) return false;
  const tab = await ctx.tabs.get(tabId).catch(() => null);
  const site = siteOf(tab?.url ?? tab?.pendingUrl);
  const element = what.facts ? await what.facts() : null;
  const destination = destinationOf(what, element);
  const targetSite = destination ? siteOf(destination) : null;
  const blocked = destination ? await ctx.sites.isBlocked(destination) : false;
  const decision = decide({ ...what, element, site, targetSite, blocked, scope: turn.scope });
  if (decision.effect === "allow" || decision.rule === null) return false;
  if (decision.effect === "deny") {
    throw new RpcError("blocked_site", said`${fromPage(what.target)} goes to a site the person blocked`, "site_blocked", {
      hint: "The person blocked this site for agents: do not try another way in; tell them the task needs it.",
    });
  }
  const where = targetSite ?? site ?? "";
  const start = turn.start ?? site ?? "";
  const always = grantable(decision) && start !== "" && where !== "";
  const granted = grantedBy(decision);
  const allowed = { rule: decision.rule.id, url: destination, site: where || null };
  if (always && (await approvals.grants.cover(granted, start, where))) {
    approvals.effects?.cover(tabId, allowed);
    return false;
  }
  const card = {
    rule: decision.rule.id,
    title: decision.rule.title,
    rules: decision.rules,
    target: destination && destination !== what.target ? `${what.target} → ${destination}` : what.target,
    site: where || null,
    start: start || null,
    always,
    ...(what.code !== undefined ? { code: what.code } : {}),
  };
  const facts = JSON.stringify(card);
  const seen = allowedIn.get(ctx) ?? new Set();
  if (seen.has(facts)) return false;
  const conversationId = turn.conversationId;
  // The pass the action opened for its gesture closes: the page, and a card drawn in it, are the
  // person's while they decide (the look after a yes opens it again).
  ctx.shield?.unexpect();
  // Nor does the action's cue stay over the page: the browser would count it as covering the card, which
  // then never takes the person's click (the look after a yes draws the cue again).
  await ctx.cues?.clear(tabId);
  const answer = await approvals.asks.ask({ sessionId, conversationId, tabId, card }, { signal: ctx.signal, progress: ctx.progress });
  if (answer.always && always) await approvals.grants.add(granted, start, where);
  seen.add(facts);
  allowedIn.set(ctx, seen);
  approvals.effects?.cover(tabId, allowed);
  return true;
}
