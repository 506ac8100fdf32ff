// @ts-check
// The snapshot renderer: pure functions from the walker's IR (see walk.js) to the text the agent reads.
//
// Every function exported here is also sent into the page as source text (see agent-source.js), so each
// one may only use its own locals, its parameters, standard built-ins and the other functions of this
// file by their exported names. No imports, no module-level constants.
//
// IR (built by walk.js; JSON-serialisable so tests can replay recorded pages):
//   string                               text as in the DOM (whitespace collapsed here unless preformatted)
//   {t:"b", i, c, w?}                     block (paragraph, div, dt/dd, caption…); w:1 keeps line breaks
//   {t:"h", l, i, c}                      heading of level l
//   {t:"ul"|"ol", i, c, s?}               list (s: start number of an ol); children are {t:"li", i, c}
//   {t:"tbl", i, c}  {t:"tr", i, c}  {t:"td", c?}   table, row, cell
//   {t:"pre", i, c}                       code block (fenced)
//   {t:"lm", r, n?, i, c}                 landmark: navigation, main, banner, contentinfo, complementary,
//                                         search, form, region
//   {t:"dlg", r, n?, s?, i, c}            dialog / alertdialog (s: "modal")
//   {t:"grp", n?, i, c}                   fieldset / radiogroup / group: its name is context in -i mode
//   {t:"frame", ref, n?, x?, bl?, c?}     iframe: inline content (same-origin) or x:1, a placeholder the
//                                         extension replaces with the frame's own snapshot; bl:1 a frame whose page
//                                         never came (its navigation was aborted): no placeholder to fill
//   {t:"c", r, ref, n?, s?, v?, ph?, o?, od?, u?, k?, ic?, c?}
//                                         actionable element: role, ref number, explicit name (absent:
//                                         name from content), states, value, placeholder, options,
//                                         disabled options, url, k:1 = contains other actionables or
//                                         structure, ic: what the icon of a nameless control shows
//   {t:"img", n}  {t:"i", r, n?, v?}      image with alt text; informational widget (progressbar, meter)
//   {t:"br"}  {t:"hr"}
// `i` indexes the walker's element list, so a line can be given a ref lazily (find, truncation notice).

/**
 * Estimated o200k_base tokens of a text: within ±6 % of the real count on the Python docs pages and
 * the forms page (prose and code run at about 4.2 characters per token; a ` @eN` ref costs about
 * 4 tokens, 3 more than its characters suggest).
 * @param {string} text
 */
export function estimateTokens(text) {
  let refs = 0;
  for (let at = text.indexOf("@e"); at !== -1; at = text.indexOf("@e", at + 2)) refs++;
  return Math.ceil(text.length / 4.2 + refs * 3);
}

/**
 * The last line of a cut snapshot: what was left out and how to get it.
 * @param {{omittedTokens: number, omittedLines: number, maxTokens: number,
 *          sections: {text: string, ref: number | null}[], moreSections: number}} t
 */
export function truncationNotice(t) {
  let s = `[… cut at ~${t.maxTokens} tokens: ~${t.omittedTokens} more tokens (${t.omittedLines} lines) not shown.`;
  if (t.sections.length) {
    s += " Left out: " + t.sections.map((x) => (x.ref != null ? `${x.text} @e${x.ref}` : x.text)).join(", ");
    if (t.moreSections) s += `, +${t.moreSections} more`;
    s += ".";
  }
  return s + " Read a part with --ref @eN, search with find TEXT, or save all with --out FILE.]";
}

/**
 * Lays the IR out as lines. Returns parallel arrays: the text of each line, the element index (`i`)
 * of the block it came from (-1 if none), its kind (0 text, 1–6 heading level, 7 landmark/context
 * opener, 8 closing marker, 9 code fence, 10 code line, 11 frame placeholder) and its owner (the line
 * of the landmark, dialog or frame it is in, -1 if none).
 * @param {any} ir
 * @param {{mode?: string, urls?: boolean}} opts
 */
