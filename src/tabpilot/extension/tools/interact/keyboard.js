// @ts-check
// tool.type / tool.press: real key events, into the focused element or a target focused first.
import { RpcError } from "../../link/protocol.js";
import { requireString } from "../../link/params.js";
import { actionable, callOnTarget, release } from "../../page/actionability.js";
import { keys, type as typeText } from "../../page/input.js";
import { parseCombo, comboEvents, textEvents } from "../../page/keys.js";
import { watchOutcome } from "../../browser/outcome.js";
import { beginAction, finishAction, targetInfo, ACTION_TIMEOUT_MS } from "../../page/action.js";
import { approve } from "../../approval/gate.js";
import { focusFacts } from "../../approval/describe.js";

/** Editing shortcuts differ on macOS (Meta, and native editing commands). */
const PLATFORM = /mac/i.test(/** @type {any} */ (globalThis.navigator)?.userAgentData?.platform ?? globalThis.navigator?.platform ?? "") ? "mac" : "";

/** In the page: focus the element with the caret at the end of its text, as a click there would. */
const FOCUS_AT_END = `function () {
  const el = this;
  el.focus();
  if (typeof el.setSelectionRange === "function" && typeof el.value === "string") {
    try { el.setSelectionRange(el.value.length, el.value.length); } catch {}
  } else if (el.isContentEditable) {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    const sel = el.ownerDocument.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
}`;

/**
 * Wait for the optional target and focus it; null without a target (keys go where the focus is).
 * @param {Record<string, any>} params @param {Record<string, any>} ctx @param {{tabId: number, timeoutMs: number, deadline: number}} action
 * @param {boolean} editable
 */
async function focusTarget(params, ctx, action, editable) {
  if (params.target === undefined || params.target === null) return null;
  const raw = requireString(params, "target");
  const target = await actionable(ctx, action.tabId, raw, { editable, label: true, handle: false, timeoutMs: action.timeoutMs, deadline: action.deadline, signal: ctx.signal });
  try {
    await callOnTarget(ctx, target, FOCUS_AT_END);
  } finally {
    release(ctx, target);
  }
  return target;
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function type(params, ctx) {
  const text = requireString(params, "text");
  const delayMs = params.delay_ms ?? 0;
  if (!Number.isSafeInteger(delayMs) || delayMs < 0) throw new RpcError("invalid_params", "delay_ms must be a non-negative integer");
  const groups = textEvents(text);
  const action = await beginAction(params, ctx, { defaultTimeoutMs: ACTION_TIMEOUT_MS + delayMs * groups.length });
  const target = await focusTarget(params, ctx, action, true);
  const into = target ? targetInfo(target).name : "the focused element";
  // A line break in the text is an Enter pressed in the field.
  const what = { action: "type", key: /[\r\n]/.test(text) ? "Enter" : undefined, target: `${into} (text [redacted])`, facts: () => focusFacts(ctx, action.tabId) };
  // Again after a yes: the page may have moved the focus while the person decided.
  while (await approve(ctx, action.sessionId, action.tabId, what)) action.deadline = Date.now() + action.timeoutMs;
  const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
  const { outcome } = await watch.settle(typeText(action.send, groups, { delayMs, signal: ctx.signal }), { deadline: action.deadline, signal: ctx.signal });
  return finishAction(ctx, params, action.tabId, {
    tab_id: action.tabId,
    ...(target ? { target: targetInfo(target) } : {}),
    typed: groups.length,
    ...outcome,
  });
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function press(params, ctx) {
  const specs = Array.isArray(params.keys) ? params.keys : [requireString(params, "key")];
  if (specs.length === 0 || specs.some((k) => typeof k !== "string")) throw new RpcError("invalid_params", "keys must be a non-empty list of key names");
  // Every key is checked before the first one is pressed.
  const combos = specs.map((spec) => parseCombo(spec, { platform: PLATFORM }));
  const action = await beginAction(params, ctx, { gesture: true });
  const target = await focusTarget(params, ctx, action, false);
  // Enter can send a form, and Enter or Space press a focused button: the rules look at where the focus is.
  const key = combos.map((c) => /(^|\+)(Enter|Space)$/.exec(c.label)?.[2]).find(Boolean);
  if (key) {
    const what = { action: "press", key, target: `${key} in ${target ? targetInfo(target).name : "the focused element"}`, facts: () => focusFacts(ctx, action.tabId) };
    while (await approve(ctx, action.sessionId, action.tabId, what)) action.deadline = Date.now() + action.timeoutMs;
  }
  const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
  const events = combos.flatMap((combo) => comboEvents(combo, { platform: PLATFORM }));
  const { outcome } = await watch.settle(keys(action.send, events), { deadline: action.deadline, signal: ctx.signal });
  return finishAction(ctx, params, action.tabId, {
    tab_id: action.tabId,
    ...(target ? { target: targetInfo(target) } : {}),
    pressed: combos.map((c) => c.label),
    ...outcome,
  });
}
