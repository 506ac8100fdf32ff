// @ts-check
// A conversation's events (numbered by the daemon) folded into what the timeline shows: the person's
// bubbles, the agent's text, a row per tool call, notices. Pure: the page renders what changed.
// An event at or below the last seq already folded is dropped, so a backlog and live events may overlap.
import { unfenceMessage } from "../panel/fence.js";
import { outcomeLine } from "./outcome.js";
import { failureWords, retryWords } from "./words.js";

/**
 * @typedef {{type: "user", key: string, text: string, attachments: {kind: string, title: string}[]}} UserItem
 * @typedef {{type: "text", key: string, turnId: string, text: string, interrupted: boolean}} TextItem
 * @typedef {{type: "tool", key: string, callId: string, name: string, target: string, source: string,
 *   status: "running" | "ok" | "failed", summary: string, ms: number | null}} ToolItem
 * @typedef {{type: "notice", key: string, level: "error" | "stopped" | "interrupted" | "info" | "retry", text: string,
 *   retry?: any}} NoticeItem
 * @typedef {{type: "card", key: string, kind: "approval" | "permission", id: string, title: string, target: string,
 *   code: string | null, site: string | null, start: string | null, always: boolean, deadline: number | null,
 *   state: string, via: string}} CardItem
 *   A question to the person: one of the agent's actions the extension asks about (approval), or the
 *   agent CLI's own (permission). state: open until answered: allow, deny, timeout, stopped, tab_closed
 * @typedef {UserItem | TextItem | ToolItem | NoticeItem | CardItem} Item
 * @typedef {{lastSeq: number, running: boolean, turnId: string | null, items: Item[]}} Timeline
 */

/** @returns {Timeline} */
export function emptyTimeline() {
  return { lastSeq: 0, running: false, turnId: null, items: [] };
}

/** Keys of the input that name what a tool acts on, most telling first. */
const TARGET_KEYS = ["target", "ref", "selector", "url", "text", "key", "command", "query", "file_path", "path", "pattern"];

/** The one-line target of a tool call, from its input. @param {unknown} input */
export function targetOf(input) {
  if (!input || typeof input !== "object") return "";
  const record = /** @type {Record<string, unknown>} */ (input);
  for (const key of TARGET_KEYS) {
    const value = record[key];
    if (typeof value === "string" && value !== "") return value.length > 120 ? `${value.slice(0, 119)}…` : value;
  }
  return "";
}

/** What a permission card names: the command, file or whatever the tool's input says first. @param {unknown} input */
function permissionTarget(input) {
  return targetOf(input) || (input && typeof input === "object" ? JSON.stringify(input).slice(0, 200) : "");
}

/** The card of a question, found by its id among the items. @param {Timeline} t @param {string} kind @param {unknown} id */
function cardOf(t, kind, id) {
  return /** @type {CardItem | undefined} */ (t.items.findLast((i) => i.type === "card" && i.kind === kind && i.id === id));
}

/** @param {any} event @param {string} key @returns {CardItem} */
function approvalCard(event, key) {
  return {
    type: "card",
    key,
    kind: "approval",
    id: String(event.approval_id ?? key),
    title: String(event.title ?? "An action that needs your yes"),
    target: String(event.target ?? ""),
    code: typeof event.code === "string" ? event.code : null,
    site: typeof event.site === "string" ? event.site : null,
    start: typeof event.start === "string" ? event.start : null,
    always: event.always === true,
    deadline: typeof event.deadline === "number" ? event.deadline : null,
    state: "open",
    via: "",
  };
}

/** What the person reads when a turn ended without finishing. @param {string} reason */
function interruptedText(reason) {
  switch (reason) {
    case "stopped":
      return "Stopped";
    case "tab_closed":
      return "Interrupted: the tab was closed; what the agent had written is kept";
    case "daemon_restarted":
    case "daemon_stopped":
      return "Interrupted: tabpilot's daemon stopped during the turn; what the agent had written is kept";
    case "agent_exited":
      return "Interrupted: the agent CLI exited during the turn; what it had written is kept";
    default:
      return "Interrupted: the agent was stopped; what it had written is kept";
  }
}

/**
 * Fold one event in. Returns the items that were added or changed (to render), or null when the event
 * was already folded or shows nothing.
 * @param {Timeline} t @param {any} event
 * @returns {Item[] | null}
 */
