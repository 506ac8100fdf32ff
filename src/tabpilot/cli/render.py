"""What the CLI prints: one short line of outcome, ``--json`` results, and errors with a hint.

Shared by the full CLI and the hot path (``tabpilot.cli.fast``): built-in modules only.
"""

import sys

from tabpilot.cli import fastjson

# typing is for checkers only (see tabpilot/protocol.py). On the hot path annotations are
# evaluated (`from __future__ import annotations` would import one more module): Any stands for object.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from tabpilot.protocol import RpcError
else:
    Any = object

# The next step for an agent, by reason first, then by code, when the error carries no hint.
REASON_HINTS = {
    "unknown_tab": "`tabpilot tab list` shows this session's tabs",
    "unknown_session": "`tabpilot session list` shows the live sessions; start one that is not listed with "
    "`tabpilot session start NAME`",
    "session_stopped": "start it again with `tabpilot session start NAME`",
    "bad_url": "give a full URL, e.g. https://example.com/page",
    "url_scheme_refused": "only http(s) and about:blank URLs can be opened (file: with --allow-file)",
    "file_url_refused": "add --allow-file to open a local file",
    "navigation_timeout": "the page is still loading: raise --timeout or use --wait-until domcontentloaded",
    "navigation_failed": "check the URL and that the site is reachable from this browser",
    "no_history_entry": "there is no page to go to in that direction; use `tabpilot open URL`",
    "debugger_conflict": "close DevTools (or the other debugging extension) on that tab, then retry",
    "debugger_detached": "the debugger was detached from the tab (e.g. the infobar's Cancel); retry to re-attach",
    "page_not_debuggable": "browser-internal pages cannot be driven; open an http(s) page",
    "tab_closed": "the tab is gone; `tabpilot tab list` shows the others",
    "browser_disconnected": "wait a moment and retry; `tabpilot browser list` shows connected browsers",
    "rpc_timeout": "the browser did not answer in time; retry, or raise --timeout",
    "client_disconnected": "retry the command",
    "not_paired": "run `tabpilot pair` and type the code into the tabpilot extension's popup",
    "pairing_expired": "run `tabpilot pair` again for a fresh code",
    "protocol_incompatible": "update tabpilot and the extension so their protocol versions match",
}
CODE_HINTS = {
    # The safety net for a usage error raised without a hint of its own.
    "invalid_params": "see `tabpilot --help` for the verbs and `tabpilot VERB --help` for a verb's options",
    "no_browser_connected": "start one with `tabpilot browser launch`, or open your browser with the tabpilot "
    "extension (pair it once with `tabpilot pair`)",
    "multiple_browsers_online": "pass --browser ID|LABEL; `tabpilot browser list` shows them",
    "daemon_unreachable": "retry; if it persists see the daemon log in $TABPILOT_HOME/logs/",
    "pairing_required": "run `tabpilot pair` and type the code into the tabpilot extension's popup",
    "auth_failed": "pair again: `tabpilot pair`, then enter the code in the extension's popup",
    "version_too_old": "update tabpilot and the extension so their protocol versions match",
    "unknown_method": "the extension is older than this CLI: update or reload it",
    "timeout": "raise --timeout, or check the page with `tabpilot screenshot`",
    "cdp_failed": "the browser refused the command; retry, or reload the page with `tabpilot reload`",
    "cancelled": "the command was cancelled; run it again if it is still needed",
    "protocol_error": "retry; if it persists see the daemon log in $TABPILOT_HOME/logs/",
    "user_aborted": "the person stopped you; ask them before continuing, then run `tabpilot session resume`",
}


def hint_for(err: "RpcError") -> str | None:
    hint = err.data.get("hint")
    if isinstance(hint, str) and hint:
        return hint
    if err.reason and err.reason in REASON_HINTS:
        return REASON_HINTS[err.reason]
    return CODE_HINTS.get(err.code)


# Error fields that only move words about: rendered into message and hint, never printed themselves.
WORD_PARTS = ("message_parts", "hint_parts")
# Error fields that hold nothing but the page's strings (a `--json` reader fences nothing itself).
PAGE_FIELDS = ("label",)
COVER_PAGE_FIELDS = ("name", "text")


def error_nonce(err: "RpcError", boundaries: bool) -> str | None:
    """The session's nonce the daemon put on an error from a page tool; None when fencing is off."""
    return page_nonce(err.data, boundaries)


def error_words(
    err: "RpcError", nonce: str | None, reword: "Callable[[str], str] | None" = None
) -> tuple[str, str | None]:
    """(message, hint) with the page's strings in them marked by ``nonce``; ``reword`` rewrites only
    tabpilot's own words (the MCP server's tool names), never the page's."""
    hint = hint_for(err)
    message = page_words(err.message, err.data.get("message_parts"), nonce, reword)
    if hint is not None:
        given = err.data.get("hint") == hint
        hint = page_words(hint, err.data.get("hint_parts") if given else None, nonce, reword)
    return message, hint


def page_words(text: str, parts: Any, nonce: str | None, reword: "Callable[[str], str] | None" = None) -> str:
    """Words whose odd ``parts`` are the page's (see ``said`` in the extension's link/protocol.js),
    each marked in place; ``text`` as it is when the parts are not its own."""
    same = (
        isinstance(parts, list)
        and len(parts) % 2 == 1
        and all(isinstance(p, str) for p in parts)
        and "".join(parts) == text
    )
    if not same or not nonce:
        return reword(text) if reword else text
    out = []
    for at, part in enumerate(parts):
        if at % 2 == 0:
            out.append(reword(part) if reword and part else part)
        else:
            out.append(page_inline(one_line(part), nonce))
    return "".join(out)


