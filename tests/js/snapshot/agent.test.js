// The in-page agent (ref store, snapshot/find/resolve/status) and the walker, on a tiny fake DOM that has
// just what the walker reads. Real pages are covered by the recorded structures and the e2e tests.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import vm from "node:vm";
import { installAgent } from "../../../src/tabpilot/extension/snapshot/agent.js";
import { pageAgentSource, snapshotExpression } from "../../../src/tabpilot/extension/snapshot/index.js";

// ---- a fake DOM ----
/** @type {Record<string, string>} */
const DISPLAY = {
  html: "block", body: "block", div: "block", p: "block", main: "block", nav: "block", form: "block", section: "block",
  h1: "block", h2: "block", h3: "block", ul: "block", ol: "block", li: "list-item", pre: "block", fieldset: "block",
  legend: "block", table: "table", tbody: "table-row-group", tr: "table-row", td: "table-cell", th: "table-cell",
  script: "none", style: "none", button: "inline-block", input: "inline-block", select: "inline-block",
  textarea: "inline-block", iframe: "inline", slot: "contents", details: "block", summary: "block",
};
const INHERITED = ["visibility", "cursor", "whiteSpace"];

class FakeText {
  /** @param {string} data */
  constructor(data) {
    this.nodeType = 3;
    this.data = data;
    /** @type {any} */ this.parentNode = null;
  }
  get nextSibling() {
    return sibling(this);
  }
  get textContent() {
    return this.data;
  }
}

/** @param {any} node */
function sibling(node) {
  const kids = node.parentNode?.childNodes;
  if (!kids) return null;
  return kids[kids.indexOf(node) + 1] ?? null;
}

