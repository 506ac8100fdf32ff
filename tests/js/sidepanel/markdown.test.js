// The panel's Markdown renderer: the agent's formatting shows, nothing it writes becomes markup of its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { renderMarkdown, renderInline, safeUrl } from "../../../src/tabpilot/extension/sidepanel/markdown.js";

/** Every tag in the output, so a test can say which ones may appear. */
const tags = (html) => [...html.matchAll(/<\/?([a-z0-9]+)/g)].map((m) => m[1]);
const ALLOWED = new Set(["p", "br", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "strong", "em", "a", "hr"]);

test("the usual formatting renders", () => {
  assert.equal(renderMarkdown("Hello **world** and *you*"), "<p>Hello <strong>world</strong> and <em>you</em></p>");
  assert.equal(renderMarkdown("# Title\ntext"), "<h3>Title</h3><p>text</p>");
  assert.equal(renderMarkdown("- one\n- two"), "<ul><li>one</li><li>two</li></ul>");
  assert.equal(renderMarkdown("3. c\n4. d"), '<ol start="3"><li>c</li><li>d</li></ol>');
  assert.equal(renderMarkdown("> quoted"), "<blockquote><p>quoted</p></blockquote>");
  assert.equal(renderMarkdown("a\nb\n\nc"), "<p>a<br>b</p><p>c</p>");
  assert.equal(renderMarkdown("---"), "<hr>");
  assert.equal(renderInline("use `a<b>` here"), "use <code>a&lt;b&gt;</code> here");
  assert.equal(renderMarkdown("```js\nlet x = '<i>';\n```"), '<pre data-lang="js"><code>let x = &#39;&lt;i&gt;&#39;;</code></pre>');
  assert.equal(
    renderInline("[docs](https://example.test/a_(b))"),
    '<a href="https://example.test/a_(b)" target="_blank" rel="noopener noreferrer">docs</a>',
  );
});

test("a fence still streaming renders as code to the end", () => {
  assert.equal(renderMarkdown("before\n```\nline 1\nline"), "<p>before</p><pre><code>line 1\nline</code></pre>");
});

test("raw HTML stays text", () => {
  const hostile = [
    '<img src=x onerror="alert(1)">',
    "<script>alert(1)</script>",
    "<a href='javascript:alert(1)'>x</a>",
    '**<svg onload="alert(1)">**',
    "<iframe src=//evil.test></iframe>",
    "```\n</code></pre><script>x</script>\n```",
    "- <b onclick=alert(1)>item</b>",
    "# <style>body{display:none}</style>",
  ];
  for (const source of hostile) {
    const html = renderMarkdown(source);
    for (const tag of tags(html)) assert.ok(ALLOWED.has(tag), `${JSON.stringify(source)} produced <${tag}>: ${html}`);
    assert.doesNotMatch(html, /<[a-z]+[^>]*\son[a-z]+=/i, `no handler attribute in ${html}`);
    assert.doesNotMatch(html, /<(script|img|svg|iframe|style)/i);
  }
});

test("links go only to http(s) and mailto", () => {
  for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "java\tscript:alert(1)", " javascript:x", "data:text/html,<b>", "vbscript:x", "/relative", "chrome://settings", "\u0001javascript:x"]) {
    assert.equal(safeUrl(bad), null, bad);
    const html = renderInline(`[click](${bad})`);
    assert.doesNotMatch(html, /<a /, `${bad} → ${html}`);
  }
  assert.equal(safeUrl("https://a.test/x?y=1"), "https://a.test/x?y=1");
  assert.equal(safeUrl("mailto:me@a.test"), "mailto:me@a.test");
  // A quote in the URL cannot leave the attribute.
  const html = renderInline('[x](https://a.test/"onmouseover="alert(1))');
  assert.doesNotMatch(html, /"onmouseover=/);
});

test("stray markers are shown as they are", () => {
  assert.equal(renderInline("2 * 3 = 6 and snake_case_name"), "2 * 3 = 6 and snake_case_name");
  assert.equal(renderInline("[not a link] and ``"), "[not a link] and ``");
  assert.equal(renderInline("window.__pwned = 1 and window.__pwned"), "window.__pwned = 1 and window.__pwned");
  assert.equal(renderInline("__real__ strong"), "<strong>real</strong> strong");
});

test("a table renders as a table, its cells inline Markdown only, and a stray pipe stays text", () => {
  const html = renderMarkdown("Prices:\n\n| Item | Price |\n|:---|---:|\n| Tea **hot** | 2 \\| 3 |\n| <b>x</b> | 4 |\n\nafter");
  assert.equal(
    html,
    '<p>Prices:</p><table><thead><tr><th style="text-align:left">Item</th><th style="text-align:right">Price</th></tr></thead><tbody>' +
      '<tr><td style="text-align:left">Tea <strong>hot</strong></td><td style="text-align:right">2 | 3</td></tr>' +
      '<tr><td style="text-align:left">&lt;b&gt;x&lt;/b&gt;</td><td style="text-align:right">4</td></tr></tbody></table><p>after</p>',
  );
  assert.equal(renderMarkdown("a | b\nnot a rule"), "<p>a | b<br>not a rule</p>");
});
