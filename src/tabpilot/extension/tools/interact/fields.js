// @ts-check
// tool.focus / tool.fill / tool.select / tool.check: form fields, through the actionability routine.
import { RpcError, fromPage, said } from "../../link/protocol.js";
import { requireString } from "../../link/params.js";
import { actionable, callOnTarget, release, saidName } from "../../page/actionability.js";
import { click, keys } from "../../page/input.js";
import { comboEvents, parseCombo } from "../../page/keys.js";
import { watchOutcome } from "../../browser/outcome.js";
import { beginAction, finishAction, targetInfo } from "../../page/action.js";
import { approve } from "../../approval/gate.js";
import { elementFacts } from "../../approval/describe.js";

// ── In the page (agent world); `this` is the element. ───────────────────────────────────────────────

/**
 * Focus the field and select all it holds, so typed text replaces it. Inputs whose value has a fixed
 * format (date, time, colour, range…) take the value directly, with the events a picker fires.
 * @this {HTMLElement} @param {string} value
 */
function fillPrepareInPage(value) {
  const el = /** @type {any} */ (this);
  const DIRECT = /^(date|time|datetime-local|month|week|color|range)$/;
  el.focus();
  if (el.localName === "input" && DIRECT.test(el.type)) {
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
    if (setter) setter.call(el, value);
    else el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { mode: "direct", value: el.value };
  }
  if (typeof el.select === "function") {
    el.select();
  } else {
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(el);
    const sel = el.ownerDocument.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  return { mode: "typed", before: typeof el.value === "string" ? el.value : el.innerText };
}

/** After the typed text went in: what the field holds, and a change event for fields that fire one. @this {HTMLElement} @param {string} before */
function fillFinishInPage(before) {
  const el = /** @type {any} */ (this);
  if (typeof el.value === "string" && el.localName !== "button") {
    if (el.value !== before) el.dispatchEvent(new Event("change", { bubbles: true }));
    return { value: el.value, rich: false };
  }
  return { value: el.innerText, rich: true };
}

/**
 * Choose options of a <select> by value, else by label (exact, then any case): all or nothing.
 * @this {HTMLSelectElement} @param {string[]} wanted
 */
function selectInPage(wanted) {
  const el = this;
  if (el.localName !== "select") return { error: "target_not_select", detail: el.localName };
  const options = [...el.options];
  const labelOf = (/** @type {HTMLOptionElement} */ o) => (o.label || o.text).replace(/\s+/g, " ").trim();
  const available = options.map((o) => ({ value: o.value, label: labelOf(o), disabled: o.disabled || !!o.closest("optgroup[disabled]") }));
  if (!el.multiple && wanted.length !== 1) return { error: "single", available };
  /** @type {{option: HTMLOptionElement, matched_by: string}[]} */
  const chosen = [];
  for (const want of wanted) {
    const w = want.replace(/\s+/g, " ").trim();
    let matched_by = "value";
    let option = options.find((o) => o.value === want);
    if (!option) [option, matched_by] = [options.find((o) => labelOf(o) === w), "label"];
    if (!option) option = options.find((o) => labelOf(o).toLowerCase() === w.toLowerCase());
    if (!option) return { error: "option_not_found", want, available };
    if (option.disabled || option.closest("optgroup[disabled]")) return { error: "option_disabled", want, label: labelOf(option), available };
    chosen.push({ option, matched_by });
  }
  for (const o of options) o.selected = chosen.some((c) => c.option === o);
  el.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return { selected: chosen.map((c) => ({ value: c.option.value, label: labelOf(c.option), matched_by: c.matched_by })), multiple: el.multiple };
}

/**
 * Is it a checkbox, radio or switch (native, ARIA, or a label of one), and is it checked?
 * @this {HTMLElement}
 */
function checkStateInPage() {
  let el = /** @type {any} */ (this);
  if (el.localName === "label" && el.control) el = el.control;
  if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) {
    return { kind: el.getAttribute("role") === "switch" ? "switch" : el.type, checked: el.checked };
  }
  const role = (el.getAttribute("role") || "").split(" ")[0];
  if (/^(checkbox|radio|switch|menuitemcheckbox|menuitemradio)$/.test(role)) {
    return { kind: role.replace("menuitem", ""), checked: el.getAttribute("aria-checked") === "true" };
  }
  return { kind: null, checked: false };
}

