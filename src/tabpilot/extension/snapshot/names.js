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
  if (el.namespaceURI === "http://www.w3.org/2000/svg") {
    // An SVG element's own <title> is its name.
    const title = el.querySelector(":scope > title");
    if (title) return clean(title.textContent);
  }
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

/**
 * What the icon of a control with no name shows, as the page says it: a `data-icon`, the id an SVG
 * `<use>` points to, or an icon set's class (`fa-play`, `bi-save`, `lucide-plus`, `icon-trash`…); an
 * icon font's ligature (`<span class="material-icons">settings</span>`) is text, and names it already.
 * "" when none says. Looks at the element and the few elements inside it, open shadow roots included.
 * @param {Element} el
 * @returns {string}
 */
export function iconName(el) {
  const SETS = /^(?:fa|bi|lucide|icon|icons|glyphicon|ti|tabler|mdi|ri|codicon|octicon|feather|ion|ph|la|gg|bx|bxs|fi|heroicon|iconoir|hero)-(.+)$/;
  const NOT_NAMES = /^(?:solid|regular|light|thin|duotone|brands|sharp|fw|lg|xs|sm|xl|[0-9]+x|spin|pulse|border|inverse|stack|flip|rotate|pull|ul|li|fill|outline|outlined|round|rounded|filled|two-tone|size|inline|svg|button|btn|only|wrapper|container)(?:-|$)/;
  /** @param {string} s */
  const tidy = (s) => s.trim().toLowerCase().replace(/^(?:icon|icons|ic|i|svg|sprite)[-_:]/, "").replace(/[-_](?:icon|svg)$/, "").slice(0, 40);
  /** @param {Element} e */
  const said = (e) => {
    const data = e.getAttribute("data-icon") || e.getAttribute("data-lucide") || e.getAttribute("icon");
    if (data) return tidy(data);
    if (e.localName === "use") {
      const href = e.getAttribute("href") || e.getAttribute("xlink:href") || "";
      const id = href.slice(href.indexOf("#") + 1);
      if (id) return tidy(id);
    }
    const cls = typeof e.className === "string" ? e.className : e.getAttribute("class") || "";
    for (const token of cls.split(/\s+/)) {
      const m = SETS.exec(token);
      if (m && !NOT_NAMES.test(m[1])) return tidy(m[1]);
    }
    return "";
  };
  const queue = [el];
  for (let seen = 0; queue.length && seen < 12; seen++) {
    const e = /** @type {Element} */ (queue.shift());
    const name = said(e);
    if (name) return name;
    const parent = /** @type {any} */ (e).shadowRoot || e;
    for (let c = parent.firstElementChild; c; c = c.nextElementSibling) queue.push(c);
  }
  return "";
}