export function layoutSnapshot(ir, opts) {
  const interactive = opts.mode === "interactive";
  const urls = !!opts.urls;
  /** @type {string[]} */ const lines = [];
  /** @type {number[]} */ const blocks = [];
  /** @type {number[]} */ const kinds = [];
  /** @type {number[]} */ const owners = [];
  /** @type {number[]} */ const around = []; // the landmark, dialog and frame lines around the current line
  let buf = "";
  let bufBlock = -1;
  let curBlock = -1;
  let first = ""; // prefix of the next line (carries a pending list marker)
  let rest = ""; // prefix of the lines after it
  let ws = 0; // > 0 inside a block that keeps line breaks
  let row = ""; // interactive mode: actionables of the current section
  let rowCount = 0;
  const ALNUM = /[\p{L}\p{N}]/u;
  // Roles whose content is their value rather than their name (editable regions, custom comboboxes).
  /** @type {Record<string, number>} */
  const VALUE_FROM_CONTENT = { textbox: 1, searchbox: 1, combobox: 1, spinbutton: 1 };
  const q = (/** @type {string} */ s) => JSON.stringify(s);
  const norm = (/** @type {string} */ s) => s.replace(/\s+/g, " ");
  const cat = (/** @type {string} */ a, /** @type {string} */ b) =>
    !b ? a : a.endsWith(" ") && b.startsWith(" ") ? a + b.slice(1) : a + b;

  let closing = ""; // "--- /form" once a landmark ended: shown before the next line with words in it

  /** @param {string} text @param {number} block @param {number} kind */
  function line(text, block, kind) {
    if (closing && (kind === 7 || ALNUM.test(text))) mark("", -1, kind);
    lines.push(first + text);
    blocks.push(block);
    kinds.push(kind);
    owners.push(around.length ? around[around.length - 1] : -1);
    first = rest;
  }
  /** Marker lines (landmarks, dialogs, frames) start at the margin and leave a list bullet pending. */
  /** @param {string} text @param {number} block @param {number} kind */
  function mark(text, block, kind) {
    if (closing) {
      const c = closing;
      closing = "";
      if (kind !== 7) {
        lines.push(c);
        blocks.push(-1);
        kinds.push(8);
        owners.push(around.length ? around[around.length - 1] : -1);
      }
    }
    if (!text) return;
    lines.push(text);
    blocks.push(block);
    kinds.push(kind);
    owners.push(around.length ? around[around.length - 1] : -1);
  }
  /**
   * A dialog or frame: another context inside the page, so it is always closed; a landmark that ended
   * before it is still closed after it if content follows.
   * @param {string} open @param {string} close @param {any} x @param {() => void} body
   */
  function inset(open, close, x, body) {
    const pending = closing;
    closing = "";
    const block = x.t === "frame" ? -1 : (x.i ?? -1);
    mark(open, block, 7);
    around.push(lines.length - 1);
    body();
    around.pop();
    mark(close, block, 8);
    closing = pending;
  }
  /**
   * A landmark: its marker, its content, and its end, which is shown only if content follows
   * before the next landmark.
   * @param {any} x @param {(x: any) => void} body
   */
  function landmark(x, body) {
    mark("--- " + x.r + (x.n ? " " + q(x.n) : ""), x.i ?? -1, 7);
    around.push(lines.length - 1);
    body(x);
    around.pop();
    closing = "--- /" + x.r;
  }
  function flush() {
    if (!buf) return;
    const s = buf.trim();
    buf = "";
    if (s) line(s, bufBlock, 0);
  }
  /** @param {string} s */
  function add(s) {
    if (!s) return;
    if (!buf) bufBlock = curBlock;
    // two brackets side by side are two elements: keep them apart
    else if (s[0] === "[" && buf.endsWith("]")) buf += " ";
    buf = cat(buf, s);
  }

  /** " @eN states value=… placeholder=… options=… url" @param {any} n @param {boolean} [forceUrl] */
  function attrs(n, forceUrl) {
    let s = n.ref != null ? " @e" + n.ref : "";
    if (n.s) s += " " + n.s;
    if (n.ic) s += " icon=" + n.ic;
    if (n.v != null) s += " value=" + q(n.v);
    if (n.ph) s += " placeholder=" + q(n.ph);
    if (n.o) s += " options=" + q(n.o);
    if (n.od) s += " disabled=" + q(n.od);
    if (n.u && (urls || forceUrl)) s += " " + n.u;
    return s;
  }

  /**
   * One line of the subtree. mode 0: plain text (for names: images give their alt, actionables their
   * text); 1: link content (images as `img "alt"`); 2: rich (actionables and images in brackets).
   * @param {any} n @param {number} mode
   */
  function flatKids(n, mode) {
    let s = "";
    const c = n.c;
    if (!c) return s;
    for (let j = 0; j < c.length; j++) {
      const t = flatNode(c[j], mode);
      s = cat(t[0] === "[" && s.endsWith("]") ? s + " " : s, t);
    }
    return s;
  }
  /** @param {any} x @param {number} mode @returns {string} */
  function flatNode(x, mode) {
    if (typeof x === "string") return norm(x);
    switch (x.t) {
      case "c":
        if (mode === 0) return x.n != null && !x.c ? x.n : flatKids(x, 0);
        return inlineCtl(x, mode);
      case "img":
        return !x.n ? "" : mode === 0 ? x.n : mode === 1 ? "img " + q(x.n) : "[img " + q(x.n) + "]";
      case "i":
        return mode === 0 ? "" : info(x);
      case "br":
      case "hr":
        return " ";
      case "frame":
        return mode === 0 ? "" : " " + frameHead(x, x.x ? "[iframe" : "iframe", x.x ? (x.bl ? " blocked]" : "]") : "") + " " + flatKids(x, mode) + " ";
      default:
        return " " + flatKids(x, mode) + " ";
    }
  }
  /** @param {any} x */
  function info(x) {
    return "[" + x.r + (x.n ? " " + q(x.n) : "") + (x.v != null ? " value=" + q(x.v) : "") + "]";
  }
  /** @param {any} x @param {string} open @param {string} close */
  function frameHead(x, open, close) {
    return open + (x.n ? " " + q(x.n) : "") + " @e" + x.ref + close;
  }

  /** The text an actionable shows inside its brackets, or null when it must be a container. @param {any} n */
  function content(n) {
    if (n.k) return null;
    if (!n.c) return "";
    const s = flatKids(n, n.r === "link" ? 1 : 0).trim();
    // A long text is better read as text than as a quoted name.
    if (s.length > 100 && n.r !== "link" && n.n == null && !VALUE_FROM_CONTENT[n.r]) return null;
    return s;
  }
  /** The bracket of an actionable given its content. @param {any} n @param {string} text */
  function bracket(n, text) {
    const role = n.r;
    if (role === "link") {
      if (text && (n.n == null || ALNUM.test(text))) return "[" + text + attrs(n) + "]";
      const name = n.n || text;
      return "[link" + (name ? " " + q(name) : "") + attrs(n, !name) + "]";
    }
    if (VALUE_FROM_CONTENT[role] && n.c && n.v == null) {
      return "[" + role + (n.n ? " " + q(n.n) : "") + attrs(text ? { ...n, v: text } : n) + "]";
    }
    const name = n.n != null ? n.n : text;
    return "[" + role + (name ? " " + q(name) : "") + attrs(n) + "]";
  }
  /** The opening marker of a container actionable. @param {any} n */
  function marker(n) {
    return "[" + n.r + (n.n ? " " + q(n.n) : "") + attrs(n) + "]";
  }
  /** @param {any} n @param {number} mode */
  function inlineCtl(n, mode) {
    const text = content(n);
    return text == null ? marker(n) + " " + flatKids(n, mode) : bracket(n, text);
  }

  // ---- full mode ----
  /** @param {any} n */
  function kids(n) {
    const c = n.c;
    if (!c) return;
    for (let j = 0; j < c.length; j++) {
      const x = c[j];
      if (typeof x === "string") {
        if (ws) wsText(x);
        else add(norm(x));
        continue;
      }
      switch (x.t) {
        case "c": {
          const text = content(x);
          if (text == null) {
            add(marker(x));
            add(" ");
            kids(x);
          } else add(bracket(x, text));
          break;
        }
        case "img":
          if (x.n) add("[img " + q(x.n) + "]");
          break;
        case "i":
          add(info(x));
          break;
        case "br":
          flush();
          break;
        default:
          block(x);
      }
    }
  }
  /** @param {string} s */
  function wsText(s) {
    const parts = s.split("\n");
    for (let j = 0; j < parts.length; j++) {
      if (j) flush();
      add(parts[j].replace(/[ \t\r\f\v\u00a0]+/g, " "));
    }
  }
  /** @param {any} x */
  function block(x) {
    const saved = curBlock;
    if (x.i != null) curBlock = x.i;
    flush();
    switch (x.t) {
      case "h": {
        const s = flatKids(x, 2).trim();
        if (s) line("#".repeat(x.l) + " " + s, x.i ?? -1, x.l);
        break;
      }
      case "ul":
      case "ol":
        list(x);
        break;
      case "li":
        item(x, "- ");
        break;
      case "tbl":
        table(x);
        break;
      case "tr":
        tableRow(x);
        break;
      case "pre":
        fence(x);
        break;
      case "lm":
        landmark(x, (/** @type {any} */ y) => {
          kids(y);
          flush();
        });
        break;
      case "dlg":
        inset("--- " + x.r + (x.n ? " " + q(x.n) : "") + (x.s ? " " + x.s : ""), "--- /" + x.r, x, () => {
          kids(x);
          flush();
        });
        break;
      case "frame":
        if (x.x) mark(frameHead(x, "[iframe", x.bl ? " blocked]" : "]"), -1, 11);
        else {
          inset(frameHead(x, "--- iframe", ""), "--- /iframe", x, () => {
            kids(x);
            flush();
          });
        }
        break;
      case "hr":
        line("---", -1, 0);
        break;
      default:
        if (x.w) {
          ws++;
          kids(x);
          flush();
          ws--;
        } else {
          kids(x);
          flush();
        }
    }
    curBlock = saved;
  }
  /** @param {any} x */
  function list(x) {
    let num = x.t === "ol" ? (x.s ?? 1) : 0;
    const c = x.c || [];
    for (let j = 0; j < c.length; j++) {
      const y = c[j];
      if (typeof y === "string") {
        add(norm(y));
        continue;
      }
      if (y.t === "li") {
        flush();
        item(y, num ? num++ + ". " : "- ");
      } else kids({ c: [y] });
    }
    flush();
  }
  /** @param {any} li @param {string} mark */
  function item(li, mark) {
    const f0 = first;
    const r0 = rest;
    const n0 = lines.length;
    const saved = curBlock;
    if (li.i != null) curBlock = li.i;
    first = r0 + mark;
    rest = r0 + "  ";
    kids(li);
    flush();
    rest = r0;
    first = lines.length > n0 ? r0 : f0;
    curBlock = saved;
  }
  /** @param {any} x */
  function table(x) {
    const c = x.c || [];
    const layoutTable = isLayout(x);
    for (let j = 0; j < c.length; j++) {
      const y = c[j];
      if (typeof y === "string") add(norm(y));
      else if (y.t === "tr") {
        flush();
        if (layoutTable) layoutRow(y);
        else tableRow(y);
      } else kids({ c: [y] });
    }
    flush();
  }
  /**
   * A table used for layout rather than data: its cells hold page structure (headings, lists…), or
   * most of them hold several paragraphs. Its cells are then read as blocks, not as `|` rows.
   * @param {any} x
   */
  function isLayout(x) {
    let cells = 0;
    let multi = 0;
    const rows = x.c || [];
    for (let j = 0; j < rows.length; j++) {
      const r = rows[j];
      if (typeof r === "string" || r.t !== "tr" || !r.c) continue;
      for (let k = 0; k < r.c.length; k++) {
        const cell = r.c[k];
        if (typeof cell === "string" || !cell.c) continue;
        if (structured(cell)) return true;
        cells++;
        let blocksInCell = 0;
        for (let m = 0; m < cell.c.length; m++) if (typeof cell.c[m] !== "string" && cell.c[m].t === "b") blocksInCell++;
        if (blocksInCell >= 2) multi++;
      }
    }
    return cells > 0 && multi * 2 >= cells;
  }
  /** @param {any} r */
  function layoutRow(r) {
    const c = r.c || [];
    for (let j = 0; j < c.length; j++) {
      const y = c[j];
      if (typeof y === "string") add(norm(y));
      else block(y.t === "td" ? { t: "b", i: y.i, c: y.c } : y);
    }
    flush();
  }
  /** Does a cell hold page structure (then the table is a layout table)? @param {any} n @returns {boolean} */
  function structured(n) {
    const c = n.c;
    if (!c) return false;
    for (let j = 0; j < c.length; j++) {
      const y = c[j];
      if (typeof y === "string" || y.t === "c") continue;
      const t = y.t;
      if (t === "h" || t === "ul" || t === "ol" || t === "tbl" || t === "pre" || t === "lm" || t === "dlg" || t === "frame") return true;
      if (structured(y)) return true;
    }
    return false;
  }
  /** @param {any} r */
  function tableRow(r) {
    const c = r.c || [];
    let s = "|";
    let any = false;
    for (let j = 0; j < c.length; j++) {
      const y = c[j];
      if (typeof y === "string") continue;
      const t = y.t === "td" ? flatKids(y, 2).trim() : flatNode(y, 2).trim();
      if (t) any = true;
      s += " " + t + " |";
    }
    if (any) line(s, r.i ?? -1, 0);
  }
  /** @param {any} n @returns {string} */
  function preText(n) {
    let s = "";
    const c = n.c;
    if (!c) return s;
    for (let j = 0; j < c.length; j++) {
      const y = c[j];
      if (typeof y === "string") s += y;
      else if (y.t === "br") s += "\n";
      else if (y.t === "c" || y.t === "img" || y.t === "i") s += flatNode(y, 2);
      else if (y.t === "b" || y.t === "pre" || y.t === "tr" || y.t === "li" || y.t === "h") s += "\n" + preText(y) + "\n";
      else s += preText(y);
    }
    return s;
  }
  /** @param {any} x */
  function fence(x) {
    const text = preText(x).replace(/^\n+|\s+$/g, "");
    if (!text) return;
    const block = x.i ?? -1;
    line("```", block, 9);
    const rows = text.split("\n");
    for (let j = 0; j < rows.length; j++) line(rows[j].trimEnd(), block, 10);
    line("```", block, 9);
  }

  // ---- interactive mode ----
  /** @param {string} s */
  function rowAdd(s) {
    row = row ? row + " " + s : s;
    rowCount++;
  }
  function rowFlush() {
    if (rowCount) line(row, -1, 0);
    row = "";
    rowCount = 0;
  }
  /** @param {any} n */
  function ikids(n) {
    const c = n.c;
    if (!c) return;
    for (let j = 0; j < c.length; j++) if (typeof c[j] !== "string") inode(c[j]);
  }
  /** @param {any} x */
  function inode(x) {
    switch (x.t) {
      case "c": {
        const text = content(x);
        if (text == null) {
          rowAdd(marker(x));
          ikids(x);
        } else rowAdd(bracket(x, text));
        break;
      }
      case "h": {
        // As in full mode: what can be acted on inside a heading is shown in it, not again after it.
        rowFlush();
        const s = flatKids(x, 2).trim();
        if (s) line("#".repeat(x.l) + " " + s, x.i ?? -1, x.l);
        break;
      }
      case "lm":
        rowFlush();
        landmark(x, (/** @type {any} */ y) => {
          ikids(y);
          rowFlush();
        });
        break;
      case "dlg":
        rowFlush();
        inset("--- " + x.r + (x.n ? " " + q(x.n) : "") + (x.s ? " " + x.s : ""), "--- /" + x.r, x, () => {
          ikids(x);
          rowFlush();
        });
        break;
      case "frame":
        rowFlush();
        if (x.x) mark(frameHead(x, "[iframe", x.bl ? " blocked]" : "]"), -1, 11);
        else {
          inset(frameHead(x, "--- iframe", ""), "--- /iframe", x, () => {
            ikids(x);
            rowFlush();
          });
        }
        break;
      case "grp":
        rowFlush();
        if (x.n) row = x.n + ":";
        ikids(x);
        rowFlush();
        break;
      default:
        ikids(x);
    }
  }

  if (interactive) {
    inode(ir);
    rowFlush();
  } else {
    if (typeof ir === "string") add(norm(ir));
    else if (ir.t === "c" || ir.t === "img" || ir.t === "i" || ir.t === "br") kids({ c: [ir] });
    else block(ir);
    flush();
  }
  return { lines, blocks, kinds, owners };
}

