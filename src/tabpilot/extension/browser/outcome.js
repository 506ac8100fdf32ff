// @ts-check
// What an action set off on its tab, for the action's one line of outcome: a navigation of the page
// (waited for until it commits, then reported with its URL and HTTP status), a new tab (kept in the
// session and made the current tab), or a JavaScript dialog (an alert accepted, or a confirm, prompt
// or beforeunload left open for the agent to answer).
//
// Arm the watch before the input is sent, then `settle` the action's promise. The renderer reports a
// navigation or a window.open it starts while handling an input event before it acknowledges that
// event, so when the input's promise resolves the watch has seen them. A dialog keeps the input
// pending: settle returns as soon as one is left open.
import { RpcError } from "../link/protocol.js";
import { withDeadline } from "../link/deadline.js";
import { describePage } from "./page-info.js";

/** How long a window.open / target=_blank gets to show up as a tab. */
const NEW_TAB_WAIT_MS = 3000;
/** How often the waits look again when no event woke them. */
const POLL_MS = 25;
/** How long an action's outcome waits for the download it started to finish (`downloads wait` waits on). */
const DOWNLOAD_WAIT_MS = 5000;
/** How long a navigation that ended without a page, or a click on `<a download>`, gets to announce its download. */
const DOWNLOAD_START_MS = 800;
/** The least time a page gets to take an input, whatever is left of the action's timeout. */
const INPUT_GRACE_MS = 1000;
/** The page's round trip after the action (bounded: a page stuck in a script does not answer). */
const FLUSH_MS = 500;
/**
 * What the round trip evaluates. An input's handling has ended when it is acknowledged, but what the
 * page reported meanwhile travels on the debugging channel: any answer on that channel comes after it.
 * After a dialog answer the page's script goes on in the same task: waiting for a new task lets it end.
 */
const FLUSH = { channel: "0", tasks: "new Promise((resolve) => setTimeout(resolve, 0))" };

/**
 * @typedef {{url: string, title: string, status: number | null, same_document: boolean, committed: boolean}} Navigated
 * @typedef {{tab_id: number, url: string, kept: boolean, current: boolean}} OpenedTab
 * @typedef {{type: string, message: string, default_prompt: string, handled: string}} DialogSeen
 * @typedef {{navigated?: Navigated, opened_tab?: OpenedTab, dialog?: DialogSeen, download?: import("./downloads.js").Download}} Outcome
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** @param {import("./dialogs.js").DialogRecord} d @returns {DialogSeen} */
function dialogSeen(d) {
  return { type: d.type, message: d.message, default_prompt: d.default_prompt, handled: d.handled };
}

/**
 * @param {Record<string, any>} ctx handler context (cdp, dialogs, frames, sessions, tabs)
 * @param {number} tabId
 * @param {string} sessionId
 */
