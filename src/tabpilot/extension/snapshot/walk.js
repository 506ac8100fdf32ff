// @ts-check
// The snapshot walker: one pass over the page's flattened tree (shadow roots with slots resolved: the
// open ones, and the closed ones the extension handed in; same-origin iframes inline) that builds the renderer's IR (see render.js) and gives refs to
// actionable elements.
//
// Runs inside the page (sent as source text by index.js): it may use only its parameters, its own
// locals, browser globals and the naming routine of names.js by its names, which the composed source
// defines (the import serves type checking and the node tests). No module-level constants.
import { explicitName, iconName, labelText } from "./names.js";

/**
 * @typedef {{map: WeakMap<Element, number>, refs: Map<number, WeakRef<Element>>, next: number,
 *   listened?: WeakSet<Element>, docListened?: boolean, roots?: WeakMap<Element, ShadowRoot>,
 *   probed?: WeakSet<Element>, roles?: WeakMap<Element, string>}} RefStore
 * listened: elements with their own click-type listeners, docListened: the document has some (both
 * told by the extension through CDP); roots: closed shadow roots the extension reached through CDP;
 * probed: elements already asked for a closed root (custom elements, and empty built-in hosts that
 * show something); roles: the role each control was last shown with (`clickable` for an element
 * with no role of its own), which outcomes and errors call it by too.
 * @typedef {{viewportOnly?: boolean}} WalkOptions
 * @typedef {{l: number, t: number, r: number, b: number, d: number, up: Clip | null}} Clip
 * A box that clips what it contains, intersected with the clips around it; d: how many are nested.
 */

/**
 * Walks `root` (an element, normally document.body) and returns the IR, the element list that the
 * IR's `i` fields index, and the cross-origin frames found.
 * @param {Element} root
 * @param {WalkOptions} opts
 * @param {RefStore} store
 */