/**
 * Applies a section slice and the token budget to a layout, and builds the text.
 * @param {{lines: string[], blocks: number[], kinds: number[]}} layout
 * @param {{maxTokens?: number, sectionOf?: number | null, refOf?: (i: number) => number | null}} opts
 */
export function finishSnapshot(layout, opts) {
  const { lines, blocks, kinds } = layout;
  const refOf = opts.refOf || (() => null);
  let start = 0;
  let end = lines.length;
  if (opts.sectionOf != null) {
    // A heading as root: the heading and what follows it up to the next heading of the same or a
    // higher rank, or the next landmark.
    start = end;
    for (let j = 0; j < lines.length; j++) {
      if (blocks[j] === opts.sectionOf && kinds[j] >= 1 && kinds[j] <= 6) {
        start = j;
        break;
      }
    }
    if (start < end) {
      const level = kinds[start];
      for (let j = start + 1; j < lines.length; j++) {
        const k = kinds[j];
        if ((k >= 1 && k <= level) || k === 7) {
          end = j;
          break;
        }
      }
    }
  }
  const max = opts.maxTokens && opts.maxTokens > 0 ? opts.maxTokens : Infinity;
  /** @type {number[]} */
  const cost = [];
  let total = 0;
  for (let j = start; j < end; j++) {
    const t = estimateTokens(lines[j]);
    cost.push(t);
    total += t;
  }
  if (total <= max) {
    const text = lines.slice(start, end).join("\n");
    return { text, lines: end - start, totalLines: end - start, tokens: total, totalTokens: total, truncated: null };
  }

  /**
   * The sections a cut leaves out: the one it falls in, then the landmarks and the highest-ranked
   * headings after it, named without the brackets of their links.
   * @param {number} cut
   */
  const leftOut = (cut) => {
    /** @param {number} j */
    const section = (j) => {
      let text = lines[j].trim().replace(/\[(?:[a-z]+ )?"?([^[\]]*?)"? @e\d+[^[\]]*\]/g, "$1");
      if (text.length > 60) text = text.slice(0, 59) + "…";
      return { text, ref: blocks[j] >= 0 ? refOf(blocks[j]) : null };
    };
    let top = 7;
    for (let j = cut; j < end; j++) if (kinds[j] >= 1 && kinds[j] < top) top = kinds[j];
    /** @type {{text: string, ref: number | null}[]} */
    const sections = [];
    let moreSections = 0;
    for (let j = cut - 1; j >= start; j--) {
      const k = kinds[j];
      if (k === 7) break;
      if (k >= 1 && k <= 6) {
        // (not when it is the section asked for: that would point back at this very snapshot)
        if (j !== start || opts.sectionOf == null) {
          const s = section(j);
          sections.push({ text: "rest of " + s.text, ref: s.ref });
        }
        break;
      }
    }
    for (let j = cut; j < end; j++) {
      const k = kinds[j];
      if (k !== 7 && k !== top) continue;
      if (sections.length >= 6) moreSections++;
      else sections.push(section(j));
    }
    return { sections, moreSections };
  };

  // Cut where the lines and the notice fit. The notice depends on the cut: settle it in a few rounds.
  let room = max - Math.min(120, Math.floor(max / 10));
  let cut = start;
  let used = 0;
  let notice = "";
  /** @type {any} */
  let info = null;
  for (let round = 0; round < 4; round++) {
    cut = start;
    used = 0;
    while (cut < end && used + cost[cut - start] <= room) used += cost[cut++ - start];
    info = { omittedTokens: total - used, omittedLines: end - cut, maxTokens: max, ...leftOut(cut) };
    notice = truncationNotice(info);
    const need = estimateTokens(notice) + 2; // and a closing fence
    if (used + need <= max || cut === start) break;
    room = max - need;
  }
  let open = false; // inside a code fence at the cut
  for (let j = start; j < cut; j++) if (kinds[j] === 9) open = !open;
  const shown = lines.slice(start, cut);
  if (!shown.length) {
    // A single line larger than the whole budget: show its beginning.
    shown.push(lines[start].slice(0, Math.max(0, Math.floor(room * 4))) + "…");
    open = false;
  }
  if (open) shown.push("```");
  shown.push(notice);
  const text = shown.join("\n");
  return {
    text,
    lines: shown.length,
    totalLines: end - start,
    tokens: estimateTokens(text),
    totalTokens: total,
    truncated: { ...info, shownTokens: used, totalTokens: total, notice },
  };
}

