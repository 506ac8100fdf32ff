// @ts-check
// Which tab each side-panel conversation belongs to (one tab per conversation, one conversation per
// tab), kept in chrome.storage.session so a restarted worker still knows.
import { readSaved } from "../state/saved.js";

export const BINDINGS_KEY = "tp_panel_bindings";

/** @param {{storage: import("../link/config.js").StorageArea, log?: Pick<Console, "warn">}} deps */
export function createBindings({ storage, log = console }) {
  /** @type {Promise<Map<number, string>>} */
  const table = readSaved(storage, BINDINGS_KEY, "the side panel's tab bindings", log).then(
    (saved) => new Map(Object.entries(saved).filter(([, cid]) => typeof cid === "string").map(([tab, cid]) => [Number(tab), cid])),
  );
  let writes = Promise.resolve();

  /** @param {Map<number, string>} map */
  function save(map) {
    const value = Object.fromEntries(map);
    writes = writes.then(() => storage.set({ [BINDINGS_KEY]: value })).catch((err) => log.warn("tabpilot: cannot save the tab bindings", err));
    return writes;
  }

  /** @param {Map<number, string>} map @param {string} cid */
  function dropConversation(map, cid) {
    for (const [tab, bound] of map) if (bound === cid) map.delete(tab);
  }

  return {
    /** @param {number} tabId @param {string} cid */
    async bind(tabId, cid) {
      const map = await table;
      dropConversation(map, cid);
      map.set(tabId, cid);
      await save(map);
    },
    /** @param {number} tabId @returns {Promise<string | null>} */
    async ofTab(tabId) {
      return (await table).get(tabId) ?? null;
    },
    /** @param {unknown} cid @returns {Promise<number | null>} */
    async tabOf(cid) {
      for (const [tab, bound] of await table) if (bound === cid) return tab;
      return null;
    },
    /** @param {number} tabId @returns {Promise<string | null>} the conversation that was bound to it */
    async unbindTab(tabId) {
      const map = await table;
      const cid = map.get(tabId) ?? null;
      if (cid !== null) {
        map.delete(tabId);
        await save(map);
      }
      return cid;
    },
    /** @param {string} cid */
    async forget(cid) {
      const map = await table;
      dropConversation(map, cid);
      await save(map);
    },
  };
}
