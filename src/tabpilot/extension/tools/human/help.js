// @ts-check
// tool.request_help: the agent hands the tab to the person for a while (a login, a captcha, a choice only
// they can make). The tab comes to the front, the targets are outlined (geometry from CDP: nothing is
// written into the page), the shield is down, and a panel shows the prompt, a countdown, a note field,
// Done and Cancel. It ends with the person's answer (continued, cancelled), the timeout (timed_out), or
// the until-condition coming true while they have control (completed). The page may navigate meanwhile
// (logins redirect): the panel follows the tab. Where the page cannot show it, a system notification
// with Done and Cancel asks instead.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, requireString, timeoutOf } from "../../link/params.js";
import { resolveTarget } from "../../page/targets.js";
import { release } from "../../page/actionability.js";
import { urlMatcher } from "../interact/wait.js";

export const HELP_TIMEOUT_MS = 300_000;
const MAX_TARGETS = 20;
/** How often the until-condition, the targets' boxes and the page's ability to show the panel are looked at. */
const WATCH_MS = 250;
const BOXES_EVERY = 2;
const PANEL_CHECK_EVERY = 4;
const VISIBLE = "function () { return this.isConnected && this.checkVisibility({ visibilityProperty: true }) && this.getClientRects().length > 0; }";

/** In the page: the element's box in its frame's viewport, scrolled into view first when asked and needed. */
const BOX = `function (scroll) {
  let r = this.getBoundingClientRect();
  if (scroll && (r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth)) {
    this.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    r = this.getBoundingClientRect();
  }
  return { x: r.left, y: r.top, width: r.width, height: r.height };
}`;

/** @param {Record<string, any>} params */
function helpParams(params) {
  const prompt = requireString(params, "prompt");
  const title = params.title ?? "";
  if (typeof title !== "string") throw new RpcError("invalid_params", "title must be a string");
  const targets = params.targets ?? [];
  if (!Array.isArray(targets) || targets.some((t) => typeof t !== "string" || t === "")) {
    throw new RpcError("invalid_params", "targets must be a list of refs (@e12) or selectors");
  }
  if (targets.length > MAX_TARGETS) throw new RpcError("invalid_params", `at most ${MAX_TARGETS} targets`);
  const untilUrl = params.until_url ?? null;
  const untilSelector = params.until_selector ?? null;
  for (const [name, value] of [["until_url", untilUrl], ["until_selector", untilSelector]]) {
    if (value !== null && (typeof value !== "string" || value === "")) throw new RpcError("invalid_params", `${name} must be a non-empty string`);
  }
  if (untilUrl && untilSelector) throw new RpcError("invalid_params", "give until_url or until_selector, not both");
  return { prompt, title, targets, untilUrl, untilSelector, timeoutMs: timeoutOf(params, HELP_TIMEOUT_MS) };
}

/**
 * Where each target is, in the top document's page coordinates; targets not found (yet, or any more)
 * have no box. The first one found is scrolled into view when `scroll`.
 * @param {Record<string, any>} ctx @param {number} tabId @param {string[]} targets @param {boolean} scroll
 */
async function boxes(ctx, tabId, targets, scroll) {
  /** @type {{target: string, found: boolean, rect: {x: number, y: number, width: number, height: number} | null}[]} */
  const out = [];
  let scrolled = !scroll;
  for (const raw of targets) {
    let target;
    try {
      target = await resolveTarget(ctx, tabId, raw);
    } catch (err) {
      // A target the page does not have (now) is just not outlined; a malformed one is the agent's error.
      if (err instanceof RpcError && err.code === "invalid_params") throw err;
      out.push({ target: raw, found: false, rect: null });
      continue;
    }
    try {
      const box = await ctx.frames.callOn(target.frame, target.objectId, BOX, [!scrolled]);
      scrolled = true;
      const [origin, metrics] = await Promise.all([ctx.frames.offset(target.frame), ctx.cdp.send(tabId, "Page.getLayoutMetrics")]);
      const view = metrics.cssVisualViewport;
      const visible = box.width > 0 && box.height > 0;
      out.push({
        target: raw,
        found: visible,
        rect: visible ? { x: box.x + origin.x + view.pageX, y: box.y + origin.y + view.pageY, width: box.width, height: box.height } : null,
      });
    } catch {
      out.push({ target: raw, found: false, rect: null });
    } finally {
      release(ctx, target);
    }
  }
  return out;
}

/**
 * Is the until-condition true now? Navigations in between are normal (a page being replaced simply is
 * not there yet).
 * @param {Record<string, any>} ctx @param {number} tabId @param {{untilUrl: string | null, untilSelector: string | null}} until
 * @param {((url: string) => boolean) | null} matches
 * @returns {Promise<Record<string, any> | null>} what came true
 */
