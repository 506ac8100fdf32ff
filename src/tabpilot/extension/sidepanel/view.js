// @ts-check
// The timeline in the DOM: one element per item, created once and updated in place as its item
// changes (a streaming reply re-renders only its own bubble). A card's buttons take a click only after
// the card has been in view for ARM_MS (the same rule as the cards in pages, prompt/prompt.js).
import { renderMarkdown } from "./markdown.js";

/** @typedef {import("./timeline.js").Item} Item */

const LEVEL_CLASS = { error: "notice error", stopped: "notice stopped", interrupted: "notice interrupted", info: "notice" };
/** Within this many pixels of the bottom, new text keeps the view at the bottom. */
const NEAR_BOTTOM_PX = 48;
/** Said on an open approval card whose in-page twin the page keeps from its natural size. */
const HIDDEN_TEXT = "The page is hiding this card in its tab: answer it here.";
/** A card's buttons take a click only after the card has been fully in view this long. */
export const ARM_MS = 600;
const STATE_TEXT = /** @type {Record<string, string>} */ ({
  allow: "Allowed",
  deny: "Denied",
  timeout: "Not answered in time: denied",
  stopped: "Withdrawn: the agent was stopped",
  tab_closed: "Withdrawn: the tab was closed",
});

/** @param {string} tag @param {string} className @param {string} [text] */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @param {Item} item @param {HTMLElement} node */
function fill(item, node) {
  switch (item.type) {
    case "user": {
      node.replaceChildren(el("div", "words", item.text));
      if (item.attachments.length) {
        const chips = el("div", "chips");
        for (const a of item.attachments) chips.append(el("span", "chip", a.kind === "page" ? `Page${a.title ? `: ${a.title}` : ""}` : a.kind === "selection" ? "Selection" : a.kind));
        node.append(chips);
      }
      return;
    }
    case "text":
      // The renderer's output holds only its own tags (sidepanel/markdown.js); nothing of the text is markup.
      node.innerHTML = renderMarkdown(item.text);
      node.classList.toggle("interrupted", item.interrupted);
      return;
    case "tool": {
      node.dataset.status = item.status;
      node.dataset.source = item.source;
      const head = el("div", "tool-head");
      head.append(el("span", "verb", item.name), el("span", "target", item.target));
      const tail = el("span", "state", item.status === "running" ? "…" : item.status === "ok" ? "ok" : "failed");
      if (item.ms !== null) tail.textContent += ` · ${Math.round(item.ms)} ms`;
      head.append(tail);
      node.replaceChildren(head);
      if (item.summary) node.append(el("div", "outcome", item.summary));
      return;
    }
    case "notice":
      node.textContent = item.text;
      return;
    case "card":
      fillCard(item, node);
  }
}

/** @param {import("./timeline.js").CardItem} item @param {HTMLElement} node */
function fillCard(item, node) {
  node.dataset.state = item.state;
  node.dataset.id = item.id;
  node.dataset.kind = item.kind;
  const head = el("div", "card-head", item.kind === "approval" ? "Allow this action?" : "Allow the agent's tool?");
  // When the card was painted, for anyone timing it (the bench does).
  head.setAttribute("elementtiming", "approval-card");
  const parts = [head, el("div", "card-rule", item.title)];
  if (item.target) parts.push(el("div", "card-target", item.target));
  if (item.code !== null) parts.push(el("pre", "card-code", item.code));
  if (item.site) parts.push(el("div", "card-site", item.start && item.start !== item.site ? `on ${item.site} (started on ${item.start})` : `on ${item.site}`));
  if (item.state === "open") {
    const row = el("div", "card-buttons");
    /** @param {string} answer @param {string} text @param {string} className */
    const button = (answer, text, className) => {
      const b = /** @type {HTMLButtonElement} */ (el("button", className, text));
      b.type = "button";
      b.dataset.answer = answer;
      b.disabled = true;
      return b;
    };
    row.append(button("deny", "Deny", ""));
    if (item.always && item.site) row.append(button("always", `Always on ${item.site}`, ""));
    row.append(button("allow", "Allow", "primary"));
    parts.push(row, el("div", "card-note", "No answer means no."));
  } else {
    parts.push(el("div", "card-state", `${STATE_TEXT[item.state] ?? item.state}${item.via ? ` (${item.via})` : ""}`));
  }
  node.replaceChildren(...parts);
}

/** @param {Item} item */
function create(item) {
  const className =
    item.type === "user" ? "bubble user" : item.type === "text" ? "bubble agent" : item.type === "tool" ? "tool" : item.type === "card" ? "card" : LEVEL_CLASS[item.level];
  const node = el("div", className);
  node.dataset.key = item.key;
  return node;
}

