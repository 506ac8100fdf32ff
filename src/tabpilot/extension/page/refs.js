// @ts-check
// Ref numbering per tab: one counter per tab, so a ref is never given out twice in a tab (across
// frames and documents), and which frame gave out which refs, so a ref goes straight to its frame.
//
// The elements themselves are kept by each document's in-page agent; this only keeps numbers. The
// counter is saved in storage.session, so a restarted service worker does not hand out numbers that
// an agent still holds. Which frame owns which ref is memory only: after a restart, a ref is looked
// for in every frame (targets.js).
import { readSaved } from "../state/saved.js";

export const STORAGE_KEY = "tp_ref_counters";
/** Ranges kept per tab; the oldest go first (their refs then fall back to the search of every frame). */
const MAX_RANGES = 4096;

/**
 * @typedef {{start: number, end: number, frameId: string}} RefRange
 * @typedef {{next: number, ranges: RefRange[]}} TabRefs
 */

/**
 * "@e12", "e12", "E12" → 12; anything else → null.
 * @param {unknown} ref
 */
export function refNumber(ref) {
  if (typeof ref !== "string") return null;
  const m = /^@?e(\d+)$/i.exec(ref.trim());
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/**
 * @param {{
 *   storage?: import("../link/config.js").StorageArea,
 *   tabs?: {onRemoved: {addListener(fn: (tabId: number) => void): void}},
 *   log?: Pick<Console, "warn">,
 * }} [deps]
 */
export function createRefs({ storage, tabs, log = console } = {}) {
  /** @type {Map<number, TabRefs>} */
  const byTab = new Map();
  let writes = Promise.resolve();

  // Registered in the service worker's first turn, like every Chrome event listener.
  tabs?.onRemoved.addListener((tabId) => {
    if (byTab.delete(tabId)) persist();
  });

  const ready = (async () => {
    const saved = await readSaved(storage, STORAGE_KEY, "the ref counters", log);
    for (const [tabId, next] of Object.entries(saved)) {
      if (Number.isSafeInteger(next) && next > 0) byTab.set(Number(tabId), { next: Number(next), ranges: [] });
    }
  })();

  function persist() {
    if (!storage) return;
    /** @type {Record<string, number>} */
    const table = {};
    for (const [tabId, refs] of byTab) table[tabId] = refs.next;
    writes = writes
      .then(() => storage.set({ [STORAGE_KEY]: table }))
      .catch((err) => log.warn("tabpilot: cannot save the ref counters", err));
  }

  /** @param {number} tabId */
  function entry(tabId) {
    let refs = byTab.get(tabId);
    if (!refs) byTab.set(tabId, (refs = { next: 1, ranges: [] }));
    return refs;
  }

  return {
    ready,

    /** The first number the tab's next snapshot may give out. @param {number} tabId */
    async next(tabId) {
      await ready;
      return entry(tabId).next;
    },

    /**
     * A frame gave out refs [start, end): remember it, and move the tab's counter past them.
     * @param {number} tabId @param {string} frameId @param {number} start @param {number} end
     */
    issued(tabId, frameId, start, end) {
      const refs = entry(tabId);
      if (end > start) {
        const last = refs.ranges.at(-1);
        if (last && last.frameId === frameId && last.end === start) last.end = end;
        else refs.ranges.push({ start, end, frameId });
        if (refs.ranges.length > MAX_RANGES) refs.ranges.splice(0, refs.ranges.length - MAX_RANGES);
      }
      if (end > refs.next) {
        refs.next = end;
        persist();
      }
    },

    /**
     * The frame that gave out ref n, or null when not known here (never given, or given before a restart).
     * @param {number} tabId @param {number} n
     */
    owner(tabId, n) {
      const ranges = byTab.get(tabId)?.ranges ?? [];
      for (let i = ranges.length - 1; i >= 0; i--) {
        if (n >= ranges[i].start && n < ranges[i].end) return ranges[i].frameId;
      }
      return null;
    },

    /** Was ref n given out in this tab at some point (so, if it is not found now, it is stale)? */
    wasIssued(/** @type {number} */ tabId, /** @type {number} */ n) {
      return n < (byTab.get(tabId)?.next ?? 1);
    },
  };
}