class FakeElement {
  /** @param {string} tag @param {Record<string, any>} attrs @param {any} doc */
  constructor(tag, attrs, doc) {
    this.nodeType = 1;
    this.localName = tag;
    /** @type {Map<string, string>} */ this.attrs = new Map();
    /** @type {Record<string, string>} */ this.css = {};
    /** @type {any[]} */ this.childNodes = [];
    /** @type {any} */ this.parentNode = null;
    /** @type {any} */ this.shadowRoot = null;
    this.ownerDocument = doc;
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "css") Object.assign(this.css, v);
      else if (k === "props") Object.assign(this, v);
      else this.attrs.set(k, String(v));
    }
    if (tag === "input") {
      this.type = this.attrs.get("type") || "text";
      this.value ??= this.attrs.get("value") || "";
      this.checked ??= this.attrs.has("checked");
      this.placeholder = this.attrs.get("placeholder") || "";
      this.readOnly = this.attrs.has("readonly");
    }
    if (tag === "input" || tag === "button" || tag === "select" || tag === "textarea") {
      this.disabled = this.attrs.has("disabled");
      this.required = this.attrs.has("required");
    }
    if (tag === "details") this.open = this.attrs.has("open");
    if (tag === "a") this.href = this.attrs.has("href") ? "http://test.local/" + this.attrs.get("href") : "";
  }
  get parentElement() {
    return this.parentNode && this.parentNode.nodeType === 1 ? this.parentNode : null;
  }
  get firstChild() {
    return this.childNodes[0] ?? null;
  }
  get nextSibling() {
    return sibling(this);
  }
  get isConnected() {
    let n = /** @type {any} */ (this);
    while (n.parentNode) n = n.parentNode;
    return n === this.ownerDocument.documentElement || n.isShadowRoot === true;
  }
  get textContent() {
    return this.childNodes.map((c) => c.textContent).join("");
  }
  get tabIndex() {
    return this.attrs.has("tabindex") ? +(/** @type {string} */ (this.attrs.get("tabindex"))) : -1;
  }
  get isContentEditable() {
    return this.attrs.get("contenteditable") === "true";
  }
  get title() {
    return this.attrs.get("title") || "";
  }
  get alt() {
    return this.attrs.get("alt") || "";
  }
  get labels() {
    if (this.localName !== "input" && this.localName !== "select" && this.localName !== "textarea") return undefined;
    const out = [];
    const id = this.attrs.get("id");
    for (const l of this.ownerDocument.all()) if (l.localName === "label" && id && l.attrs.get("for") === id) out.push(l);
    for (let p = this.parentElement; p; p = p.parentElement) if (p.localName === "label") out.push(p);
    return out;
  }
  get control() {
    if (this.localName !== "label") return undefined;
    const f = this.attrs.get("for");
    if (f) return this.ownerDocument.getElementById(f);
    return this.descendants().find((d) => d.localName === "input") ?? null;
  }
  /** @returns {FakeElement[]} */
  descendants() {
    return this.childNodes.filter((c) => c.nodeType === 1).flatMap((c) => [c, ...c.descendants()]);
  }
  /** @param {string} n */
  getAttribute(n) {
    return this.attrs.has(n) ? /** @type {string} */ (this.attrs.get(n)) : null;
  }
  /** @param {string} n */
  hasAttribute(n) {
    return this.attrs.has(n);
  }
  /** @param {string} sel */
  querySelector(sel) {
    const m = /^:scope > (\w+)$/.exec(sel);
    if (m) return this.childNodes.find((c) => c.localName === m[1]) ?? null;
    if (!/^\w+(, \w+)*$/.test(sel)) throw new Error(`fake querySelector: ${sel}`);
    const tags = sel.split(", ");
    return this.descendants().find((d) => tags.includes(d.localName)) ?? null;
  }
  get previousElementSibling() {
    const kids = this.parentNode ? this.parentNode.childNodes.filter((c) => c.nodeType === 1) : [];
    return kids[kids.indexOf(this) - 1] ?? null;
  }
  /** @param {string} sel */
  matches(sel) {
    if (sel === ":disabled") return !!(/** @type {any} */ (this).disabled);
    if (sel === ":user-invalid" || sel === ":modal") return false;
    throw new Error(`fake matches: ${sel}`);
  }
  /** @param {string} sel */
  closest(sel) {
    const tags = sel.split(",");
    for (let p = /** @type {any} */ (this); p && p.nodeType === 1; p = p.parentNode) if (tags.includes(p.localName)) return p;
    return null;
  }
  getRootNode() {
    return this.ownerDocument;
  }
  checkVisibility() {
    for (let p = /** @type {any} */ (this); p && p.nodeType === 1; p = p.parentNode) {
      if (this.ownerDocument.defaultView.getComputedStyle(p).display === "none") return false;
    }
    return this.ownerDocument.defaultView.getComputedStyle(this).visibility === "visible";
  }
  getBoundingClientRect() {
    const top = +(this.css.top ?? 0);
    return { left: 0, top, right: 100, bottom: top + 20, width: 100, height: 20 };
  }
  get offsetWidth() {
    return this.css.width === "0" ? 0 : 100;
  }
  get offsetHeight() {
    return this.css.height === "0" ? 0 : 20;
  }
  /** @param {any[]} nodes */
  append(...nodes) {
    for (const n of nodes) {
      const node = typeof n === "string" ? new FakeText(n) : n;
      node.parentNode = this;
      this.childNodes.push(node);
    }
  }
  /** @param {any} node @param {any} before */
  insertBefore(node, before) {
    node.parentNode = this;
    this.childNodes.splice(this.childNodes.indexOf(before), 0, node);
  }
  remove() {
    const kids = this.parentNode.childNodes;
    kids.splice(kids.indexOf(this), 1);
    this.parentNode = null;
  }
  /** @param {string} name */
  assignedNodes(name = this.attrs.get("name")) {
    const host = this.hostOf;
    if (!host) return [];
    return host.childNodes.filter((/** @type {any} */ c) => (c.nodeType === 1 ? c.attrs.get("slot") : undefined) === name);
  }
}

function fakeDocument(url = "http://test.local/page.html") {
  const u = new URL(url);
  /** @type {any} */
  const doc = {
    nodeType: 9,
    title: "Fake page",
    location: { href: url, origin: u.origin, pathname: u.pathname, search: u.search },
    activeElement: null,
    /** @returns {FakeElement[]} */
    all() {
      return [this.documentElement, ...this.documentElement.descendants()];
    },
    /** @param {string} id */
    getElementById(id) {
      return this.all().find((e) => e.attrs.get("id") === id) ?? null;
    },
  };
  doc.defaultView = {
    innerWidth: 1280,
    innerHeight: 800,
    /** @param {FakeElement} el */
    getComputedStyle(el) {
      /** @type {Record<string, string>} */
      const cs = { display: el.css.display ?? DISPLAY[el.localName] ?? "inline", overflow: el.css.overflow ?? "visible" };
      for (const prop of INHERITED) {
        let v;
        for (let p = /** @type {any} */ (el); p && p.nodeType === 1 && v === undefined; p = p.parentNode) v = p.css[prop];
        cs[prop] = v ?? (prop === "visibility" ? "visible" : prop === "whiteSpace" ? (el.closest("pre") ? "pre" : "normal") : el.closest("a") ? "pointer" : "auto");
      }
      return cs;
    },
  };
  doc.h = (/** @type {string} */ tag, /** @type {any} */ attrs = {}, /** @type {any[]} */ ...kids) => {
    const el = new FakeElement(tag, attrs, doc);
    el.append(...kids);
    return el;
  };
  doc.documentElement = doc.h("html");
  doc.body = doc.h("body");
  doc.documentElement.append(doc.body);
  return doc;
}

