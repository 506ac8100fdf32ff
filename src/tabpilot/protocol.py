"""The wire contract shared by the CLI, the daemon and the extension (twin: extension/link/protocol.js).

Frames are JSON objects: request ``{id, method, params}``, response ``{id, result}`` or
``{id, error: {code, message, data}}``, event ``{event, payload}``. Both twins are checked against
``tests/vectors/protocol.json``. This module is on the CLI's hot path: standard library only, and
only modules the interpreter already loads for ``json``.
"""

from __future__ import annotations

# typing costs ~5 ms per command; annotations are strings, so it is imported for checkers only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


PROTOCOL_VERSION = "1.0"
MIN_COMPATIBLE_PROTOCOL = "1.0"
DEFAULT_PORT = 52830
EXTENSION_ID = "abldppcldbamgeoepadjiaeommdfmihk"
DAEMON_NAME = "tabpilot-daemon"
EXTENSION_CLIENT = "tabpilot-extension"

# Largest protocol major both twins accept: JavaScript's Number.MAX_SAFE_INTEGER.
MAX_PROTOCOL_MAJOR = 2**53 - 1

# The closed set of error codes. The CLI maps each to an exit code.
EXIT_OK = 0
EXIT_USER = 1
EXIT_TRANSPORT = 2
EXIT_BROWSER = 3
EXIT_TIMEOUT = 4
EXIT_VERSION = 5

ERROR_EXIT_CODES: dict[str, int] = {
    "invalid_params": EXIT_USER,
    "not_found": EXIT_USER,
    "permission_denied": EXIT_USER,
    "multiple_browsers_online": EXIT_USER,
    "user_aborted": EXIT_USER,
    "blocked_site": EXIT_USER,
    "no_browser_connected": EXIT_TRANSPORT,
    "protocol_error": EXIT_TRANSPORT,
    "cancelled": EXIT_TRANSPORT,
    "daemon_unreachable": EXIT_TRANSPORT,
    "cdp_failed": EXIT_BROWSER,
    "timeout": EXIT_TIMEOUT,
    "unknown_method": EXIT_VERSION,
    "unsupported": EXIT_VERSION,
    "version_too_old": EXIT_VERSION,
    "pairing_required": EXIT_VERSION,
    "auth_failed": EXIT_VERSION,
}
ERROR_CODES = frozenset(ERROR_EXIT_CODES)

# Stable machine hints carried in error.data.reason. Closed: both twins list exactly these.
REASONS = frozenset(
    {
        # scope and consent
        "borrow_denied",
        "borrow_timeout",
        "site_blocked",
        "not_borrowed",
        "already_borrowed",
        "help_unavailable",
        "user_interrupt",
        "session_paused",
        "agent_window_scope",
        "borrow_conflict",
        "user_declined",
        "approval_timeout",
        # targets and refs
        "ref_not_found",
        "ref_stale",
        "selector_not_found",
        "element_not_visible",
        # tabs, sessions, browsers
        "unknown_session",
        "session_exists",
        "session_stopped",
        "unknown_tab",
        "tab_closed",
        "unknown_browser",
        "browser_disconnected",
        "window_closed",
        # actions and targets
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
        # navigation
        "bad_url",
        "url_scheme_refused",
        "file_url_refused",
        "browser_page",
        "navigation_failed",
        "navigation_timeout",
        "no_history_entry",
        # debugger
        "debugger_conflict",
        "debugger_detached",
        "page_not_debuggable",
        # rpc plumbing
        "rpc_timeout",
        "rpc_cancelled",
        "duplicate_rpc_id",
        "client_disconnected",
        "daemon_not_running",
        "daemon_start_failed",
        "socket_refused",
        "bad_frame",
        # handshake and pairing
        "handshake_required",
        "protocol_incompatible",
        "not_paired",
        "wrong_pairing_code",
        "pairing_throttled",
        "pairing_expired",
        "bad_proof",
        # side panel: agent runs
        "agent_missing",
        "agent_unusable",
        "agent_unsafe",
        "run_in_progress",
        "run_limit",
        "session_inactive",
        "unknown_conversation",
        "unknown_workspace",
    }
)