async function untilHolds(ctx, tabId, { untilUrl, untilSelector }, matches) {
  if (untilUrl && matches) {
    const url = (await ctx.tabs.get(tabId)).url ?? "";
    return matches(url) ? { until: { url: untilUrl }, url } : null;
  }
  if (!untilSelector) return null;
  let target;
  try {
    target = await resolveTarget(ctx, tabId, untilSelector);
  } catch (err) {
    if (err instanceof RpcError && err.code === "invalid_params") throw err;
    return null;
  }
  try {
    const visible = await ctx.frames.callOn(target.frame, target.objectId, VISIBLE).catch(() => false);
    return visible ? { until: { selector: untilSelector } } : null;
  } finally {
    release(ctx, target);
  }
}

/** @param {number} ms @param {AbortSignal} signal */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(undefined);
    }, { once: true });
  });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function requestHelp(params, ctx) {
  const { prompt, title, targets, untilUrl, untilSelector, timeoutMs } = helpParams(params);
  const sessionId = sessionIdOf(params);
  const tab = await ctx.sessions.resolveTab(sessionId, optionalTabId(params));
  const tabId = tab.id;
  const matches = untilUrl ? urlMatcher(untilUrl) : null;
  const started = Date.now();
  const requestId = `${tabId}-${started.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  // Everything this request started ends with it, whoever answered first (or the daemon's cancel).
  const over = new AbortController();
  const endWithRequest = () => over.abort();
  ctx.signal.addEventListener("abort", endWithRequest, { once: true });

  const front = async () => {
    await ctx.tabs.update(tabId, { active: true });
    if (tab.windowId !== undefined) await ctx.windows.update(tab.windowId, { focused: true });
  };
  try {
    await front();
    let found = await boxes(ctx, tabId, targets, true);
    const rects = () => found.flatMap((f) => (f.rect ? [f.rect] : []));
    const shownIn = (await ctx.overlay.canShow(tabId)) ? "page" : "notification";

    // The first of the panel, the notification and the until-condition to settle is the answer.
    /** @type {(answer: Record<string, any>) => void} */
    let settle = () => {};
    /** @type {(err: unknown) => void} */
    let fail = () => {};
    /** @type {Promise<Record<string, any>>} */
    const answered = new Promise((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    ctx.overlay
      .askHelp(tabId, { requestId, sessionId, title, prompt, timeoutMs, rects: rects(), signal: over.signal })
      .then((/** @type {{outcome: string, note?: string}} */ a) => settle(a.outcome === "timeout" ? { outcome: "timed_out" } : a), fail);
    let notified = false;
    /** Ask with a notification too (once): the page cannot show the panel. */
    const notify = () => {
      notified = true;
      const question = {
        id: `tp-help:${requestId}`,
        title: title || "The agent needs your help",
        message: prompt,
        // Its title and message are the agent's words: the line tabpilot adds says so.
        contextMessage: `written by the agent of session ${sessionId}, not tabpilot · tabpilot never asks for passwords or codes`,
        buttons: ["Done", "Cancel"],
      };
      const remaining = Math.max(0, started + timeoutMs - Date.now());
      ctx.notify
        .ask(question, { timeoutMs: remaining, signal: over.signal, onClick: () => void front().catch(() => {}) })
        .then((/** @type {number | string} */ a) => settle({ outcome: a === 0 ? "continued" : a === "timeout" ? "timed_out" : "cancelled", via: "notification" }), fail);
    };
    if (shownIn === "notification") notify();

    // The until-condition, the outlines (the page scrolls, changes, navigates) and the panel's reach.
    (async () => {
      for (let round = 1; !over.signal.aborted; round++) {
        const done = await untilHolds(ctx, tabId, { untilUrl, untilSelector }, matches).catch((err) => {
          if (err instanceof RpcError && err.code === "invalid_params") throw err;
          return null;
        });
        if (done) return settle({ outcome: "completed", ...done });
        await sleep(WATCH_MS, over.signal);
        if (over.signal.aborted) return;
        if (targets.length > 0 && round % BOXES_EVERY === 0) {
          found = await boxes(ctx, tabId, targets, false).catch(() => found);
          ctx.overlay.helpRects(requestId, rects());
        }
        if (!notified && round % PANEL_CHECK_EVERY === 0 && !(await ctx.overlay.canShow(tabId))) notify();
      }
    })().catch(fail);

    const answer = await answered;
    const current = await ctx.tabs.get(tabId).catch(() => null);
    return {
      tab_id: tabId,
      via: shownIn,
      ...answer,
      url: answer.url ?? current?.url ?? "",
      waited_ms: Date.now() - started,
      ...(targets.length ? { targets: found.map((f) => ({ target: f.target, found: f.found })) } : {}),
    };
  } finally {
    ctx.signal.removeEventListener("abort", endWithRequest);
    over.abort();
  }
}
