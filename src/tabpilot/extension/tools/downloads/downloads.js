// @ts-check
// tool.downloads_list and tool.downloads_wait: the files the session's pages downloaded (browser/downloads.js).
import { RpcError, fromPage, said } from "../../link/protocol.js";
import { sessionIdOf, timeoutOf } from "../../link/params.js";
import { optionalCount } from "../observe/snapshot.js";

/** @param {any} ctx */
function downloadsOf(ctx) {
  if (!ctx.downloads) {
    throw new RpcError("unsupported", "this browser gives the extension no downloads API", undefined, {
      hint: "Use a Chromium-family browser with the tabpilot extension's downloads permission.",
    });
  }
  return ctx.downloads;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function downloadsList(params, ctx) {
  const sessionId = sessionIdOf(params);
  await ctx.sessions.get(sessionId);
  return { downloads: downloadsOf(ctx).list(sessionId) };
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function downloadsWait(params, ctx) {
  const sessionId = sessionIdOf(params);
  await ctx.sessions.get(sessionId);
  const downloads = downloadsOf(ctx);
  // Without `after`: the latest download, once it has finished (or the next one, if none started yet).
  const after = params.after === undefined || params.after === null ? undefined : optionalCount(params, "after", 0);
  const ms = timeoutOf(params);
  const found = await downloads.wait(sessionId, { after, ms, signal: ctx.signal });
  if (!found || found.state === "in_progress") {
    throw new RpcError("timeout", found ? said`the download of ${fromPage(found.name || found.url)} did not finish within ${ms} ms` : `no download finished within ${ms} ms`, "tool_timeout", {
      ...(found ? { download: found } : {}),
      hint: found ? "It is still coming in: wait again with a longer --timeout." : "Start one first (click its link), or raise --timeout.",
    });
  }
  return { download: found };
}
