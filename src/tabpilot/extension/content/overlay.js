// @ts-check
// What the person sees in a page the agent works in: a small badge (the session, what the agent is doing,
// Stop), the input shield while an action runs, the borrow prompt and the help panel. The content
// script of every http(s) page's top frame (a classic script: MV3 content scripts are not modules);
// person/overlay.js is its service-worker side. It stays idle in pages no session uses.
//
// The UI lives in a closed shadow root on one host element carrying `data-tabpilot-overlay`: page
// scripts cannot reach into it, and the agent's snapshots, text, html and hit tests leave it out.
// Every input event is looked at first here, on the window in the capture phase (registered at
// document_start, before any page script): events aimed at the overlay are handled here and hidden from
// the page; while the shield is up, the person's pointer and keys are swallowed, except during the
// agent's own gestures, for which the worker opens the shield ("pass") and closes it again.
(() => {
  if (window.top !== window) return;

  const HOST_TAG = "tabpilot-overlay";
  /** Buttons of a prompt take clicks only after this long on screen, so a click meant for the page cannot land on Allow. */
  const ARM_MS = 600;
  /** Half the side of the square the shield leaves free around the agent's pointer (its hover stays). */
  const HOLE_PX = 2;
  /**
   * The shield's boxes (which also cover iframes) come once an action has run this long; until then the
   * listeners below keep the person's input out of the page, at no cost to a quick action.
   */
  const SHIELD_BOXES_AFTER_MS = 100;
  const POINTER_EVENTS = [
    "pointerdown", "pointerup", "pointermove", "pointerover", "pointerout", "pointerenter", "pointerleave", "pointercancel",
    "mousedown", "mouseup", "mousemove", "mouseover", "mouseout", "mouseenter", "mouseleave",
    "click", "dblclick", "auxclick", "contextmenu", "wheel", "touchstart", "touchmove", "touchend", "touchcancel",
  ];
  const KEY_EVENTS = ["keydown", "keyup", "keypress"];

  /**
   * @typedef {{id: string, paused: boolean, activity: string}} Badge
   * @typedef {{x: number, y: number, width: number, height: number}} Rect
   * @typedef {{request_id: string, deadline: number, session_id: string, reason?: string, title?: string, prompt?: string, rects?: Rect[]}} Ask
   */
  const state = {
    /** @type {Badge | null} */ session: null,
    shield: false,
    /** The shield has been up long enough to draw its boxes. */
    shieldBoxes: false,
    passing: false,
    /** @type {{x: number, y: number} | null} */ hole: null,
    hidden: false,
    stopping: false,
    /** @type {Ask | null} */ borrow: null,
    /** @type {Ask | null} */ help: null,
    helpCollapsed: false,
    /** When the borrow prompt became visible to the person (arming its buttons). */
    borrowShownAt: 0,
  };

  /** @type {HTMLElement | null} */ let host = null;
  /** @type {ShadowRoot | null} */ let root = null;
  /** @type {ReturnType<typeof setInterval> | undefined} */ let ticker;
  /** @type {ReturnType<typeof setTimeout> | undefined} */ let boxesTimer;

  // ── Input: first look at every event ────────────────────────────────────────────────────────────────

  /** @param {Event} e */
  function onInput(e) {
    if (host && e.target === host) {
      // The overlay's own: handled here, never seen by the page (which could stop it on its way).
      e.stopImmediatePropagation();
      if (e.isTrusted) onOverlayInput(e);
      return;
    }
    if (state.shield && !state.passing && !state.help && e.isTrusted) {
      e.stopImmediatePropagation();
      if (e.cancelable) e.preventDefault();
    }
  }
  for (const type of [...POINTER_EVENTS, ...KEY_EVENTS]) window.addEventListener(type, onInput, { capture: true, passive: false });

  /** What the person did on the overlay: press a button (click, or Enter/Space on a focused one), type a note. @param {Event} e */
  function onOverlayInput(e) {
    if (!root) return;
    const me = /** @type {MouseEvent} */ (e);
    if (e.type === "click") {
      const el = root.elementFromPoint(me.clientX, me.clientY);
      const button = /** @type {HTMLElement | null} */ (el?.closest("[data-action]") ?? null);
      if (button) {
        e.preventDefault();
        press(button);
      }
      return;
    }
    if (e.type === "mousedown" || e.type === "pointerdown") {
      // Over the shield (not a control of ours): the page must not get it, nor its default action.
      const el = root.elementFromPoint(me.clientX, me.clientY);
      if (!el || el.closest(".shield")) e.preventDefault();
      return;
    }
    if (e.type === "wheel" || e.type === "contextmenu") {
      e.preventDefault();
      return;
    }
    if (e.type === "keydown") {
      const ke = /** @type {KeyboardEvent} */ (e);
      const focused = /** @type {HTMLElement | null} */ (root.activeElement);
      if (!focused) return;
      if (focused.localName === "input" && ke.key === "Enter") {
        e.preventDefault();
        const done = root.querySelector('[data-action="help-done"]');
        if (done) press(/** @type {HTMLElement} */ (done));
      } else if ((ke.key === "Enter" || ke.key === " ") && focused.dataset.action) {
        e.preventDefault();
        press(focused);
      }
    }
  }

  /** @param {HTMLElement} button */
  function press(button) {
    if (button.hasAttribute("disabled")) return;
    const action = button.dataset.action;
    if (action === "stop") {
      state.stopping = true;
      render();
      send({ kind: "overlay.stop" }).then(() => {
        state.stopping = false;
        render();
      });
    } else if (action === "resume") {
      send({ kind: "overlay.resume" });
    } else if (action === "allow" || action === "deny") {
      const ask = state.borrow;
      if (!ask || !armed()) return;
      state.borrow = null;
      render();
      send({ kind: "overlay.borrow_answer", request_id: ask.request_id, answer: action });
    } else if (action === "help-done" || action === "help-cancel") {
      const ask = state.help;
      if (!ask) return;
      const note = /** @type {HTMLInputElement | null} */ (root?.querySelector("input.note"))?.value ?? "";
      state.help = null;
      render();
      send({ kind: "overlay.help_answer", request_id: ask.request_id, outcome: action === "help-done" ? "continued" : "cancelled", note });
    } else if (action === "help-collapse") {
      state.helpCollapsed = !state.helpCollapsed;
      render();
    }
  }

  function armed() {
    return document.visibilityState === "visible" && state.borrowShownAt > 0 && Date.now() - state.borrowShownAt >= ARM_MS;
  }

  // ── Talking to the service worker ───────────────────────────────────────────────────────────────────

  /** @param {Record<string, unknown>} message @returns {Promise<any>} */
  function send(message) {
    try {
      return chrome.runtime.sendMessage(message).catch(() => null);
    } catch {
      // The extension was reloaded: this script is an orphan now.
      return Promise.resolve(null);
    }
  }

  chrome.runtime.onMessage.addListener((/** @type {any} */ message, /** @type {any} */ sender, /** @type {(r: unknown) => void} */ reply) => {
    if (sender?.id !== chrome.runtime.id || sender.tab) return false;
    reply(onWorker(message));
    return false;
  });

  /** @param {any} m */
  function onWorker(m) {
    switch (m?.kind) {
      case "ping":
        return { ok: true };
      case "state":
        state.session = m.session ?? null;
        if (!state.session) Object.assign(state, { shield: false, shieldBoxes: false, passing: false, hole: null });
        break;
      case "activity":
        if (state.session) state.session.activity = String(m.text ?? "");
        break;
      case "shield":
        Object.assign(state, { shield: m.on === true, shieldBoxes: false, passing: m.on === true && m.pass === true, hole: m.hole ?? state.hole });
        if (state.session && typeof m.activity === "string") state.session.activity = m.activity;
        clearTimeout(boxesTimer);
        if (state.shield) {
          boxesTimer = setTimeout(() => {
            state.shieldBoxes = state.shield;
            render();
          }, SHIELD_BOXES_AFTER_MS);
        }
        break;
      case "pass":
        Object.assign(state, { passing: m.open === true, hole: m.hole ?? state.hole });
        break;
      case "hide":
        state.hidden = m.hidden === true;
        break;
      case "borrow":
        showAsk("borrow", m.ask);
        break;
      case "help":
        showAsk("help", m.ask);
        break;
      case "help_rects":
        if (state.help && state.help.request_id === m.request_id) state.help.rects = Array.isArray(m.rects) ? m.rects : [];
        break;
      case "ask_end":
        if (state.borrow?.request_id === m.request_id) state.borrow = null;
        if (state.help?.request_id === m.request_id) state.help = null;
        break;
      default:
        return null;
    }
    render();
    return m.kind === "borrow" || m.kind === "help" ? { shown: !!host } : { ok: true };
  }

  /** @param {"borrow" | "help"} kind @param {Ask | null} ask */
  function showAsk(kind, ask) {
    if (!ask || typeof ask.request_id !== "string") return;
    if (state[kind]?.request_id === ask.request_id) return;
    state[kind] = ask;
    if (kind === "borrow") armLater();
    else state.helpCollapsed = false;
  }

  document.addEventListener("visibilitychange", () => {
    // A prompt in a background tab is armed only once the person can see it.
    if (state.borrow) armLater();
  });

  /** The borrow prompt's buttons take clicks ARM_MS after the person can see them (not before). */
  function armLater() {
    state.borrowShownAt = document.visibilityState === "visible" ? Date.now() : 0;
    if (state.borrowShownAt) setTimeout(tick, ARM_MS);
  }

  send({ kind: "overlay.hello" }).then((/** @type {any} */ r) => {
    if (!r) return;
    state.session = r.session ?? state.session;
    if (r.borrow) showAsk("borrow", r.borrow);
    if (r.help) showAsk("help", r.help);
    render();
  });

  // ── Drawing ─────────────────────────────────────────────────────────────────────────────────────────

  const CSS = `
    :host { all: initial; }
    * { box-sizing: border-box; font: 13px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    .strip { position: fixed; pointer-events: auto; cursor: progress; background: transparent; }
    .badge { position: fixed; left: 50%; bottom: 12px; transform: translateX(-50%); max-width: min(560px, calc(100vw - 24px));
      display: flex; align-items: center; gap: 8px; padding: 5px 6px 5px 12px; border-radius: 999px;
      background: rgba(28, 30, 34, .92); color: #f3f4f6; box-shadow: 0 2px 10px rgba(0,0,0,.25); pointer-events: auto; }
    .dot { flex: none; width: 8px; height: 8px; border-radius: 50%; background: #f97316; }
    .paused .dot { background: #9ca3af; }
    .text { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
    .name { font-weight: 600; }
    .doing { color: #d1d5db; }
    button { all: unset; cursor: pointer; padding: 4px 12px; border-radius: 999px; font-weight: 600; text-align: center; }
    button:focus-visible { outline: 2px solid #60a5fa; outline-offset: 1px; }
    button[disabled] { opacity: .5; cursor: default; }
    .stop { background: #dc2626; color: #fff; }
    .resume { background: #f3f4f6; color: #111827; }
    .card { position: fixed; width: min(400px, calc(100vw - 24px)); padding: 14px 16px; border-radius: 12px;
      background: #fff; color: #111827; box-shadow: 0 8px 30px rgba(0,0,0,.3); border: 1px solid #e5e7eb; pointer-events: auto; }
    .borrow { top: 16px; right: 16px; }
    .help { left: 50%; bottom: 56px; transform: translateX(-50%); }
    .card h1 { margin: 0 0 6px; font-size: 15px; font-weight: 700; }
    .card p { margin: 0 0 8px; white-space: pre-wrap; overflow-wrap: anywhere; }
    .muted { color: #6b7280; font-size: 12px; }
    .row { display: flex; gap: 8px; justify-content: flex-end; align-items: center; margin-top: 10px; }
    .row .muted { margin-right: auto; }
    .primary { background: #ea580c; color: #fff; }
    .secondary { background: #f3f4f6; color: #111827; }
    .head { display: flex; align-items: center; gap: 8px; }
    .head h1 { flex: 1; margin: 0; }
    .collapse { padding: 0 8px; color: #6b7280; }
    .help.collapsed .body { display: none; }
    input.note { all: unset; box-sizing: border-box; display: block; width: 100%; margin-top: 4px; padding: 6px 8px; border: 1px solid #d1d5db;
      border-radius: 6px; background: #fff; color: #111827; cursor: text; }
    .passing, .passing * { pointer-events: none !important; }
    .mark { position: fixed; border: 3px solid #f97316; border-radius: 4px; box-shadow: 0 0 0 4px rgba(249,115,22,.25);
      pointer-events: none; }
    @media (prefers-color-scheme: dark) {
      .card { background: #1f2937; color: #f9fafb; border-color: #374151; }
      .secondary { background: #374151; color: #f9fafb; }
      input.note { background: #111827; color: #f9fafb; border-color: #4b5563; }
    }
  `;

  /** @type {Record<string, HTMLElement>} */
  const parts = {};
  /** What each part was last drawn from: a part is redrawn only when that changes (a redrawn note field would lose the text being typed). */
  const drawn = /** @type {Record<string, string>} */ ({});
  const remount = new MutationObserver(() => {
    if (host && visible() && host.parentNode !== document.documentElement) mount();
  });

  function mount() {
    if (!host) {
      host = document.createElement(HOST_TAG);
      host.setAttribute("data-tabpilot-overlay", "");
      // Inline and important: the page's style sheets cannot hide or move it.
      host.style.cssText =
        "all: initial !important; display: block !important; position: fixed !important; top: 0 !important; left: 0 !important;" +
        " width: 0 !important; height: 0 !important; z-index: 2147483647 !important; pointer-events: none !important;";
      root = host.attachShadow({ mode: "closed" });
      const style = document.createElement("style");
      style.textContent = CSS;
      root.append(style);
      // Bottom to top: the shield under everything, the badge and prompts on top.
      for (const name of ["shield", "marks", "help", "borrow", "badge"]) root.append((parts[name] = document.createElement("div")));
    }
    const parent = document.documentElement;
    if (!parent) return false;
    if (host.parentNode !== parent) parent.append(host);
    // A page that rewrites <html> or its children takes the host with it: put it back.
    remount.observe(document, { childList: true });
    remount.observe(parent, { childList: true });
    return true;
  }

  function visible() {
    return !!(state.session || state.borrow || state.help || state.shield);
  }

  /**
   * @param {string} tag @param {Record<string, string>} [attrs] @param {(Node | string | null)[]} [children]
   * @returns {HTMLElement}
   */
  function el(tag, attrs = {}, children = []) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    for (const child of children) if (child !== null) node.append(child);
    return node;
  }

  /** @param {number} deadline */
  function left(deadline) {
    const s = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}` : `${s} s`;
  }

  function render() {
    if (!visible()) {
      host?.remove();
      remount.disconnect();
      clearInterval(ticker);
      ticker = undefined;
      return;
    }
    // Before <html> exists (document_start), wait for it.
    if (!mount() || !host) {
      document.addEventListener("DOMContentLoaded", render, { once: true });
      return;
    }
    // Only what changed is written: a write the page must restyle for costs the agent's next call into it.
    const visibility = state.hidden ? "hidden" : "visible";
    if (host.style.getPropertyValue("visibility") !== visibility) host.style.setProperty("visibility", visibility, "important");
    // During the agent's gesture the shield stays in place and only stops taking the pointer (a class:
    // no layout, no paint), so opening and closing it costs the page next to nothing.
    draw("shield", state.shieldBoxes && !state.help && [state.hole], () => shield());
    draw("marks", state.help && [state.help.request_id, state.help.rects], () => marks(/** @type {Ask} */ (state.help)));
    draw("help", state.help && [state.help.request_id, state.help.session_id, state.helpCollapsed], () => helpPanel(/** @type {Ask} */ (state.help)));
    draw("borrow", state.borrow && [state.borrow.request_id], () => borrowPrompt(/** @type {Ask} */ (state.borrow)));
    draw("badge", state.session && [state.session.id, state.session.paused, state.stopping], () => badge(/** @type {Badge} */ (state.session)));
    // What the agent does changes with every action: only that text is replaced.
    const doing = parts.badge.querySelector(".doing");
    const line = state.session ? ` — ${doingText(state.session)}` : "";
    if (doing && doing.textContent !== line) doing.textContent = line;
    // The agent's gesture goes through everything, the badge included.
    const passing = state.passing ? "passing" : "";
    for (const part of Object.values(parts)) if (part.className !== passing) part.className = passing;
    if (state.help) positionMarks();
    // Countdowns tick while something is asked.
    if ((state.borrow || state.help) && ticker === undefined) ticker = setInterval(tick, 1000);
    if (!state.borrow && !state.help && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
  }

  /**
   * Redraw one part when what it shows changed. @param {string} name
   * @param {unknown} inputs falsy: the part is empty @param {() => HTMLElement | HTMLElement[]} build
   */
  function draw(name, inputs, build) {
    const key = inputs ? JSON.stringify(inputs) : "";
    if (drawn[name] === key) return;
    drawn[name] = key;
    const built = key ? build() : [];
    parts[name].replaceChildren(...(Array.isArray(built) ? built : [built]));
  }

  /** Refresh only the countdowns and the arming (a full render would reset what the person is typing). */
  function tick() {
    if (!root) return;
    for (const node of root.querySelectorAll("[data-deadline]")) {
      node.textContent = node.getAttribute("data-prefix") + left(Number(node.getAttribute("data-deadline")));
    }
    for (const button of root.querySelectorAll(".borrow button")) button.toggleAttribute("disabled", !armed());
    positionMarks();
  }

  /** The whole viewport, but for a little square around the agent's pointer: four plain boxes (cheap to hit test). */
  function shield() {
    const div = el("div", { class: "shield" });
    if (!state.hole) {
      div.append(el("div", { class: "strip", style: "inset: 0" }));
      return div;
    }
    const { x, y } = state.hole;
    const [x0, y0, x1, y1] = [x - HOLE_PX, y - HOLE_PX, x + HOLE_PX, y + HOLE_PX];
    for (const style of [
      `left: 0; right: 0; top: 0; height: ${y0}px`,
      `left: 0; right: 0; top: ${y1}px; bottom: 0`,
      `left: 0; width: ${x0}px; top: ${y0}px; height: ${y1 - y0}px`,
      `left: ${x1}px; right: 0; top: ${y0}px; height: ${y1 - y0}px`,
    ]) {
      div.append(el("div", { class: "strip", style }));
    }
    return div;
  }

  /** @param {Badge} s */
  function doingText(s) {
    return s.paused ? "stopped — the agent waits for you" : state.help ? "waiting for your help" : s.activity || "working in this tab";
  }

  /** @param {Badge} s */
  function badge(s) {
    const button = s.paused
      ? el("button", { class: "resume", "data-action": "resume", title: "Let the agent carry on" }, ["Resume"])
      : el("button", { class: "stop", "data-action": "stop", title: "Stop the agent now" }, [state.stopping ? "Stopping…" : "Stop"]);
    if (state.stopping) button.setAttribute("disabled", "");
    return el("div", { class: s.paused ? "badge paused" : "badge", role: "status" }, [
      el("span", { class: "dot" }),
      el("span", { class: "text" }, [el("span", { class: "name" }, [`tabpilot · ${s.id}`]), el("span", { class: "doing" })]),
      button,
    ]);
  }

  /** @param {number} deadline @param {string} prefix */
  function countdown(deadline, prefix) {
    return el("span", { class: "muted", "data-deadline": String(deadline), "data-prefix": prefix }, [prefix + left(deadline)]);
  }

  /** @param {Ask} ask */
  function borrowPrompt(ask) {
    const allow = el("button", { class: "primary", "data-action": "allow" }, ["Allow"]);
    const deny = el("button", { class: "secondary", "data-action": "deny" }, ["Deny"]);
    if (!armed()) for (const b of [allow, deny]) b.setAttribute("disabled", "");
    return el("div", { class: "card borrow", role: "alertdialog", "aria-label": "tabpilot asks to borrow this tab" }, [
      el("h1", {}, ["An agent asks to use this tab"]),
      el("p", {}, ["Session ", el("b", {}, [ask.session_id]), " of tabpilot wants to borrow this tab. It moves to the agent's window until it is given back."]),
      ask.reason ? el("p", {}, ["Why: ", el("i", {}, [`“${ask.reason}”`])]) : null,
      el("div", { class: "row" }, [countdown(ask.deadline, "No answer means no · "), deny, allow]),
    ]);
  }

  /** @param {Ask} ask */
  function helpPanel(ask) {
    const note = /** @type {HTMLInputElement} */ (el("input", { class: "note", type: "text", placeholder: "A note for the agent (optional)", "aria-label": "Note for the agent" }));
    const typed = /** @type {HTMLInputElement | null} */ (root?.querySelector("input.note"));
    if (typed) note.value = typed.value;
    return el("div", { class: state.helpCollapsed ? "card help collapsed" : "card help", role: "dialog", "aria-label": "tabpilot asks for your help" }, [
      el("div", { class: "head" }, [
        el("h1", {}, [ask.title || "The agent needs your help"]),
        el("button", { class: "collapse", "data-action": "help-collapse", title: state.helpCollapsed ? "Expand" : "Collapse" }, [state.helpCollapsed ? "▴" : "▾"]),
      ]),
      el("div", { class: "body" }, [
        el("p", { class: "muted" }, [`Session ${ask.session_id} of tabpilot`]),
        el("p", {}, [ask.prompt ?? ""]),
        note,
      ]),
      el("div", { class: "row" }, [
        countdown(ask.deadline, "Time left · "),
        el("button", { class: "secondary", "data-action": "help-cancel" }, ["Cancel"]),
        el("button", { class: "primary", "data-action": "help-done" }, ["Done"]),
      ]),
    ]);
  }

  /** Highlight boxes around the targets the agent named. @param {Ask} ask */
  function marks(ask) {
    return (ask.rects ?? []).map((r) => {
      const mark = el("div", { class: "mark" });
      mark.dataset.rect = JSON.stringify(r);
      return mark;
    });
  }

  /** Highlight boxes follow the page as it scrolls (their rects are in page coordinates). */
  function positionMarks() {
    if (!root) return;
    for (const node of root.querySelectorAll(".mark")) {
      const mark = /** @type {HTMLElement} */ (node);
      const r = JSON.parse(mark.dataset.rect ?? "{}");
      Object.assign(mark.style, { left: `${r.x - scrollX - 4}px`, top: `${r.y - scrollY - 4}px`, width: `${r.width + 8}px`, height: `${r.height + 8}px` });
    }
  }
  window.addEventListener("scroll", () => state.help && positionMarks(), { capture: true, passive: true });
})();
