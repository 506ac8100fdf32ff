// @ts-check
// tool.wait: until an element is visible or gone, a text shows, the URL matches, or the page reaches a
// load state. Checked at once, then every 100 ms (250 ms after the first two seconds).
import { RpcError, said } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, timeoutOf } from "../../link/params.js";
import { resolveTarget } from "../../page/targets.js";
import { release, nameOf, saidName } from "../../page/actionability.js";
import { LIFECYCLE_STAGE, satisfies } from "../../browser/navigation-wait.js";

const WAIT_TIMEOUT_MS = 10000;
const KINDS = ["selector", "text", "gone", "url", "load"];
const LOAD_STATES = ["domcontentloaded", "load", "networkidle"];
/** Gone for good: waiting cannot bring these back. */
const FINAL_REASONS = new Set(["ref_not_found", "invalid_selector"]);

const VISIBLE = "function () { return this.isConnected && this.checkVisibility({ visibilityProperty: true }) && this.getClientRects().length > 0; }";

/**
 * A URL pattern: a glob when it has "*" (matched against the whole URL), else a part of the URL.
 * @param {string} pattern
 */
export function urlMatcher(pattern) {
  if (!pattern.includes("*")) return (/** @type {string} */ url) => url.includes(pattern);
  const source = pattern
    .split(/\*+/)
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const re = new RegExp(`^${source}$`);
  return (/** @type {string} */ url) => re.test(url);
}

/**
 * One look at an element target: "visible", "hidden", "absent", or "stale" (a ref whose element is
 * gone for good), with what was found.
 * @param {Record<string, any>} ctx @param {number} tabId @param {string} raw
 */
async function lookAt(ctx, tabId, raw) {
  let target;
  try {
    target = await resolveTarget(ctx, tabId, raw);
  } catch (err) {
    if (err instanceof RpcError && err.reason && FINAL_REASONS.has(err.reason)) throw err;
    if (err instanceof RpcError && err.reason === "ref_stale") return { state: "stale", seen: null, error: err };
    if (err instanceof RpcError && err.code === "not_found") return { state: "absent", seen: null };
    throw err;
  }
  try {
    const visible = await ctx.frames.callOn(target.frame, target.objectId, VISIBLE);
    return { state: visible ? "visible" : "hidden", seen: target };
  } finally {
    release(ctx, target);
  }
}

/**
 * The load state reached by the tab's current document. Turning lifecycle events off and on makes the
 * browser report again every state the document already reached.
 * @param {Record<string, any>} ctx @param {number} tabId
 */
function watchLoad(ctx, tabId) {
  /** @type {Map<string, Set<string>>} */
  const stages = new Map();
  let loader = "";
  let mainFrameId = "";
  const off = ctx.cdp.onEvent(tabId, (/** @type {string} */ method, /** @type {any} */ p) => {
    if (method !== "Page.lifecycleEvent" || p.frameId !== mainFrameId) return;
    if (p.name === "init" || p.name === "commit") loader = p.loaderId;
    loader ||= p.loaderId;
    const set = stages.get(p.loaderId) ?? new Set(["commit"]);
    const stage = LIFECYCLE_STAGE[/** @type {keyof LIFECYCLE_STAGE} */ (p.name)];
    if (stage) set.add(stage);
    stages.set(p.loaderId, set);
  });
  const ready = (async () => {
    mainFrameId = (await ctx.frames.main(tabId)).frameId;
    await ctx.cdp.send(tabId, "Page.setLifecycleEventsEnabled", { enabled: false });
    await ctx.cdp.send(tabId, "Page.setLifecycleEventsEnabled", { enabled: true });
  })();
  return {
    ready,
    /** @param {string} state */
    reached: (state) => satisfies(stages.get(loader), state),
    last: () => [...(stages.get(loader) ?? [])].at(-1) ?? "nothing yet",
    dispose: off,
  };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function wait(params, ctx) {
  const given = KINDS.filter((k) => params[k] !== undefined && params[k] !== null);
  if (given.length !== 1) throw new RpcError("invalid_params", `give exactly one of ${KINDS.join(", ")}`);
  const kind = given[0];
  const value = params[kind];
  if (typeof value !== "string" || value === "") throw new RpcError("invalid_params", `${kind} must be a non-empty string`);
  if (kind === "load" && !LOAD_STATES.includes(value)) throw new RpcError("invalid_params", `load must be one of ${LOAD_STATES.join(", ")}`);
  const timeoutMs = timeoutOf(params, WAIT_TIMEOUT_MS);
  const started = Date.now();
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const tabId = /** @type {number} */ (tab.id);
  ctx.overlay?.activity(tabId, `wait for ${kind} ${value}`);
  const matches = kind === "url" ? urlMatcher(value) : null;
  const load = kind === "load" ? watchLoad(ctx, tabId) : null;
  /** What the last look found, for the timeout message. @type {string | import("../../link/protocol.js").Said} */
  let seen = "";
  /** @returns {Promise<Record<string, any> | null>} the result once the condition holds */
  async function check() {
    if (kind === "url") {
      const url = (await ctx.tabs.get(tabId)).url ?? "";
      seen = `the tab is at ${url}`;
      return /** @type {(u: string) => boolean} */ (matches)(url) ? { url } : null;
    }
    if (load) {
      await load.ready;
      seen = `the page reached ${load.last()}`;
      return load.reached(value) ? {} : null;
    }
    const raw = kind === "text" ? `text=${value}` : value;
    const look = await lookAt(ctx, tabId, raw);
    const name = look.seen ? nameOf(look.seen) : "";
    if (kind === "gone") {
      seen = look.seen ? said`${saidName(look.seen)} is still visible` : "it is still visible";
      return look.state === "visible" ? null : {};
    }
    // A ref whose element is gone will not come back.
    if (look.state === "stale") throw look.error;
    seen = look.state === "absent" || !look.seen ? "nothing matches yet" : said`${saidName(look.seen)} is there but hidden`;
    return look.state === "visible" && look.seen ? { target: { ref: look.seen.ref, label: look.seen.label, name } } : null;
  }
  try {
    for (let attempt = 0; ; attempt++) {
      if (ctx.signal?.aborted) throw ctx.signal.reason;
      const done = await check();
      const waited = Date.now() - started;
      if (done) return { tab_id: tabId, kind, waited_ms: waited, ...done };
      if (waited >= timeoutMs) {
        throw new RpcError("timeout", said`waited ${(timeoutMs / 1000).toFixed(1)} s for ${kind} ${JSON.stringify(value)}: ${seen}`, "wait_timeout", {
          tab_id: tabId,
          hint: "Check the page with `tabpilot snapshot`, or raise --timeout.",
        });
      }
      await new Promise((r) => setTimeout(r, Math.min(waited < 2000 ? 100 : 250, timeoutMs - waited)));
    }
  } finally {
    load?.dispose();
  }
}
