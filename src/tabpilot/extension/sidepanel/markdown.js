// @ts-check
// A small Markdown renderer for the agent's replies. Its output is HTML built only from tags it writes
// itself: every character of the source is escaped, raw HTML in the source stays visible text, and a
// link is a link only when it goes to http(s) or mailto (no javascript:, data:, or relative tricks).
// Covered: paragraphs, headings, bullet and numbered lists, quotes, fenced and inline code, bold,
// italics, links, horizontal rules, line breaks, tables.

const ESCAPES = /** @type {Record<string, string>} */ ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" });

/** @param {string} text */
export function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * The URL a link may go to, or null. Control characters and spaces are stripped before the scheme is
 * read, the way browsers do, so `java\tscript:` cannot pass as something else.
 * @param {string} raw
 */
export function safeUrl(raw) {
  // eslint-disable-next-line no-control-regex
  const url = raw.trim().replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== "http" && scheme !== "https" && scheme !== "mailto") return null;
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
}

/** Inline spans of one line of text (already split from its block). @param {string} text */
export function renderInline(text) {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const code = /^(`+)([\s\S]*?[^`])\1(?!`)/.exec(rest);
    if (code) {
      out += `<code>${escapeHtml(code[2].trim() === "" ? code[2] : code[2].replace(/^ (.*) $/, "$1"))}</code>`;
      i += code[0].length;
      continue;
    }
    const link = /^\[([^\]\n]+)\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)\)/.exec(rest);
    if (link) {
      const href = safeUrl(link[2]);
      const label = renderInline(link[1]);
      out += href ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${label}</a>` : label;
      i += link[0].length;
      continue;
    }
    const strong = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest);
    // Underscores inside a word (snake_case, __dunder__) are not emphasis.
    const inWord = (/** @type {RegExpExecArray} */ m) => m[1][0] === "_" && (/\w/.test(text[i - 1] ?? "") || /\w/.test(text[i + m[0].length] ?? ""));
    if (strong && !inWord(strong)) {
      out += `<strong>${renderInline(strong[2])}</strong>`;
      i += strong[0].length;
      continue;
    }
    const em = /^(\*|_)(?=\S)([\s\S]*?\S)\1(?![*_])/.exec(rest);
    if (em && !inWord(em)) {
      out += `<em>${renderInline(em[2])}</em>`;
      i += em[0].length;
      continue;
    }
    const plain = /^[^`[*_]+/.exec(rest);
    const chunk = plain ? plain[0] : rest[0];
    out += escapeHtml(chunk);
    i += chunk.length;
  }
  return out;
}

/** @param {string[]} lines */
function paragraph(lines) {
  return `<p>${lines.map((l) => renderInline(l.trim())).join("<br>")}</p>`;
}

const FENCE = /^ {0,3}(```+|~~~+)\s*([\w+-]*)\s*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^ {0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const TABLE_RULE = /^ {0,3}\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;

/** A table row's cells; a `\|` stays in its cell. @param {string} line */
function cells(line) {
  const inner = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** Only these three, written by the renderer itself. @param {string} spec */
function align(spec) {
  const s = spec.trim();
  const side = s.startsWith(":") && s.endsWith(":") ? "center" : s.endsWith(":") ? "right" : s.startsWith(":") ? "left" : "";
  return side ? ` style="text-align:${side}"` : "";
}

/** @param {string[]} head @param {string[]} rule @param {string[][]} rows */
function table(head, rule, rows) {
  const aligns = rule.map(align);
  /** @param {string} tag @param {string[]} row */
  const tr = (tag, row) => `<tr>${head.map((_, i) => `<${tag}${aligns[i] ?? ""}>${renderInline(row[i] ?? "")}</${tag}>`).join("")}</tr>`;
  const body = rows.length ? `<tbody>${rows.map((r) => tr("td", r)).join("")}</tbody>` : "";
  return `<table><thead>${tr("th", head)}</thead>${body}</table>`;
}

/**
 * Markdown → HTML made only of the renderer's own tags. An unclosed fence (a reply still streaming)
 * renders as code up to the end.
 * @param {string} source
 */
export function renderMarkdown(source) {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const out = [];
  /** @type {string[]} */
  let para = [];
  const flush = () => {
    if (para.length) out.push(paragraph(para));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const body = [];
      const close = new RegExp(`^ {0,3}${fence[1][0] === "`" ? "`" : "~"}{${fence[1].length},}\\s*$`);
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      const lang = fence[2] ? ` data-lang="${escapeHtml(fence[2])}"` : "";
      out.push(`<pre${lang}><code>${escapeHtml(body.join("\n"))}</code></pre>`);
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    if (RULE.test(line)) {
      flush();
      out.push("<hr>");
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const head = cells(line);
      const rule = cells(lines[i + 1]);
      if (rule.length === head.length) {
        flush();
        const rows = [];
        for (i += 2; i < lines.length && lines[i].trim() !== "" && lines[i].includes("|"); i++) rows.push(cells(lines[i]));
        i--;
        out.push(table(head, rule, rows));
        continue;
      }
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1].length + 2, 6);
      out.push(`<h${level}>${renderInline(heading[2])}</h${level}>`);
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const quoted = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) quoted.push(/** @type {RegExpExecArray} */ (QUOTE.exec(lines[i]))[1]);
      i--;
      out.push(`<blockquote>${renderMarkdown(quoted.join("\n"))}</blockquote>`);
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = NUMBERED.exec(line);
    if (bullet || numbered) {
      flush();
      const pattern = bullet ? BULLET : NUMBERED;
      const items = [];
      for (; i < lines.length; i++) {
        const m = pattern.exec(lines[i]);
        if (m) items.push(m[bullet ? 1 : 2]);
        else if (lines[i].trim() !== "" && /^\s{2,}/.test(lines[i]) && items.length) items[items.length - 1] += ` ${lines[i].trim()}`;
        else break;
      }
      i--;
      const tag = bullet ? "ul" : "ol";
      const start = numbered && numbered[1] !== "1" ? ` start="${Number(numbered[1])}"` : "";
      out.push(`<${tag}${start}>${items.map((t) => `<li>${renderInline(t)}</li>`).join("")}</${tag}>`);
      continue;
    }
    para.push(line);
  }
  flush();
  return out.join("");
}
