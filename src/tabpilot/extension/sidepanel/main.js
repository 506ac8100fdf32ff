// @ts-check
// The side panel page: shows the conversation of the tab it looks at (the active tab of its window, or
// the tab named by ?tab= when popped out), lets the person pick their agent and folder, type, attach,
// stop, and reopen a conversation from History. All state that matters lives in the daemon; this page
// keeps only what it rendered (the timeline and its last seq) to re-attach from.
import { createPanelLink, PanelError } from "./link.js";
import { emptyTimeline, applyEvent, applyEvents } from "./timeline.js";
import { createTimelineView } from "./view.js";
import { createComposerQueue } from "./composer.js";
import { PANEL_PAGE } from "../panel/names.js";

const AGENT_KEY = "tabpilot.panel.agent";
const WORKSPACE_KEY = "tabpilot.panel.workspace";
const STATE_TEXT = /** @type {Record<string, string>} */ ({
  connected: "Connected to tabpilot",
  version_skew: "Connected (versions differ)",
  connecting: "Connecting to tabpilot…",
  not_paired: "Not paired: run `tabpilot pair` and enter the code in the toolbar popup",
  auth_failed: "The daemon could not be authenticated",
  disconnected: "tabpilot's daemon is not running: start it with `tabpilot daemon start`",
  off: "The connection is switched off in the toolbar popup",
});

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const agentSelect = /** @type {HTMLSelectElement} */ ($("agent"));
const workspaceSelect = /** @type {HTMLSelectElement} */ ($("workspace"));
const input = /** @type {HTMLTextAreaElement} */ ($("input"));
const sendButton = /** @type {HTMLButtonElement} */ ($("send"));

const pinned = Number(new URLSearchParams(location.search).get("tab")) || null;

/** What the page shows now. */
const shown = {
  /** @type {number | null} */ tabId: null,
  /** @type {{url: string, title: string, blocked: {code: string, message: string} | null} | null} */ tab: null,
  /** @type {string | null} */ cid: null,
  timeline: emptyTimeline(),
  linkState: "connecting",
  /** The link has been up since this page opened (so a later "up" is it coming back). */
  linkWasUp: false,
  /** @type {any[]} */ agents: [],
};
/** @type {Set<string>} */
const attachNext = new Set();

const view = createTimelineView($("timeline"), $("latest"), { onAnswer: (card, answer) => void answerCard(card, answer) });
const link = createPanelLink({
  connect: (name) => chrome.runtime.connect({ name }),
  onPush,
  onReconnect: () => void resync(),
});
const composer = createComposerQueue({ send: sendNow });
composer.onChange(renderComposer);

/** @param {HTMLElement} el @param {string | null} text @param {boolean} [error] */
function note(el, text, error = false) {
  el.hidden = !text;
  el.textContent = text ?? "";
  el.classList.toggle("error", error);
}

/** @param {unknown} err */
function describe(err) {
  if (err instanceof PanelError) return `${err.code}: ${err.message}${err.hint ? ` (${err.hint})` : ""}`;
  return err instanceof Error ? err.message : String(err);
}

/** @param {any} message */
function onPush(message) {
  if (message.push === "status") return showLink(message.link);
  if (message.push === "hidden") return view.hidden(message.approval_ids);
  if (message.push !== "event" || message.conversation_id !== shown.cid) return;
  const changed = applyEvent(shown.timeline, message.event);
  if (changed === null) return;
  view.update(changed);
  if (message.event.kind === "turn_start" || message.event.kind === "turn_end") void composer.setRunning(shown.timeline.running).catch(showSendError);
  renderComposer();
}

/** @param {{state: string, error: string | null}} s */
function showLink(s) {
  const wasUp = shown.linkState === "connected" || shown.linkState === "version_skew";
  shown.linkState = s.state;
  $("link-dot").dataset.state = s.state;
  $("link-dot").title = s.error ? `${STATE_TEXT[s.state] ?? s.state}: ${s.error}` : (STATE_TEXT[s.state] ?? s.state);
  const up = s.state === "connected" || s.state === "version_skew";
  if (up && !wasUp) {
    void loadAgents();
    // The link came back (a restarted worker reconnects to the daemon in its own time): catch up from
    // what this page rendered, whether or not its re-attach went out before the link was there.
    if (shown.linkWasUp && shown.cid) void attach(shown.cid).catch((err) => note($("tab-note"), describe(err), true));
    shown.linkWasUp = true;
  }
  renderComposer();
}