/**
 * @param {HTMLElement} container the scrolling timeline @param {HTMLElement} latest the "Latest" button
 * @param {{onAnswer?: (card: {kind: string, id: string}, answer: string) => void}} [options]
 *   onAnswer: the person pressed a card's button (a trusted click, once the card was armed)
 */
export function createTimelineView(container, latest, { onAnswer = () => {} } = {}) {
  /** @type {Map<string, HTMLElement>} */
  const nodes = new Map();
  /** The approval ids whose card a page hides (from the worker). @type {Set<string>} */
  let hiddenIds = new Set();
  /** @param {HTMLElement} node */
  const markHidden = (node) => {
    const hide = node.dataset.state === "open" && hiddenIds.has(node.dataset.id ?? "");
    const line = node.querySelector(".card-hidden");
    if (hide && !line) node.querySelector(".card-buttons")?.before(el("div", "card-hidden", HIDDEN_TEXT));
    else if (!hide) line?.remove();
  };
  /** When each open card's buttons take clicks (Infinity while it is not fully in view). @type {WeakMap<Element, number>} */
  const armedAt = new WeakMap();
  /** @param {Element} card */
  const arm = (card) => {
    const on = performance.now() >= (armedAt.get(card) ?? Number.POSITIVE_INFINITY);
    for (const b of card.querySelectorAll("button[data-answer]")) /** @type {HTMLButtonElement} */ (b).disabled = !on;
  };
  // The browser itself says when a card is fully visible and unobscured (IntersectionObserver v2).
  const visibility = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        const seen = /** @type {any} */ (entry).isVisible === true && entry.intersectionRatio >= 0.99;
        armedAt.set(entry.target, seen ? performance.now() + ARM_MS : Number.POSITIVE_INFINITY);
        arm(entry.target);
        if (seen) setTimeout(() => arm(entry.target), ARM_MS + 10);
      }
    },
    { root: null, threshold: [0, 0.99, 1], trackVisibility: true, delay: 100 },
  );
  container.addEventListener(
    "click",
    (event) => {
      const button = /** @type {HTMLElement | null} */ (/** @type {Element} */ (event.target)?.closest?.("button[data-answer]") ?? null);
      const card = /** @type {HTMLElement | null} */ (button?.closest(".card") ?? null);
      if (!button || !card || !event.isTrusted || /** @type {HTMLButtonElement} */ (button).disabled) return;
      if (performance.now() < (armedAt.get(card) ?? Number.POSITIVE_INFINITY)) return;
      for (const b of card.querySelectorAll("button[data-answer]")) /** @type {HTMLButtonElement} */ (b).disabled = true;
      onAnswer({ kind: card.dataset.kind ?? "", id: card.dataset.id ?? "" }, button.dataset.answer ?? "");
    },
    true,
  );
  const nearBottom = () => container.scrollHeight - container.scrollTop - container.clientHeight < NEAR_BOTTOM_PX;
  const showLatest = () => (latest.hidden = nearBottom());
  container.addEventListener("scroll", showLatest, { passive: true });
  latest.addEventListener("click", () => {
    container.scrollTop = container.scrollHeight;
    latest.hidden = true;
  });

  return {
    /** Render items that were added or changed, in timeline order. @param {Iterable<Item>} items */
    update(items) {
      // An empty timeline (a panel just opened on a backlog) follows without asking: asking would lay
      // the page out once before its first content and again after.
      const follow = nodes.size === 0 || nearBottom();
      // New items come after every item shown: they go in with one insertion.
      const added = document.createDocumentFragment();
      for (const item of items) {
        let node = nodes.get(item.key);
        if (!node) {
          node = create(item);
          nodes.set(item.key, node);
          added.append(node);
        }
        fill(item, node);
        if (item.type === "card") {
          markHidden(node);
          if (item.state === "open") {
            visibility.observe(node);
            arm(node);
          } else visibility.unobserve(node);
        }
      }
      container.append(added);
      if (follow) container.scrollTop = container.scrollHeight;
      else showLatest();
    },
    /** The approval cards a page hides from the person now. @param {unknown} ids */
    hidden(ids) {
      hiddenIds = new Set(Array.isArray(ids) ? ids.map(String) : []);
      for (const node of nodes.values()) if (node.classList.contains("card")) markHidden(node);
    },
    clear() {
      visibility.disconnect();
      nodes.clear();
      container.replaceChildren();
      latest.hidden = true;
    },
  };
}
