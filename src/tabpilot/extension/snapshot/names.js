// @ts-check
// The one naming routine for controls: what the snapshot prints in a control's bracket and what every
// action's outcome and error calls it (page/targets.js) come from here, so an agent reads one name for
// one control wherever it meets it.
//
// Sent into the page as source text (the snapshot agent's composed source, and the action agent's
// describe, both defining each function here by its name): each may use only its parameter, its own
// locals, browser globals and the other function of this file.

/**
 * The words of a label without the text of the controls inside it; an image in it gives its alt text
 * (`<label for=q><img alt="Search"></label>` names the field "Search").
 * @param {Node} n
 * @returns {string}
 */
export function labelText(n) {
  let s = "";
  for (let c = n.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3) s += /** @type {Text} */ (c).data;
    else if (c.nodeType === 1) {
      const e = /** @type {Element} */ (c);
      const tag = e.localName;
      if (tag === "input" || tag === "select" || tag === "textarea" || tag === "button" || tag === "script" || tag === "style") continue;
      if (e.getAttribute("aria-hidden") === "true") continue;
      if (tag === "img") s += " " + (e.getAttribute("aria-label") || e.getAttribute("alt") || "") + " ";
      else if (tag === "svg") s += " " + (e.getAttribute("aria-label") || e.querySelector(":scope > title")?.textContent || "") + " ";
      else s += labelText(c);
    }
  }
  return s;
}

/**
 * A control's name from what names it from outside its content, in accname's order: aria-labelledby
 * (the rendered text of each, blocks a space apart; itself: its aria-label), aria-label, the value of
 * a button input, its labels (labelText: `<label>Status <select>` is "Status", not the options too).
 * "" when none does: the name
 * then comes from the content, the title or the placeholder.
 * @param {Element} el
 * @returns {string}
 */
export function explicitName(el) {
  const clean = (/** @type {string | null | undefined} */ s) => (s || "").replace(/\s+/g, " ").trim();
  /** Rendered text with breaks between blocks (a hidden element: its text content). @param {Element} e */
  const textOf = (e) => {
    const t = /** @type {any} */ (e).innerText;
    return typeof t === "string" ? t : e.textContent || "";
  };
  const ids = el.getAttribute("aria-labelledby");
  if (ids) {
    const scope = /** @type {any} */ (el.getRootNode());
    let s = "";
    for (const id of ids.split(/\s+/)) {
      if (!id) continue;
      const t = scope.getElementById ? scope.getElementById(id) : el.ownerDocument.getElementById(id);
      if (t) s += " " + (t === el ? el.getAttribute("aria-label") || "" : textOf(t));
    }
    if (clean(s)) return clean(s);
  }
  const aria = clean(el.getAttribute("aria-label"));
  if (aria) return aria;
  const any = /** @type {any} */ (el);
  if (el.localName === "input" && /^(button|submit|reset)$/.test(any.type)) {
    return clean(any.value) || (any.type === "submit" ? "Submit" : any.type === "reset" ? "Reset" : "");
  }
  if (el.localName === "input" && any.type === "image") return clean(any.alt || any.value) || "Submit";
  const labels = any.labels;
  if (!labels || !labels.length) return "";
  let s = "";
  for (let j = 0; j < labels.length; j++) s += " " + labelText(labels[j]);
  return clean(s);
}