export async function watchOutcome(ctx, tabId, sessionId) {
  // Not awaited here: a page showing a dialog cannot say which its main frame is until the dialog is
  // answered (tool.dialog arms this watch before answering). Events wait for it in `early`.
  /** @type {string | null} */
  let mainFrameId = null;
  /** @type {[string, any][]} */
  const early = [];
  const mainFrame = ctx.frames.main(tabId).then((/** @type {{frameId: string}} */ f) => {
    mainFrameId = f.frameId;
    for (const [method, params] of early.splice(0)) observe(method, params);
  });
  mainFrame.catch(() => {});
  const cursor = ctx.dialogs.cursor(tabId);
  const dialogOpened = ctx.dialogs.whenOpen(tabId, cursor);
  /** The navigation the action asked for, and what became of it. */
  /** @type {{url: string} | null} */
  let requested = null;
  let started = false;
  /** @type {{url: string, sameDocument: boolean} | null} */
  let committed = null;
  /** Ended without a new document: a download, a 204, a cancelled or failed navigation. */
  let ended = false;
  /** URLs the page asked to open in a new tab or window. */
  /** @type {string[]} */
  const windowOpens = [];
  /** @type {{id?: number, url?: string, pendingUrl?: string}[]} */
  const createdTabs = [];
  /** The page announced a download (a link to an attachment, `<a download>`). */
  let downloadBegan = false;
  const downloadCursor = ctx.downloads?.cursor() ?? 0;
  /** @type {() => void} */
  let wake = () => {};

  /** @param {string} method @param {any} params */
  function observe(method, params) {
    const main = params.frameId === mainFrameId;
    if (method === "Page.frameScheduledNavigation" && main && params.delay === 0) {
      // A link's navigation runs in a task of its own, possibly just after the click was acknowledged.
      requested ??= { url: params.url };
    } else if (method === "Page.frameRequestedNavigation" && main) {
      if (params.disposition === "currentTab") {
        requested = { url: params.url };
        started = true;
      } else {
        windowOpens.push(params.url);
      }
    } else if (method === "Page.downloadWillBegin") {
      downloadBegan = true;
    } else if (method === "Page.windowOpen") {
      windowOpens.push(params.url);
    } else if (method === "Page.frameStartedNavigating" && main && params.navigationType === "differentDocument") {
      // Browser-side start: also the navigation a dialog answer (beforeunload) let go on.
      requested ??= { url: params.url };
      started = true;
    } else if (method === "Page.frameNavigated" && !params.frame?.parentId && params.frame?.id === mainFrameId) {
      committed = { url: `${params.frame.url}${params.frame.urlFragment ?? ""}`, sameDocument: false };
    } else if (method === "Page.navigatedWithinDocument" && main) {
      committed = { url: params.url, sameDocument: true };
    } else if (method === "Page.frameStoppedLoading" && main) {
      ended = true;
    } else if (method === "Page.frameClearedScheduledNavigation" && main) {
      if (!started && !committed) ended = true;
    } else {
      return;
    }
    wake();
  }
  const offEvent = ctx.cdp.onEvent(tabId, (/** @type {string} */ method, /** @type {any} */ params) => {
    if (mainFrameId === null) early.push([method, params]);
    else observe(method, params);
  });
  /** @param {{id?: number, openerTabId?: number}} tab */
  const onCreated = (tab) => {
    if (tab.openerTabId !== tabId) return;
    createdTabs.push(tab);
    wake();
  };
  ctx.tabs.onCreated.addListener(onCreated);

  function dispose() {
    offEvent();
    ctx.tabs.onCreated.removeListener(onCreated);
    dialogOpened.cancel();
  }

  /**
   * Resolves when `done()` holds or `ms` passed, waking on every watched event.
   * @param {() => boolean} done @param {number} ms @param {AbortSignal} [signal]
   */
  async function until(done, ms, signal) {
    const end = Date.now() + ms;
    while (!done() && Date.now() < end) {
      if (signal?.aborted) throw signal.reason;
      await new Promise((resolve) => {
        wake = () => resolve(undefined);
        setTimeout(resolve, Math.min(POLL_MS * 4, Math.max(0, end - Date.now())));
      });
    }
    wake = () => {};
    return done();
  }

  /** @param {number} remainingMs @param {AbortSignal} [signal] @returns {Promise<Navigated>} */
  async function navigation(remainingMs, signal) {
    await until(() => committed !== null || ended, remainingMs, signal);
    const landed = /** @type {{url: string, sameDocument: boolean} | null} */ (committed);
    // Not committed in time, or it never will (a download, a 204, a cancelled navigation).
    if (!landed) return { url: requested?.url ?? "", title: "", status: null, same_document: false, committed: false };
    const page = await describePage(ctx, tabId);
    return { url: page.url || landed.url, title: page.title, status: landed.sameDocument ? null : page.status, same_document: landed.sameDocument, committed: true };
  }

  /** @param {number} remainingMs @param {AbortSignal} [signal] @returns {Promise<OpenedTab | null>} */
  async function openedTab(remainingMs, signal) {
    await until(() => createdTabs.length > 0, Math.min(remainingMs, NEW_TAB_WAIT_MS), signal);
    const created = createdTabs[0];
    if (created?.id === undefined) return null;
    const id = created.id;
    // The session manager moves it into the Agent Window (or keeps its popup window in the session).
    let kept = false;
    const end = Date.now() + Math.min(remainingMs, NEW_TAB_WAIT_MS);
    for (;;) {
      const tabs = await ctx.sessions.tabs(sessionId);
      kept = tabs.some((/** @type {{id: number}} */ t) => t.id === id);
      if (kept || Date.now() > end) break;
      await sleep(POLL_MS);
    }
    let current = false;
    if (kept) {
      // The agent's next command acts on the page it just opened, as a person would look at it.
      const tab = await ctx.tabs.update(id, { active: true }).catch(() => null);
      current = tab?.active === true;
    }
    // Until its navigation commits the new tab shows its initial about:blank, and the agent's next
    // command would read that: wait for the commit (bounded; a slow server keeps it pending).
    let tab = await ctx.tabs.get(id).catch(() => created);
    while (current && tab.pendingUrl && Date.now() < end) {
      if (signal?.aborted) throw signal.reason;
      await sleep(POLL_MS);
      tab = await ctx.tabs.get(id).catch(() => tab);
    }
    return { tab_id: id, url: tab.pendingUrl || tab.url || windowOpens[0] || "", kept, current };
  }

  /**
   * A round trip through the page (in our world, so a page that navigates away just ends it): what the
   * page reported about the action, a navigation or a new window, has arrived when it ends. Resolves to
   * a dialog if one opened meanwhile (a confirm after the page's own continuation).
   * @param {"channel" | "tasks"} kind
   */
  async function flush(kind) {
    if (requested !== null || committed !== null || windowOpens.length > 0) return null;
    const main = await ctx.frames.main(tabId);
    const contextId = await ctx.frames.agentWorld(main);
    const roundTrip = ctx.cdp.send(tabId, "Runtime.evaluate", { expression: FLUSH[kind], awaitPromise: kind === "tasks", contextId });
    return Promise.race([roundTrip.then(() => null, () => null), dialogOpened.opened, sleep(FLUSH_MS).then(() => null)]);
  }

  return {
    /**
     * Wait for the action and what it set off, within the action's deadline.
     * @template T
     * @param {Promise<T>} action the input (or script) that acts
     * @param {{deadline: number, signal?: AbortSignal, after?: "channel" | "tasks", mayDownload?: boolean, downloads?: Promise<boolean> | false}} options
     *   after: "tasks" when the page goes on by itself after the action (a dialog answered);
     *   mayDownload: the action may start a download without a navigation (a click on `<a download>`);
     *   downloads: true once the page is known to have let it (the click kept its default action): the
     *   browser's word of the download is then waited for as long as the download itself, not a moment
     * @returns {Promise<{value: T | undefined, outcome: Outcome}>}
     */
    async settle(action, { deadline, signal, after = "channel", mayDownload = false, downloads = false }) {
      try {
        /** @type {Outcome} */
        const outcome = {};
        const raced = await withDeadline(
          Promise.race([
            action.then((value) => ({ value, dialog: null })),
            dialogOpened.opened.then((dialog) => ({ value: undefined, dialog })),
          ]),
          {
            signal,
            timeoutMs: Math.max(INPUT_GRACE_MS, deadline - Date.now()),
            onTimeout: () =>
              new RpcError("timeout", `the page did not take the input within its timeout (it may be busy)`, "tool_timeout", {
                tab_id: tabId,
                hint: "The page may be stuck in a script; check it with `tabpilot screenshot`, or reload it.",
              }),
          },
        );
        ctx.mark?.("acted");
        if (raced.dialog) {
          // The input stays pending until the dialog is answered; nobody waits for it any more.
          action.catch(() => {});
          outcome.dialog = dialogSeen(raced.dialog);
          return { value: undefined, outcome };
        }
        await mainFrame.catch(() => {});
        const late = await flush(after).catch(() => null);
        ctx.mark?.("flushed");
        if (late) {
          outcome.dialog = dialogSeen(late);
          return { value: raced.value, outcome };
        }
        const alert = ctx.dialogs.since(tabId, cursor).filter((/** @type {any} */ d) => d.handled !== "open").at(-1);
        if (alert) outcome.dialog = dialogSeen(alert);
        if (requested !== null || committed !== null) outcome.navigated = await navigation(Math.max(0, deadline - Date.now()), signal);
        if (windowOpens.length > 0 || createdTabs.length > 0) {
          const opened = await openedTab(Math.max(0, deadline - Date.now()), signal);
          if (opened) outcome.opened_tab = opened;
        }
        // The browser announces a download only after the navigation it ends (or the click) is over.
        const uncommitted = outcome.navigated !== undefined && !outcome.navigated.committed;
        if (!downloadBegan && ctx.downloads && (uncommitted || (mayDownload && !outcome.navigated && !outcome.opened_tab && !outcome.dialog))) {
          // A loaded machine can take longer than DOWNLOAD_START_MS to say so: a download known to come is waited for.
          const sure = !uncommitted && (await downloads);
          await until(() => downloadBegan, Math.min(sure ? DOWNLOAD_WAIT_MS : DOWNLOAD_START_MS, Math.max(0, deadline - Date.now())), signal);
        }
        if (downloadBegan && ctx.downloads) {
          const wait = Math.min(DOWNLOAD_WAIT_MS, Math.max(0, deadline - Date.now()));
          const download = await ctx.downloads.wait(sessionId, { after: downloadCursor, ms: wait, tabId, signal });
          if (download) outcome.download = download;
          // The navigation that turned into this download never commits: the download is what happened.
          if (download && outcome.navigated && !outcome.navigated.committed) delete outcome.navigated;
        }
        return { value: raced.value, outcome };
      } finally {
        dispose();
      }
    },
    dispose,
  };
}
