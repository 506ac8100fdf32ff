// @ts-check
// The in-page snapshot agent: installed once per document (in the extension's isolated world), it keeps
// the ref ↔ element maps and answers snapshot / find / resolve / status / locate / adopt, and takes what the extension
// learns through CDP (click listeners, closed shadow roots).
//
// installAgent is sent to the page as source text (see agent-source.js); inside it the walker and the
// renderer are referred to by their names, which the composed source defines. The imports below only
// serve type checking and the node tests, which run the same function against a fake document.
import { walkDocument } from "./walk.js";
import { layoutSnapshot, finishSnapshot, findInLayout } from "./render.js";

/**
 * @typedef {{mode?: "full" | "interactive", maxTokens?: number, rootRef?: string | number | null,
 *            viewportOnly?: boolean, urls?: boolean, refStart?: number}} SnapshotOptions
 * @typedef {{reason: "ref_not_found" | "ref_stale" | "element_not_visible", message: string}} AgentError
 */

/**
 * Installs the agent on the global object under Symbol.for("tabpilot.snapshot") (non-enumerable) and
 * returns it; a second call with the same version returns the installed agent. A newer version
 * replaces the functions but keeps the ref store, so refs stay stable across extension updates.
 * @param {string} version
 */
export function installAgent(version) {
  const KEY = Symbol.for("tabpilot.snapshot");
  const g = /** @type {any} */ (globalThis);
  const old = g[KEY];
  if (old && old.version === version) return old;
  /**
   * @type {{map: WeakMap<Element, number>, refs: Map<number, WeakRef<Element>>, next: number, ranges: number[][],
   *   listened: WeakSet<Element>, docListened: boolean, heardIds: Set<number>, roots: WeakMap<Element, ShadowRoot>,
   *   probed: WeakSet<Element>, roles: WeakMap<Element, string>, pending: Element[], closed: ShadowRoot[], added: Node[] | null,
   *   watch?: MutationObserver, watched: WeakSet<Node>}}
   */
  const store = old && old.store ? old.store : { map: new WeakMap(), refs: new Map(), next: 1, ranges: [] };
  store.listened ??= new WeakSet();
  store.docListened ??= false;
  store.heardIds ??= new Set();
  store.roots ??= new WeakMap();
  store.probed ??= new WeakSet();
  store.roles ??= new WeakMap();
  store.pending ??= [];
  store.closed ??= [];
  store.added ??= null;
  store.watched ??= new WeakSet();
  const DEFAULT_MAX_TOKENS = 12000;

  /** "@e12", "e12", "12" or 12 → 12; anything else → null. @param {unknown} ref */
  function parseRef(ref) {
    if (typeof ref === "number") return Number.isInteger(ref) && ref > 0 ? ref : null;
    if (typeof ref !== "string") return null;
    const m = /^@*e?(\d+)$/i.exec(ref.trim());
    return m ? +m[1] : null;
  }
  /** @param {number} n */
  function issued(n) {
    for (const [a, b] of store.ranges) if (n >= a && n < b) return true;
    return false;
  }
  /**
   * live: the element is attached; stale: this document gave the ref out but the element is gone;
   * unknown: not a ref of this document (another frame's, an earlier document's, or never given).
   * @param {unknown} ref
   * @returns {{element: Element | null, status: "live" | "stale" | "unknown", ref: number | null}}
   */
  function lookup(ref) {
    const n = parseRef(ref);
    if (n == null) return { element: null, status: "unknown", ref: null };
    const weak = store.refs.get(n);
    const el = weak ? weak.deref() : undefined;
    if (el && el.isConnected) return { element: el, status: "live", ref: n };
    if (weak || issued(n)) return { element: null, status: "stale", ref: n };
    return { element: null, status: "unknown", ref: n };
  }
  /** @param {unknown} ref */
  function resolve(ref) {
    return lookup(ref).element;
  }
  /** @param {unknown} ref */
  function status(ref) {
    return lookup(ref).status;
  }
  /** A ref for any element (headings in the notice, blocks in find). @param {Element} el */
  function refFor(el) {
    let n = store.map.get(el);
    if (n === undefined) {
      n = store.next++;
      store.map.set(el, n);
      store.refs.set(n, new WeakRef(el));
    }
    return n;
  }
  /**
   * A ref for an element the agent named another way (a CSS selector, text=), booked like a snapshot's,
   * so a snapshot can start there. @param {Element} el @param {number} [refStart]
   */
  function adopt(el, refStart) {
    const start = begin(refStart);
    const ref = refFor(el);
    end(start);
    return { ref, nextRef: store.next };
  }
  /** @param {number | undefined} refStart */
  function begin(refStart) {
    if (typeof refStart === "number" && refStart > store.next) store.next = Math.floor(refStart);
    return store.next;
  }
  /** Records the refs given out since `start`, and forgets elements that were collected. @param {number} start */
  function end(start) {
    if (store.next > start) {
      const last = store.ranges[store.ranges.length - 1];
      if (last && last[1] === start) last[1] = store.next;
      else store.ranges.push([start, store.next]);
    }
    if (store.refs.size > 20000) {
      for (const [n, w] of store.refs) if (!w.deref()) store.refs.delete(n);
    }
  }
  /** @param {string} reason @param {string} message @param {number} start */
  function failure(reason, message, start) {
    end(start);
    return { error: { reason, message }, nextRef: store.next };
  }
  /**
   * Where to start: the body, an element, or (for a heading) the body with the heading's section cut out.
   * @param {SnapshotOptions} opts @param {number} start
   */
  function rootOf(opts, start) {
    if (opts.rootRef == null || opts.rootRef === "") {
      const body = document.body || document.documentElement;
      return { root: body, heading: null };
    }
    const found = lookup(opts.rootRef);
    if (!found.element) {
      const what = found.ref == null ? `${opts.rootRef} is not a ref` : `@e${found.ref}`;
      return found.status === "stale"
        ? { fail: failure("ref_stale", `${what} is gone from the page`, start) }
        : { fail: failure("ref_not_found", `${what} is not on this page`, start) };
    }
    const el = found.element;
    const any = /** @type {any} */ (el);
    if (typeof any.checkVisibility === "function" && !any.checkVisibility({ visibilityProperty: true })) {
      return { fail: failure("element_not_visible", `@e${found.ref} is hidden`, start) };
    }
    const tag = el.localName;
    const isHeading = /^h[1-6]$/.test(tag) || el.getAttribute("role") === "heading";
    if (isHeading) {
      const doc = el.ownerDocument;
      return { root: doc.body || doc.documentElement, heading: el };
    }
    return { root: el, heading: null };
  }

  /** @param {SnapshotOptions} [options] */
  function snapshot(options) {
    const opts = options || {};
    const t0 = performance.now();
    const start = begin(opts.refStart);
    const where = rootOf(opts, start);
    if (where.fail) return where.fail;
    const w = walkDocument(/** @type {Element} */ (where.root), { viewportOnly: !!opts.viewportOnly }, store);
    store.pending = w.hosts;
    const t1 = performance.now();
    let sectionOf = null;
    if (where.heading) {
      sectionOf = w.els.indexOf(where.heading);
      if (sectionOf < 0) return failure("element_not_visible", `@e${parseRef(opts.rootRef)} is not rendered`, start);
    }
    const maxTokens = opts.maxTokens == null ? DEFAULT_MAX_TOKENS : opts.maxTokens;
    const mode = opts.mode === "interactive" ? "interactive" : "full";
    const layout = layoutSnapshot(w.ir, { mode, urls: !!opts.urls });
    const out = finishSnapshot(layout, { maxTokens, sectionOf, refOf: (i) => refFor(w.els[i]) });
    const t2 = performance.now();
    end(start);
    const body = out.truncated ? out.text.slice(0, out.text.lastIndexOf("\n[… cut")) : out.text;
    const refCount = (body.match(/@e\d+/g) || []).length;
    return {
      text: out.text,
      refCount,
      nextRef: store.next,
      truncated: out.truncated,
      frames: w.frames,
      hosts: w.hosts.length,
      url: location.href,
      title: document.title,
      stats: {
        walkMs: Math.round((t1 - t0) * 10) / 10,
        renderMs: Math.round((t2 - t1) * 10) / 10,
        elements: w.stats.elements,
        lines: out.lines,
        chars: out.text.length,
        tokens: out.tokens,
        totalTokens: out.totalTokens,
      },
    };
  }

  /**
   * Lines of the full snapshot that contain `text`, each with a ref and its landmark/heading.
   * @param {string} text @param {SnapshotOptions & {maxMatches?: number}} [options]
   */
  function find(text, options) {
    const opts = options || {};
    const t0 = performance.now();
    const start = begin(opts.refStart);
    const where = rootOf(opts, start);
    if (where.fail) return where.fail;
    const w = walkDocument(/** @type {Element} */ (where.root), { viewportOnly: !!opts.viewportOnly }, store);
    store.pending = w.hosts;
    const layout = layoutSnapshot(w.ir, { mode: "full", urls: !!opts.urls });
    const out = findInLayout(layout, String(text ?? ""), { maxMatches: opts.maxMatches, refOf: (i) => refFor(w.els[i]) });
    end(start);
    return {
      text: out.text,
      matches: out.matches,
      nextRef: store.next,
      frames: w.frames,
      hosts: w.hosts.length,
      stats: { ms: Math.round((performance.now() - t0) * 10) / 10 },
    };
  }

  /**
   * The element's box in the top-level viewport's CSS pixels (adds the offsets of same-origin frames).
   * @param {unknown} ref
   */
  function locate(ref) {
    const el = resolve(ref);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    let x = r.left, y = r.top;
    let win = el.ownerDocument.defaultView;
    for (let guard = 0; win && win !== win.parent && guard < 16; guard++) {
      const frame = win.frameElement;
      if (!frame) break; // cross-origin parent: coordinates are relative to this frame
      const fr = frame.getBoundingClientRect();
      const fs = /** @type {Window} */ (frame.ownerDocument.defaultView).getComputedStyle(frame);
      x += fr.left + parseFloat(fs.borderLeftWidth) + parseFloat(fs.paddingLeft);
      y += fr.top + parseFloat(fs.borderTopWidth) + parseFloat(fs.paddingTop);
      win = frame.ownerDocument.defaultView;
    }
    return { x, y, width: r.width, height: r.height };
  }

  /**
   * What the extension should read click listeners from (through CDP: the page's own world is out of
   * the agent's reach), else null: the first time, the whole document — with its open shadow roots,
   * same-origin frame documents and the closed roots adopted —, and after that only the elements
   * added since (new elements bring their listeners), with the roots inside them. The whole document
   * again when it was still loading (its listeners may yet come), after more than MAX_ADDED additions,
   * or when `force`d.
   * @param {boolean} [force]
   * @returns {(Node)[] | null}
   */
  function listenRoots(force) {
    const MAX_ADDED = 200;
    if (!store.watch) {
      store.watch = new MutationObserver((records) => {
        const added = store.added;
        if (added === null) return;
        for (const r of records) {
          for (const n of r.addedNodes) {
            if (n.nodeType !== 1) continue;
            if (added.length >= MAX_ADDED) {
              store.added = null;
              return;
            }
            added.push(n);
          }
        }
      });
      store.watch.observe(document, { childList: true, subtree: true });
    }
    const watch = store.watch;
    const added = force ? null : store.added;
    store.added = document.readyState === "complete" ? [] : null;
    /** @type {Node[]} */
    let roots;
    if (added === null) roots = [document, ...store.closed];
    else if (!added.length) return null;
    // (an element inside another added one is read with it)
    else roots = added.filter((n) => n.isConnected && !added.some((m) => m !== n && m.contains(n)));
    /** @param {Element} el */
    const inner = (el) => {
      /** @type {Document | ShadowRoot | null} */
      let root = el.shadowRoot;
      if (!root && (el.localName === "iframe" || el.localName === "frame")) {
        try {
          root = /** @type {HTMLIFrameElement} */ (el).contentDocument;
        } catch {
          root = null;
        }
      }
      if (!root) return;
      roots.push(root);
      if (!store.watched.has(root)) {
        store.watched.add(root);
        watch.observe(root, { childList: true, subtree: true });
      }
    };
    for (let i = 0; i < roots.length && roots.length < 2000; i++) {
      const r = /** @type {Element | Document | ShadowRoot} */ (roots[i]);
      if (r.nodeType === 1) inner(/** @type {Element} */ (r));
      for (const el of r.querySelectorAll("*")) inner(el);
    }
    return roots;
  }
  /**
   * Click listeners, as the extension reads them: which of these backend node ids are new to this document.
   * @param {number[]} ids
   */
  function unheard(ids) {
    return ids.filter((id) => !store.heardIds.has(id));
  }
  /**
   * The elements behind new listener ids: a listener on the document, its root or its body delegates
   * for everything; elsewhere the element is a target of its own.
   * @param {number[]} ids @param {(Node | null)[]} nodes
   */
  function heard(ids, nodes) {
    for (const id of ids) store.heardIds.add(id);
    for (const n of nodes) {
      if (!n) continue;
      const doc = n.ownerDocument;
      if (n.nodeType === 9 || !doc || n === doc.documentElement || n === doc.body) store.docListened = true;
      else if (n.nodeType === 1) store.listened.add(/** @type {Element} */ (n));
    }
  }
  /** The likely hosts of a closed shadow root the last walk met (the extension asks CDP for one). */
  function takeHosts() {
    const hosts = store.pending;
    store.pending = [];
    return hosts;
  }
  /** `this` = a host: its closed shadow root, reached through CDP. @this {Element} @param {ShadowRoot} root */
  function adoptRoot(root) {
    store.roots.set(this, root);
    store.closed.push(root);
    store.added?.push(root);
  }

  const agent = { version, store, snapshot, find, resolve, status, locate, parseRef, adopt, listenRoots, unheard, heard, takeHosts, adoptRoot };
  Object.defineProperty(g, KEY, { value: agent, configurable: true, enumerable: false, writable: true });
  return agent;
}
