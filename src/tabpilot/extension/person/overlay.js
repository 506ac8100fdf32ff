// @ts-check
// The service-worker side of what the person sees in a page the agent works in (content/overlay.js,
// the content script of every http(s) page's top frame): the badge with the session's name, what the
// agent is doing and a Stop button; the input shield while an action runs; the borrow prompt; the
// help panel. A page without the content script (about:blank, chrome://, a PDF, a page being replaced)
// shows nothing, and every call here still settles: the overlay is best effort, consent is not (an ask
// nobody can see ends as "unavailable" or "timeout", never as a yes).
//
// Messages to a page go to its top frame (chrome.tabs.sendMessage); pages talk back with
// chrome.runtime.sendMessage, and the sender's tab, not anything the message says, decides which
// session and which request an answer is for.
//
// The borrow prompt, the help panel and the approval card (a side-panel agent's action the person is
// asked about, approval/asks.js) are not drawn by the page's content script: they are this
// extension's own page (prompt/prompt.html) in a frame the content script puts in the overlay, which
// runs in the extension's process, so the page can neither script it nor forge its answers. Only that
// frame, in the tab that was asked and holding the ask's random token, can answer; it takes a click
// only while the browser reports it fully visible and unobscured and it is drawn at its natural size
// (prompt/prompt.js); an ask the page draws shrunk or zoomed is answered in the popup (person/hidden-asks.js).
import { createHiddenAsks } from "./hidden-asks.js";

/**
 * @typedef {{addListener(fn: (...args: any[]) => any): void}} ChromeEvent
 * @typedef {{id?: number, windowId?: number}} Tab
 * @typedef {{
 *   sendMessage(tabId: number, message: unknown, options?: {frameId?: number}): Promise<any>,
 *   onRemoved: ChromeEvent,
 * }} TabsApi
 * @typedef {{id: string, onMessage: ChromeEvent, onConnect?: ChromeEvent, getURL(path: string): string}} RuntimeApi
 * @typedef {{requestId: string, tabId: number, token: string, view: Record<string, unknown>, answer: (a: any) => void}} Ask
 * @typedef {{
 *   ownerOf(tab: Tab): Promise<string | null>,
 *   tabs(sessionId: string): Promise<{id: number}[]>,
 * }} SessionsLike
 * @typedef {{x: number, y: number}} Point
 * @typedef {{x: number, y: number, width: number, height: number}} Rect  in the top document (CSS px, page coordinates)
 * @typedef {"allow" | "deny" | "timeout" | "unavailable"} BorrowAnswer
 * @typedef {{outcome: "continued" | "cancelled" | "timeout" | "unavailable", note?: string}} HelpAnswer
 * @typedef {(method: string, params: any) => Promise<any>} Send
 * @typedef {"borrow" | "help" | "approve"} AskKind
 */

/** The agent's input that goes to the focused element, not to a point. */
const KEY_INPUT = /^Input\.(dispatchKeyEvent|insertText|imeSetComposition)$/;
/** How long the shield stays open after the agent's last input of a gesture (see shield). */
const PASS_CLOSES_AFTER_MS = 50;
/** The longest activity line a badge shows. */
const MAX_ACTIVITY = 120;
/** Longest texts taken from the agent for a prompt or panel (the page layout must not be at its mercy). */
const MAX_REASON = 300;
const MAX_PROMPT = 2000;
const MAX_TITLE = 120;
export const PROMPT_PAGE = "prompt/prompt.html";
/** The longest reason a page's content script may give for a prompt not drawn at its size. */
const MAX_WHY = 200;

