// @ts-check
// tool.console: what the tab's pages wrote to the console, with sequence numbers to read on from.
import { RpcError } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId } from "../../link/params.js";
import { LEVELS } from "../../browser/console-log.js";
import { optionalCount } from "./snapshot.js";

/** @type {import("../../link/dispatcher.js").Handler} */
export async function consoleEntries(params, { sessions, cdp, consoleLog }) {
  const since = params.since === undefined || params.since === null ? null : optionalCount(params, "since", 0);
  const level = params.level ?? null;
  if (level !== null && !Object.hasOwn(LEVELS, /** @type {string} */ (level))) {
    throw new RpcError("invalid_params", `level must be one of ${Object.keys(LEVELS).join(", ")}`);
  }
  const limit = optionalCount(params, "limit", 100);
  if (limit < 1) throw new RpcError("invalid_params", "limit must be at least 1");
  // Reading what was logged does not touch the page, so an open dialog does not stand in the way.
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params), { anyState: true });
  // Capture starts when the debugger attaches; Chrome then hands over what the page logged before.
  await cdp.attach(tab.id);
  const read = await consoleLog.read(tab.id, { since, level, limit });
  return { tab_id: tab.id, ...read };
}
