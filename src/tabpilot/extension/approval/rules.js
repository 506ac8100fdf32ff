// @ts-check
// Which actions of a side-panel agent the person is asked about: a table of rules, each a condition
// over a described action, an effect and the words the card shows. Pure, so it is tested over plain
// descriptors (tests/js/approval/rules.test.js). Every rule that matches counts, and the most severe
// effect wins (allow < ask < deny), so the order of the table decides only which rule the card names.
// Shell and MCP agents' own sessions are never asked: the gate applies this to panel sessions only.
import { inScope } from "./scope.js";

/**
 * @typedef {{tag: string, type?: string, role?: string, name?: string, submits?: boolean,
 *   enterSubmits?: boolean, href?: string | null, formAction?: string | null,
 *   autocomplete?: string, field?: string, inFrame?: boolean}} ElementFacts
 *   What the page says of the element acted on (approval/describe.js): submits, a click on it sends
 *   its form; enterSubmits, Enter in it sends its form; href/formAction, where a link or that form goes;
 *   field, its name and id (credential hints); inFrame, the focus is in a frame we cannot look into
 * @typedef {{action: string, element?: ElementFacts | null, key?: string, site?: string | null,
 *   targetSite?: string | null, dialog?: string, accept?: boolean, blocked?: boolean,
 *   method?: string, scope: import("./scope.js").Scope}} Action
 *   action: the tool (click, fill, type, press, upload, navigate, tab_create, evaluate, dialog,
 *   download), `effect` for a request the page started while an action ran (effects.js: method, its
 *   HTTP method), `act` for any action on a tab that is now on a site (targetSite) outside the turn's;
 *   site: the page's; targetSite: where the action sends the tab, or the request goes, if anywhere
 * @typedef {"allow" | "ask" | "deny"} Effect
 * @typedef {{id: string, effect: Effect, title: string, always: boolean, when: (a: Action) => boolean}} Rule
 *   always: "Always on ‹site›" may be offered (never for running code)
 * @typedef {{effect: Effect, rule: Rule | null, rules: string[]}} Decision
 */

const SEVERITY = { allow: 0, ask: 1, deny: 2 };

/** Verbs whose click commits something wherever they stand in a control's name. */
const STRONG = /\b(buy|pay|purchase|checkout|check out|place (?:my |the |your )?order|delete|remove|transfer|send|publish|subscribe|unsubscribe|donate|book|reserve|sign up|signup|register|create (?:an |my |new )?account|confirm|submit|withdraw|cancel (?:my |the )?(?:order|subscription|account|plan))\b/i;
/** Words that commit as the control's first word ("Order now", "Post comment"), unless a noun they
 * name follows ("Order history", "Post settings"). */
const LEADING = /^\s*(order|post|reply|share|apply|accept|approve)\b(?!\s+(history|status|details|summary|number|list|archive|options|settings|preview|tracking|by)\b)/i;

/** @param {string | undefined} name */
export function consequentialName(name) {
  return typeof name === "string" && (STRONG.test(name) || LEADING.test(name));
}

/** Fields whose value is a secret: passwords, payment cards, one-time codes. @param {ElementFacts | null | undefined} el */
export function isCredential(el) {
  if (!el) return false;
  if (el.type === "password") return true;
  const auto = String(el.autocomplete ?? "").toLowerCase();
  if (/(^|\s)(cc-|current-password|new-password|one-time-code)/.test(auto)) return true;
  return /pass(word|code)|card.?num|cc.?(num|csc|cvc|cvv|exp)|\bcvc\b|\bcvv\b|security.?code|one.?time|\botp\b|\bpin\b|\bssn\b/i.test(el.field ?? "");
}

const typing = (/** @type {Action} */ a) => a.action === "fill" || a.action === "type";

/** HTTP methods that only read: a page's request with any other changes something on a server. */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** @param {string | undefined} method */
export function changesState(method) {
  return typeof method === "string" && !READS.has(method.toUpperCase());
}

/** @type {readonly Rule[]} */
export const RULES = Object.freeze([
  { id: "blocked", effect: "deny", title: "A blocked site", always: false, when: (a) => a.blocked === true },
  { id: "run-code", effect: "ask", title: "Run the agent's code in this page", always: false, when: (a) => a.action === "evaluate" },
  { id: "credential", effect: "ask", title: "Type into a secret field (password, card, one-time code)", always: true, when: (a) => typing(a) && isCredential(a.element) },
  // Never "always": each card names the files by path, and a grant would let any other file go.
  { id: "upload", effect: "ask", title: "Upload files to the page", always: false, when: (a) => a.action === "upload" },
  { id: "download", effect: "ask", title: "Download a file", always: true, when: (a) => a.action === "download" },
  {
    id: "form-submit",
    effect: "ask",
    title: "Submit a form",
    always: true,
    when: (a) =>
      ((a.action === "click" || (a.action === "press" && (a.key === "Enter" || a.key === "Space"))) && a.element?.submits === true) ||
      ((a.action === "press" || a.action === "type") && a.key === "Enter" && (a.element?.enterSubmits === true || a.element?.inFrame === true)),
  },
  { id: "consequential", effect: "ask", title: "An action that commits (buy, send, delete, publish…)", always: true, when: (a) => a.action === "click" && consequentialName(a.element?.name) },
  { id: "send", effect: "ask", title: "Let the page send data (a form, a script's request)", always: true, when: (a) => a.action === "effect" && changesState(a.method) },
  { id: "off-site", effect: "ask", title: "Go to a site outside this conversation's", always: true, when: (a) => a.targetSite != null && !inScope(a.targetSite, a.scope) },
  { id: "leave-page", effect: "ask", title: "Leave the page (answer its leave-page dialog)", always: true, when: (a) => a.action === "dialog" && a.accept === true && (a.dialog === "confirm" || a.dialog === "beforeunload") },
]);

/**
 * What to do with an action: every matching rule counts, the most severe effect wins, and the first
 * such rule in the table is the one the card names.
 * @param {Action} action @param {readonly Rule[]} [rules]
 * @returns {Decision}
 */
export function decide(action, rules = RULES) {
  const matched = rules.filter((r) => r.when(action));
  if (matched.length === 0) return { effect: "allow", rule: null, rules: [] };
  const worst = matched.reduce((a, b) => (SEVERITY[b.effect] > SEVERITY[a.effect] ? b : a));
  return { effect: worst.effect, rule: worst, rules: matched.map((r) => r.id) };
}

/**
 * Whether an "Always on ‹site›" grant may stand for this decision: the rule allows it and so does
 * every other rule that matched (a grant for form-submit does not wave through a run-code too).
 * @param {Decision} decision @param {readonly Rule[]} [rules]
 */
export function grantable(decision, rules = RULES) {
  return decision.effect === "ask" && decision.rules.every((id) => rules.find((r) => r.id === id)?.always === true);
}

/**
 * The rules an "Always" answer to this decision's card stores, and a later action needs granted: the
 * one the card names. Another rule that matched too is not granted by it (a yes to "Submit a form" on
 * a Place order button is no yes to every Delete on the site); the effects the action really has are
 * held and judged on their own (effects.js).
 * @param {Decision} decision
 */
export function grantedBy(decision) {
  return decision.rule ? [decision.rule.id] : [];
}