/** Makes this fake document the page the agent sees. @param {any} doc */
function usePage(doc) {
  const g = /** @type {any} */ (globalThis);
  delete g[Symbol.for("tabpilot.snapshot")];
  g.document = doc;
  g.location = doc.location;
  g.window = doc.defaultView;
}

/** A small page: nav, main with a heading, text, a form, hidden things. */
function samplePage() {
  const doc = fakeDocument();
  const { h } = doc;
  const name = h("input", { id: "n", value: "Ada", required: "" });
  doc.body.append(
    h("nav", { "aria-label": "Site" }, h("a", { href: "home" }, "Home"), " · ", h("a", { href: "docs" }, "Docs")),
    h(
      "main",
      {},
      h("h1", {}, "Welcome"),
      h("p", {}, "Some ", h("span", {}, "merged"), "\n  text."),
      h("form", { "aria-label": "Signup" }, h("label", { for: "n" }, "Name"), " ", name, " ", h("button", {}, "Go")),
      h("p", { css: { visibility: "hidden" } }, "Invisible ", h("span", { css: { visibility: "visible" } }, "but this shows")),
      h("p", { "aria-hidden": "true" }, "aria hidden"),
      h("p", { css: { display: "none" } }, h("a", { href: "x" }, "display none")),
      h("div", { "data-tabpilot-overlay": "" }, h("button", {}, "overlay")),
      h("div", { "data-tabpilot-cue": "" }, h("button", {}, "cue")),
      h("div", { css: { cursor: "pointer" } }, "Card ", h("span", {}, "inner")),
      h("h2", {}, "Second"),
      h("p", {}, "Tail text."),
    ),
  );
  doc.activeElement = name;
  return doc;
}

beforeEach(() => usePage(samplePage()));

/** @param {any} r */
const refs = (r) => [...r.text.matchAll(/@e(\d+)/g)].map((m) => +m[1]);

test("installs once, non-enumerable, under Symbol.for('tabpilot.snapshot')", () => {
  const a = installAgent("v1");
  assert.equal(installAgent("v1"), a);
  const d = Object.getOwnPropertyDescriptor(globalThis, Symbol.for("tabpilot.snapshot"));
  assert.ok(d && !d.enumerable);
  assert.ok(!Object.keys(globalThis).includes("tabpilot.snapshot"));
});

test("snapshot: the flow text of the page, with refs from refStart", () => {
  const r = installAgent("v1").snapshot({ refStart: 40 });
  assert.equal(
    r.text,
    [
      '--- navigation "Site"',
      "[Home @e40] · [Docs @e41]",
      "--- main",
      "# Welcome",
      "Some merged text.",
      '--- form "Signup"',
      '[textbox "Name" @e42 required focused value="Ada"] [button "Go" @e43]',
      "--- /form",
      "but this shows",
      '[clickable "Card inner" @e44]',
      "## Second",
      "Tail text.",
    ].join("\n"),
  );
  assert.equal(r.refCount, 5);
  assert.equal(r.nextRef, 45);
  assert.equal(r.truncated, null);
  assert.deepEqual(r.frames, []);
  assert.equal(r.title, "Fake page");
  assert.ok(r.stats.walkMs >= 0 && r.stats.elements > 10);
});

