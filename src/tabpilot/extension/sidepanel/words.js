// @ts-check
// The one place where a machine's code becomes words for the person: error codes and reasons from the
// daemon and the extension (tabpilot/protocol.py), the agent CLI's own failure codes, and its retries.
// Nothing the panel shows carries a raw code, a tab id or JSON.

const REASON_WORDS = /** @type {Record<string, string>} */ ({
  site_blocked: "This site is blocked for agents",
  unknown_tab: "That tab is closed",
  tab_closed: "The tab was closed",
  unknown_conversation: "This conversation no longer exists",
  session_inactive: "This conversation is not active any more",
  unknown_workspace: "That working folder is not set up any more",
  agent_missing: "The agent CLI is not installed",
  agent_unusable: "The agent CLI cannot be used as it is set up",
  agent_unsafe: "The agent CLI was refused: it is not safe to run as set up",
  run_in_progress: "The agent is still working on this chat",
  run_limit: "Too many agents are running at once: stop one first",
  not_paired: "tabpilot is not paired with this browser",
  daemon_not_running: "tabpilot's daemon is not running",
  user_declined: "You declined",
  approval_timeout: "Not answered in time",
  browser_page: "The agent cannot work on the browser's own pages",
});

const CODE_WORDS = /** @type {Record<string, string>} */ ({
  invalid_params: "That could not be done",
  not_found: "That could not be found",
  permission_denied: "That is not allowed",
  user_aborted: "You stopped it",
  blocked_site: "This site is blocked for agents",
  no_browser_connected: "The browser is not connected to tabpilot",
  protocol_error: "tabpilot and the extension did not understand each other",
  cancelled: "It was cancelled",
  daemon_unreachable: "tabpilot's daemon cannot be reached",
  cdp_failed: "The browser refused the action",
  timeout: "It took too long",
  unknown_method: "This version of tabpilot cannot do that",
  unsupported: "This version of tabpilot cannot do that",
  version_too_old: "tabpilot is too old for this extension",
  pairing_required: "tabpilot is not paired with this browser",
  auth_failed: "The daemon could not be authenticated",
  // The agent CLI's own reasons for a failed turn.
  api_error: "Your agent's model service failed",
  error_max_turns: "The agent stopped: it reached its limit of steps",
  error_during_execution: "The agent failed while working",
  turn_failed: "The agent failed while working",
  agent_exited: "The agent CLI exited unexpectedly",
  spawn_failed: "The agent CLI could not be started",
});

/**
 * The agent CLI's message without what only a machine reads: a JSON body becomes its own message, a
 * leading `code:` goes.
 * @param {string} message
 */
export function plainMessage(message) {
  let text = message.replace(/^\s*[a-z]+(?:_[a-z]+)+:\s*/, "");
  const at = text.indexOf("{");
  if (at >= 0) {
    try {
      const body = JSON.parse(text.slice(at));
      const inner = body?.error?.message ?? body?.message;
      text = `${text.slice(0, at).trim()} ${typeof inner === "string" ? inner : ""}`.trim();
    } catch {
      // Not JSON after all: the text as it is.
    }
  }
  // Messages written for agents name the person and carry their reason in brackets: `(user_declined)`.
  return text
    .replace(/\s*\([a-z]+(?:_[a-z]+)+\)/g, "")
    .replace(/\btab \d+\b/g, "the tab")
    .replace(/\bthe person's\b/gi, "your")
    .replace(/\bthe person\b/gi, "you");
}

/**
 * Words for a failure. A known reason or code is worded here; the agent's own message follows it, cleaned.
 * @param {{code?: unknown, reason?: unknown, message?: unknown, hint?: unknown}} failure
 */
export function failureWords({ code, reason, message, hint }) {
  const known = REASON_WORDS[String(reason ?? "")] ?? CODE_WORDS[String(code ?? "")];
  const detail = typeof message === "string" ? plainMessage(message) : "";
  const lead = known ?? (detail || "Something went wrong");
  // A message that opens with the same words goes on from where they end.
  const more = !known || !detail ? "" : detail.toLowerCase().startsWith(known.toLowerCase()) ? detail.slice(known.length) : `: ${detail}`;
  return `${lead}${more}${typeof hint === "string" && hint ? ` (${hint})` : ""}`;
}

/**
 * The agent CLI's report that its model API failed and it tries again.
 * @param {{attempt?: number, max_retries?: number, delay_ms?: number, status?: number}} retry @param {boolean} over the turn has ended
 */
export function retryWords({ attempt = 0, max_retries: max = 0, delay_ms: delay = 0, status }, over) {
  const why = status ? `the model service answered with an error (HTTP ${status})` : "the model service could not be reached";
  const of = max ? ` of ${max}` : "";
  if (over) return `Retried ${attempt} ${attempt === 1 ? "time" : "times"}${max ? ` (at most ${max})` : ""}: ${why}`;
  const wait = delay >= 1000 ? `${Math.round(delay / 1000)} s` : "a moment";
  return `Retrying (attempt ${attempt}${of}, in ${wait}): ${why}`;
}
