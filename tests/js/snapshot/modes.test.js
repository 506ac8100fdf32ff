// Snapshot modes on recorded structures: token budget and truncation notice, heading sections, find,
// URLs; and the flow rules on small hand-made structures.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  renderSnapshot,
  layoutSnapshot,
  findInLayout,
  estimateTokens,
  truncationNotice,
} from "../../../src/tabpilot/extension/snapshot/render.js";

const load = (/** @type {string} */ name) =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.ir.json`, import.meta.url), "utf8"));
const render = (/** @type {any} */ ir, /** @type {any} */ opts = {}) => renderSnapshot(ir, { maxTokens: 0, ...opts }).text;

/** A fake lazy ref assignment: block index i → ref 1000 + i, recording the calls. */
function lazyRefs() {
  /** @type {number[]} */
  const asked = [];
  return { asked, refOf: (/** @type {number} */ i) => (asked.push(i), 1000 + i) };
}

test("under the budget nothing is cut", () => {
  const r = renderSnapshot(load("json"), { maxTokens: 100000 });
  assert.equal(r.truncated, null);
  assert.equal(r.tokens, r.totalTokens);
  assert.ok(!r.text.includes("[… cut"));
});

test("over the budget: cut at a line, fences closed, one short notice saying how to get the rest", () => {
  const { asked, refOf } = lazyRefs();
  const r = renderSnapshot(load("json"), { maxTokens: 600, refOf });
  assert.ok(r.truncated);
  assert.ok(r.tokens <= 600, `${r.tokens} estimated tokens`);
  const lines = r.text.split("\n");
  const notice = lines[lines.length - 1];
  assert.equal(notice, r.truncated.notice);
  assert.match(notice, /^\[… cut at ~600 tokens: ~\d+ more tokens \(\d+ lines\) not shown\. /);
  assert.match(notice, /--ref @eN/);
  assert.match(notice, /find TEXT/);
  assert.match(notice, /--out FILE/);
  assert.ok(notice.length < 500);
  // the sections left out, each with a ref for --ref
  assert.match(notice, /## Encoders and Decoders @e1\d+/);
  assert.match(notice, /--- navigation "main navigation" @e1\d+/);
  assert.match(notice, /rest of # json — JSON encoder and decoder @e1\d+/);
  const distinct = new Set(asked).size;
  assert.ok(distinct >= 3 && distinct <= 12, "refs are given only to the sections listed");
  // code fences balanced in what is shown
  assert.equal(lines.filter((l) => l === "```").length % 2, 0);
  assert.equal(r.truncated.omittedTokens + r.truncated.shownTokens, r.truncated.totalTokens);
});