export function applyEvent(t, event) {
  if (!event || typeof event.seq !== "number" || event.seq <= t.lastSeq) return null;
  t.lastSeq = event.seq;
  const key = `e${event.seq}`;
  /** @param {Item} item */
  const add = (item) => {
    t.items.push(item);
    return [item];
  };
  switch (event.kind) {
    case "user": {
      const { text, attachments } = unfenceMessage(String(event.text ?? ""));
      return add({ type: "user", key, text, attachments });
    }
    case "turn_start":
      t.running = true;
      t.turnId = event.turn_id ?? null;
      return [];
    case "text": {
      const delta = String(event.delta ?? "");
      const last = t.items.at(-1);
      if (last?.type === "text" && last.turnId === event.turn_id) {
        last.text += delta;
        return [last];
      }
      return add({ type: "text", key, turnId: event.turn_id, text: delta, interrupted: false });
    }
    case "tool":
      return add({
        type: "tool",
        key,
        callId: String(event.call_id ?? key),
        name: String(event.name ?? "tool"),
        target: targetOf(event.input),
        source: String(event.source ?? "agent"),
        status: "running",
        summary: "",
        ms: null,
      });
    case "tool_result": {
      const row = /** @type {ToolItem | undefined} */ (t.items.findLast((i) => i.type === "tool" && i.callId === event.call_id));
      if (!row) return null;
      row.status = event.ok === false || event.is_error === true ? "failed" : "ok";
      const said = event.summary ?? event.output ?? event.content;
      // A refused tabpilot call carries its code: worded for the person, not shown raw.
      row.summary = row.status === "failed" && typeof event.code === "string" ? failureWords({ code: event.code, reason: event.reason, message: String(said ?? "") }) : outcomeLine(row.name, row.source, said);
      row.ms = typeof event.ms === "number" ? event.ms : null;
      return [row];
    }
    case "approval":
      return add(approvalCard(event, key));
    case "permission":
      return add({
        type: "card",
        key,
        kind: "permission",
        id: String(event.permission_id ?? key),
        title: `The agent wants to use ${event.tool ?? event.tool_name ?? "a tool"}`,
        target: permissionTarget(event.input),
        code: null,
        site: null,
        start: null,
        always: false,
        deadline: null,
        state: "open",
        via: "",
      });
    case "approval_end":
    case "permission_end": {
      const card = cardOf(t, event.kind === "approval_end" ? "approval" : "permission", event.kind === "approval_end" ? event.approval_id : event.permission_id);
      if (!card) return null;
      card.state = String(event.decision ?? "deny");
      card.via = String(event.via ?? event.why ?? "");
      if (event.always === true) card.via = `${card.via} · always on ${card.site ?? "this site"}`;
      return [card];
    }
    case "retry": {
      // One status line per turn, brought up to date by each of the agent's retries.
      const last = /** @type {NoticeItem | undefined} */ (t.items.findLast((i) => i.type === "notice" && i.level === "retry"));
      if (last && last.retry?.turnId === event.turn_id) {
        last.retry = { ...event, turnId: event.turn_id };
        last.text = retryWords(event, false);
        return [last];
      }
      return add({ type: "notice", key, level: "retry", text: retryWords(event, false), retry: { ...event, turnId: event.turn_id } });
    }
    case "error":
      // A warning the agent CLI printed (fatal: false) is shown, quietly.
      return add({ type: "notice", key, level: event.fatal === false ? "info" : "error", text: failureWords(event) });
    case "turn_end": {
      t.running = false;
      t.turnId = null;
      /** @type {Item[]} */
      const changed = [];
      for (const row of t.items) {
        if (row.type === "tool" && row.status === "running") {
          row.status = "failed";
          row.summary = row.summary || "the turn ended before this call answered";
          changed.push(row);
        }
        if (row.type === "notice" && row.level === "retry" && row.retry?.turnId === event.turn_id) {
          row.text = retryWords(row.retry, true);
          changed.push(row);
        }
        // A question nobody answered by the end of its turn was a no.
        if (row.type === "card" && row.state === "open") {
          row.state = "stopped";
          changed.push(row);
        }
      }
      if (!event.interrupted) return changed;
      const text = /** @type {TextItem | undefined} */ (t.items.findLast((i) => i.type === "text" && i.turnId === event.turn_id));
      if (text) {
        text.interrupted = true;
        changed.push(text);
      }
      const reason = String(event.reason ?? "interrupted");
      t.items.push({ type: "notice", key, level: reason === "stopped" ? "stopped" : "interrupted", text: interruptedText(reason) });
      changed.push(/** @type {Item} */ (t.items.at(-1)));
      return changed;
    }
    default:
      return [];
  }
}

/** Fold a list of events (a backlog) in; returns whether anything changed. @param {Timeline} t @param {any[]} events */
export function applyEvents(t, events) {
  let changed = false;
  for (const e of events) changed = applyEvent(t, e) !== null || changed;
  return changed;
}

/** The agent's whole text so far, every turn, in order (what tests compare with what it sent). @param {Timeline} t */
export function agentText(t) {
  return t.items.filter((i) => i.type === "text").map((i) => /** @type {TextItem} */ (i).text).join("");
}
