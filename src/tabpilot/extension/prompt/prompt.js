// @ts-check
// The borrow prompt, the help panel and approval cards, as the person sees them in a page: this extension's own page,
// in a frame the content script puts in the page's overlay (content/overlay.js). It runs in the
// extension's process, so the page can neither script it nor send its answers; what the page can do
// is hide, fade, cover or move the frame. So a button counts only while the browser itself reports
// the prompt fully visible and unobscured (IntersectionObserver v2: trackVisibility / isVisible, which
// looks at opacity, filters, transforms and anything drawn over it, in this document and every one
// around it), and only after it has been so, in one place, for ARM_MS: the delay starts again whenever
// visibility is lost, or the content script reports that the page moved the frame or touched its host.
// IOv2 still calls a frame visible when the page shrinks it with `zoom` or the visual viewport is
// pinch-zoomed, so the content script also measures whether the frame is drawn at its natural size
// (content/drawn.js) and says so: buttons count only while it is, and are at least a person's target in size.
// Until it has said so, the prompt is not armed; a prompt the page keeps from its size is answered in the
// toolbar popup instead (the worker hears it from the content script).
//
// Which ask this is comes from the address: ?borrow, ?help or ?approve, and #token, a secret of the ask that
// only the content script was given. The service worker answers only a prompt frame of the tab asked.

/** A button takes a click only after the prompt has been visible, in one place, this long. */
const ARM_MS = 600;
/** Fully visible: what is clipped away must be less than this share. */
const FULLY = 0.995;
/** The smallest button a person is sure to see and hit (CSS px, at a scale of 1). */
const MIN_TARGET_PX = 24;

const asked = location.search.slice(1);
const kind = asked === "help" || asked === "approve" ? asked : "borrow";
const token = location.hash.slice(1);

const state = {
  /** @type {number | null} */ tabId: null,
  /** @type {Record<string, any> | null} */ view: null,
  visible: false,
  /** The content script says the frame is drawn at its natural size. */
  natural: false,
  /** When buttons take clicks (Infinity: not while the prompt is not visible). */
  armedAt: Number.POSITIVE_INFINITY,
  collapsed: false,
  answered: false,
};
/** @type {ReturnType<typeof setTimeout> | undefined} */ let armTimer;

function armed() {
  return shown() && !state.answered && document.visibilityState === "visible" && performance.now() >= state.armedAt && targetsSized();
}

/** Visible to IntersectionObserver v2, and drawn at its natural size. */
function shown() {
  return state.visible && state.natural;
}

function targetsSized() {
  const buttons = [...document.querySelectorAll("button[data-answer]")];
  return buttons.length > 0 && buttons.every((b) => {
    const r = b.getBoundingClientRect();
    return r.width >= MIN_TARGET_PX && r.height >= MIN_TARGET_PX;
  });
}

/** Start the delay again (or stop it while not shown), and show the buttons as they are. */
function rearm() {
  state.armedAt = shown() ? performance.now() + ARM_MS : Number.POSITIVE_INFINITY;
  clearTimeout(armTimer);
  if (shown()) armTimer = setTimeout(showArming, ARM_MS + 10);
  showArming();
}

/** What the content script measured. @param {unknown} natural */
function drawnNatural(natural) {
  if ((natural === true) === state.natural) return;
  state.natural = natural === true;
  rearm();
}

function showArming() {
  const on = armed();
  for (const button of document.querySelectorAll("button[data-answer]")) button.toggleAttribute("disabled", !on);
}

/** @param {IntersectionObserverEntry[]} entries */
function onVisibility(entries) {
  const entry = entries.at(-1);
  if (!entry) return;
  const visible = /** @type {any} */ (entry).isVisible === true && entry.intersectionRatio >= FULLY;
  if (visible === state.visible) return;
  state.visible = visible;
  rearm();
}

chrome.runtime.onMessage.addListener((/** @type {any} */ message, /** @type {any} */ sender) => {
  // Only the content script of this tab's page, knowing this ask's token, says the frame moved or how it is drawn.
  if ((message?.kind !== "prompt.moved" && message?.kind !== "prompt.drawn") || message.token !== token) return false;
  if (sender?.id !== chrome.runtime.id || sender.frameId !== 0 || sender.tab?.id !== state.tabId) return false;
  if (message.kind === "prompt.drawn") drawnNatural(message.natural);
  else rearm();
  return false;
});
document.addEventListener("visibilitychange", rearm);

/** @param {string} answer @param {string} [note] */
async function answer(answer, note) {
  if (!armed()) return;
  state.answered = true;
  showArming();
  await chrome.runtime.sendMessage({ kind: "prompt.answer", token, answer, note }).catch(() => null);
}

document.addEventListener(
  "click",
  (e) => {
    const button = /** @type {HTMLElement | null} */ (/** @type {Element} */ (e.target)?.closest?.("button") ?? null);
    if (!button || !e.isTrusted) return;
    e.preventDefault();
    if (button.dataset.collapse !== undefined) {
      state.collapsed = !state.collapsed;
      render();
    } else if (button.dataset.answer) {
      void answer(button.dataset.answer, noteText());
    }
  },
  true,
);
document.addEventListener("keydown", (e) => {
  const target = /** @type {HTMLElement} */ (e.target);
  if (e.key === "Enter" && target.localName === "input" && e.isTrusted) {
    e.preventDefault();
    void answer("done", noteText());
  }
});

