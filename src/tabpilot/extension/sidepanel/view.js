// @ts-check
// The timeline in the DOM: one element per item, created once and updated in place as its item
// changes (a streaming reply re-renders only its own bubble).
import { renderMarkdown } from "./markdown.js";

/** @typedef {import("./timeline.js").Item} Item */

const LEVEL_CLASS = { error: "notice error", stopped: "notice stopped", interrupted: "notice interrupted", info: "notice" };
/** Within this many pixels of the bottom, new text keeps the view at the bottom. */
const NEAR_BOTTOM_PX = 48;

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
  }
}

/** @param {Item} item */
function create(item) {
  const className = item.type === "user" ? "bubble user" : item.type === "text" ? "bubble agent" : item.type === "tool" ? "tool" : LEVEL_CLASS[item.level];
  const node = el("div", className);
  node.dataset.key = item.key;
  return node;
}

/** @param {HTMLElement} container the scrolling timeline @param {HTMLElement} latest the "Latest" button */
export function createTimelineView(container, latest) {
  /** @type {Map<string, HTMLElement>} */
  const nodes = new Map();
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
      }
      container.append(added);
      if (follow) container.scrollTop = container.scrollHeight;
      else showLatest();
    },
    clear() {
      nodes.clear();
      container.replaceChildren();
      latest.hidden = true;
    },
  };
}
