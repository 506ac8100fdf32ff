// @ts-check
// The options page's own part: the blocked-sites list (the connection controls are the popup, embedded).
// The list is written here to storage.local and nowhere else; no frame carries it to the daemon.
import { STORAGE_KEY, parseBlockListText } from "../person/blocklist.js";
import { PROTOCOL_VERSION } from "../link/protocol.js";

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const field = /** @type {HTMLTextAreaElement} */ ($("blocked"));

/** @param {string | null} text */
function showError(text) {
  $("blocked-error").hidden = !text;
  $("blocked-error").textContent = text ?? "";
}

async function load() {
  const stored = (await chrome.storage.local.get(STORAGE_KEY))[STORAGE_KEY];
  if (stored === undefined || Array.isArray(stored)) {
    field.value = (stored ?? []).filter((/** @type {unknown} */ line) => typeof line === "string").join("\n");
    showError(null);
  } else {
    // Fails closed until fixed: say so instead of showing an empty list.
    showError("The stored list is damaged, so every site is blocked. Save a list here to repair it.");
  }
}

$("save-blocked").addEventListener("click", async () => {
  const parsed = parseBlockListText(field.value);
  if (!parsed.ok) {
    showError(`Line ${parsed.line}: ${parsed.error}. Nothing was saved.`);
    return;
  }
  await chrome.storage.local.set({ [STORAGE_KEY]: parsed.entries });
  showError(null);
  $("blocked-status").textContent = `Saved ${parsed.entries.length} pattern${parsed.entries.length === 1 ? "" : "s"}.`;
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && STORAGE_KEY in changes && document.activeElement !== field) void load();
});

$("protocol-version").textContent = PROTOCOL_VERSION;
void load();
