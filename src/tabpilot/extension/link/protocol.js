// @ts-check
// The wire contract shared with the daemon (twin: src/tabpilot/protocol.py).
// Both twins are checked against tests/vectors/protocol.json; change them together.

export const PROTOCOL_VERSION = "1.0";
export const MIN_COMPATIBLE_PROTOCOL = "1.0";
export const DEFAULT_PORT = 52830;
export const EXTENSION_CLIENT = "tabpilot-extension";
export const MAX_PROTOCOL_MAJOR = Number.MAX_SAFE_INTEGER;

/** Error code → CLI exit code. The keys are the closed set of error codes. */
export const ERROR_EXIT_CODES = Object.freeze({
  invalid_params: 1,
  not_found: 1,
  permission_denied: 1,
  multiple_browsers_online: 1,
  user_aborted: 1,
  blocked_site: 1,
  no_browser_connected: 2,
  protocol_error: 2,
  cancelled: 2,
  daemon_unreachable: 2,
  cdp_failed: 3,
  timeout: 4,
  unknown_method: 5,
  unsupported: 5,
  version_too_old: 5,
  pairing_required: 5,
  auth_failed: 5,
});

export const ERROR_CODES = Object.freeze(new Set(Object.keys(ERROR_EXIT_CODES)));

/** Stable machine hints carried in error.data.reason. */
export const REASONS = Object.freeze(
  new Set([
    "agent_window_scope",
    "borrow_denied",
    "borrow_timeout",
    "site_blocked",
    "not_borrowed",
    "already_borrowed",
    "help_unavailable",
    "user_interrupt",
    "session_paused",
    "borrow_conflict",
    "user_declined",
    "approval_timeout",
    "ref_not_found",
    "ref_stale",
    "selector_not_found",
    "element_not_visible",
    "unknown_session",
    "session_exists",
    "session_stopped",
    "unknown_tab",
    "tab_closed",
    "unknown_browser",
    "browser_disconnected",
    "window_closed",
    "element_covered",
    "element_disabled",
    "element_not_editable",
    "element_not_checkable",
    "element_not_ready",
    "target_not_select",
    "option_not_found",
    "option_disabled",
    "dialog_open",
    "no_dialog",
    "invalid_selector",
    "file_not_found",
    "file_unreadable",
    "file_too_large",
    "too_many_files",
    "not_a_file_input",
    "value_mismatch",
    "unknown_key",
    "frame_detached",
    "wait_timeout",
    "tool_timeout",
    "bad_url",
    "url_scheme_refused",
    "file_url_refused",
    "browser_page",
    "navigation_failed",
    "navigation_timeout",
    "no_history_entry",
    "debugger_conflict",
    "debugger_detached",
    "page_not_debuggable",
    "rpc_timeout",
    "rpc_cancelled",
    "duplicate_rpc_id",
    "client_disconnected",
    "daemon_not_running",
    "daemon_start_failed",
    "socket_refused",
    "bad_frame",
    "handshake_required",
    "protocol_incompatible",
    "not_paired",
    "wrong_pairing_code",
    "pairing_throttled",
    "pairing_expired",
    "bad_proof",
    "agent_missing",
    "agent_unusable",
    "agent_unsafe",
    "run_in_progress",
    "run_limit",
    "session_inactive",
    "unknown_conversation",
    "unknown_workspace",
  ]),
);

export const EXTENSION_METHODS = Object.freeze(
  new Set([
    "cancel",
    "system.ping",
    "tool.session_start",
    "tool.session_stop",
    "tool.tab_list",
    "tool.tab_create",
    "tool.tab_close",
    "tool.tab_select",
    "tool.navigate",
    "tool.navigate_back",
    "tool.navigate_forward",
    "tool.reload",
    "tool.evaluate",
    "tool.screenshot",
    "tool.tab_borrow",
    "tool.tab_return",
    "tool.request_help",
    "tool.snapshot",
    "tool.find",
    "tool.text",
    "tool.html",
    "tool.console",
    "tool.click",
    "tool.hover",
    "tool.focus",
    "tool.fill",
    "tool.type",
    "tool.press",
    "tool.select",
    "tool.check",
    "tool.scroll",
    "tool.drag",
    "tool.upload",
    "tool.wait",
    "tool.dialog",
    "tool.downloads_list",
    "tool.downloads_wait",
    "tool.network_requests",
    "tool.network_request",
    "tool.network_route",
    "tool.network_unroute",
    "tool.network_headers",
    "tool.network_credentials",
    "tool.init_script_add",
    "tool.init_script_list",
    "tool.init_script_remove",
    "tool.cookies",
    "tool.storage",
    "tool.state_save",
    "tool.state_load",
    "tool.emulate",
    "tool.pdf",
  ]),
);