function noteText() {
  return /** @type {HTMLInputElement | null} */ (document.querySelector("input.note"))?.value ?? "";
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

/** @param {number} deadline @param {string} prefix */
function countdown(deadline, prefix) {
  return el("span", { class: "muted", "data-deadline": String(deadline), "data-prefix": prefix }, [prefix + left(deadline)]);
}

/** @param {Record<string, any>} view */
function borrowCard(view) {
  return el("div", { class: "card borrow", role: "alertdialog", "aria-label": "tabpilot asks to borrow this tab" }, [
    el("h1", {}, ["An agent asks to use this tab"]),
    el("p", {}, ["Session ", el("b", {}, [String(view.session_id)]), " of tabpilot wants to borrow this tab. It moves to the agent's window until it is given back."]),
    view.reason ? el("p", {}, ["Why: ", el("i", {}, [`“${view.reason}”`])]) : null,
    el("div", { class: "row" }, [
      countdown(view.deadline, "No answer means no · "),
      el("button", { class: "secondary", "data-answer": "deny" }, ["Deny"]),
      el("button", { class: "primary", "data-answer": "allow" }, ["Allow"]),
    ]),
  ]);
}

/** @param {Record<string, any>} view */
function helpCard(view) {
  const typed = noteText();
  const note = /** @type {HTMLInputElement} */ (el("input", { class: "note", type: "text", placeholder: "A note for the agent (optional)", "aria-label": "Note for the agent" }));
  note.value = typed;
  // Everything but the agent's title and prompt is tabpilot's own voice: the person must be able to
  // tell who wrote what they are asked, and that no password or code is tabpilot's to ask for.
  return el("div", { class: state.collapsed ? "card help collapsed" : "card help", role: "dialog", "aria-label": "tabpilot asks for your help" }, [
    el("div", { class: "head" }, [
      el("h1", {}, ["Your agent asks for your help"]),
      el("button", { class: "collapse", "data-collapse": "", title: state.collapsed ? "Expand" : "Collapse" }, [state.collapsed ? "▴" : "▾"]),
    ]),
    el("div", { class: "body" }, [
      el("p", { class: "muted author" }, [`Written by the agent of session ${view.session_id}, not by tabpilot:`]),
      el("div", { class: "agent-words" }, [view.title ? el("p", { class: "agent-title" }, [String(view.title)]) : null, el("p", {}, [String(view.prompt ?? "")])]),
      el("p", { class: "muted never" }, ["tabpilot never asks for a password or a code. Type those only into the site itself, never into the note."]),
      note,
    ]),
    el("div", { class: "row" }, [
      countdown(view.deadline, "Time left · "),
      el("button", { class: "secondary", "data-answer": "cancel" }, ["Cancel"]),
      el("button", { class: "primary", "data-answer": "done" }, ["Done"]),
    ]),
  ]);
}

/** A side-panel agent's action the person is asked about (approval/asks.js). @param {Record<string, any>} view */
function approveCard(view) {
  const where = view.site ? (view.start && view.start !== view.site ? `on ${view.site} (the conversation started on ${view.start})` : `on ${view.site}`) : "";
  return el("div", { class: "card approve", role: "alertdialog", "aria-label": "tabpilot asks before an agent's action" }, [
    // elementtiming: when the card was painted, for anyone timing it (the bench does).
    el("h1", { elementtiming: "approval-card" }, ["Allow this action?"]),
    el("p", { class: "rule" }, [String(view.title ?? "")]),
    el("p", { class: "target" }, [String(view.target ?? "")]),
    typeof view.code === "string" ? el("pre", { class: "code", tabindex: "0" }, [view.code]) : null,
    el("p", { class: "muted" }, [`The agent of your side-panel conversation asks${where ? ` ${where}` : ""}.`]),
    el("div", { class: "row" }, [
      countdown(view.deadline, "No answer means no · "),
      el("button", { class: "secondary", "data-answer": "deny" }, ["Deny"]),
      el("button", { class: "primary", "data-answer": "allow" }, ["Allow"]),
    ]),
  ]);
}

const observer = new IntersectionObserver(onVisibility, { threshold: [0, FULLY, 1], trackVisibility: true, delay: 100 });
const sizes = new ResizeObserver(() => reportSize());

function render() {
  if (!state.view) return;
  const card = kind === "borrow" ? borrowCard(state.view) : kind === "approve" ? approveCard(state.view) : helpCard(state.view);
  document.body.replaceChildren(card);
  observer.disconnect();
  observer.observe(card);
  sizes.disconnect();
  sizes.observe(card);
  showArming();
}

function reportSize() {
  const card = document.body.firstElementChild;
  if (!card || state.tabId === null) return;
  void chrome.tabs
    .sendMessage(state.tabId, { kind: "prompt_size", token, height: card.getBoundingClientRect().height }, { frameId: 0 })
    .catch(() => {});
}

setInterval(() => {
  for (const node of document.querySelectorAll("[data-deadline]")) {
    node.textContent = node.getAttribute("data-prefix") + left(Number(node.getAttribute("data-deadline")));
  }
}, 1000);

void chrome.runtime.sendMessage({ kind: "prompt.hello", token }).then(
  (/** @type {any} */ reply) => {
    if (!reply || reply.kind !== kind) return;
    state.tabId = reply.tab_id;
    state.view = reply.view;
    render();
  },
  () => {},
);
