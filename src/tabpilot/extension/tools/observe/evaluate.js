// @ts-check
// tool.evaluate: run an expression in the page's main world and return a JSON value.
import { RpcError, fromPage, said } from "../../link/protocol.js";
import { sessionIdOf, optionalTabId, requireString, optionalBool, timeoutOf } from "../../link/params.js";
import { withDeadline } from "../../link/deadline.js";
import { describeDialog } from "../../browser/dialogs.js";
import { approve } from "../../approval/gate.js";

const NOT_JSON = /couldn't be returned by value|reference chain is too long/i;

/**
 * @param {any} details CDP Runtime.ExceptionDetails
 * @returns {{text: string, line: number, column: number}}
 */
export function describeException(details) {
  const description = details.exception?.description;
  const text = typeof description === "string" && description !== "" ? description.split("\n", 1)[0] : details.text || "Uncaught";
  return { text, line: (details.lineNumber ?? 0) + 1, column: (details.columnNumber ?? 0) + 1 };
}

/** @param {any} remote CDP Runtime.RemoteObject fetched by value */
export function valueOf(remote) {
  if (remote === undefined) return null;
  if ("unserializableValue" in remote) return String(remote.unserializableValue);
  return "value" in remote ? remote.value : null;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function evaluate(params, ctx) {
  const { sessions, cdp, dialogs, signal } = ctx;
  const expression = requireString(params, "expression");
  const awaitPromise = optionalBool(params, "await_promise", true);
  const timeoutMs = timeoutOf(params);
  const tab = await sessions.resolveTab(sessionIdOf(params), optionalTabId(params));
  // The card shows the code whole: Allow runs all of it.
  await approve(ctx, sessionIdOf(params), tab.id, { action: "evaluate", target: "the code below", code: expression });
  // Not awaited: a page stuck behind a dialog would not answer this either.
  const stop = () => void cdp.send(tab.id, "Runtime.terminateExecution").catch(() => {});
  // A confirm or prompt the script opens stays open for the agent: say so at once instead of waiting.
  const dialogOpened = dialogs?.whenOpen(tab.id, dialogs.cursor(tab.id));
  const opened = dialogOpened?.opened.then((/** @type {any} */ d) => {
    throw new RpcError("invalid_params", said`the expression opened a ${describeDialog(d)} dialog; it goes on once the dialog is answered`, "dialog_open", {
      tab_id: tab.id,
      dialog: { type: d.type, message: d.message, default_prompt: d.default_prompt },
      hint: "Answer it with `tabpilot dialog accept` (add --text for a prompt) or `tabpilot dialog dismiss`.",
    });
  });
  opened?.catch(() => {});
  let reply;
  try {
    // CDP's own timeout stops a busy script; ours also covers a promise that never settles.
    const evaluation = cdp.send(tab.id, "Runtime.evaluate", {
      expression,
      returnByValue: true,
      awaitPromise,
      userGesture: true,
      ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}),
    });
    // Its answer comes after the dialog is answered, if ever; nobody waits for it then.
    evaluation.catch(() => {});
    reply = await withDeadline(
      opened ? Promise.race([evaluation, opened]) : evaluation,
      {
        signal,
        timeoutMs,
        onTimeout: () => {
          const dialog = dialogs?.pending(tab.id);
          return new RpcError("timeout", `the expression did not finish within ${timeoutMs} ms`, undefined, {
            tab_id: tab.id,
            hint: dialog
              ? said`A ${describeDialog(dialog)} dialog is open on the tab and blocks it: answer it with \`tabpilot dialog accept\` or \`tabpilot dialog dismiss\`.`
              : "Make the script faster, or pass a longer timeout_ms.",
          });
        },
      },
    );
  } catch (err) {
    if (err instanceof RpcError && err.reason === "dialog_open") throw err;
    if (signal.aborted || (err instanceof RpcError && err.code === "timeout")) stop();
    if (err instanceof RpcError && NOT_JSON.test(err.message)) {
      // The script ran; its result just cannot travel as JSON: the agent's to fix, not a browser fault.
      throw new RpcError("invalid_params", said`the result cannot be returned as JSON (${fromPage(err.message)})`, undefined, {
        tab_id: tab.id,
        hint: "Return JSON-serialisable data, e.g. JSON.stringify(...) or pick the fields you need.",
      });
    }
    throw err;
  } finally {
    dialogOpened?.cancel();
  }
  if (reply.exceptionDetails) return { tab_id: tab.id, ok: false, exception: describeException(reply.exceptionDetails) };
  return { tab_id: tab.id, ok: true, value: valueOf(reply.result) };
}