export const HANDSHAKE_METHOD = "system.handshake";
export const AUTHENTICATE_METHOD = "system.authenticate";
export const EXTENSION_EVENTS = Object.freeze(
  new Set(["session.window_closed", "session.user_interrupt", "session.user_resume", "browser.label_changed", "chat.tab_closed", "chat.approval"]),
);

/** Methods the daemon serves to this extension once authenticated (the side panel's). */
export const PANEL_METHODS = Object.freeze(
  new Set(["agent.list", "chat.start", "chat.send", "chat.attach", "chat.detach", "chat.stop", "chat.list", "chat.get", "chat.delete", "chat.answer"]),
);
/** Events the daemon pushes to the extension. */
export const DAEMON_EVENTS = Object.freeze(new Set(["chat.event"]));
/** What a chat.event's `kind` may be. */
export const CHAT_EVENT_KINDS = Object.freeze([
  "user",
  "turn_start",
  "session",
  "text",
  "tool",
  "tool_result",
  "permission",
  "permission_end",
  "approval",
  "approval_end",
  "error",
  "turn_end",
]);
/** Panel session ids start with this: such a session acts on the person's own tab, in place. */
export const PANEL_SESSION_PREFIX = "p-";
export const WAIT_UNTIL = Object.freeze(["commit", "domcontentloaded", "load", "networkidle"]);

/** A string the page supplied (a label, an option, a cover's text), to be put in words with `said`. */
export class PageString {
  /** @param {unknown} text */
  constructor(text) {
    this.text = String(text);
  }
}

/** @param {unknown} text */
export function fromPage(text) {
  return new PageString(text);
}

/**
 * tabpilot's words with page strings in them, kept apart so that every client can fence the page's
 * (a page that writes "SYSTEM NOTE: …" into an option label must not read as tabpilot talking):
 * `parts` alternates tabpilot's words (even indices) and the page's (odd); `text` is them joined.
 */
export class Said {
  /** @param {string[]} parts */
  constructor(parts) {
    this.parts = parts;
    this.text = parts.join("");
  }

  toString() {
    return this.text;
  }
}

/**
 * A tagged template: `said\`${fromPage(label)} is disabled\``; a Said inside another keeps its parts.
 * @param {TemplateStringsArray} strings @param {unknown[]} values
 */
export function said(strings, ...values) {
  const parts = [strings[0]];
  values.forEach((value, i) => {
    const inner = value instanceof PageString ? ["", value.text, ""] : value instanceof Said ? value.parts : [String(value)];
    parts[parts.length - 1] += inner[0];
    parts.push(...inner.slice(1));
    parts[parts.length - 1] += strings[i + 1];
  });
  return new Said(parts);
}

/**
 * The wire form of words that may hold page strings: the text, and its parts when the page is in it.
 * @param {string | Said} words
 * @returns {[string, string[] | null]}
 */
function wireWords(words) {
  if (!(words instanceof Said)) return [String(words), null];
  return [words.text, words.parts.length > 1 ? words.parts : null];
}

/** An error that crosses the wire as {code, message, data}. Thrown inside, sent as a value. */
export class RpcError extends Error {
  /**
   * Page strings in the message or the hint (a Said) go along as `data.message_parts` / `data.hint_parts`.
   * @param {string} code one of ERROR_CODES
   * @param {string | Said} message
   * @param {string} [reason] one of REASONS
   * @param {Record<string, unknown>} [data]
   */
  constructor(code, message, reason, data = {}) {
    if (!ERROR_CODES.has(code)) throw new Error(`unknown error code ${code}`);
    if (reason !== undefined && !REASONS.has(reason)) throw new Error(`unknown error reason ${reason}`);
    const [text, parts] = wireWords(message);
    super(text);
    this.name = "RpcError";
    this.code = code;
    /** @type {Record<string, unknown>} */
    this.data = { ...data };
    if (parts) this.data.message_parts = parts;
    if (data.hint instanceof Said) {
      const [hint, hintParts] = wireWords(data.hint);
      this.data.hint = hint;
      if (hintParts) this.data.hint_parts = hintParts;
    }
    if (reason !== undefined) this.data.reason = reason;
  }

  get reason() {
    return /** @type {string | undefined} */ (this.data.reason);
  }

  toWire() {
    /** @type {{code: string, message: string, data?: Record<string, unknown>}} */
    const error = { code: this.code, message: this.message };
    if (Object.keys(this.data).length > 0) error.data = this.data;
    return error;
  }
}

/** @param {string} id @param {string} method @param {Record<string, unknown>} [params] */
export function request(id, method, params = {}) {
  return { id, method, params };
}

