// @ts-check
// What the person sees in a page the agent works in: a small badge (the session, what the agent is doing,
// Stop), the input shield while an action runs, the borrow prompt, the help panel and approval cards. The content
// script of every http(s) page's top frame (a classic script: MV3 content scripts are not modules);
// person/overlay.js is its service-worker side. It stays idle in pages no session uses.
//
// The UI lives in a closed shadow root on one host element carrying `data-tabpilot-overlay`: page
// scripts cannot reach into it, and the agent's snapshots, text, html and hit tests leave it out. The
// page can still style, cover, move or remove that host: the host's own style is put back whenever the
// page touches it, it is kept in the top layer above the page's own modal dialogs, popovers and fullscreen
// element (content/top-layer.js), and the borrow prompt and the help panel are not drawn here at all but are this
// extension's page (prompt/prompt.html) in a frame, which takes a click only while the browser reports
// it fully visible and unobscured and drawn at its natural size (content/drawn.js measures that here and
// tells the frame and the worker), and re-arms its delay whenever it was moved or its host touched (this
// script tells it so).
// Every input event is looked at first here, on the window in the capture phase (registered at
// document_start, before any page script): events aimed at the overlay are handled here and hidden from
// the page; while the shield is up, the person's pointer and keys are swallowed, except during the
// agent's own gestures, for which the worker opens the shield ("pass") and closes it again.
(() => {
  if (window.top !== window) return;

  const HOST_TAG = "tabpilot-overlay";
  /** Inline and important: the page's style sheets cannot hide or move the host (and inline changes are put back). */
  const HOST_STYLE =
    "all: initial !important; display: block !important; position: fixed !important; top: 0 !important; left: 0 !important;" +
    " width: 0 !important; height: 0 !important; z-index: 2147483647 !important; pointer-events: none !important;" +
    " opacity: 1 !important; transform: none !important; filter: none !important; clip-path: none !important;";
  const PROMPT_PAGE = chrome.runtime.getURL("prompt/prompt.html");
  /** The host's own attributes; any other the page sets is taken off. */
  const HOST_ATTRIBUTES = ["style", "data-tabpilot-overlay", "popover"];
  /** content/drawn.js, loaded before this script. @type {{shrunk(frame: HTMLElement): string | null}} */
  const drawnSize = /** @type {any} */ (globalThis).tabpilotDrawn;
  /** content/top-layer.js, loaded before this script. @type {{keepOnTop(host: HTMLElement, rehome: () => void): {raise(): void, home(): Element | null}}} */
  const topLayer = /** @type {any} */ (globalThis).tabpilotTopLayer;
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
  /** The questions drawn as prompt frames, and how the frame is titled for each. @typedef {"borrow" | "help" | "approve"} AskKind */
  /** @type {AskKind[]} */
  const ASK_KINDS = ["borrow", "help", "approve"];
  /** The port held open to the worker while the person is asked: it closes when the worker stops. */
  const WATCH_PORT = "overlay.watch";
  /** How long the line saying why a question went stays up. */
  const NOTICE_MS = 15_000;
  const STALE_NOTICE =
    "tabpilot took back the question that was here: the extension restarted and no longer waits for its answer. Nothing was allowed.";
  const PROMPT_TITLES = { borrow: "tabpilot asks to borrow this tab", help: "tabpilot asks for your help", approve: "tabpilot asks before an agent's action" };

  /**
   * @typedef {{id: string, paused: boolean, activity: string}} Badge
   * @typedef {{x: number, y: number, width: number, height: number}} Rect
   * @typedef {{request_id: string, token: string, deadline: number, session_id: string, reason?: string, title?: string, prompt?: string, rects?: Rect[]}} Ask
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
    /** @type {Ask | null} */ approve: null,
    /** A line for the person: why a question went away. @type {string | null} */ notice: null,
  };
  /** Each prompt frame's height, as the frame reports it (its content decides). @type {Record<string, number>} */
  const promptHeights = {};

  /** @type {HTMLElement | null} */ let host = null;
  /** @type {ShadowRoot | null} */ let root = null;
  /** Puts the host back on top of the page's top layer; where it must live (under <html>, or in the page's modal dialog). */
  let onTop = { raise() {}, home: () => /** @type {Element | null} */ (document.documentElement) };
  /** Where the host lives, as the remount observer watches it. @type {Element | null} */ let watchedParent = null;
  /** @type {ReturnType<typeof setInterval> | undefined} */ let ticker;
  /** @type {number | undefined} */ let watching;
  /** @type {ReturnType<typeof setTimeout> | undefined} */ let boxesTimer;
  /** @type {ReturnType<typeof setTimeout> | undefined} */ let noticeTimer;
  /** Open while the person is asked; see watchWorker. @type {chrome.runtime.Port | null} */ let watch = null;

  // ── Input: first look at every event ────────────────────────────────────────────────────────────────

  /** @param {Event} e */
  function onInput(e) {
    if (host && e.target === host) {
      // The overlay's own: handled here, never seen by the page (which could stop it on its way).
      e.stopImmediatePropagation();
      if (e.isTrusted) onOverlayInput(e);
      return;
    }
    // While the person is asked (help, an approval card) the page is theirs.
    if (state.shield && !state.passing && !state.help && !state.approve && e.isTrusted) {
      e.stopImmediatePropagation();
      if (e.cancelable) e.preventDefault();
    }
  }
  for (const type of [...POINTER_EVENTS, ...KEY_EVENTS]) window.addEventListener(type, onInput, { capture: true, passive: false });

  /** What the person did on the overlay: press a button (click, or Enter/Space on a focused one). @param {Event} e */
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
      if (focused?.dataset.action && (ke.key === "Enter" || ke.key === " ")) {
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
    }
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
    if (sender?.id !== chrome.runtime.id) return false;
    if (typeof sender.url === "string" && sender.url.startsWith(PROMPT_PAGE)) {
      if (message?.kind === "prompt_size") promptSized(message);
      return false;
    }
    if (sender.tab) return false;
    reply(onWorker(message));
    return false;
  });

  /**
   * A prompt frame says how tall its content is. It is listening now: the next look at the frames tells
   * it again how it is drawn (in order with every later word on that, on the one channel they share).
   * @param {any} m
   */
  function promptSized(m) {
    const kind = ASK_KINDS.find((k) => state[k]?.token === m.token) ?? null;
    if (kind === null || typeof m.height !== "number" || !Number.isFinite(m.height)) return;
    promptHeights[kind] = Math.min(Math.max(0, Math.ceil(m.height)), 2000);
    const frame = /** @type {HTMLIFrameElement | undefined} */ (parts[kind]?.querySelector("iframe"));
    if (!frame) return;
    frame.style.height = `${promptHeights[kind]}px`;
    promptSizes.delete(frame);
  }

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
      case "approve":
        showAsk("approve", m.ask);
        break;
      case "help_rects":
        if (state.help && state.help.request_id === m.request_id) state.help.rects = Array.isArray(m.rects) ? m.rects : [];
        break;
      case "ask_end":
        if (state.borrow?.request_id === m.request_id) state.borrow = null;
        if (state.help?.request_id === m.request_id) state.help = null;
        if (state.approve?.request_id === m.request_id) state.approve = null;
        break;
      default:
        return null;
    }
    render();
    return ASK_KINDS.includes(m.kind) ? { shown: !!host } : { ok: true };
  }

  /** @param {AskKind} kind @param {Ask | null} ask */
  function showAsk(kind, ask) {
    if (!ask || typeof ask.request_id !== "string" || typeof ask.token !== "string") return;
    if (state[kind]?.request_id === ask.request_id) return;
    state[kind] = ask;
  }

  /**
   * While the person is asked, hold a port to the worker. A worker that stops (the browser ends it, it
   * crashes, the extension updates) closes it, and a restarted worker knows none of the asks it had: what
   * it does not know any more is taken off the page at once, with a line that says why, rather than left
   * with an Allow that answers nothing.
   */
  function watchWorker() {
    const asked = ASK_KINDS.some((k) => state[k]);
    if (asked && !watch) {
      try {
        watch = chrome.runtime.connect({ name: WATCH_PORT });
      } catch {
        // The extension was reloaded: this script is an orphan, and its asks with it.
        dropUnknown(null);
        return;
      }
      watch.onDisconnect.addListener(() => {
        watch = null;
        void send({ kind: "overlay.hello" }).then(dropUnknown);
      });
    } else if (!asked && watch) {
      watch.disconnect();
      watch = null;
    }
  }

  /** Drop the asks the worker no longer has for this page. @param {any} known its hello (null: no worker answered) */
  function dropUnknown(known) {
    const stale = ASK_KINDS.filter((k) => state[k] && known?.[k]?.token !== state[k]?.token);
    if (stale.length === 0) return;
    for (const kind of stale) state[kind] = null;
    state.notice = STALE_NOTICE;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => {
      state.notice = null;
      render();
    }, NOTICE_MS);
    render();
  }

  send({ kind: "overlay.hello" }).then((/** @type {any} */ r) => {
    if (!r) return;
    state.session = r.session ?? state.session;
    if (r.borrow) showAsk("borrow", r.borrow);
    if (r.help) showAsk("help", r.help);
    if (r.approve) showAsk("approve", r.approve);
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
    .prompt { position: fixed; display: block; border: 0; margin: 0; padding: 0; height: 150px; width: min(400px, calc(100vw - 24px));
      border-radius: 12px; background: transparent; color-scheme: normal; box-shadow: 0 8px 30px rgba(0,0,0,.3); pointer-events: auto; }
    .prompt.borrow, .prompt.approve { top: 16px; right: 16px; }
    .prompt.help { left: 50%; bottom: 72px; transform: translateX(-50%); }
    .passing, .passing * { pointer-events: none !important; }
    .notice { position: fixed; top: 16px; right: 16px; width: min(400px, calc(100vw - 24px)); padding: 10px 14px;
      border-radius: 12px; background: #1f2937; color: #f9fafb; box-shadow: 0 8px 30px rgba(0,0,0,.3); pointer-events: auto; }
    .mark { position: fixed; border: 3px solid #f97316; border-radius: 4px; box-shadow: 0 0 0 4px rgba(249,115,22,.25);
      pointer-events: none; }
  `;

  /** @type {Record<string, HTMLElement>} */
  const parts = {};
  /** What each part was last drawn from: a part is redrawn only when that changes (a redrawn note field would lose the text being typed). */
  const drawn = /** @type {Record<string, string>} */ ({});
  const remount = new MutationObserver(() => {
    if (host && visible() && host.parentNode !== onTop.home()) {
      mount();
      promptsTouched();
    }
  });
  /** The page touched the host (its style, a class, `inert`, `popover`…): undo it, and the prompts re-arm. */
  const reassert = new MutationObserver(() => {
    if (!host) return;
    restyleHost();
    promptsTouched();
  });

  /** The host's style as the browser serialises it, for each visibility. @type {Record<string, string>} */
  const hostCss = {};

  function restyleHost() {
    if (!host) return;
    for (const name of host.getAttributeNames()) if (!HOST_ATTRIBUTES.includes(name)) host.removeAttribute(name);
    const visibility = state.hidden ? "hidden" : "visible";
    if (host.style.cssText !== hostCss[visibility]) {
      host.style.cssText = `${HOST_STYLE} visibility: ${visibility} !important;`;
      // As the browser writes it back, so the next comparison is exact.
      hostCss[visibility] = host.style.cssText;
    }
    // The page took it out of the top layer (its `popover` rewritten, hidePopover()): back on top.
    if (host.isConnected && !host.matches(":popover-open")) onTop.raise();
    // Our own writes are no touch.
    reassert.takeRecords();
  }

  function mount() {
    if (!host) {
      host = document.createElement(HOST_TAG);
      host.setAttribute("data-tabpilot-overlay", "");
      onTop = topLayer.keepOnTop(host, () => {
        if (visible()) mount();
      });
      restyleHost();
      reassert.observe(host, { attributes: true });
      root = host.attachShadow({ mode: "closed" });
      const style = document.createElement("style");
      style.textContent = CSS;
      root.append(style);
      // Bottom to top: the shield under everything, the badge and prompts on top.
      for (const name of ["shield", "marks", "help", "borrow", "approve", "notice", "badge"]) root.append((parts[name] = document.createElement("div")));
    }
    const parent = onTop.home();
    if (!parent) return false;
    if (host.parentNode !== parent) {
      parent.append(host);
      onTop.raise();
    }
    // A page that rewrites <html> or its children takes the host with it: put it back. In a modal dialog,
    // anything above the host may take it away.
    if (watchedParent !== parent) {
      remount.disconnect();
      remount.observe(document, { childList: true, subtree: parent !== document.documentElement });
      remount.observe(parent, { childList: true });
      watchedParent = parent;
    }
    return true;
  }

  function visible() {
    return !!(state.session || state.borrow || state.help || state.approve || state.shield || state.notice);
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

  function render() {
    if (!visible()) {
      host?.remove();
      remount.disconnect();
      watchedParent = null;
      clearInterval(ticker);
      ticker = undefined;
      watchPrompts();
      watchWorker();
      return;
    }
    // Before <html> exists (document_start), wait for it.
    if (!mount() || !host) {
      document.addEventListener("DOMContentLoaded", render, { once: true });
      return;
    }
    // Only what changed is written: a write the page must restyle for costs the agent's next call into it.
    restyleHost();
    // During the agent's gesture the shield stays in place and only stops taking the pointer (a class:
    // no layout, no paint), so opening and closing it costs the page next to nothing.
    draw("shield", state.shieldBoxes && !state.help && !state.approve && [state.hole], () => shield());
    draw("marks", state.help && [state.help.request_id, state.help.rects], () => marks(/** @type {Ask} */ (state.help)));
    draw("help", state.help && [state.help.token], () => promptFrame("help", /** @type {Ask} */ (state.help)));
    draw("borrow", state.borrow && [state.borrow.token], () => promptFrame("borrow", /** @type {Ask} */ (state.borrow)));
    draw("approve", state.approve && [state.approve.token], () => promptFrame("approve", /** @type {Ask} */ (state.approve)));
    draw("notice", state.notice && [state.notice], () => el("div", { class: "notice", role: "status" }, [/** @type {string} */ (state.notice)]));
    draw("badge", state.session && [state.session.id, state.session.paused, state.stopping], () => badge(/** @type {Badge} */ (state.session)));
    // What the agent does changes with every action: only that text is replaced.
    const doing = parts.badge.querySelector(".doing");
    const line = state.session ? ` — ${doingText(state.session)}` : "";
    if (doing && doing.textContent !== line) doing.textContent = line;
    // The agent's gesture goes through everything, the badge included.
    const passing = state.passing ? "passing" : "";
    for (const part of Object.values(parts)) if (part.className !== passing) part.className = passing;
    if (state.help) positionMarks();
    // Highlight boxes follow the page while help is asked.
    if (state.help && ticker === undefined) ticker = setInterval(positionMarks, 1000);
    if (!state.help && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
    watchPrompts();
    watchWorker();
  }

  /**
   * The prompt frame for an ask: the extension's own page, told which ask by its token.
   * @param {AskKind} kind @param {Ask} ask
   */
  function promptFrame(kind, ask) {
    delete promptHeights[kind];
    const frame = /** @type {HTMLIFrameElement} */ (el("iframe", { class: `prompt ${kind}`, title: PROMPT_TITLES[kind] }));
    frame.src = `${PROMPT_PAGE}?${kind}#${ask.token}`;
    return frame;
  }

  /** Where each prompt frame was last seen on screen. @type {Map<HTMLIFrameElement, string>} */
  const promptPlaces = new Map();
  /** Why each prompt frame was last found not drawn at its natural size ("": it was). @type {Map<HTMLIFrameElement, string>} */
  const promptSizes = new Map();

  /** While a prompt is up, look at its place every frame: a prompt that moved re-arms its delay. */
  function watchPrompts() {
    const asked = !!(state.borrow || state.help || state.approve) && !!host;
    if (asked && watching === undefined) watching = requestAnimationFrame(checkPlaces);
    if (!asked && watching !== undefined) {
      cancelAnimationFrame(watching);
      watching = undefined;
      promptPlaces.clear();
      promptSizes.clear();
    }
  }

  function checkPlaces() {
    watching = undefined;
    if (!root) return;
    const frames = /** @type {HTMLIFrameElement[]} */ ([...root.querySelectorAll("iframe.prompt")]);
    for (const frame of [...promptPlaces.keys()]) if (!frames.includes(frame)) promptPlaces.delete(frame);
    for (const frame of [...promptSizes.keys()]) if (!frames.includes(frame)) promptSizes.delete(frame);
    for (const frame of frames) {
      const r = frame.getBoundingClientRect();
      const place = `${r.left},${r.top},${r.width},${r.height}`;
      const before = promptPlaces.get(frame);
      promptPlaces.set(frame, place);
      if (before !== undefined && before !== place) touched(frame);
      const why = drawnSize.shrunk(frame) ?? "";
      if (promptSizes.get(frame) !== why) {
        promptSizes.set(frame, why);
        sized(frame, why);
      }
    }
    watchPrompts();
  }

  /**
   * Tell the prompt frame (it arms only at its natural size) and the worker (the popup answers what the page
   * hides) how the frame is drawn now. @param {HTMLIFrameElement} frame @param {string} why "": at its natural size
   */
  function sized(frame, why) {
    const secret = frame.src.split("#")[1];
    if (secret) void send({ kind: "prompt.drawn", token: secret, natural: why === "", why });
  }

  /** Every prompt re-arms (the page touched what holds them). */
  function promptsTouched() {
    if (!root) return;
    for (const frame of root.querySelectorAll("iframe.prompt")) touched(/** @type {HTMLIFrameElement} */ (frame));
  }

  /** Tell a prompt frame (and only it: it checks the token) that it was moved or its host touched. @param {HTMLIFrameElement} frame */
  function touched(frame) {
    const secret = frame.src.split("#")[1];
    if (secret) void send({ kind: "prompt.moved", token: secret });
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