# Methods the daemon serves to CLI/MCP clients over the Unix socket.
CLIENT_METHODS = frozenset(
    {
        "daemon.status",
        "daemon.stop",
        "pair.create",
        "pair.wait",
        "browser.list",
        "browser.wait",
        "session.start",
        "session.stop",
        "session.list",
        "session.resume",
    }
)

# Methods the extension serves to the daemon once the peer is authenticated.
EXTENSION_METHODS = frozenset(
    {
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
    }
)

# Methods the daemon serves to the authenticated extension (its side panel).
PANEL_METHODS = frozenset(
    {
        "agent.list",
        "chat.start",
        "chat.send",
        "chat.attach",
        "chat.detach",
        "chat.stop",
        "chat.list",
        "chat.get",
        "chat.delete",
        "chat.answer",
    }
)

# Events the daemon pushes to the extension.
DAEMON_EVENTS = frozenset({"chat.event"})

# What a chat.event's ``kind`` may be: the normalised stream of every agent CLI, plus the turn's frame.
CHAT_EVENT_KINDS = (
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
)

# Prefix of panel session ids: such a session acts only during its conversation's live turn.
PANEL_SESSION_PREFIX = "p-"

# Handshake methods the extension sends; nothing else is served before they succeed.
HANDSHAKE_METHOD = "system.handshake"
AUTHENTICATE_METHOD = "system.authenticate"

# Events the extension pushes to the daemon.
EXTENSION_EVENTS = frozenset(
    {
        "session.window_closed",
        "session.user_interrupt",
        "session.user_resume",
        "browser.label_changed",
        "chat.tab_closed",
        "chat.approval",
    }
)

WAIT_UNTIL = ("commit", "domcontentloaded", "load", "networkidle")


