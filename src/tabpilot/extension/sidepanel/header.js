// @ts-check
// The header line that says where the chat is: the bound tab (its icon, title and site) and the agent
// with its model. Everything is set as text or as an image source the browser fetches, never as markup.

/** @param {string} url */
function siteOf(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.host : u.protocol.replace(/:$/, "");
  } catch {
    return "";
  }
}

/**
 * @param {HTMLElement} root the header's "where" line, holding .tab-icon, .tab-title, .tab-site, .agent-line
 * @param {{url: string, title: string, icon?: string} | null} tab @param {{label: string, model?: string | null} | null} agent
 */
export function renderWhere(root, tab, agent) {
  const icon = /** @type {HTMLImageElement} */ (root.querySelector(".tab-icon"));
  const title = /** @type {HTMLElement} */ (root.querySelector(".tab-title"));
  const site = /** @type {HTMLElement} */ (root.querySelector(".tab-site"));
  const agentLine = /** @type {HTMLElement} */ (root.querySelector(".agent-line"));
  // Only images a page may show anyway: the tab's own icon over http(s) or data, nothing of the extension's.
  const src = tab?.icon && /^(https?|data):/i.test(tab.icon) ? tab.icon : "";
  icon.hidden = !src;
  if (icon.getAttribute("src") !== src) {
    if (src) icon.src = src;
    else icon.removeAttribute("src");
  }
  title.textContent = tab ? tab.title || tab.url || "Untitled tab" : "No tab";
  title.title = title.textContent;
  site.textContent = tab ? siteOf(tab.url) : "";
  agentLine.textContent = agent ? `${agent.label} · ${agent.model || "its default model"}` : "";
  root.hidden = !tab;
}