function usable() {
  const agent = shown.agents.find((a) => a.id === agentSelect.value);
  if (shown.linkState !== "connected" && shown.linkState !== "version_skew") return STATE_TEXT[shown.linkState] ?? "Not connected";
  if (shown.tabId === null) return "No tab to chat about";
  if (shown.tab?.blocked) return "This site is blocked for agents: the panel cannot be used on it";
  if (!shown.cid && (!agent || !agent.ready)) return "Pick an agent that is ready";
  return null;
}

function renderComposer() {
  $("empty").hidden = shown.timeline.items.length > 0;
  const why = usable();
  const running = shown.timeline.running || composer.running;
  sendButton.textContent = running ? "Stop" : "Send";
  sendButton.classList.toggle("stop", running);
  sendButton.disabled = !running && why !== null;
  input.disabled = why !== null && !running;
  for (const b of document.querySelectorAll("[data-attach]")) {
    const button = /** @type {HTMLButtonElement} */ (b);
    button.disabled = why !== null;
    button.setAttribute("aria-pressed", String(attachNext.has(button.dataset.attach ?? "")));
  }
  const queued = composer.queued;
  note($("queued"), queued.length ? `${queued.length} queued: sent when this turn ends` : null);
  if (why && !running) note($("composer-note"), why, Boolean(shown.tab?.blocked));
  else if ($("composer-note").dataset.kind !== "error") note($("composer-note"), null);
}

/** @param {unknown} err */
function showSendError(err) {
  note($("composer-note"), describe(err), true);
  $("composer-note").dataset.kind = "error";
  renderComposer();
}

async function loadAgents() {
  try {
    const { agents = [], workspaces = [] } = await link.call("agents");
    shown.agents = agents;
    const wanted = localStorage.getItem(AGENT_KEY);
    agentSelect.replaceChildren(
      ...agents.map((/** @type {any} */ a) => {
        const option = new Option(a.ready ? a.label : `${a.label} (${a.state === "not_installed" ? "not installed" : "needs setup"})`, a.id);
        option.title = a.version ?? a.reason ?? "";
        return option;
      }),
    );
    const pick = agents.find((/** @type {any} */ a) => a.id === wanted) ?? agents.find((/** @type {any} */ a) => a.ready) ?? agents[0];
    if (pick) agentSelect.value = pick.id;
    const folder = localStorage.getItem(WORKSPACE_KEY) ?? "";
    workspaceSelect.replaceChildren(new Option("Browser only", ""), ...workspaces.map((/** @type {any} */ w) => new Option(w.label, w.id)));
    workspaceSelect.value = workspaces.some((/** @type {any} */ w) => w.id === folder) ? folder : "";
    showAgentNote();
  } catch (err) {
    note($("agent-note"), describe(err), true);
  }
  renderComposer();
}

function showAgentNote() {
  const a = shown.agents.find((x) => x.id === agentSelect.value);
  if (!a || a.ready) return note($("agent-note"), null);
  note($("agent-note"), `${a.label}: ${a.reason ?? a.state}${a.hint ? `. Fix: ${a.hint}` : ""}`, true);
}

/** Show a tab: its conversation (if any) and whether the panel may be used on it. @param {number} tabId */
async function showTab(tabId) {
  const another = tabId !== shown.tabId;
  shown.tabId = tabId;
  // Another tab (or the first, in a reopened panel): its conversation and backlog are asked for by tab,
  // beside the tab itself, so they come a round trip sooner; they are shown the moment they come, so
  // no live event after them is missed.
  const early = another ? link.call("attach", { tab_id: tabId, since_seq: 0 }).then((reply) => adopt(tabId, reply)) : null;
  early?.catch(() => {});
  try {
    const info = await link.call("tab", { tab_id: tabId });
    if (shown.tabId !== tabId) return;
    shown.tab = info;
    note($("tab-note"), info.blocked ? `${info.blocked.message}` : null, Boolean(info.blocked));
    await early;
    // The tab's conversation changed between the two answers.
    if (shown.tabId === tabId && info.conversation_id !== shown.cid) await switchTo(info.conversation_id);
  } catch (err) {
    note($("tab-note"), describe(err), true);
  }
  renderComposer();
}