def one_line(text: str) -> str:
    """A page string for a one-line mark: the extension quotes them, this is the guard if it did not."""
    return text.replace("\n", " ").replace("\r", " ")


def error_payload(
    err: "RpcError", nonce: str | None, reword: "Callable[[str], str] | None" = None
) -> dict[str, Any]:
    """The ``--json`` (and MCP) form of an error, the page's strings marked by ``nonce``."""
    message, hint = error_words(err, nonce, reword)
    extra = {k: v for k, v in err.data.items() if k not in ("reason", "hint", *WORD_PARTS)}
    if nonce:
        _mark_page_fields(extra, nonce)
    return {
        "code": err.code,
        "reason": err.reason,
        "message": message,
        "hint": hint,
        "exit_code": err.exit_code,
        **extra,
    }


def _mark_page_fields(extra: dict[str, Any], nonce: str) -> None:
    for key in PAGE_FIELDS:
        if isinstance(extra.get(key), str):
            extra[key] = page_inline(one_line(extra[key]), nonce)
    cover = extra.get("cover")
    if isinstance(cover, dict):
        extra["cover"] = {
            k: page_quoted(v, nonce, 200) if k in COVER_PAGE_FIELDS and isinstance(v, str) and v else v
            for k, v in cover.items()
        }
    options = extra.get("options")
    if isinstance(options, list):
        extra["options"] = [
            {**o, "label": page_quoted(o["label"], nonce, 200)}
            if isinstance(o, dict) and isinstance(o.get("label"), str)
            else o
            for o in options
        ]


def print_error(err: "RpcError", as_json: bool, boundaries: bool = True) -> int:
    """Report an error (stderr text, or a JSON object on stdout) and return its exit code."""
    nonce = error_nonce(err, boundaries)
    if as_json:
        print(fastjson.dumps({"error": error_payload(err, nonce)}, ensure_ascii=False))
        return err.exit_code
    message, hint = error_words(err, nonce)
    lines = [f"error: {message}"]
    browsers = err.data.get("browsers")
    if isinstance(browsers, list):
        lines += [f"  {b}" for b in browsers]
    if hint:
        lines.append(f"hint: {hint}")
    print("\n".join(lines), file=sys.stderr)
    return err.exit_code


def guarded(step: "Callable[[], Any]", as_json: bool, boundaries: bool = True) -> int:
    """Run one command's work and return its exit code: an RpcError is reported, ^C and a closed
    pipe end it quietly."""
    try:
        return int(step())
    except KeyboardInterrupt:
        print("interrupted: the daemon cancels the command", file=sys.stderr)
        return 130
    except BrokenPipeError:
        import os

        # The reader of our output went away (e.g. `| head`); nothing left to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        from tabpilot.protocol import RpcError

        if isinstance(exc, RpcError):
            return print_error(exc, as_json, boundaries)
        raise


def print_json(result: Any) -> None:
    print(fastjson.dumps(result, ensure_ascii=False))


def emit(result: Any, text: str, as_json: bool) -> int:
    """Print a result: ``--json`` gets the object, people and agents the text (nothing when empty)."""
    if as_json:
        print_json(result)
    elif text:
        print(text)
    return 0


def status_suffix(status: Any) -> str:
    return f" ({status})" if isinstance(status, int) else ""


def counted(n: int, one: str, many: str | None = None) -> str:
    """``1 route``, ``2 routes``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def quoted(text: Any, limit: int = 80) -> str:
    value = str(text or "")
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return fastjson.dumps(value, ensure_ascii=False)


# TABPILOT_BOUNDARIES values that turn the fences off (as --no-boundaries does).
BOUNDARIES_OFF = ("off", "0", "no", "false")


def boundaries_off(value: str | None) -> bool:
    """Whether a TABPILOT_BOUNDARIES value turns the fences off."""
    return value is not None and value.strip().lower() in BOUNDARIES_OFF


def page_nonce(result: Any, boundaries: bool) -> str | None:
    """The session's boundary nonce the daemon sent with ``result``; None when fencing is off."""
    if not boundaries or not isinstance(result, dict):
        return None
    value = result.get("page_nonce")
    return value if isinstance(value, str) and value else None


def fence(text: str, nonce: str | None) -> str:
    """Page text as a block between the session's boundary lines (as it is without a nonce).

    The page cannot end the block early: it never learns the nonce.
    """
    if not nonce:
        return text
    return f"<<<page nonce={nonce}\n{text}\n>>>page nonce={nonce}"


def page_inline(text: str, nonce: str | None) -> str:
    """A page string inside a one-line outcome: ``<<<page nonce=N "Title">>>``.

    ``text`` holds no line break (JSON-quoted or a label); runs of ``<<<``/``>>>`` in it are broken
    up, so the page cannot close the marker itself.
    """
    if not nonce:
        return text
    for run, broken in (("<<<", "<< <"), (">>>", ">> >")):
        while run in text:
            text = text.replace(run, broken)
    return f"<<<page nonce={nonce} {text}>>>"


def page_quoted(text: Any, nonce: str | None, limit: int = 80) -> str:
    """A page string JSON-quoted (cut at ``limit``) and marked as the page's."""
    return page_inline(quoted(text, limit), nonce)


def navigation_line(verb: str, result: dict[str, Any], nonce: str | None = None) -> str:
    """``navigated to URL (200) "Title"`` — what one navigation did (the title is the page's)."""
    url = result.get("url", "")
    if result.get("same_document"):
        return f"{verb} {url} (same document)"
    title = result.get("title")
    title_part = f" {page_quoted(title, nonce)}" if title else ""
    return f"{verb} {url}{status_suffix(result.get('status'))}{title_part}"
