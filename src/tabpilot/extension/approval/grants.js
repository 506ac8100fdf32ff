// @ts-check
// "Always on ‹site›": the person's standing yes for one rule, keyed by the site the conversation started
// on and the site the action is on (or goes to), so a yes for buying on shop.test covers neither another
// rule nor another site. Kept in chrome.storage.local, which the agent side can neither read nor write;
// read afresh at every check, so a grant revoked on the options page is gone for the next action.
// The approval timeout, a setting of the person's, lives beside them.

export const GRANTS_KEY = "tp_approval_grants";
export const TIMEOUT_KEY = "tp_approval_timeout_s";
export const DEFAULT_TIMEOUT_S = 120;
/** The oldest grants go first beyond this many. */
const MAX_GRANTS = 200;

/**
 * @typedef {{rule: string, start: string, target: string, at: number}} Grant
 * @typedef {{get(keys: string | string[]): Promise<Record<string, any>>, set(items: Record<string, unknown>): Promise<void>}} StorageArea
 */

/** @param {unknown} raw @returns {Grant[]} */
export function parseGrants(raw) {
  if (!Array.isArray(raw)) return [];
  return raw.filter((g) => g && typeof g.rule === "string" && typeof g.start === "string" && typeof g.target === "string").map((g) => ({ rule: g.rule, start: g.start, target: g.target, at: Number(g.at) || 0 }));
}

/** @param {unknown} raw seconds, as the person typed them */
export function parseTimeoutS(raw) {
  const s = Number(raw);
  return Number.isFinite(s) && s >= 1 && s <= 3600 ? s : DEFAULT_TIMEOUT_S;
}

/** @param {{storage: StorageArea, now?: () => number}} deps */
export function createGrants({ storage, now = Date.now }) {
  async function all() {
    return parseGrants((await storage.get(GRANTS_KEY))[GRANTS_KEY]);
  }

  return {
    all,

    /** Does a grant stand for every one of `rules` from `start` to `target`? @param {string[]} rules @param {string} start @param {string} target */
    async cover(rules, start, target) {
      const grants = await all();
      return rules.length > 0 && rules.every((rule) => grants.some((g) => g.rule === rule && g.start === start && g.target === target));
    },

    /** @param {string[]} rules @param {string} start @param {string} target */
    async add(rules, start, target) {
      const kept = (await all()).filter((g) => !(rules.includes(g.rule) && g.start === start && g.target === target));
      const added = rules.map((rule) => ({ rule, start, target, at: now() }));
      await storage.set({ [GRANTS_KEY]: [...added, ...kept].slice(0, MAX_GRANTS) });
    },

    /** Forget grants (the options page's Revoke); none given: all of them. @param {{rule: string, start: string, target: string}[]} [which] */
    async revoke(which) {
      const gone = (/** @type {Grant} */ g) => !which || which.some((w) => w.rule === g.rule && w.start === g.start && w.target === g.target);
      await storage.set({ [GRANTS_KEY]: (await all()).filter((g) => !gone(g)) });
    },

    /** How long the person has to answer a card, in ms. */
    async timeoutMs() {
      return parseTimeoutS((await storage.get(TIMEOUT_KEY))[TIMEOUT_KEY]) * 1000;
    },
  };
}