test("section names in the notice drop the brackets of their links", () => {
  const ir = {
    t: "b",
    c: [
      { t: "h", l: 1, i: 1, c: ["Intro"] },
      { t: "b", i: 2, c: ["x ".repeat(400)] },
      { t: "h", l: 2, i: 3, c: ["Set Types — ", { t: "c", r: "link", ref: 7, c: ["set"] }] },
      { t: "b", i: 4, c: ["y"] },
    ],
  };
  const r = renderSnapshot(ir, { maxTokens: 100, refOf: (i) => 50 + i });
  assert.match(r.truncated.notice, /## Set Types — set @e53/);
});

test("a line larger than the whole budget shows its beginning", () => {
  const ir = { t: "b", c: ["word ".repeat(5000)] };
  const r = renderSnapshot(ir, { maxTokens: 200 });
  const lines = r.text.split("\n");
  assert.equal(lines.length, 2);
  assert.ok(lines[0].endsWith("…"));
  assert.ok(lines[0].length > 100);
});

test("a heading as root gives its section: up to the next heading of the same rank or a landmark", () => {
  const r = renderSnapshot(load("json"), { maxTokens: 0, sectionOf: 118 });
  const lines = r.text.split("\n");
  assert.equal(lines[0], "## Encoders and Decoders");
  assert.equal(lines[1], "| JSON | Python |");
  assert.equal(lines[lines.length - 1], "| null | None |");
  const sub = renderSnapshot(load("json"), { maxTokens: 0, sectionOf: 99999 });
  assert.equal(sub.text, "");
});

test("a cut section does not list itself as the rest", () => {
  const ir = {
    t: "b",
    c: [{ t: "h", l: 2, i: 1, c: ["Big"] }, ...Array.from({ length: 50 }, (_, j) => ({ t: "b", i: 10 + j, c: ["text ".repeat(30)] }))],
  };
  const r = renderSnapshot(ir, { maxTokens: 300, sectionOf: 1, refOf: (i) => i });
  assert.ok(r.truncated);
  assert.ok(!r.truncated.notice.includes("rest of ## Big"));
});

test("find: matching lines with refs, under their landmark and heading", () => {
  const { refOf } = lazyRefs();
  const out = findInLayout(layoutSnapshot(load("json"), {}), "JSONDecoder", { refOf });
  const lines = out.text.split("\n");
  assert.match(lines[0], /^\d+ matches for "JSONDecoder":$/);
  assert.ok(out.matches >= 3);
  assert.ok(lines.includes('--- navigation "main navigation"'));
  assert.ok(lines.includes("### [Table of Contents @e133]"));
  assert.ok(lines.includes("    - [JSONDecoder @e141]".trim()));
  // every match carries a ref
  const hits = lines.slice(1).filter((l) => l.includes("JSONDecoder"));
  assert.equal(hits.length, out.matches);
  for (const l of hits) assert.match(l, /@e\d+/);
});

test("find: case-insensitive, plain lines get their block's ref, long lines are cut around the match", () => {
  const { refOf } = lazyRefs();
  const out = findInLayout(layoutSnapshot(load("json"), {}), "MALICIOUS json", { refOf });
  assert.equal(out.matches, 1);
  const [head, landmark, heading, hit] = out.text.split("\n");
  assert.equal(head, '1 match for "MALICIOUS json":');
  assert.equal(landmark, "--- main");
  assert.equal(heading, "# [json @e12] — JSON encoder and decoder");
  assert.match(hit, /^Warning Be cautious .*malicious JSON string.* @e1\d+$/);

  const long = { t: "b", c: [{ t: "b", i: 5, c: ["a ".repeat(400) + "needle " + "b ".repeat(400)] }] };
  const cut = findInLayout(layoutSnapshot(long, {}), "needle", { refOf });
  const line = cut.text.split("\n")[1];
  assert.ok(line.startsWith("…") && line.includes("needle") && line.endsWith("… @e1005"), line);
  assert.ok(line.length < 320);
});

test("find: a match after its landmark ended is shown under no landmark or heading of another", () => {
  // as Django's admin: a sidebar, then the main part, then a popup list at the end of the body
  const ir = {
    t: "b",
    c: [
      { t: "lm", r: "navigation", n: "Sidebar", i: 0, c: [{ t: "c", r: "link", ref: 1, c: ["Books"] }] },
      { t: "lm", r: "main", i: 1, c: [{ t: "h", l: 1, i: 2, c: ["Add book"] }, { t: "b", i: 3, c: ["Pick an author."] }] },
      { t: "b", i: 4, c: [{ t: "c", r: "option", ref: 9, n: "Octavia Butler" }] },
    ],
  };
  const out = findInLayout(layoutSnapshot(ir, {}), "Octavia", {});
  assert.equal(out.text, '1 match for "Octavia":\n[option "Octavia Butler" @e9]');
  const inMain = findInLayout(layoutSnapshot(ir, { mode: "interactive" }), "Books", {});
  assert.equal(inMain.text, '1 match for "Books":\n--- navigation "Sidebar"\n[Books @e1]');
});

test("find: no match, and a cap on the matches shown", () => {
  const layout = layoutSnapshot(load("json"), {});
  assert.equal(findInLayout(layout, "zebra-unicorn", {}).text, '0 matches for "zebra-unicorn".');
  const capped = findInLayout(layout, "json", { maxMatches: 3 });
  assert.ok(capped.matches > 3);
  assert.match(capped.text.split("\n")[0], /\(first 3 shown; refine the text\):$/);
});

test("URLs only on request, except for links without a name", () => {
  const forms = load("forms");
  assert.ok(!render(forms).includes("terms.html"));
  assert.ok(render(forms, { urls: true }).includes("[terms @e53 /pages/terms.html]"));
  assert.ok(render(load("index")).includes("[link @e5 /py/index.html]"));
});

test("lists: bullets, numbers from start, nesting, continuation lines, code in items", () => {
  const ir = {
    t: "b",
    c: [
      {
        t: "ol",
        s: 3,
        c: [
          { t: "li", c: ["three"] },
          {
            t: "li",
            c: [
              { t: "b", c: ["four"] },
              { t: "b", c: ["more on four"] },
              { t: "ul", c: [{ t: "li", c: ["a"] }, { t: "li", c: [{ t: "pre", c: ["x = 1\ny = 2\n"] }] }] },
            ],
          },
        ],
      },
    ],
  };
  assert.equal(render(ir), ["3. three", "4. four", "   more on four".replace("   ", "  "), "  - a", "  - ```", "    x = 1", "    y = 2", "    ```"].join("\n"));
});

test("text runs merge into lines; <br> breaks; whitespace-keeping blocks keep their lines", () => {
  const ir = {
    t: "b",
    c: [
      { t: "b", c: ["Hello   ", "big\n world", { t: "br" }, "next line"] },
      { t: "b", w: 1, c: ["line one\n  line two"] },
      { t: "hr" },
    ],
  };
  assert.equal(render(ir), "Hello big world\nnext line\nline one\nline two\n---");
});

test("actionables: brackets, names from content, containers, long texts, images, values", () => {
  const ir = {
    t: "b",
    c: [
      { t: "b", c: [{ t: "c", r: "link", ref: 1, c: [{ t: "img", n: "logo" }, " Home"] }] },
      { t: "b", c: [{ t: "c", r: "link", ref: 2, n: "Close dialog", c: ["×"] }] },
      { t: "b", c: [{ t: "c", r: "button", ref: 3, c: [{ t: "img", n: "Search" }] }] },
      { t: "b", c: [{ t: "c", r: "clickable", ref: 4, k: 1, c: ["Card ", { t: "c", r: "link", ref: 5, c: ["more"] }] }] },
      { t: "b", c: [{ t: "c", r: "clickable", ref: 6, c: ["long ".repeat(30)] }] },
      { t: "b", c: [{ t: "c", r: "textbox", ref: 7, n: "Bio", c: ["I write ", { t: "b", c: ["code"] }] }] },
      { t: "b", c: [{ t: "c", r: "button", ref: 8, n: 'Say "hi"', s: "pressed" }] },
      { t: "b", c: ["Progress ", { t: "i", r: "progressbar", n: "Upload", v: "0.5" }] },
    ],
  };
  const lines = render(ir).split("\n");
  assert.deepEqual(lines.slice(0, 4), [
    '[img "logo" Home @e1]',
    '[link "Close dialog" @e2]',
    '[button "Search" @e3]',
    "[clickable @e4] Card [more @e5]",
  ]);
  assert.equal(lines[4], `[clickable @e6] ${"long ".repeat(30).trim()}`);
  assert.equal(lines[5], '[textbox "Bio" @e7 value="I write code"]');
  assert.equal(lines[6], '[button "Say \\"hi\\"" @e8 pressed]');
  assert.equal(lines[7], 'Progress [progressbar "Upload" value="0.5"]');
});

test("tables: data tables as rows, layout tables as blocks", () => {
  const data = { t: "tbl", c: [{ t: "tr", c: [{ t: "td", c: ["a"] }, { t: "td" }, { t: "td", c: [{ t: "b", c: ["b"] }] }] }] };
  assert.equal(render(data), "| a |  | b |");
  const layout = {
    t: "tbl",
    c: [{ t: "tr", c: [{ t: "td", c: [{ t: "h", l: 2, c: ["Menu"] }, { t: "ul", c: [{ t: "li", c: ["x"] }] }] }, { t: "td", c: ["body"] }] }],
  };
  assert.equal(render(layout), "## Menu\n- x\nbody");
});

test("dialogs and frames are closed; cross-origin frames are one placeholder line", () => {
  const ir = {
    t: "b",
    c: [
      { t: "lm", r: "main", c: [{ t: "b", c: ["Page"] }, { t: "frame", ref: 9, n: "Ads", x: 1 }] },
      { t: "dlg", r: "dialog", n: "Cookies", s: "modal", c: [{ t: "c", r: "button", ref: 10, c: ["OK"] }] },
      { t: "b", c: ["after"] },
    ],
  };
  assert.equal(render(ir), '--- main\nPage\n[iframe "Ads" @e9]\n--- dialog "Cookies" modal\n[button "OK" @e10]\n--- /dialog\n--- /main\nafter');
  assert.equal(render(ir, { mode: "interactive" }), '--- main\n[iframe "Ads" @e9]\n--- dialog "Cookies" modal\n[button "OK" @e10]\n--- /dialog');
});

test("a landmark's end is marked only when content with words follows it", () => {
  const ir = {
    t: "b",
    c: [
      { t: "lm", r: "navigation", c: [{ t: "lm", r: "search", c: [{ t: "c", r: "button", ref: 1, c: ["Go"] }] }, "|"] },
      { t: "lm", r: "main", c: ["Main text"] },
      "Footer",
    ],
  };
  assert.equal(render(ir), '--- navigation\n--- search\n[button "Go" @e1]\n|\n--- main\nMain text\n--- /main\nFooter');
});

test("estimateTokens: about 4.2 characters per token plus 3 per ref", () => {
  assert.equal(estimateTokens(""), 0);
  assert.equal(estimateTokens("a".repeat(42)), 10);
  assert.equal(estimateTokens("[Home @e1]"), Math.ceil(10 / 4.2 + 3));
});

test("truncationNotice lists sections with refs and the ways to get the rest", () => {
  const s = truncationNotice({
    omittedTokens: 3400,
    omittedLines: 120,
    maxTokens: 12000,
    sections: [{ text: "## Set Types", ref: 77 }, { text: "--- navigation", ref: null }],
    moreSections: 2,
  });
  assert.equal(
    s,
    "[… cut at ~12000 tokens: ~3400 more tokens (120 lines) not shown. Left out: ## Set Types @e77, --- navigation, +2 more. " +
      "Read a part with --ref @eN, search with find TEXT, or save all with --out FILE.]",
  );
});
