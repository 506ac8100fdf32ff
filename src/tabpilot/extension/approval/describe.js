// @ts-check
// What the approval rules need to know of an element, read in its page: is it a control that submits
// its form, a field whose value is a secret, a link to somewhere. Also the element that has the focus
// (where `press` and `type` without a target send their keys). Only side-panel sessions pay for this.
import { callOnTarget } from "../page/actionability.js";

/**
 * `this` = the element acted on (or the one with the focus). The control it belongs to decides: a
 * click on the text of a submit button is a click on the button.
 * @this {Element}
 */
function factsInPage() {
  const any = /** @type {any} */ (this.closest?.("button, input, select, textarea, a[href], area[href]") ?? this);
  const tag = String(any.localName ?? "");
  const type = tag === "input" || tag === "button" ? String(any.type || "").toLowerCase() : "";
  const form = tag === "button" || tag === "input" ? any.form : null;
  const submits = !!form && ((tag === "button" && type === "submit") || (tag === "input" && (type === "submit" || type === "image")));
  // Enter in a single-line field sends its form (implicit submission).
  const enterSubmits = !!form && tag === "input" && !/^(button|submit|reset|image|checkbox|radio|file|hidden|range|color)$/.test(type);
  const link = this.closest?.("a[href], area[href]");
  const web = (/** @type {string} */ url) => (/^https?:/i.test(url) ? url : null);
  return {
    tag,
    type,
    submits,
    enterSubmits,
    href: link ? web(/** @type {any} */ (link).href) : null,
    // A button's formAction is the document's address when it has no formaction of its own; Enter
    // in a field sends the form to its own action.
    formAction: submits ? web(any.hasAttribute("formaction") ? any.formAction : form.action) : enterSubmits ? web(form.action) : null,
    autocomplete: String(any.getAttribute?.("autocomplete") ?? ""),
    field: `${any.name ?? ""} ${any.id ?? ""}`.trim(),
    inFrame: tag === "iframe" || tag === "frame",
  };
}
const FACTS = factsInPage.toString();
/** The deepest focused element, through open shadow roots and same-origin frames. */
const FACTS_OF_FOCUS = `function () {
  let el = document.activeElement;
  for (;;) {
    if (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    else if (el && /^i?frame$/.test(el.localName)) {
      let inner = null;
      try { inner = el.contentDocument && el.contentDocument.activeElement; } catch {}
      if (!inner || inner === el.contentDocument.body) break;
      el = inner;
    } else break;
  }
  return el ? (${FACTS}).call(el) : null;
}`;

/**
 * @typedef {import("./rules.js").ElementFacts} ElementFacts
 */

/** The accessible name out of a target's label (`button "Place order"`). @param {string} label */
export function nameOfLabel(label) {
  const quoted = label.indexOf(' "');
  if (quoted < 0) return "";
  try {
    return String(JSON.parse(label.slice(quoted + 1)));
  } catch {
    return label.slice(quoted + 2, -1);
  }
}

/** @param {any} raw @param {string} name @returns {ElementFacts | null} */
function named(raw, name) {
  return raw ? { ...raw, name } : null;
}

/**
 * The facts of an element an action resolved (with or without an object handle, see callOnTarget);
 * none for an element gone since the look (the action itself finds that out).
 * @param {Record<string, any>} ctx @param {import("../page/targets.js").ResolvedTarget} target
 * @returns {Promise<ElementFacts | null>}
 */
export async function elementFacts(ctx, target) {
  const raw = await callOnTarget(ctx, target, FACTS).catch((err) => {
    if (err?.reason === "ref_stale") return null;
    throw err;
  });
  return named(raw, nameOfLabel(target.label));
}

/** The facts of the element that has the focus in the tab (keys go there). @param {Record<string, any>} ctx @param {number} tabId */
export async function focusFacts(ctx, tabId) {
  return named(await ctx.frames.call(await ctx.frames.main(tabId), FACTS_OF_FOCUS), "");
}
