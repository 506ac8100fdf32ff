// @ts-check
// The popup: shows the service worker's snapshots and sends the person's changes back.
// Plain DOM; all state lives in the worker, the popup only renders what it is sent.

const CODE_LENGTH = 8;
const CODE_ALPHABET = /^[A-HJ-NP-Z2-9]+$/;
const CONVERSATIONS_SHOWN = 5;

const STATE_TEXT = {
  connected: "Connected",
  connecting: "Connecting…",
  version_skew: "Connected (versions differ)",
  not_paired: "Not paired",
  auth_failed: "Authentication failed",
  disconnected: "Not connected",
  off: "Off",
};

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const input = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ ($(id));

const port = chrome.runtime.connect({ name: "popup" });
/** @param {string} kind @param {unknown} value */
const send = (kind, value) => port.postMessage({ kind, value });

/** @type {any} */
let last = null;
/** The questions the page hides, as last drawn. */
let shownAsks = "";

/** Replace an input's value unless the person is typing in it. @param {HTMLInputElement} el @param {string} value */
function setIfIdle(el, value) {
  if (document.activeElement !== el) el.value = value;
}

/** @param {HTMLElement} el @param {string | null} text */
function showText(el, text) {
  el.hidden = !text;
  el.textContent = text ?? "";
}

/** @param {any} s snapshot from the worker */
function render(s) {
  last = s;
  $("dot").dataset.state = s.state;
  $("state").textContent = STATE_TEXT[/** @type {keyof STATE_TEXT} */ (s.state)] ?? s.state;
  showText($("last-error"), s.lastError);
  const idle = s.state === "disconnected" && !s.lastError;
  showText($("status-hint"), idle ? `Is the tabpilot daemon running? This browser looks for it on port ${s.port}.` : null);
  const toggle = $("enabled");
  toggle.setAttribute("aria-checked", String(s.enabled));
  toggle.title = s.enabled ? "Switch the connection off" : "Switch the connection on";
  setIfIdle(input("label"), s.label);
  setIfIdle(input("port"), s.port === null ? "" : String(s.port));
  input("port").disabled = s.managed;
  /** @type {HTMLButtonElement} */ ($("port-set")).disabled = s.managed;
  $("pair-hint").textContent = s.paired
    ? "Paired. Enter a new code only to pair with another daemon."
    : "Run tabpilot pair in a terminal and type the code it prints.";
  $("port-note").hidden = !s.managed;
  $("instance-id").textContent = s.instanceId || "—";
  $("extension-version").textContent = s.extensionVersion || "—";
  $("daemon-version").textContent = s.daemonVersion || "—";
  $("sessions").replaceChildren(...s.sessions.map(sessionItem));
  const conversations = (s.conversations ?? []).slice(0, CONVERSATIONS_SHOWN);
  $("conversations").replaceChildren(...conversations.map(conversationItem));
  $("conversations-title").hidden = conversations.length === 0;
  const running = conversations.some((/** @type {ConversationView} */ c) => c.running);
  $("stop-all").hidden = !running && !s.sessions.some((/** @type {SessionView} */ x) => !x.paused);
  const asks = s.hidden_asks ?? [];
  // Redrawn only when the questions changed: a button replaced between press and release loses the click.
  const drawnAsks = JSON.stringify(asks);
  if (drawnAsks !== shownAsks) {
    shownAsks = drawnAsks;
    $("hidden-asks").replaceChildren(...asks.map(hiddenAskItem));
  }
  $("hidden-asks-section").hidden = asks.length === 0;
}

/** What each kind of question asks, and its buttons as [answer, label], the yes last (as in the page). */
const ASK_TEXT = {
  borrow: { title: "An agent asks to use a tab", buttons: [["deny", "Deny"], ["allow", "Allow"]] },
  approve: { title: "Allow this action?", buttons: [["deny", "Deny"], ["allow", "Allow"]] },
  help: { title: "The agent needs your help", buttons: [["cancel", "Cancel"], ["done", "Done"]] },
};

/**
 * A question the page keeps the person from answering in it (person/hidden-asks.js), answered here.
 * @typedef {{requestId: string, kind: keyof ASK_TEXT, tabId: number, view: Record<string, any>, why: string}} HiddenAskView
 * @param {HiddenAskView} a
 */
function hiddenAskItem(a) {
  const text = ASK_TEXT[a.kind];
  const li = document.createElement("li");
  li.dataset.ask = a.requestId;
  li.dataset.kind = a.kind;
  const about = document.createElement("div");
  about.className = "about";
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = a.kind === "approve" && a.view.title ? String(a.view.title) : text.title;
  const detail = document.createElement("div");
  detail.className = "tab";
  const said = a.kind === "borrow" ? a.view.reason : a.kind === "approve" ? a.view.target : a.view.prompt;
  detail.textContent = [`session ${a.view.session_id}`, said ? String(said) : ""].filter(Boolean).join(" · ");
  const why = document.createElement("div");
  why.className = "paused why";
  why.textContent = `The page is hiding this question in its tab: ${a.why}.`;
  about.append(name, detail, why);
  li.append(about);
  for (const [answer, label] of text.buttons) {
    const b = button(label, answer === "deny" || answer === "cancel" ? "" : "answer", (event) => {
      // Only the person's own click: nothing else runs in this page, and nothing else ever should answer.
      if (event.isTrusted) send("answer_hidden", { request_id: a.requestId, answer });
    });
    b.dataset.answer = answer;
    li.append(b);
  }
  return li;
}