class RpcError(Exception):
    """An error that crosses the wire as ``{code, message, data}``; raised inside, sent as a value."""

    def __init__(self, code: str, message: str, reason: str | None = None, **data: Any) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        if reason is not None and reason not in REASONS:
            raise ValueError(f"unknown error reason {reason!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.data: dict[str, Any] = dict(data)
        if reason is not None:
            self.data["reason"] = reason

    @property
    def reason(self) -> str | None:
        return self.data.get("reason")

    def to_wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data:
            error["data"] = self.data
        return error

    @classmethod
    def from_wire(cls, error: Any) -> RpcError:
        """Rebuild an error from a frame; anything malformed becomes a ``protocol_error``."""
        if not isinstance(error, dict):
            return cls("protocol_error", f"malformed error object: {error!r}", "bad_frame")
        code = error.get("code")
        message = error.get("message")
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        if code not in ERROR_CODES or not isinstance(message, str):
            return cls("protocol_error", f"malformed error object: {error!r}", "bad_frame")
        reason = data.get("reason")
        extra = {k: v for k, v in data.items() if k != "reason"}
        if reason is not None and reason not in REASONS:
            extra["unknown_reason"] = reason
            reason = None
        return cls(code, message, reason, **extra)

    @property
    def exit_code(self) -> int:
        return ERROR_EXIT_CODES[self.code]


def exit_code_for(code: str) -> int:
    """The CLI exit code of an error code; an unknown code counts as a transport failure."""
    return ERROR_EXIT_CODES.get(code, EXIT_TRANSPORT)


def request(frame_id: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": frame_id, "method": method, "params": params if params is not None else {}}


def response(frame_id: str, result: Any) -> dict[str, Any]:
    return {"id": frame_id, "result": result}


def error_response(frame_id: str | None, error: RpcError) -> dict[str, Any]:
    return {"id": frame_id, "error": error.to_wire()}


def event(name: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"event": name, "payload": payload if payload is not None else {}}


def progress(frame_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """An interim frame for a request still running (e.g. waiting for the person's approval)."""
    return {"id": frame_id, "progress": payload}


def classify(frame: Any) -> str | None:
    """Return "request", "response", "progress", "event" or None for anything that is not a valid frame."""
    if not isinstance(frame, dict):
        return None
    frame_id = frame.get("id")
    if isinstance(frame.get("method"), str):
        if not isinstance(frame_id, str) or not frame_id:
            return None
        params = frame.get("params", {})
        return "request" if params is None or isinstance(params, dict) else None
    if "result" in frame or "error" in frame:
        if "result" in frame and "error" in frame:
            return None
        return "response" if isinstance(frame_id, str) and frame_id else None
    if "progress" in frame:
        ok = isinstance(frame_id, str) and frame_id and isinstance(frame["progress"], dict)
        return "progress" if ok else None
    if isinstance(frame.get("event"), str) and frame["event"]:
        payload = frame.get("payload", {})
        return "event" if payload is None or isinstance(payload, dict) else None
    return None


def _is_ascii_digits(text: str) -> bool:
    return bool(text) and all("0" <= ch <= "9" for ch in text)


def parse_protocol_major(version: Any) -> int | None:
    """The major of a MAJOR[.MINOR…] protocol string; None when it is not a plain safe integer."""
    if not isinstance(version, str):
        return None
    head = version.split(".", 1)[0]
    if not _is_ascii_digits(head):
        return None
    major = int(head)
    return major if major <= MAX_PROTOCOL_MAJOR else None


def parse_protocol_version(version: Any) -> tuple[int, int] | None:
    """(major, minor) of a protocol string; a missing or empty minor is 0; later segments are ignored."""
    major = parse_protocol_major(version)
    if major is None:
        return None
    parts = version.split(".")
    minor_text = parts[1] if len(parts) > 1 else ""
    if minor_text == "":
        return (major, 0)
    if not _is_ascii_digits(minor_text):
        return None
    minor = int(minor_text)
    return (major, minor) if minor <= MAX_PROTOCOL_MAJOR else None


def compatibility_verdict(
    local_protocol: str,
    local_floor: str,
    remote_protocol: Any,
    remote_floor: Any = None,
) -> tuple[str, str]:
    """Decide whether a peer may talk to us: ("connected" | "version_skew" | "rejected", why).

    Symmetric: the daemon and the extension call it with their own values as ``local``.
    """
    local_major = parse_protocol_major(local_protocol)
    remote_major = parse_protocol_major(remote_protocol)
    if local_major is None or remote_major is None or local_major != remote_major:
        return (
            "rejected",
            f"protocol-major mismatch (peer protocol v{remote_protocol}, ours v{local_protocol})",
        )
    remote = parse_protocol_version(remote_protocol)
    if remote is None:
        return ("rejected", f"peer protocol {remote_protocol!r} is unparseable")
    floor = parse_protocol_version(local_floor)
    if floor is not None and remote < floor:
        return (
            "rejected",
            f"peer protocol v{remote_protocol} is below our min_compatible_protocol v{local_floor}",
        )
    if remote_floor is not None:
        parsed_remote_floor = parse_protocol_version(remote_floor)
        if parsed_remote_floor is None:
            return ("rejected", f"peer min_compatible_protocol {remote_floor!r} is unparseable")
        local = parse_protocol_version(local_protocol)
        if local is None or local < parsed_remote_floor:
            return (
                "rejected",
                f"our protocol v{local_protocol} is below the peer's min_compatible_protocol v{remote_floor}",
            )
    if remote_protocol == local_protocol:
        return ("connected", "protocol versions match")
    return (
        "version_skew",
        f"protocol v{remote_protocol} differs from ours (v{local_protocol}) but is compatible",
    )
