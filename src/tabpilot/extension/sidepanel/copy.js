// @ts-check
// Copy buttons on the agent's messages: one per code block (its code) and one per message (the
// Markdown the agent wrote). What is copied comes from the page's own state, never from the click.
// The buttons' words are drawn by the style sheet, so a message's text is still only what the agent wrote.

/** The Markdown each message was rendered from, for its copy button. @type {WeakMap<Element, string>} */
const sources = new WeakMap();

/** @param {string} className @param {string} label */
function button(className, label) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = className;
  b.dataset.state = "idle";
  b.setAttribute("aria-label", label);
  return b;
}

/** Give a rendered message its copy buttons. @param {HTMLElement} node @param {string} source */
export function addCopyButtons(node, source) {
  sources.set(node, source);
  for (const pre of node.querySelectorAll("pre")) pre.append(button("copy copy-code", "Copy code"));
  node.append(button("copy copy-message", "Copy message"));
}

/** @param {HTMLElement} b @param {string} text */
async function copy(b, text) {
  try {
    await navigator.clipboard.writeText(text);
    b.dataset.state = "copied";
  } catch {
    b.dataset.state = "failed";
  }
  setTimeout(() => (b.dataset.state = "idle"), 1500);
}

/** A click in the timeline: a copy button's, if it was one (then it is handled). @param {Event} event */
export function copyClicked(event) {
  const b = /** @type {HTMLElement | null} */ (/** @type {Element} */ (event.target)?.closest?.("button.copy") ?? null);
  if (!b) return false;
  const message = b.closest(".bubble.agent");
  if (b.classList.contains("copy-code")) void copy(b, b.closest("pre")?.querySelector("code")?.textContent ?? "");
  else if (message) void copy(b, sources.get(message) ?? "");
  return true;
}