/**
 * A tab's conversation and backlog, asked for by tab: shown if that tab still is, else let go.
 * @param {number} tabId @param {any} reply
 */
async function adopt(tabId, reply) {
  const cid = reply.conversation_id ?? null;
  if (shown.tabId === tabId) {
    if (cid !== shown.cid) await switchTo(cid, reply);
  } else if (cid !== null && cid !== shown.cid) {
    void link.call("detach", { conversation_id: cid }).catch(() => {});
  }
}

/** @param {string | null} cid @param {any} [backlog] its backlog from the first event, when it came already */
async function switchTo(cid, backlog = null) {
  if (shown.cid) void link.call("detach", { conversation_id: shown.cid }).catch(() => {});
  shown.cid = cid;
  shown.timeline = emptyTimeline();
  view.clear();
  composer.clear();
  delete $("composer-note").dataset.kind;
  if (cid) await attach(cid, backlog);
}

/**
 * Attach to the shown conversation from the last event rendered (0: everything).
 * @param {string} cid @param {any} [backlog] the answer, when it came already (then it is shown at once)
 */
async function attach(cid, backlog = null) {
  const reply = backlog ?? (await link.call("attach", { conversation_id: cid, since_seq: shown.timeline.lastSeq }));
  if (shown.cid !== cid) return;
  applyEvents(shown.timeline, reply.events ?? []);
  // A backlog renders in one pass; items already on screen are updated in place.
  view.update(shown.timeline.items);
  shown.timeline.running = Boolean(reply.running);
  await composer.setRunning(shown.timeline.running).catch(showSendError);
  renderComposer();
}

/** After a worker restart: the page re-attaches from what it has rendered. */
async function resync() {
  const s = await link.call("status").catch(() => null);
  if (s) showLink(s.link);
  if (shown.cid) await attach(shown.cid).catch((err) => note($("tab-note"), describe(err), true));
  else if (shown.tabId !== null) await showTab(shown.tabId);
}

/** @param {{text: string, attach: string[]}} message */
async function sendNow(message) {
  delete $("composer-note").dataset.kind;
  if (!shown.cid) {
    const started = await link.call("start", { tab_id: shown.tabId, agent: agentSelect.value, workspace: workspaceSelect.value || null });
    await switchTo(started.conversation_id);
  }
  await link.call("send", { conversation_id: shown.cid, text: message.text, attach: message.attach, client_msg_id: crypto.randomUUID() });
}

async function submit() {
  const text = input.value;
  if (text.trim() === "" || usable() !== null) return;
  input.value = "";
  const attachments = [...attachNext];
  attachNext.clear();
  try {
    await composer.submit({ text, attach: attachments });
  } catch (err) {
    if (!input.value) input.value = text;
    showSendError(err);
  }
  renderComposer();
}

/**
 * The person answered a card: one of the agent's actions (the extension decides it) or the agent CLI's
 * own question (the daemon passes it on). @param {{kind: string, id: string}} card @param {string} answer
 */
async function answerCard(card, answer) {
  if (!shown.cid) return;
  const decision = answer === "deny" ? "deny" : "allow";
  try {
    if (card.kind === "approval") await link.call("answer", { conversation_id: shown.cid, approval_id: card.id, decision, always: answer === "always" });
    else await link.call("permit", { conversation_id: shown.cid, permission_id: card.id, decision });
  } catch (err) {
    showSendError(err);
  }
}

async function stop() {
  if (!shown.cid) return;
  await link.call("stop", { conversation_id: shown.cid }).catch(showSendError);
}

function newChat() {
  void switchTo(null);
  showHistory(false);
  renderComposer();
  input.focus();
}