test("refs are stable for the same element and never reused", () => {
  const a = installAgent("v1");
  const first = a.snapshot({ refStart: 1 });
  const again = a.snapshot({ refStart: 1 });
  assert.equal(again.text, first.text);
  // a new element before the others gets a new number; the others keep theirs
  const nav = document.body.firstChild;
  /** @type {any} */ (nav).insertBefore(/** @type {any} */ (document).h("a", { href: "new" }, "New"), nav.firstChild);
  const third = a.snapshot({ refStart: 1 });
  assert.deepEqual(refs(third), [6, 1, 2, 3, 4, 5]);
  // a removed element's ref is stale, not reused
  const home = a.resolve("@e1");
  assert.equal(home.textContent, "Home");
  home.remove();
  assert.equal(a.resolve("e1"), null);
  assert.equal(a.status("e1"), "stale");
  assert.equal(a.status(2), "live");
  assert.equal(a.status("@e999"), "unknown");
  assert.equal(a.status("bogus"), "unknown");
  const fourth = a.snapshot({ refStart: 1 });
  assert.deepEqual(refs(fourth), [6, 2, 3, 4, 5]);
  assert.equal(fourth.nextRef, 7);
});

test("refStart: a tab counter ahead of the agent moves numbering on; one behind is ignored", () => {
  const a = installAgent("v1");
  assert.equal(a.snapshot({ refStart: 1 }).nextRef, 6);
  document.body.append(/** @type {any} */ (document).h("button", {}, "Late"));
  const r = a.snapshot({ refStart: 100 });
  assert.ok(r.text.includes('[button "Late" @e100]'));
  assert.equal(r.nextRef, 101);
  document.body.append(/** @type {any} */ (document).h("button", {}, "Later"));
  assert.ok(a.snapshot({ refStart: 3 }).text.includes('[button "Later" @e101]'));
  // refs issued by this document but gone are stale; numbers it skipped are not its own
  assert.equal(a.status(50), "unknown");
});

test("a new engine version keeps the ref store", () => {
  const r1 = installAgent("v1").snapshot({ refStart: 10 });
  const a2 = installAgent("v2");
  assert.equal(a2.version, "v2");
  assert.equal(a2.snapshot({}).text, r1.text);
});

test("rootRef: a subtree; a heading's section; errors for stale, unknown and hidden refs", () => {
  const a = installAgent("v1");
  a.snapshot({ refStart: 1 });
  assert.equal(a.snapshot({ rootRef: "@e3" }).text, '[textbox "Name" @e3 required focused value="Ada"]');
  // a heading: find hands out a ref for its line, and --ref on it gives its section
  const hit = /^## Second @e(\d+)$/m.exec(a.find("second").text);
  assert.ok(hit);
  assert.equal(a.resolve(hit[1]).localName, "h2");
  assert.equal(a.snapshot({ rootRef: hit[1] }).text, "## Second\nTail text.");
  // the truncation notice hands out refs for the sections it names
  const cut = a.snapshot({ maxTokens: 40 });
  assert.ok(cut.truncated);
  const main = cut.truncated.sections.find((/** @type {any} */ s) => s.text === "--- main");
  assert.equal(a.resolve(main.ref).localName, "main");
  // errors
  const go = a.resolve("e4");
  go.remove();
  assert.deepEqual(a.snapshot({ rootRef: "e4" }).error.reason, "ref_stale");
  assert.deepEqual(a.snapshot({ rootRef: "e9999" }).error.reason, "ref_not_found");
  assert.deepEqual(a.snapshot({ rootRef: "nonsense" }).error.reason, "ref_not_found");
  a.resolve("e1").css.display = "none";
  assert.deepEqual(a.snapshot({ rootRef: "e1" }).error.reason, "element_not_visible");
});

test("interactive mode and find go through the same refs", () => {
  const a = installAgent("v1");
  const i = a.snapshot({ mode: "interactive", refStart: 1 });
  assert.equal(
    i.text,
    [
      '--- navigation "Site"',
      "[Home @e1] [Docs @e2]",
      "--- main",
      "# Welcome",
      '--- form "Signup"',
      '[textbox "Name" @e3 required focused value="Ada"] [button "Go" @e4]',
      '--- /form',
      '[clickable "Card inner" @e5]',
      "## Second",
    ].join("\n"),
  );
  const f = a.find("tail");
  assert.equal(f.matches, 1);
  const [head, lm, h, hit] = f.text.split("\n");
  assert.equal(head, '1 match for "tail":');
  assert.equal(lm, "--- main");
  assert.equal(h, "## Second");
  const ref = +(/** @type {RegExpMatchArray} */ (/^Tail text\. @e(\d+)$/.exec(hit)))[1];
  assert.equal(a.resolve(ref).localName, "p");
});