/**
 * @typedef {{sessionId: string, windowId: number, tab: {id: number, title: string, url: string} | null, paused: boolean, borrowed: number}} SessionView
 * @param {string} text @param {string} className @param {(event: MouseEvent) => void} onClick
 */
function button(text, className, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (className) b.className = className;
  b.addEventListener("click", onClick);
  return b;
}

/** One live session: its name, window and current tab, and Stop (or Resume once stopped). @param {SessionView} x */
function sessionItem(x) {
  const li = document.createElement("li");
  li.dataset.session = x.sessionId;
  const about = document.createElement("div");
  about.className = "about";
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = x.sessionId;
  const tab = document.createElement("div");
  tab.className = "tab";
  tab.textContent = x.tab ? x.tab.title || x.tab.url || "blank tab" : "no tab";
  tab.title = x.tab ? `${x.tab.title}\n${x.tab.url}` : "";
  about.append(name, tab);
  if (x.borrowed > 0) tab.textContent += ` · ${x.borrowed} borrowed`;
  if (x.paused) {
    const paused = document.createElement("div");
    paused.className = "paused";
    paused.textContent = "stopped";
    about.append(paused);
  }
  const show = button("Show", "", () => send("show_session", x.sessionId));
  show.title = `Bring window ${x.windowId} (this session's Agent Window) to the front`;
  const stopOrResume = x.paused
    ? button("Resume", "", () => send("resume_session", x.sessionId))
    : button("Stop", "stop", () => send("stop_session", x.sessionId));
  li.append(about, show, stopOrResume);
  return li;
}

/**
 * One side-panel conversation: its title, its tab's site, and Stop while its turn runs.
 * @typedef {{conversation_id: string, title: string, url: string, agent: string, running: boolean}} ConversationView
 * @param {ConversationView} c
 */
function conversationItem(c) {
  const li = document.createElement("li");
  li.dataset.conversation = c.conversation_id;
  const about = document.createElement("div");
  about.className = "about";
  const name = document.createElement("div");
  name.className = "name";
  name.textContent = c.title || "New chat";
  const where = document.createElement("div");
  where.className = "tab";
  let host = "";
  try {
    host = new URL(c.url).host;
  } catch {
    host = "";
  }
  where.textContent = [c.agent, host, c.running ? "running" : ""].filter(Boolean).join(" · ");
  about.append(name, where);
  li.append(about);
  if (c.running) li.append(button("Stop", "stop", () => send("stop_conversation", c.conversation_id)));
  return li;
}

$("stop-all").addEventListener("click", () => send("stop_all", null));

// Known before any click: the side panel opens only inside the click's own turn (no await first).
/** @type {number | undefined} */
let windowId;
chrome.windows.getCurrent().then((w) => (windowId = w.id));
$("open-panel").addEventListener("click", () => {
  if (windowId === undefined) {
    showText($("last-error"), "This window is not known yet: click again in a moment.");
    return;
  }
  chrome.sidePanel.open({ windowId }).then(
    // The popup has done its job; popup.html opened in a tab stays.
    async () => (await chrome.tabs.getCurrent()) === undefined && window.close(),
    (err) => showText($("last-error"), String(err?.message ?? err)),
  );
});

port.onMessage.addListener(render);

$("enabled").addEventListener("click", () => {
  if (last) send("set_enabled", !last.enabled);
});

$("pair-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const code = input("code").value.toUpperCase().replace(/[^A-Z0-9]/g, "");
  if (code.length !== CODE_LENGTH || !CODE_ALPHABET.test(code)) {
    showText($("code-error"), "A code has 8 letters and digits, like ABCD-EFGH.");
    return;
  }
  showText($("code-error"), null);
  input("code").value = "";
  send("pair", code);
});

function commitLabel() {
  const value = input("label").value.trim();
  if (last && value !== last.label) send("set_label", value);
}
input("label").addEventListener("blur", commitLabel);
input("label").addEventListener("keydown", (event) => {
  if (event.key === "Enter") input("label").blur();
});

$("port-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = Number(input("port").value);
  if (Number.isInteger(value) && value >= 1 && value <= 65535) send("set_port", value);
  input("port").blur();
});

$("copy").addEventListener("click", async () => {
  if (!last?.instanceId) return;
  await navigator.clipboard.writeText(last.instanceId);
  $("copy").textContent = "copied";
});