export function walkDocument(root, opts, store) {
  const vpOnly = !!opts.viewportOnly;
  /** @type {Element[]} */
  const els = [];
  /** @type {{ref: string, name: string, src: string}[]} */
  const frames = [];
  // Likely hosts of a closed shadow root (see showsNoChild): the extension looks for one.
  /** @type {Element[]} */
  const hosts = [];
  const listened = store.listened;
  const roots = store.roots;
  const probed = store.probed;
  const docListened = !!store.docListened;
  let elements = 0;
  let refsShown = 0;

  // Elements never walked: not rendered, or rendered by their owner (options of a select).
  /** @type {Record<string, number>} */
  const SKIP = {
    script: 1, style: 1, template: 1, noscript: 1, head: 1, meta: 1, link: 1, base: 1, title: 1,
    datalist: 1, option: 1, optgroup: 1, param: 1, source: 1, track: 1, colgroup: 1, col: 1, area: 1,
    map: 1, canvas: 1, embed: 1, object: 1,
    // what an SVG defines or describes rather than draws
    defs: 1, symbol: 1, clipPath: 1, mask: 1, linearGradient: 1, radialGradient: 1, marker: 1, pattern: 1,
    filter: 1, desc: 1, metadata: 1,
  };
  const SVG = "http://www.w3.org/2000/svg";
  /** @type {Record<string, number>} */
  const ACTIONABLE = {
    link: 1, button: 1, checkbox: 1, radio: 1, switch: 1, tab: 1, menuitem: 1, menuitemcheckbox: 1,
    menuitemradio: 1, option: 1, treeitem: 1, gridcell: 1, slider: 1, spinbutton: 1, textbox: 1, searchbox: 1,
    combobox: 1, listbox: 1, summary: 1, scrollbar: 1, password: 1, date: 1, datetime: 1, time: 1,
    month: 1, week: 1, color: 1, file: 1, video: 1, audio: 1,
  };
  /** @type {Record<string, string>} */
  const LANDMARK = {
    navigation: "navigation", main: "main", banner: "banner", contentinfo: "contentinfo",
    complementary: "complementary", search: "search", form: "form", region: "region", feed: "feed",
  };
  // Landmarks that are only landmarks when named (ARIA).
  /** @type {Record<string, number>} */
  const NAMED_ONLY = { form: 1, region: 1, feed: 1 };
  // Roles of input types (anything else is a textbox).
  /** @type {Record<string, string>} */
  const INPUT_ROLE = {
    button: "button", submit: "button", reset: "button", image: "button", checkbox: "checkbox",
    radio: "radio", range: "slider", number: "spinbutton", search: "searchbox", password: "password",
    date: "date", "datetime-local": "datetime", time: "time", month: "month", week: "week",
    color: "color", file: "file",
  };
  // Input types whose value is typed text (readonly and placeholder apply).
  /** @type {Record<string, number>} */
  const TEXT_INPUT = { text: 1, search: 1, email: 1, tel: 1, url: 1, password: 1, number: 1 };
  // Built-in elements that may hold a shadow root (attachShadow), besides custom elements.
  /** @type {Record<string, number>} */
  const SHADOW_HOST = {
    article: 1, aside: 1, blockquote: 1, body: 1, div: 1, footer: 1, h1: 1, h2: 1, h3: 1, h4: 1, h5: 1, h6: 1,
    header: 1, main: 1, nav: 1, p: 1, section: 1, span: 1,
  };
  // IR node types that are blocks (whitespace around them does not matter).
  /** @type {Record<string, number>} */
  const BLOCK = { b: 1, h: 1, ul: 1, ol: 1, li: 1, tbl: 1, tr: 1, td: 1, pre: 1, lm: 1, dlg: 1, grp: 1, frame: 1, hr: 1 };
  // Content that makes an element known only by its click listener a region that delegates (rendered
  // Markdown's copy buttons, a framework's root) rather than a target.
  const PROSE = "h1,h2,h3,h4,h5,h6,p,ul,ol,table,pre,blockquote,button,input,select,textarea,a[href]";
  // IR nodes that make a clickable a container of its content rather than a target.
  /** @type {Record<string, number>} */
  const HOLDS = { c: 1, h: 1, ul: 1, ol: 1, tbl: 1, pre: 1, lm: 1, dlg: 1, grp: 1, frame: 1 };
  /** @type {Record<string, number>} */
  const CHECKABLE_ROLE = { checkbox: 1, radio: 1, switch: 1, menuitemcheckbox: 1, menuitemradio: 1 };
  // Widgets that stand in for a hidden native control (ones that take no name from their content).
  /** @type {Record<string, number>} */
  const STAND_IN = { combobox: 1, listbox: 1, textbox: 1, searchbox: 1, spinbutton: 1, slider: 1 };
  // Roles whose content is their value (the renderer's VALUE_FROM_CONTENT).
  /** @type {Record<string, number>} */
  const VALUE_ROLE = { textbox: 1, searchbox: 1, combobox: 1, spinbutton: 1 };
  // Elements that show a control's own text (its aria-labelledby points into itself): content, not controls.
  /** @type {WeakSet<Element>} */
  const ownText = new WeakSet();

  const topDoc = root.ownerDocument;
  // Focus, through shadow roots and same-origin frames.
  /** @type {Element | null} */
  let focused = topDoc.activeElement;
  for (let guard = 0; focused && guard < 32; guard++) {
    const inner = /** @type {any} */ (focused).shadowRoot?.activeElement ?? (() => {
      try {
        return /** @type {any} */ (focused).contentDocument?.activeElement ?? null;
      } catch {
        return null;
      }
    })();
    if (!inner || inner === focused) break;
    focused = inner;
  }
  let userInvalid = true; // :user-invalid support, probed on first use

  // Walk context, saved and restored around elements.
  let view = /** @type {Window & typeof globalThis} */ (topDoc.defaultView || window);
  let vw = view.innerWidth;
  let vh = view.innerHeight;
  let vis = true; // visibility:visible
  let parentCursor = "auto";
  /** @type {any} */
  let actNode = null; // IR node of the actionable we are inside
  let skipText = false; // inside a label whose text became its control's name
  let pre = false; // inside preformatted text
  let sectioning = 0; // inside article/aside/main/nav/section (header/footer are not landmarks there)
  let editable = false; // inside a contenteditable region
  /** @type {Clip | null} */
  let clip = null; // the clips around (full mode: only boxes of no size; viewport mode: every clipping box)
  let absCb = 0; // clip depth at the containing block of absolutely positioned descendants
  let fixedCb = 0; // and of fixed ones (a transformed ancestor)
  let seq = 0; // numbers the elements walked
  let parentSeq = 0; // the number of the element whose children are being walked
  let splitSeq = -1; // the number of a clickable group whose children are each a target
  let heard = docListened; // an ancestor has a click listener (delegation)

  /** @param {Element} el */
  function refOf(el) {
    let n = store.map.get(el);
    if (n === undefined) {
      n = store.next++;
      store.map.set(el, n);
      store.refs.set(n, new WeakRef(el));
    }
    refsShown++;
    return n;
  }
  /** @param {string} s */
  const clean = (s) => s.replace(/\s+/g, " ").trim();

  /** @param {Element} el */
  function labelledBy(el) {
    const ids = el.getAttribute("aria-labelledby");
    if (!ids) return "";
    const scope = /** @type {any} */ (el.getRootNode());
    let s = "";
    for (const id of ids.split(/\s+/)) {
      if (!id) continue;
      const t = scope.getElementById ? scope.getElementById(id) : el.ownerDocument.getElementById(id);
      if (t) s += " " + (t === el ? el.getAttribute("aria-label") || "" : textOf(t));
    }
    return clean(s);
  }
  /** Rendered text with line breaks between blocks (hidden elements: their text content). @param {Element} el */
  function textOf(el) {
    const t = /** @type {any} */ (el).innerText;
    return typeof t === "string" ? t : el.textContent || "";
  }
  /** Is this element rendered (used for the control of a label)? @param {Element} el */
  function rendered(el) {
    const any = /** @type {any} */ (el);
    return typeof any.checkVisibility === "function" ? any.checkVisibility({ visibilityProperty: true }) : true;
  }
  /** @param {string} s */
  const short = (s) => (s.length > 300 ? s.slice(0, 300) + `…(+${s.length - 300} chars)` : s);
  /** @param {Element} el */
  const roleAttr = (el) => (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase();

  /** A native control a person can neither see nor reach (aria-hidden, or not rendered). @param {Element} el */
  function hiddenControl(el) {
    const tag = el.localName;
    if (tag !== "select" && tag !== "textarea" && !(tag === "input" && /** @type {HTMLInputElement} */ (el).type !== "hidden")) return false;
    return !!el.closest('[aria-hidden="true"]') || !rendered(el);
  }
  /**
   * The widget a person uses in place of a hidden native control (select2, a styled checkbox): the
   * widget that holds it, or the one that starts right after it. It takes the control's label.
   * @param {Element} c
   */
  function standInOf(c) {
    if (!hiddenControl(c)) return null;
    for (let p = c.parentElement, k = 0; p && k < 3; p = p.parentElement, k++) if (STAND_IN[roleAttr(p)] === 1) return p;
    let w = c.nextElementSibling;
    for (let k = 0; w && k < 4; k++, w = w.firstElementChild) {
      if (STAND_IN[roleAttr(w)] === 1 || (w.hasAttribute("tabindex") && /** @type {HTMLElement} */ (w).tabIndex >= 0)) return w;
    }
    return null;
  }
  /** The name of the hidden control a widget stands in for, or "". @param {Element} el */
  function standInName(el) {
    /** @type {Element | null} */
    let c = el.querySelector("select, input, textarea");
    if (!c || standInOf(c) !== el) {
      c = null;
      for (let t = /** @type {Element | null} */ (el), k = 0; t && k < 4; t = t.parentElement, k++) {
        const prev = t.previousElementSibling;
        if (prev) {
          if (standInOf(prev) === el) c = prev;
          break;
        }
      }
    }
    if (!c) return "";
    return explicitName(c) || clean(c.getAttribute("title") || "");
  }
  /**
   * Does the element's aria-labelledby point only inside itself? A combobox that does (select2) is
   * labelled by the choice it shows: that text is its value, and the element showing it is no control.
   * @param {Element} el
   */
  function labelledByItself(el) {
    const ids = (el.getAttribute("aria-labelledby") || "").split(/\s+/).filter(Boolean);
    if (!ids.length) return false;
    const scope = /** @type {any} */ (el.getRootNode());
    for (const id of ids) {
      const t = scope.getElementById ? scope.getElementById(id) : el.ownerDocument.getElementById(id);
      if (!t || t === el || !el.contains(t)) return false;
    }
    for (const id of ids) ownText.add(scope.getElementById ? scope.getElementById(id) : el.ownerDocument.getElementById(id));
    return true;
  }

  /** @param {Element} el @param {string} tag */
  function implicitRole(el, tag) {
    switch (tag) {
      case "a":
        return el.hasAttribute("href") ? "link" : "";
      case "button":
        return "button";
      case "input": {
        const type = /** @type {HTMLInputElement} */ (el).type;
        if (type === "hidden") return "";
        return INPUT_ROLE[type] || "textbox";
      }
      case "select":
        return /** @type {HTMLSelectElement} */ (el).multiple || /** @type {HTMLSelectElement} */ (el).size > 1 ? "listbox" : "combobox";
      case "textarea":
        return "textbox";
      case "summary": {
        const p = el.parentElement;
        return p && p.localName === "details" && p.querySelector(":scope > summary") === el ? "summary" : "";
      }
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6":
        return "heading";
      case "nav":
        return "navigation";
      case "main":
        return "main";
      case "aside":
        return "complementary";
      case "header":
        return sectioning ? "" : "banner";
      case "footer":
        return sectioning ? "" : "contentinfo";
      case "form":
        // a landmark only when named, as in ARIA
        return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") || el.hasAttribute("title") ? "form" : "";
      case "search":
        return "search";
      case "section":
        return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") ? "region" : "";
      case "dialog":
        return "dialog";
      case "fieldset":
        return "group";
      case "img":
        return "img";
      case "progress":
        return "progressbar";
      case "meter":
        return "meter";
      case "iframe": case "frame":
        return "iframe";
      case "video": case "audio":
        return el.hasAttribute("controls") ? tag : "";
      default:
        return "";
    }
  }

  /** States of an actionable element, as the renderer prints them. @param {any} el @param {string} tag @param {string} role */
  function statesOf(el, tag, role) {
    let s = "";
    const native = tag === "input" || tag === "select" || tag === "textarea" || tag === "button";
    if (tag === "input" && (el.type === "checkbox" || el.type === "radio")) {
      s += el.indeterminate ? " mixed" : el.checked ? " checked" : " unchecked";
    } else if (CHECKABLE_ROLE[role]) {
      const c = el.getAttribute("aria-checked");
      s += c === "true" ? " checked" : c === "mixed" ? " mixed" : " unchecked";
    }
    if (role === "summary") s += el.parentElement.open ? " expanded" : " collapsed";
    else {
      const x = el.getAttribute("aria-expanded");
      if (x === "true") s += " expanded";
      else if (x === "false") s += " collapsed";
    }
    if (el.getAttribute("aria-selected") === "true") s += " selected";
    const p = el.getAttribute("aria-pressed");
    if (p === "true") s += " pressed";
    else if (p === "mixed") s += " pressed=mixed";
    if ((native && el.matches(":disabled")) || el.getAttribute("aria-disabled") === "true") s += " disabled";
    if ((native && el.required) || el.getAttribute("aria-required") === "true") s += " required";
    const inv = el.getAttribute("aria-invalid");
    let invalid = inv != null && inv !== "false";
    if (!invalid && native && userInvalid && tag !== "button") {
      try {
        invalid = el.matches(":user-invalid");
      } catch {
        userInvalid = false;
      }
    }
    if (invalid) s += " invalid";
    if (((tag === "input" && TEXT_INPUT[el.type]) || tag === "textarea") && el.readOnly) s += " readonly";
    else if (el.getAttribute("aria-readonly") === "true") s += " readonly";
    const cur = el.getAttribute("aria-current");
    if (cur && cur !== "false") s += " current";
    if (el === focused) s += " focused";
    return s.slice(1);
  }

  /**
   * The IR node of an actionable element (children are walked by the caller when it has content).
   * @param {any} el @param {string} tag @param {string} role
   */
  function actionable(el, tag, role) {
    /** @type {any} */
    const n = { t: "c", r: role, ref: refOf(el) };
    store.roles?.set(el, role);
    const native = tag === "input" || tag === "select" || tag === "textarea";
    let name = !native && VALUE_ROLE[role] === 1 && labelledByItself(el) ? clean(el.getAttribute("aria-label") || "") : explicitName(el);
    if (!name && !native && STAND_IN[role] === 1) name = standInName(el);
    let nameIsPlaceholder = false;
    if (tag === "input" || tag === "select" || tag === "textarea") {
      const type = el.type;
      // A button input is named by explicitName alone; a field has more to say.
      if (!(tag === "input" && (type === "button" || type === "submit" || type === "reset" || type === "image"))) {
        if (!name) name = clean(el.title || "");
        if (!name && el.placeholder) {
          name = clean(el.placeholder);
          nameIsPlaceholder = true;
        }
        // value
        if (tag === "select") {
          const opts = el.options;
          const labels = [];
          const selected = [];
          const off = [];
          for (let j = 0; j < opts.length; j++) {
            const label = clean(opts[j].label || opts[j].text);
            if (j < 20) {
              labels.push(label);
              // an option of a disabled optgroup is disabled too
              if (opts[j].disabled || (opts[j].parentElement && opts[j].parentElement.localName === "optgroup" && opts[j].parentElement.disabled)) off.push(label);
            }
            if (opts[j].selected) selected.push(label);
          }
          n.v = selected.join("|");
          if (!el.multiple && !n.v) delete n.v;
          n.o = labels.join("|") + (opts.length > 20 ? `|…(+${opts.length - 20})` : "");
          if (off.length) n.od = off.join("|");
        } else if (type === "checkbox" || type === "radio") {
          // state only
        } else if (type === "password") {
          if (el.value) n.v = "••••••••";
        } else if (type === "file") {
          const files = el.files;
          if (files && files.length) n.v = Array.from(files, (/** @type {File} */ f) => f.name).join(", ");
        } else if (el.value !== "") {
          n.v = short(el.value);
          if (type === "range") {
            if (el.min !== "" && el.min !== "0") n.s = "min=" + el.min;
            if (el.max !== "" && el.max !== "100") n.s = (n.s ? n.s + " " : "") + "max=" + el.max;
          }
        }
        if (!nameIsPlaceholder && el.placeholder && el.value === "") {
          const ph = clean(el.placeholder);
          if (ph !== name) n.ph = ph;
        }
      }
    } else if (role === "slider" || role === "spinbutton" || role === "scrollbar") {
      const v = el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow");
      if (v != null) n.v = v;
    } else if (!name && (role === "textbox" || role === "searchbox" || role === "combobox")) {
      name = clean(el.getAttribute("title") || "");
      const ph = el.getAttribute("aria-placeholder") || el.getAttribute("placeholder");
      if (ph && !clean(el.textContent || "")) n.ph = clean(ph);
    } else if (tag === "a" && el.href) {
      n.u = hrefOf(el);
    }
    if (name) n.n = name;
    const st = statesOf(el, tag, role);
    if (st) n.s = n.s ? st + " " + n.s : st;
    return n;
  }
  /** A link's URL, shortened when it points into the same origin. @param {any} el */
  function hrefOf(el) {
    const href = el.href;
    if (typeof href !== "string") return "";
    const loc = el.ownerDocument.location;
    if (href.startsWith(loc.origin + "/")) {
      const path = href.slice(loc.origin.length);
      const here = loc.pathname + loc.search;
      return path.startsWith(here + "#") ? path.slice(here.length) : path;
    }
    return href;
  }

  /** Children in the flat tree. @param {Element} el @param {any[]} out */
  function walkKids(el, out) {
    let sr = /** @type {any} */ (el).shadowRoot;
    const custom = el.localName.includes("-");
    if (!sr && (custom || SHADOW_HOST[el.localName] === 1)) {
      sr = roots && roots.get(el);
      if (sr) Object.defineProperty(el, "shadowRoot", { value: sr, configurable: true });
      else if (probed && !probed.has(el) && (custom || showsNoChild(el))) {
        probed.add(el);
        hosts.push(el);
      }
    }
    if (sr) {
      for (let c = sr.firstChild; c; c = c.nextSibling) walkNode(c, out);
      return;
    }
    if (el.localName === "slot") {
      const assigned = /** @type {HTMLSlotElement} */ (el).assignedNodes();
      if (assigned.length) {
        for (let j = 0; j < assigned.length; j++) walkNode(assigned[j], out);
        return;
      }
    }
    for (let c = el.firstChild; c; c = c.nextSibling) walkNode(c, out);
  }
  /**
   * Does a built-in element that may host a shadow root show something with no content of its own?
   * A closed root is then the likely painter: an empty element with a box the size of a control (not
   * a line's whitespace). Only such elements are asked for one, each once; the test is cheap for the
   * rest, every snapshot.
   * @param {Element} el
   */
  function showsNoChild(el) {
    if (el.firstElementChild || (el.textContent || "").trim() !== "") return false;
    const r = el.getBoundingClientRect();
    return r.width >= 10 && r.height >= 10;
  }
  /** @param {Node} node @param {any[]} out */
  function walkNode(node, out) {
    const type = node.nodeType;
    if (type === 3) {
      if (!vis || skipText) return;
      let d = /** @type {Text} */ (node).data;
      if (!d) return;
      const last = out.length - 1;
      if (!pre && d.trim() === "") {
        // Whitespace only matters between inline content.
        if (last < 0 || (typeof out[last] !== "string" && BLOCK[out[last].t] === 1)) return;
        d = " ";
      }
      if (last >= 0 && typeof out[last] === "string") out[last] += d;
      else out.push(d);
    } else if (type === 1) walkElement(/** @type {Element} */ (node), out);
  }
  /** Pushes a block-level node; whitespace before it is dropped. @param {any[]} out @param {any} n */
  function put(out, n) {
    const last = out.length - 1;
    if (last >= 0 && out[last] === " ") out.pop();
    out.push(n);
  }
  /** Plain text of IR content, for comparing (images and controls give nothing). @param {any[]} c @returns {string} */
  function irText(c) {
    let s = "";
    for (let j = 0; j < c.length && s.length < 400; j++) {
      const x = c[j];
      if (typeof x === "string") s += x;
      else if (x.c && x.t !== "c") s += " " + irText(x.c) + " ";
    }
    return s;
  }
  /**
   * An image whose alt text is all the text beside it (a caption, a name by an avatar) says it twice:
   * drop it. In a control (`inName`) the content is its name: an icon whose alt text is among the words
   * beside it goes too (a card "Python 3" with the Python 3 logo is not "Python 3 Python 3").
   * @param {any[]} c @param {boolean} [inName]
   */
  function dropEchoedImages(c, inName = false) {
    /** @type {string | null} */
    let text = null;
    /** @param {any[]} part */
    const drop = (part) => {
      for (let j = part.length - 1; j >= 0; j--) {
        const x = part[j];
        if (typeof x === "string") continue;
        if (x.t !== "img") {
          // the icon may sit in a box of its own inside the control
          if (inName && x.c && x.t !== "c") drop(x.c);
          continue;
        }
        const alt = x.n.toLowerCase();
        text ??= clean(irText(c)).toLowerCase();
        if (text === alt || (inName && (" " + text + " ").includes(" " + alt + " "))) part.splice(j, 1);
      }
    };
    drop(c);
  }
  /** Pushes a generic block, unless empty; a block that only wraps another block is replaced by it. @param {any[]} out @param {any} n */
  function pushBlock(out, n) {
    const c = n.c;
    dropEchoedImages(c);
    if (c.length && c[c.length - 1] === " ") c.pop();
    if (!c.length) return;
    if (n.t === "b" && !n.w && c.length === 1 && typeof c[0] !== "string" && BLOCK[c[0].t] === 1 && c[0].t !== "hr") {
      put(out, c[0]);
      return;
    }
    put(out, n);
  }
  /** Does IR content hold targets or document structure? @param {any[]} c @returns {boolean} */
  function holdsTargets(c) {
    for (const x of c) {
      if (typeof x === "string") continue;
      if (HOLDS[x.t] === 1 || (x.c && holdsTargets(x.c))) return true;
    }
    return false;
  }
  /**
   * Does an <svg> draw more than a picture: words, links, or parts to act on (a role, focus, a click
   * handler of its own)? An explicit role=img says it is one picture. @param {Element} el
   */
  function drawsContent(el) {
    if (roleAttr(el) === "img") return false;
    if (el.querySelector("text, a, foreignObject, [role], [tabindex], [onclick]")) return true;
    if (!listened) return false;
    let k = 0;
    for (const d of el.querySelectorAll("*")) {
      if (listened.has(d)) return true;
      if (++k > 300) break;
    }
    return false;
  }
  /** Does IR content show words (text, an image's alt text, a control's)? @param {any[] | undefined} c @returns {boolean} */
  function showsWords(c) {
    if (!c) return false;
    for (const x of c) {
      if (typeof x === "string" ? x.trim() !== "" : x.t === "img" || x.t === "c" || (x.c && showsWords(x.c))) return true;
    }
    return false;
  }
  /**
   * The one control a clickable only wraps: its content is that control and nothing else, and the
   * clickable has no name of its own that differs. @param {any} n @param {any[]} c
   */
  function wrapped(n, c) {
    let inner = null;
    for (const x of c) {
      if (typeof x === "string") {
        if (x.trim()) return null;
      } else if (x.t === "c" && !inner) inner = x;
      else return null;
    }
    if (!inner || (n.n != null && n.n !== inner.n)) return null;
    return inner;
  }
  /** @param {Element} el */
  function index(el) {
    return els.push(el) - 1;
  }

  /** Does `root` hold more than `max` elements? Counts no further than that. @param {Element | ShadowRoot} root @param {number} max */
  function more(root, max) {
    let n = 0;
    /** @param {Element | ShadowRoot} p @returns {boolean} */
    const count = (p) => {
      for (let c = p.firstElementChild; c; c = c.nextElementSibling) if (++n > max || count(c)) return true;
      return false;
    };
    return count(root);
  }
  /**
   * Does a clickable hold two or more boxes with content (items of a list or a menu), and not a whole
   * page part? Known by a listener alone, its items must be plain: a listener around headings, prose
   * or controls delegates for a part of the page (a framework's root, rendered Markdown).
   * @param {Element} el @param {boolean} plain
   */
  function groupOfItems(el, plain) {
    let n = 0;
    const parent = /** @type {any} */ (el).shadowRoot || el;
    if (more(parent, 400)) return false;
    // Boxes holding only a picture are items of a bar of icons; beside a box of text they are the
    // picture of one item (a card's logo above its title).
    let pictures = 0;
    for (let c = parent.firstElementChild; c; c = c.nextElementSibling) {
      const d = view.getComputedStyle(c).display;
      if (d === "none" || d === "inline" || d === "contents") continue;
      const texts = !!(c.textContent || "").trim();
      if (!texts && !c.querySelector("img,svg,input,button,select,textarea")) continue;
      if (plain && (c.matches(PROSE) || c.querySelector(PROSE))) return false;
      if (!texts && !c.querySelector("input,button,select,textarea")) pictures++;
      else if (++n >= 2) return true;
    }
    return n === 0 && pictures >= 2;
  }

  /** @param {Element} el @param {any[]} out */
  function walkElement(el, out) {
    const tag = el.localName;
    if (SKIP[tag] === 1) return;
    if (el.hasAttribute("data-tabpilot-overlay") || el.hasAttribute("data-tabpilot-cue")) return;
    if (el.getAttribute("aria-hidden") === "true") return;
    const cs = view.getComputedStyle(el);
    const display = cs.display;
    if (display === "none") return;
    elements++;
    const inline = display === "inline" || display === "contents";

    // What is painted: a clipping box clips what it contains, except positioned descendants whose
    // containing block lies outside it (an app shell's zero-height body with fixed content).
    const clip0 = clip, absCb0 = absCb, fixedCb0 = fixedCb;
    if (clip) {
      const position = cs.position;
      if (position !== "static") {
        const keep = position === "fixed" ? fixedCb : position === "absolute" ? absCb : clip.d;
        while (clip && clip.d > keep) clip = clip.up;
      }
    }
    const clipped = !!clip && (clip.r <= clip.l || clip.b <= clip.t);
    const visibility = cs.visibility === "visible" && !clipped;
    /** @type {DOMRect | null} */
    let box = null;
    if (vpOnly && display !== "contents" && !clipped) {
      box = el.getBoundingClientRect();
      const l = clip ? clip.l : 0, t = clip ? clip.t : 0, r = clip ? clip.r : vw, b = clip ? clip.b : vh;
      if ((box.width || box.height) && (box.bottom <= t || box.top >= b || box.right <= l || box.left >= r)) {
        clip = clip0;
        return;
      }
    }
    // The viewport's overflow is the root's, or the body's when the root's is visible: neither clips its own box.
    if (!inline && cs.overflow !== "visible" && tag !== "html" && !(tag === "body" && view.getComputedStyle(/** @type {Element} */ (el.parentElement)).overflow === "visible")) {
      const h = /** @type {HTMLElement} */ (el);
      if (vpOnly) {
        const r = box || el.getBoundingClientRect();
        const l = Math.max(r.left, clip ? clip.l : 0), t = Math.max(r.top, clip ? clip.t : 0);
        clip = { l, t, r: Math.min(r.right, clip ? clip.r : vw), b: Math.min(r.bottom, clip ? clip.b : vh), d: (clip ? clip.d : 0) + 1, up: clip };
      } else if (h.offsetWidth === 0 || h.offsetHeight === 0) {
        clip = { l: 0, t: 0, r: 0, b: 0, d: (clip ? clip.d : 0) + 1, up: clip };
      }
    }
    if (clip) {
      // Containing blocks for positioned descendants (only matters while something clips).
      if (cs.position !== "static") absCb = clip.d;
      if (cs.transform !== "none" || cs.filter !== "none" || cs.perspective !== "none") absCb = fixedCb = clip.d;
    }

    // SVG: an icon or a picture is one image (if it has a name); a drawing with words or things to
    // act on (a chart's labels, a diagram's links, a node editor's nodes) is walked inside.
    const drawing = tag === "svg" && drawsContent(el);
    if (tag === "svg" && !drawing) {
      clip = clip0;
      absCb = absCb0;
      fixedCb = fixedCb0;
      if (!visibility || skipText) return;
      const name = explicitName(el);
      if (name) out.push({ t: "img", n: name });
      return;
    }

    let role = el.getAttribute("role");
    if (role) {
      role = role.trim().split(/\s+/)[0].toLowerCase();
      if (role === "none" || role === "presentation" || role === "generic") role = "";
      // DPUB roles (doc-noteref, doc-backlink…) on links do not change what they are.
      else if (role.startsWith("doc-") && tag === "a" && el.hasAttribute("href")) role = "link";
    } else role = implicitRole(el, tag);
    if (ownText.has(el)) role = "";

    // Save the context.
    const vis0 = vis, cursor0 = parentCursor, act0 = actNode, skip0 = skipText, pre0 = pre;
    const sect0 = sectioning, edit0 = editable, view0 = view, split0 = splitSeq, heard0 = heard, parent0 = parentSeq;
    vis = visibility;
    const cursor = cs.cursor;
    parentCursor = cursor;
    const fromSplit = split0 === parent0;
    parentSeq = ++seq;
    let own = el.hasAttribute("onclick") || (listened !== undefined && listened.has(el));
    if (own) {
      heard = true;
      // a listener on a large part of the page delegates for what is inside, it is no target itself
      if (more(el, 60)) own = false;
    }

    try {
      if (tag === "br") {
        if (vis) out.push({ t: "br" });
        return;
      }
      if (tag === "hr" || role === "separator") {
        if (vis && !actNode) put(out, { t: "hr" });
        return;
      }
      if (tag === "img" || role === "img") {
        if (!vis || skipText) return;
        const name = labelledBy(el) || clean(el.getAttribute("aria-label") || /** @type {any} */ (el).alt || el.getAttribute("title") || "");
        if (name) out.push({ t: "img", n: name });
        return;
      }
      if (tag === "iframe" || tag === "frame") {
        walkFrame(/** @type {HTMLIFrameElement} */ (el), out);
        return;
      }
      if (role === "progressbar" || role === "meter") {
        if (!vis) return;
        const any = /** @type {any} */ (el);
        const v = tag === "progress" || tag === "meter"
          ? String(any.value) + (any.max && any.max !== 1 ? "/" + any.max : "")
          : el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow");
        const name = explicitName(el);
        /** @type {any} */
        const n = { t: "i", r: role };
        if (name) n.n = name;
        if (v != null) n.v = v;
        out.push(n);
        return;
      }

      // Actionable?
      let act = role !== "" && ACTIONABLE[role] === 1;
      if (!act && !editable && el.hasAttribute("contenteditable") && /** @type {HTMLElement} */ (el).isContentEditable) {
        act = true;
        role = "textbox";
      }
      let clickable = false;
      let clickableHeading = false;
      let maybe = false; // a listener of its own or an item of a group: a target unless it holds targets of its own
      if (!act && (!actNode || actNode.r === "clickable") && !editable && vis && tag !== "body" && tag !== "html") {
        if (tag === "a" && role === "" && heard && (el.firstChild || el.shadowRoot)) {
          // a link without href whose click handler sits on an ancestor (delegation)
          act = true;
          role = "link";
        } else {
          const focusable = role === "" && el.hasAttribute("tabindex") && /** @type {HTMLElement} */ (el).tabIndex >= 0;
          const pointer = cursor === "pointer" && cursor0 !== "pointer";
          clickable = own || focusable || pointer || fromSplit;
          if (clickable) {
            if (LANDMARK[role] || role === "dialog" || role === "alertdialog") clickable = false;
            else if (role === "heading") {
              // a clickable heading (an accordion without a button) stays a heading, its text the target
              clickable = false;
              clickableHeading = true;
            } else if (tag === "label") {
              const c = /** @type {HTMLLabelElement} */ (el).control;
              if (c && rendered(c)) clickable = false;
            }
          }
          if (clickable && role === "" && groupOfItems(el, !focusable && !pointer)) {
            // A list, a menu, a set of suggestions: each item is what a person clicks. The group keeps
            // a ref only when it is a target of its own (it takes focus).
            splitSeq = parentSeq;
            clickable = focusable;
          } else if (clickable && !focusable && !pointer) {
            // Only a listener of its own, or an item of a group: a target when it holds no targets of its
            // own and no document structure; else only their container.
            clickable = false;
            maybe = true;
          }
          if (clickable) {
            act = true;
            role = "clickable";
          }
        }
      }
      if (maybe) {
        const c = /** @type {any[]} */ ([]);
        walkKids(el, c);
        // A shape with nothing inside is a target when it has a name (a node editor's port, by its <title>).
        if (!c.length && !explicitName(el)) return;
        if (holdsTargets(c) || (own && !fromSplit && el.querySelector(PROSE))) {
          if (act0) act0.k = 1;
          if (inline) out.push(...c);
          else pushBlock(out, { t: "b", i: index(el), c });
          return;
        }
        const n = actionable(el, tag, "clickable");
        dropEchoedImages(c, true);
        n.c = c;
        if (act0) act0.k = 1;
        if (inline || display.startsWith("inline")) out.push(n);
        else put(out, { t: "b", i: index(el), c: [n] });
        return;
      }
      if (act && vis) {
        const n = actionable(el, tag, role);
        if (actNode) actNode.k = 1;
        if (role === "textbox" && tag !== "input" && tag !== "textarea") editable = true;
        const leaf = tag === "input" || tag === "select" || tag === "textarea" || tag === "video" || tag === "audio";
        if (!leaf) {
          actNode = n;
          skipText = false;
          const c = /** @type {any[]} */ ([]);
          walkKids(el, c);
          dropEchoedImages(c, true);
          if (c.length) n.c = c;
          if (el.namespaceURI === SVG && n.n == null && holdsTargets(c)) {
            // A drawn group (a node of an editor) is named by its words, its parts (ports) follow.
            const words = clean(irText(c));
            if (words) {
              n.n = words;
              n.c = c.filter((x) => typeof x !== "string");
            }
          }
          const inner = role === "clickable" ? wrapped(n, c) : null;
          if (inner) {
            // A wrapper (a design system's host listening for clicks) around one control: one control.
            refsShown--;
            if (inline || display.startsWith("inline")) out.push(inner);
            else put(out, { t: "b", i: index(el), c: [inner] });
            return;
          }
        }
        if (!n.c && n.n == null) {
          const title = clean(el.getAttribute("title") || "");
          if (title) n.n = title;
        }
        if (n.n == null && !leaf && !showsWords(n.c)) {
          // Nameless, it shows only an icon: what the page says that icon is (a person sees it).
          const icon = iconName(el);
          if (icon) n.ic = icon;
        }
        if (inline || display.startsWith("inline")) out.push(n);
        else put(out, { t: "b", i: index(el), c: [n] });
        return;
      }

      // Structure.
      if (role === "heading") {
        const lvl = tag.length === 2 && tag[0] === "h" ? +tag[1] : +(el.getAttribute("aria-level") || 2);
        const n = { t: "h", l: lvl >= 1 && lvl <= 6 ? lvl : 2, i: index(el), c: /** @type {any[]} */ ([]) };
        if (actNode) actNode.k = 1;
        if (clickableHeading) {
          /** @type {any} */
          const target = actionable(el, tag, "clickable");
          n.c.push(target);
          actNode = target;
          target.c = [];
          walkKids(el, target.c);
          if (!target.c.length) n.c.length = 0;
        } else walkKids(el, n.c);
        if (n.c.length) put(out, n);
        return;
      }
      const lmName = LANDMARK[role] && !actNode ? labelledBy(el) || clean(el.getAttribute("aria-label") || el.getAttribute("title") || "") : "";
      if (LANDMARK[role] && !actNode && (lmName || !NAMED_ONLY[role])) {
        const name = lmName;
        /** @type {any} */
        const n = { t: "lm", r: role, i: index(el), c: [] };
        if (name) n.n = name;
        if (role !== "banner" && role !== "contentinfo" && role !== "search" && role !== "form") sectioning++;
        walkKids(el, n.c);
        if (n.c.length) put(out, n);
        return;
      }
      if (role === "dialog" || role === "alertdialog") {
        /** @type {any} */
        const n = { t: "dlg", r: role, i: index(el), c: [] };
        const name = labelledBy(el) || clean(el.getAttribute("aria-label") || "");
        if (name) n.n = name;
        let modal = el.getAttribute("aria-modal") === "true";
        if (!modal && tag === "dialog") {
          try {
            modal = el.matches(":modal");
          } catch {
            /* older engines */
          }
        }
        if (modal) n.s = "modal";
        if (actNode) actNode.k = 1;
        walkKids(el, n.c);
        put(out, n);
        return;
      }
      if (tag === "article" || tag === "aside" || tag === "section" || tag === "nav" || tag === "main") sectioning++;
      if (tag === "label") {
        const c = /** @type {any} */ (el).control;
        // The label's text is the control's name (a hidden control's names the widget standing in for
        // it, if there is one), unless the control has another name than the label's words.
        if (c && (hiddenControl(c) ? standInOf(c) : rendered(c))) {
          const other = labelledBy(c) || clean(c.getAttribute("aria-label") || "");
          if (!other || other === clean(labelText(el))) skipText = true;
        }
      }
      if (!inline && cs.contentVisibility === "hidden") {
        // hidden="until-found" and the like: the box is there, its content is not rendered
        return;
      }
      if (tag === "details" && !(/** @type {HTMLDetailsElement} */ (el).open)) {
        // Closed: only the summary is rendered.
        const s = el.querySelector(":scope > summary");
        if (s) {
          const n = { t: "b", i: index(el), c: /** @type {any[]} */ ([]) };
          walkElement(s, n.c);
          pushBlock(out, n);
        }
        return;
      }
      if (role === "group" || role === "radiogroup") {
        let name = labelledBy(el) || clean(el.getAttribute("aria-label") || "");
        if (!name && tag === "fieldset") {
          const lg = el.querySelector(":scope > legend");
          if (lg) name = clean(lg.textContent || "");
        }
        /** @type {any} */
        const n = { t: "grp", i: index(el), c: [] };
        if (name) n.n = name;
        walkKids(el, n.c);
        if (n.c.length) put(out, n);
        return;
      }
      if (drawing) {
        /** @type {any} */
        const n = { t: "b", i: index(el), c: [] };
        const name = explicitName(el);
        if (name) n.c.push({ t: "img", n: name }, " ");
        walkKids(el, n.c);
        pushBlock(out, n);
        return;
      }
      if (tag === "text" && el.namespaceURI === SVG) {
        // Each label of a drawing is a word of its own (an axis's ticks, a legend's entries).
        out.push(" ");
        walkKids(el, out);
        out.push(" ");
        return;
      }
      if (inline) {
        walkKids(el, out);
        return;
      }
      if (tag === "pre") {
        const n = { t: "pre", i: index(el), c: /** @type {any[]} */ ([]) };
        pre = true;
        if (actNode) actNode.k = 1;
        walkKids(el, n.c);
        if (n.c.length) put(out, n);
        return;
      }
      if (tag === "li" && !display.startsWith("inline")) {
        const n = { t: "li", i: index(el), c: /** @type {any[]} */ ([]) };
        walkKids(el, n.c);
        if (n.c.length) put(out, n);
        return;
      }
      if ((tag === "ul" || tag === "ol" || tag === "menu") && !display.startsWith("inline")) {
        /** @type {any} */
        const n = { t: tag === "ol" ? "ol" : "ul", i: index(el), c: [] };
        if (tag === "ol") {
          const start = /** @type {HTMLOListElement} */ (el).start;
          if (start !== 1) n.s = start;
        }
        if (actNode) actNode.k = 1;
        walkKids(el, n.c);
        if (n.c.length) put(out, n);
        return;
      }
      switch (display) {
        case "table":
        case "inline-table": {
          const n = { t: "tbl", i: index(el), c: /** @type {any[]} */ ([]) };
          if (actNode) actNode.k = 1;
          walkKids(el, n.c);
          if (n.c.length) put(out, n);
          return;
        }
        case "table-row": {
          const n = { t: "tr", i: index(el), c: /** @type {any[]} */ ([]) };
          walkKids(el, n.c);
          if (n.c.length) put(out, n);
          return;
        }
        case "table-cell": {
          /** @type {any} */
          const n = { t: "td", c: [] };
          walkKids(el, n.c);
          if (!n.c.length) delete n.c;
          put(out, n);
          return;
        }
        case "table-row-group":
        case "table-header-group":
        case "table-footer-group":
          walkKids(el, out);
          return;
        case "table-column":
        case "table-column-group":
          return;
      }
      if (display.startsWith("inline")) {
        // inline-block, inline-flex…: inline, but a box of its own.
        out.push(" ");
        walkKids(el, out);
        out.push(" ");
        return;
      }
      // A block.
      /** @type {any} */
      const n = { t: "b", i: index(el), c: [] };
      if (!pre) {
        const w = /** @type {any} */ (cs).whiteSpaceCollapse || cs.whiteSpace;
        if (w && (w.startsWith("pre") || w === "preserve" || w === "preserve-breaks" || w === "break-spaces")) {
          pre = true;
          n.w = 1;
        }
      }
      walkKids(el, n.c);
      pushBlock(out, n);
    } finally {
      vis = vis0;
      clip = clip0;
      absCb = absCb0;
      fixedCb = fixedCb0;
      splitSeq = split0;
      parentSeq = parent0;
      heard = heard0;
      parentCursor = cursor0;
      actNode = act0;
      skipText = skip0;
      pre = pre0;
      sectioning = sect0;
      editable = edit0;
      if (view !== view0) {
        view = view0;
        vw = view.innerWidth;
        vh = view.innerHeight;
      }
    }
  }

  /**
   * A frame whose page never came: it still shows its initial empty about:blank though it names
   * another address, and the page around it has finished loading (which waits for its frames). Its
   * navigation was aborted (a blocked site, a route that aborts it): the browser shows no error page.
   * @param {HTMLIFrameElement} el @param {Document} doc
   */
  function neverLoaded(el, doc) {
    const src = el.getAttribute("src");
    if (!src || el.hasAttribute("srcdoc") || /^\s*(about|javascript):/i.test(src)) return false;
    if (doc.URL !== "about:blank" || el.ownerDocument.readyState !== "complete") return false;
    return !(doc.body && doc.body.firstChild);
  }
  /** @param {HTMLIFrameElement} el @param {any[]} out */
  function walkFrame(el, out) {
    if (!vis) return;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return;
    const name = clean(el.title || el.getAttribute("aria-label") || el.name || "");
    /** @type {Document | null} */
    let doc = null;
    try {
      doc = el.contentDocument;
    } catch {
      doc = null;
    }
    /** @type {any} */
    const n = { t: "frame", ref: refOf(el) };
    if (name) n.n = name;
    if (actNode) actNode.k = 1;
    if (doc && neverLoaded(el, doc)) {
      n.x = 1;
      n.bl = 1;
    } else if (doc && doc.defaultView && (doc.body || doc.documentElement)) {
      n.c = [];
      clip = null;
      absCb = fixedCb = 0;
      view = /** @type {any} */ (doc.defaultView);
      vw = view.innerWidth;
      vh = view.innerHeight;
      const body = doc.body || doc.documentElement;
      walkElement(body, n.c);
      // restored by the caller's finally
    } else {
      n.x = 1;
      frames.push({ ref: "e" + n.ref, name, src: el.src || "" });
    }
    put(out, n);
  }

  // Context of a root that is not the body: inherit what its ancestors set.
  if (root !== topDoc.body && root.parentElement) {
    const parent = root.parentElement;
    const pcs = view.getComputedStyle(parent);
    parentCursor = pcs.cursor;
    pre = !!parent.closest("pre");
    sectioning = parent.closest("article,aside,section,nav,main") ? 1 : 0;
  }
  /** @type {any[]} */
  const out = [];
  walkElement(root, out);
  const ir = out.length === 1 ? out[0] : { t: "b", c: out };
  return { ir, els, frames, hosts, stats: { elements, refs: refsShown } };
}