/** @param {string} id @param {unknown} result */
export function response(id, result) {
  return { id, result };
}

/** @param {string | null} id @param {RpcError} error */
export function errorResponse(id, error) {
  return { id, error: error.toWire() };
}

/** @param {string} name @param {Record<string, unknown>} [payload] */
export function event(name, payload = {}) {
  return { event: name, payload };
}

/**
 * An interim frame for a request still running (e.g. waiting for the person's approval).
 * @param {string} id @param {Record<string, unknown>} payload
 */
export function progress(id, payload) {
  return { id, progress: payload };
}

/** @param {unknown} value */
function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Classify an inbound frame.
 * @param {unknown} frame
 * @returns {"request" | "response" | "progress" | "event" | null}
 */
export function classify(frame) {
  if (!isPlainObject(frame)) return null;
  const f = /** @type {Record<string, unknown>} */ (frame);
  const idOk = typeof f.id === "string" && f.id.length > 0;
  if (typeof f.method === "string") {
    if (!idOk) return null;
    const params = f.params;
    return params === undefined || params === null || isPlainObject(params) ? "request" : null;
  }
  if ("result" in f || "error" in f) {
    if ("result" in f && "error" in f) return null;
    return idOk ? "response" : null;
  }
  if ("progress" in f) return idOk && isPlainObject(f.progress) ? "progress" : null;
  if (typeof f.event === "string" && f.event.length > 0) {
    const payload = f.payload;
    return payload === undefined || payload === null || isPlainObject(payload) ? "event" : null;
  }
  return null;
}

/** @param {string} text */
function isAsciiDigits(text) {
  return /^[0-9]+$/.test(text);
}

/**
 * The major of a MAJOR[.MINOR…] protocol string; null unless a plain safe integer.
 * @param {unknown} version
 */
export function parseProtocolMajor(version) {
  if (typeof version !== "string") return null;
  const head = version.split(".", 1)[0];
  if (!isAsciiDigits(head)) return null;
  const major = Number(head);
  return Number.isSafeInteger(major) && major <= MAX_PROTOCOL_MAJOR ? major : null;
}

/**
 * [major, minor] of a protocol string; missing or empty minor is 0; later segments ignored.
 * @param {unknown} version
 * @returns {[number, number] | null}
 */
export function parseProtocolVersion(version) {
  const major = parseProtocolMajor(version);
  if (major === null) return null;
  const parts = /** @type {string} */ (version).split(".");
  const minorText = parts.length > 1 ? parts[1] : "";
  if (minorText === "") return [major, 0];
  if (!isAsciiDigits(minorText)) return null;
  const minor = Number(minorText);
  return Number.isSafeInteger(minor) ? [major, minor] : null;
}

/** @param {[number, number]} a @param {[number, number]} b */
function lessThan(a, b) {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

/**
 * Whether a peer may talk to us. Symmetric with protocol.py's compatibility_verdict.
 * @param {string} localProtocol
 * @param {string} localFloor
 * @param {unknown} remoteProtocol
 * @param {unknown} [remoteFloor]
 * @returns {["connected" | "version_skew" | "rejected", string]}
 */
export function compatibilityVerdict(localProtocol, localFloor, remoteProtocol, remoteFloor = null) {
  const localMajor = parseProtocolMajor(localProtocol);
  const remoteMajor = parseProtocolMajor(remoteProtocol);
  if (localMajor === null || remoteMajor === null || localMajor !== remoteMajor) {
    return ["rejected", `protocol-major mismatch (peer protocol v${remoteProtocol}, ours v${localProtocol})`];
  }
  const remote = parseProtocolVersion(remoteProtocol);
  if (remote === null) return ["rejected", `peer protocol '${remoteProtocol}' is unparseable`];
  const floor = parseProtocolVersion(localFloor);
  if (floor !== null && lessThan(remote, floor)) {
    return ["rejected", `peer protocol v${remoteProtocol} is below our min_compatible_protocol v${localFloor}`];
  }
  if (remoteFloor !== null && remoteFloor !== undefined) {
    const parsedRemoteFloor = parseProtocolVersion(remoteFloor);
    if (parsedRemoteFloor === null) {
      return ["rejected", `peer min_compatible_protocol '${remoteFloor}' is unparseable`];
    }
    const local = parseProtocolVersion(localProtocol);
    if (local === null || lessThan(local, parsedRemoteFloor)) {
      return [
        "rejected",
        `our protocol v${localProtocol} is below the peer's min_compatible_protocol v${remoteFloor}`,
      ];
    }
  }
  if (remoteProtocol === localProtocol) return ["connected", "protocol versions match"];
  return ["version_skew", `protocol v${remoteProtocol} differs from ours (v${localProtocol}) but is compatible`];
}
