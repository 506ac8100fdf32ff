// @ts-check
// What the worker knows of each side-panel conversation's current turn, for the approval rules: the
// sites it may act on without asking (its start site and the sites the person named), worked out here
// from the person's own text as it passes to the daemon, never from anything the agent or a page says.
// Kept in chrome.storage.session, so a restarted worker still knows.
import { readSaved } from "../state/saved.js";
import { siteOf, turnScope } from "../approval/scope.js";

export const TURNS_KEY = "tp_panel_turns";

/**
 * @typedef {{scope: import("../approval/scope.js").Scope, start: string | null}} TurnSites
 */

/** @param {{storage: import("../link/config.js").StorageArea, log?: Pick<Console, "warn">}} deps */
export function createTurns({ storage, log = console }) {
  /** @type {Promise<Record<string, TurnSites>>} */
  const table = readSaved(storage, TURNS_KEY, "the side panel's turn sites", log);
  let writes = Promise.resolve();

  /** @param {Record<string, TurnSites>} all */
  function save(all) {
    // Chained so an older table can never land after a newer one.
    writes = writes.then(() => storage.set({ [TURNS_KEY]: all })).catch((err) => log.warn("tabpilot: cannot save the turn sites", err));
    return writes;
  }

  return {
    /**
     * A turn starts on a page with the person's text (without what is attached: page text names no site).
     * @param {string} cid @param {string | undefined} url @param {string} text
     */
    async started(cid, url, text) {
      const all = await table;
      all[cid] = { scope: turnScope(url, text), start: siteOf(url) };
      await save(all);
    },
    /** @param {string} cid @returns {Promise<TurnSites | null>} */
    async of(cid) {
      return (await table)[cid] ?? null;
    },
    /** @param {string} cid */
    async forget(cid) {
      const all = await table;
      if (!(cid in all)) return;
      delete all[cid];
      await save(all);
    },
  };
}