/** @param {boolean} open */
async function showHistory(open) {
  $("history").hidden = !open;
  $("chat").hidden = open;
  $("history-button").setAttribute("aria-pressed", String(open));
  if (!open) return;
  try {
    const { conversations = [] } = await link.call("history");
    $("history-list").replaceChildren(...conversations.map(historyRow));
    note($("history-empty"), conversations.length ? null : "No conversations yet.");
  } catch (err) {
    note($("history-empty"), describe(err), true);
  }
}

/** @param {any} c a conversation's summary from chat.list */
function historyRow(c) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.conversation = c.conversation_id;
  const title = document.createElement("span");
  title.className = c.running ? "title running" : "title";
  title.textContent = c.title || "New chat";
  const meta = document.createElement("span");
  meta.className = "meta";
  let host = "";
  try {
    host = new URL(c.url).host;
  } catch {
    host = "";
  }
  const when = new Date((c.updated_at ?? c.created_at) * 1000).toLocaleString();
  meta.textContent = [host, c.agent, c.workspace ?? "browser only", when, `${c.turns} ${c.turns === 1 ? "turn" : "turns"}`].filter(Boolean).join(" · ");
  button.append(title, meta);
  button.addEventListener("click", () => void openConversation(c));
  li.append(button);
  return li;
}

/** Bind a conversation from History to the tab shown, so its next turn resumes the same agent conversation. @param {any} c */
async function openConversation(c) {
  if (shown.tabId === null) return;
  try {
    const started = await link.call("start", { tab_id: shown.tabId, agent: c.agent, workspace: c.workspace ?? null, conversation_id: c.conversation_id });
    await showHistory(false);
    await switchTo(started.conversation_id);
  } catch (err) {
    note($("history-empty"), describe(err), true);
  }
  renderComposer();
}

input.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  void submit();
});
$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  if (shown.timeline.running || composer.running) void stop();
  else void submit();
});
for (const b of document.querySelectorAll("[data-attach]")) {
  b.addEventListener("click", () => {
    const kind = /** @type {HTMLElement} */ (b).dataset.attach ?? "";
    if (attachNext.has(kind)) attachNext.delete(kind);
    else attachNext.add(kind);
    renderComposer();
  });
}
agentSelect.addEventListener("change", () => {
  localStorage.setItem(AGENT_KEY, agentSelect.value);
  showAgentNote();
  // Another agent cannot resume this one's conversation: it starts a new one.
  if (shown.cid) newChat();
  renderComposer();
});
workspaceSelect.addEventListener("change", () => {
  localStorage.setItem(WORKSPACE_KEY, workspaceSelect.value);
  if (shown.cid) newChat();
});
$("new-chat").addEventListener("click", newChat);
$("history-button").addEventListener("click", () => void showHistory($("history").hidden));
$("pop-out").addEventListener("click", () => {
  if (shown.tabId !== null) void chrome.tabs.create({ url: chrome.runtime.getURL(`${PANEL_PAGE}?tab=${shown.tabId}`) });
});

/** The tab this page shows first: the pinned one, or the active tab of its window (then followed). */
async function firstTab() {
  if (pinned !== null) {
    chrome.tabs.onUpdated.addListener((tabId, change) => {
      if (tabId === pinned && change.url) void showTab(pinned);
    });
    return pinned;
  }
  const win = await chrome.windows.getCurrent();
  // The panel document lives across tab switches: it follows the window's active tab.
  chrome.tabs.onActivated.addListener(({ tabId, windowId }) => {
    if (windowId === win.id) void showTab(tabId);
  });
  chrome.tabs.onUpdated.addListener((tabId, change) => {
    if (tabId === shown.tabId && change.url) void showTab(tabId);
  });
  const [active] = await chrome.tabs.query({ active: true, windowId: win.id });
  return active?.id ?? null;
}

async function start() {
  // The conversation first (a reopened panel shows it at once), the link's state beside it; the agent
  // list, which only a new chat needs, after both (showLink asks for it once the link is up).
  const status = link.call("status").catch(() => null);
  const tabId = await firstTab();
  if (tabId !== null) await showTab(tabId);
  const s = await status;
  if (s) showLink(s.link);
}

void start();
