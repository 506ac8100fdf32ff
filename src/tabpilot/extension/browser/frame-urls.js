// @ts-check
// The address of every frame of the tabs we debug, kept from CDP events, so that checking them costs no
// round trip and works while the page cannot answer (a JavaScript dialog is open, a script is busy).
// A tab is read once with frames.list when it is first asked about; its events keep it current after.
// An event we missed can only leave a stale address behind, which blocks too much, never too little.
import { RpcError } from "../link/protocol.js";
import { withDeadline } from "../link/deadline.js";

const SEED_TIMEOUT_MS = 1500;

/**
 * @typedef {{url: string, owner: string | null}} FrameEntry  owner: the CDP session reporting the frame
 * @typedef {{frames: Map<string, FrameEntry>, touched: Set<string> | null, seeded: Promise<void>}} TabFrames
 *   touched: frames events reported while the first listing was under way (they are newer than it)
 */

/**
 * @param {{
 *   cdp: Pick<import("./frames.js").CdpLike, "onEvent" | "onDetach">,
 *   frames: {list(tabId: number): Promise<{frameId: string, sessionId: string | null, url: string}[]>},
 * }} deps
 */
export function createFrameUrls({ cdp, frames }) {
  /** @type {Map<number, TabFrames>} */
  const known = new Map();

  /** @param {TabFrames} tab @param {string} frameId @param {string} url @param {string | null} owner */
  function set(tab, frameId, url, owner) {
    tab.frames.set(frameId, { url, owner });
    tab.touched?.add(frameId);
  }

  /** @param {TabFrames} tab @param {string} frameId */
  function remove(tab, frameId) {
    tab.frames.delete(frameId);
    tab.touched?.add(frameId);
  }

  cdp.onEvent(
    null,
    (method, params, tabId, sessionId) => {
      const tab = known.get(tabId);
      if (!tab) return;
      if (method === "Page.frameNavigated" && params.frame?.id) {
        set(tab, params.frame.id, `${params.frame.url ?? ""}${params.frame.urlFragment ?? ""}`, sessionId);
      } else if (method === "Page.navigatedWithinDocument") {
        set(tab, params.frameId, params.url, sessionId);
      } else if (method === "Page.frameDetached" && params.reason !== "swap") {
        // "swap": the frame moved to a process of its own, whose session reports it from now on.
        remove(tab, params.frameId);
      } else if (method === "Target.attachedToTarget" && params.targetInfo?.type === "iframe") {
        set(tab, params.targetInfo.targetId, params.targetInfo.url ?? "", params.sessionId);
      } else if (method === "Target.targetInfoChanged" && params.targetInfo?.type === "iframe") {
        // An out-of-process frame's address arrives this way (it is attached before it commits).
        const frameId = params.targetInfo.targetId;
        set(tab, frameId, params.targetInfo.url ?? "", tab.frames.get(frameId)?.owner ?? sessionId);
      } else if (method === "Target.detachedFromTarget") {
        for (const [frameId, entry] of [...tab.frames]) if (entry.owner === params.sessionId) remove(tab, frameId);
      }
    },
    { children: true },
  );
  cdp.onDetach((tabId) => known.delete(tabId));

  /** @param {number} tabId @param {TabFrames} tab */
  async function seed(tabId, tab) {
    try {
      const listed = await withDeadline(frames.list(tabId), {
        timeoutMs: SEED_TIMEOUT_MS,
        onTimeout: () =>
          new RpcError("timeout", `tab ${tabId} did not list its frames in time, so they could not be checked against the blocked sites`, "tool_timeout", {
            tab_id: tabId,
            hint: "The page may be busy; retry in a moment, or reload it.",
          }),
      });
      for (const f of listed) if (!tab.touched?.has(f.frameId)) tab.frames.set(f.frameId, { url: f.url, owner: f.sessionId });
      tab.touched = null;
    } catch (err) {
      if (known.get(tabId) === tab) known.delete(tabId);
      throw err;
    }
  }

  return {
    /**
     * The addresses of the tab's frames, the main frame's included (attaches to the tab).
     * @param {number} tabId
     * @returns {Promise<string[]>}
     */
    async of(tabId) {
      let tab = known.get(tabId);
      if (!tab) {
        const fresh = /** @type {TabFrames} */ ({ frames: new Map(), touched: new Set(), seeded: Promise.resolve() });
        fresh.seeded = seed(tabId, fresh);
        known.set(tabId, fresh);
        tab = fresh;
      }
      await tab.seeded;
      return [...tab.frames.values()].map((f) => f.url);
    },

    /** What is known without asking the page (nothing for a tab not read yet). @param {number} tabId */
    knownOf(tabId) {
      const tab = known.get(tabId);
      return tab && tab.touched === null ? [...tab.frames.values()].map((f) => f.url) : [];
    },
  };
}