/**
 * `find`: the lines that contain the query (case-insensitive), each under its landmark and heading,
 * each with a ref (the line's own, or one for its block).
 * @param {{lines: string[], blocks: number[], kinds: number[], owners: number[]}} layout
 * @param {string} query
 * @param {{maxMatches?: number, refOf?: (i: number) => number | null}} opts
 */
export function findInLayout(layout, query, opts) {
  const { lines, blocks, kinds, owners } = layout;
  const refOf = opts.refOf || (() => null);
  const needle = query.replace(/\s+/g, " ").trim().toLowerCase();
  const max = opts.maxMatches && opts.maxMatches > 0 ? opts.maxMatches : 50;
  /** @type {string[]} */
  const out = [];
  let matches = 0;
  /** The last heading seen in each landmark (by its line; -1: outside any). @type {Map<number, number>} */
  const headingIn = new Map();
  let shownLandmark = -1;
  let shownHeading = -1;
  const REF = /@e\d+/;
  for (let j = 0; j < lines.length && needle; j++) {
    const k = kinds[j];
    const owner = owners[j];
    if (k >= 1 && k <= 6) headingIn.set(owner, j);
    const text = lines[j].trim();
    const at = text.toLowerCase().indexOf(needle);
    if (at < 0) continue;
    matches++;
    if (matches > max) continue;
    const landmark = k === 7 ? j : owner;
    const heading = k === 7 ? -1 : (headingIn.get(owner) ?? -1);
    if (landmark !== shownLandmark) {
      if (landmark >= 0 && landmark !== j) out.push(lines[landmark].trim());
      shownLandmark = landmark;
      shownHeading = -1;
    }
    if (heading !== shownHeading) {
      if (heading >= 0 && heading !== j) out.push(lines[heading].trim());
      shownHeading = heading;
    }
    let shown = text;
    if (text.length > 300) {
      const from = Math.max(0, at - 120);
      const to = Math.min(text.length, at + needle.length + 150);
      shown = (from ? "…" : "") + text.slice(from, to) + (to < text.length ? "…" : "");
    }
    if (!REF.test(shown) && blocks[j] >= 0) {
      const ref = refOf(blocks[j]);
      if (ref != null) shown += " @e" + ref;
    }
    out.push(shown);
  }
  let head = `${matches} match${matches === 1 ? "" : "es"} for ${JSON.stringify(query)}`;
  if (matches > max) head += ` (first ${max} shown; refine the text)`;
  return { text: [head + (matches ? ":" : "."), ...out].join("\n"), matches };
}

/**
 * The whole renderer: layout, then section slice, budget and notice.
 * @param {any} ir
 * @param {{mode?: string, urls?: boolean, maxTokens?: number, sectionOf?: number | null,
 *          refOf?: (i: number) => number | null}} opts
 */
export function renderSnapshot(ir, opts) {
  return finishSnapshot(layoutSnapshot(ir, opts), opts);
}
