// @ts-check
// The one navigation-wait engine behind navigate, back/forward, reload and tab_create.
//
// Listeners are armed before the command is sent, and every lifecycle event is kept per loader id,
// because a fast page can reach `load` before Page.navigate has even answered. The navigation's
// loader id comes from Page.navigate's reply, or (reload, history) from the main frame's
// Page.frameNavigated. Same-document and back-forward-cache navigations finish at once.
import { RpcError } from "../link/protocol.js";
import { withDeadline } from "../link/deadline.js";

/** Wire stages in the order a document reaches them. */
const STAGES = ["commit", "domcontentloaded", "load", "networkidle"];
/** CDP lifecycle names that mark a stage; every event of a loader also proves its commit. */
export const LIFECYCLE_STAGE = { DOMContentLoaded: "domcontentloaded", load: "load", networkIdle: "networkidle" };

/**
 * @typedef {"navigate" | "history" | "reload"} NavigationKind
 * @typedef {{sameDocument: boolean}} NavigationOutcome
 * @typedef {{
 *   send(tabId: number, method: string, params?: object): Promise<any>,
 *   onEvent(tabId: number | null, fn: (method: string, params: any, tabId: number) => void): () => void,
 *   onDetach(fn: (tabId: number, reason: string) => void): () => void,
 *   detachError(tabId: number): Promise<Error>,
 * }} CdpLike
 */

/**
 * @param {Set<string> | undefined} stages reached by one loader
 * @param {string} waitUntil
 */
export function satisfies(stages, waitUntil) {
  if (!stages) return false;
  switch (waitUntil) {
    case "commit":
      return stages.has("commit");
    case "domcontentloaded":
      return stages.has("domcontentloaded") || stages.has("load");
    case "load":
      return stages.has("load");
    default:
      // networkIdle can be reported before load; idle without load is not a loaded page.
      return stages.has("networkidle") && stages.has("load");
  }
}

/**
 * Arm the listeners for one navigation of a tab's main frame.
 * @param {{cdp: CdpLike, tabId: number, frameId: string, kind: NavigationKind, waitUntil: string, requestedUrl?: string}} options
 */