/** @param {unknown} text @param {number} max */
function clip(text, max) {
  const s = String(text ?? "").replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * Register in the worker's first turn (it listens to messages from pages).
 * @param {{tabs: TabsApi, runtime: RuntimeApi, sessions: SessionsLike, token?: () => string, log?: Pick<Console, "warn">}} deps
 *   token: a fresh secret for each ask (the prompt frame's address carries it)
 */
export function createOverlay({ tabs, runtime, sessions, token = () => crypto.randomUUID(), log = console }) {
  /** What the agent is doing in each tab, so a page that reloads shows it again. @type {Map<number, string>} */
  const activities = new Map();
  /** Sessions the person stopped and nobody resumed yet. @type {Set<string>} */
  const paused = new Set();
  /** Where the agent's pointer is in each tab: the shield leaves that point free, so the hover stays. @type {Map<number, Point>} */
  const pointers = new Map();
  /** The reply to the last message sent to each tab: once it is in, the page has handled every message before. @type {Map<number, Promise<unknown>>} */
  const lastPosts = new Map();
  /** What each kind of prompt frame is asking, by request id. @type {Record<AskKind, Map<string, Ask>>} */
  const asksOf = { borrow: new Map(), help: new Map(), approve: new Map() };
  const promptPage = runtime.getURL(PROMPT_PAGE);
  /** @type {Set<(sessionId: string, tabId: number | null) => void>} */
  const stopListeners = new Set();
  /** @type {Set<(sessionId: string) => void>} */
  const resumeListeners = new Set();
  /** Told whenever a session is paused or goes on, whoever did it. @type {Set<() => void>} */
  const pauseListeners = new Set();
  const pauseChanged = () => {
    for (const fn of [...pauseListeners]) fn();
  };
  const hiddenAsks = createHiddenAsks();
  /** Asks the person answered in the popup, until the asker reads it (answeredVia). @type {Set<string>} */
  const answeredInPopup = new Set();

  runtime.onMessage.addListener((/** @type {any} */ message, /** @type {any} */ sender, /** @type {(r: unknown) => void} */ reply) => {
    if (sender?.id !== runtime.id || !Number.isInteger(sender?.tab?.id)) return false;
    if (typeof sender.url === "string" && sender.url.startsWith(promptPage)) {
      reply(fromPrompt(message, sender.tab.id));
      return false;
    }
    // Only our content script in a tab's top frame speaks for a page.
    if (sender.frameId !== 0) return false;
    const answer = fromPage(message, sender.tab);
    if (answer === undefined) return false;
    answer.then(reply, (err) => {
      log.warn("tabpilot: overlay message failed", err);
      reply(null);
    });
    return true;
  });
  // A page holds a port ("overlay.watch") open while its person is asked (content/overlay.js): it closes
  // when this worker stops, and the page then takes off what a restarted worker no longer asks. Chrome keeps
  // a port open only in a context that listens for ports; nothing is said on it.
  runtime.onConnect?.addListener(() => {});
  tabs.onRemoved.addListener((/** @type {number} */ tabId) => {
    activities.delete(tabId);
    pointers.delete(tabId);
    lastPosts.delete(tabId);
  });

  /**
   * A message from a page, answered (a promise) or not ours (undefined).
   * @param {any} message @param {Tab & {id: number}} tab
   */
  function fromPage(message, tab) {
    switch (message?.kind) {
      case "overlay.hello":
        return hello(tab);
      case "overlay.stop":
        return sessions.ownerOf(tab).then((id) => (id ? (stop(id, tab.id), { ok: true }) : { ok: false }));
      case "overlay.resume":
        return sessions.ownerOf(tab).then((id) => (id ? (resume(id), { ok: true }) : { ok: false }));
      case "prompt.drawn":
        return Promise.resolve(drawn(message, tab.id));
      default:
        return undefined;
    }
  }

  /**
   * The ask a prompt frame stands for: its token, in the tab that was asked.
   * @param {unknown} secret @param {number} tabId
   * @returns {{kind: AskKind, ask: Ask} | null}
   */
  function askOf(secret, tabId) {
    if (typeof secret !== "string" || secret === "") return null;
    for (const kind of /** @type {AskKind[]} */ (Object.keys(asksOf))) {
      for (const ask of asksOf[kind].values()) if (ask.token === secret && ask.tabId === tabId) return { kind, ask };
    }
    return null;
  }

  /**
   * A message from a prompt frame: what to show, or the person's answer.
   * @param {any} message @param {number} tabId
   */
  function fromPrompt(message, tabId) {
    const found = askOf(message?.token, tabId);
    if (!found) return null;
    const { kind, ask } = found;
    if (message.kind === "prompt.hello") return { kind, tab_id: tabId, view: ask.view };
    if (message.kind !== "prompt.answer") return null;
    return { ok: settle(kind, ask, message.answer, message.note) };
  }

  /**
   * Settle an ask with the person's answer, from its prompt frame or the popup; false: not an answer it takes.
   * @param {AskKind} kind @param {Ask} ask @param {unknown} answer @param {unknown} [note]
   */
  function settle(kind, ask, answer, note) {
    if (kind === "borrow" || kind === "approve") {
      if (answer !== "allow" && answer !== "deny") return false;
      ask.answer(answer);
      return true;
    }
    const outcome = /** @type {Record<string, string>} */ ({ done: "continued", cancel: "cancelled" })[String(answer)];
    if (!outcome) return false;
    const typed = typeof note === "string" && note.trim() ? note.slice(0, 2000) : undefined;
    ask.answer({ outcome, ...(typed ? { note: typed } : {}) });
    return true;
  }

  /**
   * The page's content script says whether a prompt frame is drawn at its natural size; one that is not
   * is answered in the popup from now on (person/hidden-asks.js).
   * @param {any} message @param {number} tabId
   */
  function drawn(message, tabId) {
    const found = askOf(message?.token, tabId);
    if (!found || message.natural !== false) return { ok: found !== null };
    const { kind, ask } = found;
    const why = clip(message.why, MAX_WHY) || "the page draws it out of its natural size";
    hiddenAsks.hide({ requestId: ask.requestId, kind, tabId, view: ask.view, why }, (answer) => {
      if (!settle(kind, ask, answer)) return false;
      // The approval cards' asker reads where it was answered (approval/asks.js); the others do not ask.
      if (kind === "approve") answeredInPopup.add(ask.requestId);
      return true;
    });
    return { ok: true };
  }

  /** What a page that just started should show. @param {Tab & {id: number}} tab */
  async function hello(tab) {
    const sessionId = await sessions.ownerOf(tab);
    const find = (/** @type {Map<string, Ask>} */ asks) => {
      const ask = [...asks.values()].find((a) => a.tabId === tab.id);
      return ask ? { ...ask.view, token: ask.token } : null;
    };
    return { session: sessionId ? badgeOf(sessionId, tab.id) : null, borrow: find(asksOf.borrow), help: find(asksOf.help), approve: find(asksOf.approve) };
  }

  /** @param {string} sessionId @param {number} tabId */
  function badgeOf(sessionId, tabId) {
    return { id: sessionId, paused: paused.has(sessionId), activity: activities.get(tabId) ?? "" };
  }

  /**
   * Send to the page's content script; resolves its reply, or undefined when there is none.
   * @param {number} tabId @param {Record<string, unknown>} message
   */
  function post(tabId, message) {
    /** @type {Promise<any>} */
    let reply;
    try {
      reply = Promise.resolve(tabs.sendMessage(tabId, message, { frameId: 0 })).catch(() => undefined);
    } catch {
      reply = Promise.resolve(undefined);
    }
    lastPosts.set(tabId, reply);
    return reply;
  }

  /** @param {string} sessionId */
  async function refreshSession(sessionId) {
    const list = await sessions.tabs(sessionId).catch(() => []);
    await Promise.all(list.map((t) => post(t.id, { kind: "state", session: badgeOf(sessionId, t.id) })));
  }

  /** @param {string} sessionId @param {number | null} tabId the tab whose Stop was pressed (null: the popup) */
  function stop(sessionId, tabId) {
    paused.add(sessionId);
    for (const fn of [...stopListeners]) fn(sessionId, tabId);
    pauseChanged();
    void refreshSession(sessionId);
  }

  /** @param {string} sessionId */
  function resume(sessionId) {
    if (!paused.delete(sessionId)) return;
    for (const fn of [...resumeListeners]) fn(sessionId);
    pauseChanged();
    void refreshSession(sessionId);
  }

  /**
   * Ask in the page, until an answer, the timeout or the abort; the content script re-shows a pending
   * ask after the page navigates (see hello).
   * @template T
   * @param {AskKind} kind
   * @param {number} tabId @param {string} requestId @param {Record<string, unknown>} view what the page shows
   * @param {{timeoutMs: number, signal?: AbortSignal, onTimeout: T, onAbort: T, onUnshown?: T}} how
   *   onUnshown: the answer when the page cannot show it (no content script)
   * @returns {Promise<any>}
   */
  function ask(kind, tabId, requestId, view, { timeoutMs, signal, onTimeout, onAbort, onUnshown }) {
    const asks = asksOf[kind];
    if (asks.has(requestId)) return Promise.reject(new Error(`request ${requestId} is already asked`));
    if (signal?.aborted) return Promise.resolve(onAbort);
    return new Promise((resolve) => {
      const timer = setTimeout(() => answer(onTimeout), timeoutMs);
      const aborted = () => answer(onAbort);
      /** @type {Ask} */
      const entry = { requestId, tabId, token: token(), view: { ...view, request_id: requestId, deadline: Date.now() + timeoutMs }, answer };
      /** @param {any} value */
      function answer(value) {
        if (asks.get(requestId) !== entry) return;
        asks.delete(requestId);
        hiddenAsks.end(requestId);
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        void post(tabId, { kind: "ask_end", request_id: requestId });
        resolve(value);
      }
      asks.set(requestId, entry);
      signal?.addEventListener("abort", aborted, { once: true });
      void post(tabId, { kind, ask: { ...entry.view, token: entry.token } }).then((r) => {
        if (r?.shown !== true && onUnshown !== undefined) answer(onUnshown);
      });
    });
  }

  return {
    /** The asks a page hides, answered in the popup instead. */
    hiddenAsks,

    /** Where the person answered an ask that has ended: "popup" for one the page hid, else "page". @param {string} requestId */
    answeredVia(requestId) {
      return answeredInPopup.delete(requestId) ? "popup" : "page";
    },

    /**
     * Show the badge in a tab of a session (e.g. a tab just borrowed). Best effort.
     * @param {number} tabId @param {string} sessionId
     */
    async activate(tabId, sessionId) {
      await post(tabId, { kind: "state", session: badgeOf(sessionId, tabId) });
    },

    /** Take the badge and the shield off a tab (e.g. a tab given back). @param {number} tabId */
    async deactivate(tabId) {
      activities.delete(tabId);
      pointers.delete(tabId);
      await post(tabId, { kind: "state", session: null });
    },

    /** What the agent is doing now, e.g. `click button "Save"`. Fire and forget. @param {number} tabId @param {string} text */
    activity(tabId, text) {
      const line = clip(text, MAX_ACTIVITY);
      activities.set(tabId, line);
      void post(tabId, { kind: "activity", text: line });
    },

    /**
     * Put the input shield up over a tab while an action runs: the person's pointer and keys do not
     * reach the page. The agent's own input goes through `gate(send)`: a gesture opens the shield for
     * itself (one round trip to the page), and it closes again once no gesture has come for a moment.
     * A page handles its messages in the order they were sent.
     * @param {number} tabId
     * @param {{activity?: string, pass?: boolean}} [options] activity: what the badge says the agent does
     *   (in the same message); pass: a gesture follows the first look at once (a click, a hover, a
     *   fill's text, a few keys). The shield would be open for it anyway, so it comes up only when
     *   needed: with a pointer gesture when the overlay is at its point (see `clear`; keys need it
     *   never), closed when the first look finds the element not ready or once the gesture is over
     *   (as an open shield closes); an action over before that only updates the badge, after its answer
     */
    shield(tabId, { activity, pass = false } = {}) {
      /** @type {Record<string, unknown>} */
      const message = { kind: "shield", on: true };
      if (activity !== undefined) {
        message.activity = clip(activity, MAX_ACTIVITY);
        activities.set(tabId, /** @type {string} */ (message.activity));
      }
      /** The page's answer to the shield coming up (true: it is up); null until it is sent. @type {Promise<boolean> | null} */
      let up = null;
      /** The page's answer to the shield opening for the agent's input; null while it is closed. @type {Promise<unknown> | null} */
      let passing = null;
      /** The gesture may go without the shield (see `clear`). */
      let unhindered = false;
      let inFlight = 0;
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let closing;
      let done = false;
      /** The page answered that it has no shield (no content script: nothing to open). */
      let absent = false;
      /** @param {boolean} open */
      const raise = (open) => {
        up = post(tabId, { ...message, hole: pointers.get(tabId) ?? null, ...(open ? { pass: true } : {}) }).then((r) => {
          absent = r?.ok !== true;
          return !absent;
        });
        if (open) passing = up;
        return up;
      };
      if (!pass) raise(false);
      // Opening does not wait for the shield to be up: the page takes the two messages in order.
      const open = () => (up === null ? raise(true) : (passing ??= absent ? up : post(tabId, { kind: "pass", open: true })));
      const close = () => {
        passing = null;
        unhindered = false;
        if (done) return;
        if (up === null) raise(false);
        else if (!absent) void post(tabId, { kind: "pass", open: false, hole: pointers.get(tabId) ?? null });
      };
      return {
        /** @param {Send} send @returns {Send} */
        gate(send) {
          return async (method, params) => {
            if (done || !method.startsWith("Input.")) return send(method, params);
            if (method === "Input.dispatchMouseEvent") pointers.set(tabId, { x: params.x, y: params.y });
            inFlight++;
            clearTimeout(closing);
            try {
              // Unhindered: what the page was told before (an earlier action's shield taken down) is
              // in once its last message was answered, at once as a rule. Keys go to the focused
              // element, so with no shield up nothing of the overlay is in their way either.
              await (unhindered || (up === null && KEY_INPUT.test(method)) ? lastPosts.get(tabId) : open());
              return await send(method, params);
            } finally {
              // Closed when no gesture followed for a moment: the steps of a drag or of slow typing
              // close it in between, a quick action simply ends (release) before.
              if (--inFlight === 0) closing = setTimeout(close, PASS_CLOSES_AFTER_MS);
            }
          };
        },
        /**
         * Open for a gesture that is likely to come at once (the element is being looked at for the first
         * time): the round trip to the page runs alongside the look instead of before the gesture. A
         * shield that comes up when needed (`pass`) is not up yet.
         */
        expect() {
          if (!done && up !== null) void open();
        },
        /** The gesture expected did not come (the element was not ready): up and closed until it does. */
        unexpect() {
          if (up === null) {
            if (!done) raise(false);
          } else if (passing && inFlight === 0) {
            clearTimeout(closing);
            close();
          }
        },
        /**
         * The first look found none of the overlay (badge, prompts) at the action point: with no shield
         * up, the gesture reaches the element without it.
         */
        clear() {
          if (up === null) unhindered = true;
        },
        /** Take the shield down (the action is over, however it ended). */
        release() {
          done = true;
          clearTimeout(closing);
          if (up !== null) {
            if (!absent) void post(tabId, { kind: "shield", on: false, hole: pointers.get(tabId) ?? null });
          } else if (message.activity !== undefined) {
            void post(tabId, { kind: "activity", text: message.activity });
          }
        },
      };
    },

    /**
     * Run `fn` with the shield up (see shield); fn gets the gate for its input.
     * @template T @param {number} tabId @param {(gate: (send: Send) => Send) => Promise<T>} fn @returns {Promise<T>}
     */
    async around(tabId, fn) {
      const shield = this.shield(tabId);
      try {
        return await fn((send) => shield.gate(send));
      } finally {
        shield.release();
      }
    },

    /**
     * Run `fn` with the overlay out of sight (a screenshot must show the page only).
     * @template T @param {number} tabId @param {() => Promise<T>} fn @returns {Promise<T>}
     */
    async hidden(tabId, fn) {
      const hid = (await post(tabId, { kind: "hide", hidden: true }))?.ok === true;
      try {
        return await fn();
      } finally {
        if (hid) void post(tabId, { kind: "hide", hidden: false });
      }
    },

    /**
     * Ask the person in the page whether the session may borrow this tab. "unavailable": the page
     * cannot show it (ask another way); an abort settles "unavailable" too.
     * @param {number} tabId
     * @param {{requestId: string, sessionId: string, reason?: string, timeoutMs: number, signal?: AbortSignal}} request
     * @returns {Promise<BorrowAnswer>}
     */
    askBorrow(tabId, { requestId, sessionId, reason, timeoutMs, signal }) {
      const view = { session_id: sessionId, reason: clip(reason, MAX_REASON) };
      return ask("borrow", tabId, requestId, view, { timeoutMs, signal, onTimeout: "timeout", onAbort: "unavailable", onUnshown: "unavailable" });
    },

    /**
     * Show an approval card in a page (the one the person looks at) until an answer, the timeout or
     * the abort: "allow", "deny", "timeout" or "unavailable" (the page cannot show it, or it was withdrawn).
     * @param {number} tabId
     * @param {{requestId: string, sessionId: string, view: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal}} request
     * @returns {Promise<string>}
     */
    askApproval(tabId, { requestId, sessionId, view, timeoutMs, signal }) {
      const shown = { ...view, session_id: sessionId, title: clip(view.title, MAX_TITLE), target: clip(view.target, MAX_REASON), code: typeof view.code === "string" ? view.code.slice(0, 100_000) : undefined };
      return ask("approve", tabId, requestId, shown, { timeoutMs, signal, onTimeout: "timeout", onAbort: "unavailable", onUnshown: "unavailable" });
    },

    /**
     * Show the help panel until the person answers, the timeout or the abort (settles "cancelled"). It
     * comes back after the tab navigates; a page that cannot show it leaves the caller to ask another way.
     * @param {number} tabId
     * @param {{requestId: string, sessionId: string, title?: string, prompt: string, timeoutMs: number, rects?: Rect[], signal?: AbortSignal}} request
     * @returns {Promise<HelpAnswer>}
     */
    askHelp(tabId, { requestId, sessionId, title, prompt, timeoutMs, rects = [], signal }) {
      const view = { session_id: sessionId, title: clip(title, MAX_TITLE), prompt: String(prompt).slice(0, MAX_PROMPT), rects };
      return ask("help", tabId, requestId, view, { timeoutMs, signal, onTimeout: { outcome: "timeout" }, onAbort: { outcome: "cancelled" } });
    },

    /**
     * Can the page show the help panel now (its content script answers)? @param {number} tabId
     * @returns {Promise<boolean>}
     */
    async canShow(tabId) {
      return (await post(tabId, { kind: "ping" }))?.ok === true;
    },

    /** New highlight boxes for a help request (the page scrolled or changed). @param {string} requestId @param {Rect[]} rects */
    helpRects(requestId, rects) {
      const entry = asksOf.help.get(requestId);
      if (!entry) return;
      entry.view = { ...entry.view, rects };
      void post(entry.tabId, { kind: "help_rects", request_id: requestId, rects });
    },

    /** The person pressed Stop for a session (from a page, or the popup). @param {string} sessionId @param {number | null} [tabId] */
    stop(sessionId, tabId = null) {
      stop(sessionId, tabId);
    },

    /** The person carries on (from a page, or the popup). @param {string} sessionId */
    resume(sessionId) {
      resume(sessionId);
    },

    /** A tool call of the session came in: the agent resumed it (the daemon runs nothing for a paused one). @param {string} sessionId */
    resumedByAgent(sessionId) {
      if (!paused.delete(sessionId)) return;
      pauseChanged();
      void refreshSession(sessionId);
    },

    /** @param {string} sessionId */
    isPaused(sessionId) {
      return paused.has(sessionId);
    },

    /** @param {(sessionId: string, tabId: number | null) => void} fn */
    onStop(fn) {
      stopListeners.add(fn);
    },

    /** @param {(sessionId: string) => void} fn */
    onResume(fn) {
      resumeListeners.add(fn);
    },

    /** @param {() => void} fn called when any session is paused or goes on */
    onPauseChange(fn) {
      pauseListeners.add(fn);
    },
  };
}
