// @ts-check
// tool.init_script_add / _list / _remove: scripts that run in every document the tab loads, before the
// page's own (Page.addScriptToEvaluateOnNewDocument), from the next navigation on. Like the other
// emulations they belong to our debugging session: when it ends Chrome drops them, and so does this list.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, requireString } from "../../link/params.js";

export const MAX_SOURCE_BYTES = 1024 * 1024;

/** @typedef {{id: string, name: string, bytes: number, identifier: string}} Script */

/** Each tab's scripts, with the attachment they were added through. @type {Map<number, {attachment: unknown, scripts: Script[]}>} */
const byTab = new Map();
let counter = 0;

/** The tab's scripts still held by its current attachment. @param {any} ctx @param {number} tabId */
async function scriptsOf(ctx, tabId) {
  await ctx.cdp.attach(tabId);
  const attachment = ctx.cdp.attachmentOf(tabId);
  const kept = byTab.get(tabId);
  if (kept && kept.attachment === attachment) return kept;
  const fresh = { attachment, scripts: /** @type {Script[]} */ ([]) };
  byTab.set(tabId, fresh);
  return fresh;
}

const listed = (/** @type {Script[]} */ scripts) => scripts.map(({ id, name, bytes }) => ({ id, name, bytes }));

/** @type {import("../../link/dispatcher.js").Handler} */
export async function initScriptAdd(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const source = requireString(params, "source");
  const bytes = new TextEncoder().encode(source).length;
  if (bytes > MAX_SOURCE_BYTES) throw new RpcError("invalid_params", `an init script is at most ${MAX_SOURCE_BYTES} bytes`);
  const name = typeof params.name === "string" && params.name ? params.name : "script";
  const held = await scriptsOf(ctx, tab.id);
  const { identifier } = await ctx.cdp.send(tab.id, "Page.addScriptToEvaluateOnNewDocument", { source });
  const script = { id: `s${++counter}`, name, bytes, identifier };
  held.scripts.push(script);
  return { tab_id: tab.id, added: listed([script])[0], scripts: listed(held.scripts) };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function initScriptList(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  return { tab_id: tab.id, scripts: listed((await scriptsOf(ctx, tab.id)).scripts) };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function initScriptRemove(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const held = await scriptsOf(ctx, tab.id);
  const id = params.id ?? null;
  if (id !== null && typeof id !== "string") throw new RpcError("invalid_params", "id must be a string such as s1");
  const going = id === null ? held.scripts : held.scripts.filter((s) => s.id === id);
  if (id !== null && going.length === 0) {
    throw new RpcError("not_found", `tab ${tab.id} has no init script ${id}`, undefined, { tab_id: tab.id, hint: "`tabpilot init-script list` names them." });
  }
  for (const script of going) await ctx.cdp.send(tab.id, "Page.removeScriptToEvaluateOnNewDocument", { identifier: script.identifier });
  held.scripts = held.scripts.filter((s) => !going.includes(s));
  return { tab_id: tab.id, removed: going.length, scripts: listed(held.scripts) };
}