test("open shadow DOM is walked with slots filled; same-origin frames inline; cross-origin frames listed", () => {
  const doc = fakeDocument();
  const { h } = doc;
  const host = h("fancy-field", {}, h("span", { slot: "hint" }, "Hint text"), h("span", {}, "not slotted"));
  const slot = h("slot", { name: "hint" }, "fallback");
  slot.hostOf = host;
  const shadow = { isShadowRoot: true, nodeType: 11, childNodes: /** @type {any[]} */ ([]), get firstChild() { return this.childNodes[0] ?? null; } };
  for (const n of [h("button", {}, "Inside"), slot]) {
    n.parentNode = shadow;
    shadow.childNodes.push(n);
  }
  host.shadowRoot = shadow;

  const child = fakeDocument("http://test.local/child.html");
  child.body.append(child.h("p", {}, "Child text ", child.h("button", {}, "Apply")));
  const same = h("iframe", { title: "Child", props: { contentDocument: child, src: "child.html" } });
  const cross = h("iframe", { title: "Ads", props: { contentDocument: null, src: "https://ads.example/x" } });
  doc.body.append(host, same, cross);
  usePage(doc);
  const r = installAgent("v1").snapshot({ refStart: 1 });
  assert.equal(
    r.text,
    ['[button "Inside" @e1]Hint text', '--- iframe "Child" @e2', 'Child text [button "Apply" @e3]', "--- /iframe", '[iframe "Ads" @e4]'].join("\n"),
  );
  assert.deepEqual(JSON.parse(JSON.stringify(r.frames)), [{ ref: "e4", name: "Ads", src: "https://ads.example/x" }]);
  const a = installAgent("v1");
  assert.equal(a.resolve("e3").ownerDocument, child);
  assert.equal(a.resolve("e1").parentNode, shadow);
});

test("truncation: default budget 12000, the notice names the sections left out with refs", () => {
  const doc = fakeDocument();
  const { h } = doc;
  for (let s = 1; s <= 30; s++) {
    doc.body.append(h("h2", {}, `Part ${s}`), h("p", {}, `Words of part ${s}. `.repeat(300)));
  }
  usePage(doc);
  const a = installAgent("v1");
  const r = a.snapshot({});
  assert.ok(r.truncated);
  assert.ok(r.stats.tokens <= 12000);
  assert.ok(r.text.endsWith("or save all with --out FILE.]"));
  const full = a.snapshot({ maxTokens: 0 });
  assert.equal(full.truncated, null);
  assert.ok(full.stats.tokens > 20000);
});

test("the composed page source is self-contained: it runs in a fresh realm and gives the same text", () => {
  const doc = samplePage();
  const direct = (usePage(doc), installAgent("x").snapshot({ refStart: 1 }).text);
  const realm = vm.createContext({ document: doc, location: doc.location, window: doc.defaultView, performance });
  const r = vm.runInContext(snapshotExpression({ refStart: 1 }), realm);
  assert.equal(r.text, direct);
  const agent = vm.runInContext(pageAgentSource(), realm);
  assert.equal(vm.runInContext(pageAgentSource(), realm), agent, "a second evaluation returns the installed agent");
  assert.equal(agent.resolve("e3").localName, "input");
});

test("viewport mode leaves out blocks outside the viewport", () => {
  const doc = fakeDocument();
  const { h } = doc;
  doc.body.append(h("p", {}, "On screen ", h("a", { href: "a" }, "here")), h("p", { css: { top: "5000" } }, "Far below ", h("a", { href: "b" }, "there")));
  usePage(doc);
  const a = installAgent("v1");
  assert.equal(a.snapshot({ viewportOnly: true, refStart: 1 }).text, "On screen [here @e1]");
  assert.equal(a.snapshot({}).text, "On screen [here @e1]\nFar below [there @e2]");
});

test("clickable headings keep their level; media with controls get refs; labels are not repeated", () => {
  const doc = fakeDocument();
  const { h } = doc;
  doc.body.append(
    h("h3", { css: { cursor: "pointer" } }, "Accordion"),
    h("video", { controls: "", title: "Intro", css: { display: "block" } }),
    h("p", {}, h("label", {}, h("input", { type: "checkbox", checked: "" }), " Remember me")),
  );
  usePage(doc);
  assert.equal(
    installAgent("v1").snapshot({ refStart: 1 }).text,
    '### [clickable "Accordion" @e1]\n[video "Intro" @e2]\n[checkbox "Remember me" @e3 checked]',
  );
});
