"""The text a page verb prints for its result, shared by the full CLI and the hot path (built-ins only)."""

from tabpilot.cli import fastjson
from tabpilot.cli.render import fence, navigation_line, page_inline, page_quoted, quoted, status_suffix

# typing is for checkers only (see tabpilot/protocol.py). On the hot path annotations are
# evaluated (`from __future__ import annotations` would import one more module): Any stands for object.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
else:
    Any = object

CLICK_VERBS = {"left": "clicked", "right": "right-clicked"}

# ``nonce`` below is the session's page-text nonce (None: boundaries off). Page strings in a line are
# marked with it in place, unless a snapshot follows: then the whole output is one fenced block.


def _snapshot_of(result: dict[str, Any]) -> str | None:
    snapshot = result.get("snapshot")
    return snapshot if isinstance(snapshot, str) and snapshot else None


def inline(result: dict[str, Any], nonce: str | None) -> str | None:
    """The nonce for page strings inside an action's line: None when a snapshot follows (one
    fence around everything costs fewer tokens than several)."""
    return None if _snapshot_of(result) else nonce


def target_text(target: Any, nonce: str | None = None) -> str:
    """``button "Save" @e12`` — how an outcome line names the element (the label is the page's)."""
    if not isinstance(target, dict):
        return "the element"
    label = page_inline(str(target.get("label") or "element"), nonce)
    ref = target.get("ref")
    return f"{label} @{ref}" if ref else label


def outcome_text(result: dict[str, Any], nonce: str | None = None) -> str:
    """`` → navigated to …`` / `` → opened tab …`` / `` → dialog: …`` — what the action set off."""
    parts = []
    dialog = result.get("dialog")
    if isinstance(dialog, dict) and dialog.get("handled") == "accepted" and dialog.get("type") == "alert":
        parts.append(f"{dialog_text(dialog, nonce)} (accepted)")
    navigated = result.get("navigated")
    if isinstance(navigated, dict):
        url = navigated.get("url", "")
        if not navigated.get("committed", True):
            parts.append(f"navigating to {url} (not committed yet)")
        elif navigated.get("same_document"):
            parts.append(f"went to {url} (same document)")
        else:
            parts.append(f"navigated to {url}{status_suffix(navigated.get('status'))}")
    opened = result.get("opened_tab")
    if isinstance(opened, dict):
        where = "kept in this session" if opened.get("kept") else "outside this session"
        if opened.get("current"):
            where += ", now current"
        parts.append(f"opened tab {opened.get('tab_id')} {opened.get('url', '')} ({where})")
    download = result.get("download")
    if isinstance(download, dict):
        parts.append(download_text(download, nonce))
    if isinstance(dialog, dict) and dialog.get("handled") == "open":
        parts.append(dialog_line(dialog, nonce))
    return "".join(f" → {p}" for p in parts)


def open_line(result: dict[str, Any], nonce: str | None = None) -> str:
    """What `open` did: ``navigated to URL (200) "Title"``, or the download the address started."""
    download = result.get("download")
    if isinstance(download, dict):
        return f"opened {download.get('url', '')} → {download_text(download, nonce)}"
    return navigation_line("navigated to", result, nonce)


def download_text(d: dict[str, Any], nonce: str | None = None) -> str:
    """``downloaded report.csv (1,204 bytes) to /home/…/report.csv`` — one download. The name is the site's,
    and so is the path's last part: one mark covers both (a line holds at most two)."""
    name = str(d.get("name") or d.get("url") or "a file")
    state = d.get("state")
    if state == "complete":
        size = d.get("bytes")
        sized = f" ({size:,} bytes)" if isinstance(size, int) else ""
        where = f"{name}{sized} to {d.get('path')}"
        return f"downloaded {page_inline(where, nonce)}"
    if state == "interrupted":
        error = d.get("error")
        why = (
            "blocked site"
            if error == "BLOCKED_SITE"
            else "the person did not allow it"
            if error == "NOT_ALLOWED"
            else str(error or "interrupted").lower()
        )
        return f"download of {page_inline(name, nonce)} failed ({why})"
    where = f"{name} to {d['path']}" if d.get("path") else name
    return f"downloading {page_inline(where, nonce)} (not finished: tabpilot downloads wait)"