const FILL_PREPARE = fillPrepareInPage.toString();
const FILL_FINISH = fillFinishInPage.toString();
const SELECT = selectInPage.toString();
const CHECK_STATE = checkStateInPage.toString();

// ── In the service worker ───────────────────────────────────────────────────────────────────────────

const norm = (/** @type {string} */ s) => s.replace(/[\s\u00a0]+/g, " ").trim();

/** @type {import("../../link/dispatcher.js").Handler} */
export async function focus(params, ctx) {
  const raw = requireString(params, "target");
  const action = await beginAction(params, ctx);
  const target = await actionable(ctx, action.tabId, raw, { label: true, handle: false, timeoutMs: action.timeoutMs, deadline: action.deadline, signal: ctx.signal });
  try {
    await callOnTarget(ctx, target, "function () { this.focus(); }");
    return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: targetInfo(target) });
  } finally {
    release(ctx, target);
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function fill(params, ctx) {
  const raw = requireString(params, "target");
  if (typeof params.value !== "string") throw new RpcError("invalid_params", "value must be a string (\"\" empties the field)");
  const value = params.value;
  const action = await beginAction(params, ctx, { gesture: true });
  const { signal } = ctx;
  const target = await actionable(ctx, action.tabId, raw, { editable: true, label: true, handle: false, timeoutMs: action.timeoutMs, deadline: action.deadline, signal });
  try {
    const what = { action: "fill", target: `${targetInfo(target).name} (value [redacted])`, facts: () => elementFacts(ctx, target) };
    while (await approve(ctx, action.sessionId, action.tabId, what)) action.deadline = Date.now() + action.timeoutMs;
    const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
    const typing = (async () => {
      const prepared = await callOnTarget(ctx, target, FILL_PREPARE, [value]);
      if (prepared.mode === "direct") return { value: prepared.value, rich: false };
      // Typed text replaces the selection, with the beforeinput/input events of real typing;
      // an empty value is a Delete of the selection.
      if (value === "") await keys(action.send, comboEvents(parseCombo("Delete")));
      else await action.send("Input.insertText", { text: value });
      return callOnTarget(ctx, target, FILL_FINISH, [prepared.before]);
    })();
    const { value: filled, outcome } = await watch.settle(typing, { deadline: action.deadline, signal });
    const result = { tab_id: action.tabId, target: targetInfo(target), value, ...outcome };
    if (filled && (filled.rich ? norm(filled.value) !== norm(value) : filled.value !== value)) {
      throw new RpcError("invalid_params", said`${saidName(target)} holds ${fromPage(JSON.stringify(filled.value))}, not ${JSON.stringify(value)}`, "value_mismatch", {
        ...result,
        actual: filled.value,
        hint: "The page changed or limited the text (a length limit, a format, a mask); check what it accepts with `tabpilot snapshot`.",
      });
    }
    return finishAction(ctx, params, action.tabId, result);
  } finally {
    release(ctx, target);
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function select(params, ctx) {
  const raw = requireString(params, "target");
  const values = params.values;
  if (!Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== "string")) {
    throw new RpcError("invalid_params", "values must be a non-empty list of option values or labels");
  }
  const action = await beginAction(params, ctx);
  const target = await actionable(ctx, action.tabId, raw, { label: true, handle: false, timeoutMs: action.timeoutMs, deadline: action.deadline, signal: ctx.signal });
  try {
    const name = saidName(target);
    const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
    const { value: done, outcome } = await watch.settle(callOnTarget(ctx, target, SELECT, [values]), { deadline: action.deadline, signal: ctx.signal });
    if (done?.error) throw selectError(done, name);
    return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: targetInfo(target), selected: done?.selected ?? [], multiple: done?.multiple ?? false, ...outcome });
  } finally {
    release(ctx, target);
  }
}