export function watchNavigation({ cdp, tabId, frameId, kind, waitUntil, requestedUrl }) {
  /** @type {Map<string, Set<string>>} */
  const seen = new Map();
  /** @type {string | null} */
  let loaderId = null;
  /** The URL each loader committed, for the timeout report. */
  /** @type {Map<string, string>} */
  const urls = new Map();
  let settled = false;
  /** @type {(outcome: NavigationOutcome) => void} */
  let resolve = () => {};
  /** @type {(err: unknown) => void} */
  let reject = () => {};
  /** @type {Promise<NavigationOutcome>} */
  const done = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });

  /** @param {() => void} fn */
  function settle(fn) {
    if (settled) return;
    settled = true;
    fn();
  }

  /** @param {string} loader @param {string} stage */
  function reach(loader, stage) {
    const stages = seen.get(loader) ?? new Set();
    stages.add("commit");
    stages.add(stage);
    seen.set(loader, stages);
  }

  function check() {
    if (loaderId !== null && satisfies(seen.get(loaderId), waitUntil)) settle(() => resolve({ sameDocument: false }));
  }

  const offEvent = cdp.onEvent(tabId, (method, params) => {
    if (method === "Page.lifecycleEvent") {
      if (params.frameId !== frameId || typeof params.loaderId !== "string") return;
      reach(params.loaderId, LIFECYCLE_STAGE[/** @type {keyof LIFECYCLE_STAGE} */ (params.name)] ?? "commit");
      check();
    } else if (method === "Page.frameNavigated") {
      const frame = params.frame ?? {};
      if (frame.parentId || frame.id !== frameId) return;
      reach(frame.loaderId, "commit");
      if (typeof frame.url === "string") urls.set(frame.loaderId, frame.url);
      // Reload and history commands do not return the new loader: the commit names it.
      if (kind !== "navigate" && loaderId === null) loaderId = frame.loaderId;
      if (frame.loaderId !== loaderId) return;
      if (params.type === "BackForwardCacheRestore") settle(() => resolve({ sameDocument: false }));
      else check();
    } else if (method === "Page.navigatedWithinDocument") {
      // A history entry created by pushState or a #fragment: no new document will come.
      if (kind === "history" && loaderId === null && params.frameId === frameId) {
        settle(() => resolve({ sameDocument: true }));
      }
    }
  });

  const offDetach = cdp.onDetach((detachedTab) => {
    if (detachedTab !== tabId || settled) return;
    void cdp.detachError(tabId).then((err) => settle(() => reject(err)));
  });

  return {
    done,

    /** Feed the navigation command's reply. @param {any} reply */
    commandReturned(reply) {
      if (kind !== "navigate") return;
      if (reply?.errorText) {
        const err = new RpcError("cdp_failed", `navigation failed: ${reply.errorText}`, "navigation_failed", {
          error_text: reply.errorText,
          url: requestedUrl ?? null,
          hint: "Check the address; the site may be down or unreachable from this browser.",
        });
        settle(() => reject(err));
        return;
      }
      if (!reply?.loaderId) {
        settle(() => resolve({ sameDocument: true }));
        return;
      }
      loaderId = reply.loaderId;
      if (waitUntil === "commit") settle(() => resolve({ sameDocument: false }));
      else check();
    },

    /** @param {unknown} err the command itself failed */
    fail(err) {
      settle(() => reject(err));
    },

    /** What a timeout reports: the furthest stage the navigation reached, and where it was. */
    progress() {
      const stages = loaderId === null ? undefined : seen.get(loaderId);
      const reached = STAGES.filter((s) => stages?.has(s)).at(-1) ?? "none";
      const url = (loaderId === null ? undefined : urls.get(loaderId)) ?? requestedUrl ?? null;
      return { last_state: reached, url };
    },

    dispose() {
      offEvent();
      offDetach();
    },
  };
}

/**
 * Send a navigation command and wait until the tab's main frame reaches `waitUntil`.
 * @param {{
 *   cdp: CdpLike,
 *   dialogs?: {allowUnload(tabId: number): () => void},
 *   tabId: number,
 *   kind: NavigationKind,
 *   command: () => Promise<any>,
 *   waitUntil: string,
 *   timeoutMs: number,
 *   signal?: AbortSignal,
 *   requestedUrl?: string,
 * }} options
 * @returns {Promise<NavigationOutcome>}
 */
export async function runNavigation({ cdp, dialogs, tabId, kind, command, waitUntil, timeoutMs, signal, requestedUrl }) {
  if (signal?.aborted) throw signal.reason;
  const { frameTree } = await cdp.send(tabId, "Page.getFrameTree");
  const watch = watchNavigation({ cdp, tabId, frameId: frameTree.frame.id, kind, waitUntil, requestedUrl });
  // The agent asked to leave this page: a beforeunload prompt must not stall it.
  const releaseUnload = dialogs?.allowUnload(tabId);
  try {
    command().then(watch.commandReturned, watch.fail);
    return await withDeadline(watch.done, {
      signal,
      timeoutMs,
      onTimeout: () => {
        const progress = watch.progress();
        return new RpcError("timeout", `navigation did not reach ${waitUntil} within ${timeoutMs} ms (reached: ${progress.last_state})`, "navigation_timeout", {
          ...progress,
          hint: "Retry with a longer timeout_ms or an earlier wait_until (domcontentloaded, commit).",
        });
      },
    });
  } catch (err) {
    // Not awaited: the cancel must not wait on a page that may be stuck.
    if (signal?.aborted) void cdp.send(tabId, "Page.stopLoading").catch(() => {});
    throw err;
  } finally {
    watch.dispose();
    releaseUnload?.();
  }
}