def dialog_text(dialog: dict[str, Any], nonce: str | None = None) -> str:
    """``confirm "Delete 3 files?"`` (a beforeunload prompt has no message of its own)."""
    message = dialog.get("message")
    return f"{dialog.get('type')} {page_quoted(message, nonce)}" if message else str(dialog.get("type"))


def dialog_line(dialog: dict[str, Any], nonce: str | None = None) -> str:
    return f"dialog: {dialog_text(dialog, nonce)} — tabpilot dialog accept|dismiss"


def action_text(result: dict[str, Any], line: str, nonce: str | None = None) -> str:
    """An action's line, what it set off, and the snapshot asked for with --snapshot / --diff."""
    text = line + outcome_text(result, inline(result, nonce))
    snapshot = _snapshot_of(result)
    if snapshot:
        text = fence(f"{text}\n{snapshot}", nonce)
    return text


def click_line(result: dict[str, Any], button: str, double: bool, nonce: str | None = None) -> str:
    verb = "double-clicked" if double else CLICK_VERBS.get(button, "middle-clicked")
    return f"{verb} {target_text(result.get('target'), inline(result, nonce))}"


def simple_line(result: dict[str, Any], verb: str, nonce: str | None = None) -> str:
    return f"{verb} {target_text(result.get('target'), inline(result, nonce))}"


def fill_line(result: dict[str, Any], nonce: str | None = None) -> str:
    mark = inline(result, nonce)
    return f"filled {target_text(result.get('target'), mark)} = {page_quoted(result.get('value'), mark)}"


def type_line(result: dict[str, Any], text: str, nonce: str | None = None) -> str:
    into = f" into {target_text(result['target'], inline(result, nonce))}" if result.get("target") else ""
    return f"typed {quoted(text)}{into}"


def press_line(result: dict[str, Any], keys: list[str], nonce: str | None = None) -> str:
    pressed = ", ".join(result.get("pressed") or keys)
    into = f" in {target_text(result['target'], inline(result, nonce))}" if result.get("target") else ""
    return f"pressed {pressed}{into}"


def select_line(result: dict[str, Any], nonce: str | None = None) -> str:
    mark = inline(result, nonce)
    selected = result.get("selected") or []
    labels = page_inline(", ".join(quoted(o.get("label")) for o in selected), mark) if selected else "nothing"
    how = sorted({o.get("matched_by") for o in selected if o.get("matched_by")})
    matched = f" (matched by {' and '.join(how)})" if how else ""
    return f"selected {labels} in {target_text(result.get('target'), mark)}{matched}"


def check_line(result: dict[str, Any], checked: bool, nonce: str | None = None) -> str:
    state = "checked" if checked else "unchecked"
    what = target_text(result.get("target"), inline(result, nonce))
    return f"{state} {what}" if result.get("changed") else f"{what} was already {state}"


def wait_line(result: dict[str, Any], kind: str, value: str, nonce: str | None = None) -> str:
    """``waited 0.3 s for text "Saved"`` — what a condition wait waited for."""
    seconds = f"{int(result.get('waited_ms', 0)) / 1000:.1f} s"
    what = {
        "selector": target_text(result.get("target"), nonce) if result.get("target") else quoted(value),
        "text": f"text {quoted(value)}",
        "gone": f"{quoted(value)} to be gone",
        "url": f"URL {quoted(value)} ({result.get('url', '')})",
        "load": f"{value}",
    }[kind]
    return f"waited {seconds} for {what}"


def eval_text(result: dict[str, Any], nonce: str | None = None) -> str:
    """The value as JSON, or ``exception: …`` with where it was thrown; both are the page's: fenced."""
    if result.get("ok"):
        return fence(fastjson.dumps(result.get("value"), ensure_ascii=False), nonce)
    exception = result.get("exception") or {}
    where = ""
    if exception.get("line"):
        where = f" (line {exception['line']}, column {exception.get('column', '?')})"
    return fence(f"exception: {exception.get('text', 'unknown error')}{where}", nonce)


def page_text(result: dict[str, Any], nonce: str | None = None) -> str:
    """The text to print (fenced), or a line saying there is none (an empty answer reads like a failure)."""
    text = str(result.get("text") or "")
    return fence(text, nonce) if text.strip() else f"(nothing visible on {result.get('url') or 'this page'})"


def find_text(result: dict[str, Any], nonce: str | None = None) -> str:
    return fence(result["text"], nonce)