/** @param {any} failed @param {import("../../link/protocol.js").Said} name */
function selectError(failed, name) {
  const listing = (failed.available ?? [])
    .slice(0, 20)
    .map((/** @type {any} */ o) => `${JSON.stringify(o.label)}${o.value !== o.label ? ` (${o.value})` : ""}${o.disabled ? " disabled" : ""}`)
    .join(", ");
  const options = { options: failed.available, hint: said`Pick one of its options: ${fromPage(listing)}.` };
  switch (failed.error) {
    case "target_not_select":
      return new RpcError("invalid_params", said`${name} is not a <select> (it is a ${fromPage(failed.detail)})`, "target_not_select", {
        hint: "For a custom dropdown, click it open and click the option (tabpilot click).",
      });
    case "single":
      return new RpcError("invalid_params", said`${name} takes one option, not several`, "option_not_found", options);
    case "option_disabled":
      return new RpcError("invalid_params", said`the option ${fromPage(JSON.stringify(failed.label))} of ${name} is disabled`, "option_disabled", options);
    default:
      return new RpcError("invalid_params", said`${name} has no option ${JSON.stringify(failed.want)}`, "option_not_found", options);
  }
}

/** @type {import("../../link/dispatcher.js").Handler} */
export async function check(params, ctx) {
  const raw = requireString(params, "target");
  const wanted = params.checked ?? true;
  if (typeof wanted !== "boolean") throw new RpcError("invalid_params", "checked must be true or false");
  const action = await beginAction(params, ctx, { gesture: true });
  const { signal } = ctx;
  const target = await actionable(ctx, action.tabId, raw, { pointer: true, handle: false, timeoutMs: action.timeoutMs, deadline: action.deadline, signal });
  try {
    const before = await callOnTarget(ctx, target, CHECK_STATE);
    // A label is clicked as a person would, and named after the control it toggles.
    const named = before.kind && target.label.split(" ", 1)[0] === "label" ? { ...target, label: `${before.kind}${target.label.slice("label".length)}` } : target;
    const info = targetInfo(named);
    if (!before.kind) {
      throw new RpcError("invalid_params", said`${saidName(named)} is not a checkbox, radio or switch`, "element_not_checkable", {
        hint: "Point at the checkbox (or its label); use click for other controls.",
      });
    }
    if (before.checked === wanted) return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: info, kind: before.kind, checked: wanted, changed: false });
    if (!wanted && before.kind === "radio") {
      throw new RpcError("invalid_params", said`${saidName(named)} is a radio button: it is unchecked by checking another one of its group`, "element_not_checkable", {
        hint: "Check the option you want instead (tabpilot check).",
      });
    }
    const watch = await watchOutcome(ctx, action.tabId, action.sessionId);
    const { outcome } = await watch.settle(click(action.send, target.point), { deadline: action.deadline, signal });
    const after = outcome.dialog?.handled === "open" || outcome.navigated ? null : await callOnTarget(ctx, target, CHECK_STATE);
    if (after && after.checked !== wanted) {
      throw new RpcError("invalid_params", said`clicking ${saidName(named)} did not ${wanted ? "check" : "uncheck"} it`, "element_not_checkable", {
        hint: "The page handles it differently; look at it with `tabpilot snapshot` and click what toggles it.",
      });
    }
    return finishAction(ctx, params, action.tabId, { tab_id: action.tabId, target: info, kind: before.kind, checked: wanted, changed: true, ...outcome });
  } finally {
    release(ctx, target);
  }
}
