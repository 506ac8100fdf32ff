// @ts-check
// tool.pdf: the current page printed to PDF (Page.printToPDF), where the browser can print.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, optionalBool, timeoutOf } from "../../link/params.js";
import { errorMessage } from "../../browser/cdp.js";
import { bounded } from "./snapshot.js";

/** @type {import("../../link/dispatcher.js").Handler} */
export async function pdf(params, ctx) {
  const tab = await ctx.sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  const landscape = optionalBool(params, "landscape", false);
  // The action cue is not part of the page: not printed either.
  await ctx.cues?.clear(tab.id);
  const print = ctx.cdp.send(tab.id, "Page.printToPDF", { printBackground: true, landscape, transferMode: "ReturnAsBase64" });
  let reply;
  try {
    reply = await bounded(print, timeoutOf(params), ctx.signal, "the PDF");
  } catch (err) {
    if (err instanceof RpcError && err.code !== "cdp_failed") throw err;
    throw new RpcError("unsupported", `this browser cannot print tab ${tab.id} to PDF (${errorMessage(err)})`, undefined, {
      tab_id: tab.id,
      hint: "Use a managed browser (`tabpilot browser launch --headless`), or save a screenshot with `tabpilot screenshot --full-page`.",
    });
  }
  if (typeof reply?.data !== "string") throw new RpcError("cdp_failed", "Page.printToPDF returned no data", undefined, { tab_id: tab.id });
  return { tab_id: tab.id, url: tab.url ?? "", data: reply.data };
}
