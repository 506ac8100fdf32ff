// @ts-check
// The options page's own part: the blocked-sites list, the side panel's approvals and the action cues'
// switch (the connection controls are the popup, embedded). All are written here to storage.local and nowhere else; no frame
// carries them to the daemon.
import { STORAGE_KEY, parseBlockListText } from "../person/blocklist.js";
import { PROTOCOL_VERSION } from "../link/protocol.js";
import { GRANTS_KEY, TIMEOUT_KEY, createGrants, parseTimeoutS } from "../approval/grants.js";
import { RULES } from "../approval/rules.js";
import { CUES_KEY } from "../page/cue.js";

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

const grants = createGrants({ storage: chrome.storage.local });
const timeoutField = /** @type {HTMLInputElement} */ ($("approval-timeout"));
const RULE_TITLES = Object.fromEntries(RULES.map((r) => [r.id, r.title]));

async function loadApprovals() {
  timeoutField.value = String(parseTimeoutS((await chrome.storage.local.get(TIMEOUT_KEY))[TIMEOUT_KEY]));
  const list = await grants.all();
  $("grants").hidden = list.length === 0;
  $("revoke-all").hidden = list.length === 0;
  $("grants-empty").hidden = list.length > 0;
  const rows = list.map((g) => {
    const tr = document.createElement("tr");
    for (const text of [RULE_TITLES[g.rule] ?? g.rule, g.start, g.target]) tr.append(Object.assign(document.createElement("td"), { textContent: text }));
    const revoke = Object.assign(document.createElement("button"), { type: "button", textContent: "Revoke" });
    revoke.dataset.rule = g.rule;
    revoke.addEventListener("click", () => void grants.revoke([g]));
    const cell = document.createElement("td");
    cell.append(revoke);
    tr.append(cell);
    return tr;
  });
  /** @type {HTMLElement} */ ($("grants").querySelector("tbody")).replaceChildren(...rows);
}

$("save-timeout").addEventListener("click", async () => {
  const seconds = Number(timeoutField.value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600) {
    $("timeout-status").textContent = "Give a whole number of seconds from 1 to 3600. Nothing was saved.";
    return;
  }
  await chrome.storage.local.set({ [TIMEOUT_KEY]: seconds });
  $("timeout-status").textContent = `Saved: ${seconds} s.`;
});
$("revoke-all").addEventListener("click", () => void grants.revoke());

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && STORAGE_KEY in changes && document.activeElement !== field) void load();
  if (area === "local" && (GRANTS_KEY in changes || TIMEOUT_KEY in changes)) void loadApprovals();
});

$("protocol-version").textContent = PROTOCOL_VERSION;
void load();
void loadApprovals();

const cuesOn = /** @type {HTMLInputElement} */ ($("cues-on"));
const loadCues = async () => {
  cuesOn.checked = (await chrome.storage.local.get(CUES_KEY))[CUES_KEY] !== false;
};
cuesOn.addEventListener("change", () => void chrome.storage.local.set({ [CUES_KEY]: cuesOn.checked }));
void loadCues();
