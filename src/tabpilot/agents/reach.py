"""What a side-panel agent reaches besides the person's tab: its MCP tools and their parameters as an
allow-list, the one folder its files go to, and the page tools its panel session is refused.

The panel's agent acts for a page the person is looking at, and that page may be hostile. So what it
is offered is listed here, tool by tool and parameter by parameter; whatever a new CLI verb or option
adds stays out of a panel session until it is listed. The person's files are not the agent's: an
``out`` is a file name in the conversation's own folder, created new (0600, never through a symlink);
``upload`` asks the person on a card that names each file's path. The person's other tabs, other
sites' cookies, secret header values and file:// pages are refused by the daemon (``refusal``), so
neither the MCP tools nor a workspace agent's shell get them through its run token.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import Any

from tabpilot.protocol import RpcError

# The daemon names the conversation's folder for files in the MCP server's environment.
FILES_ENV = "TABPILOT_FILES"
OUT_HELP = "a new file name; it is written into this conversation's own folder"
COMMON = frozenset({"timeout", "snapshot", "diff"})
NAVIGATION = frozenset({"wait_until"})
# Every tool a panel session is offered, with the parameters it takes besides COMMON; a tool not here
# is not offered. Left out on purpose: open/tab_new's allow_file (file:// pages read the person's
# files), tab_list's scope (every tab of the person's), tab_borrow (needs those ids), the session
# verbs and the opt-in groups (network, storage, emulation, pdf, downloads).
TOOLS: Mapping[str, frozenset[str]] = {
    "open": frozenset({"url"}) | NAVIGATION,
    "back": NAVIGATION,
    "forward": NAVIGATION,
    "reload": frozenset({"hard"}) | NAVIGATION,
    "eval": frozenset({"expression"}),
    "screenshot": frozenset({"out", "ref", "full_page", "annotate", "format", "quality"}),
    "snapshot": frozenset({"interactive", "viewport", "ref", "urls", "max_tokens", "out"}),
    "find": frozenset({"text", "limit"}),
    "text": frozenset({"ref", "max_tokens"}),
    "html": frozenset({"ref", "max_bytes", "out"}),
    "console": frozenset({"since", "level", "limit"}),
    "click": frozenset({"target", "button", "double", "modifiers", "at"}),
    "hover": frozenset({"target"}),
    "focus": frozenset({"target"}),
    "fill": frozenset({"target", "text"}),
    "type": frozenset({"text", "ref", "delay"}),
    "press": frozenset({"keys", "ref"}),
    "select": frozenset({"target", "values"}),
    "check": frozenset({"target"}),
    "uncheck": frozenset({"target"}),
    "scroll": frozenset({"target", "down", "up", "left", "right", "to"}),
    "drag": frozenset({"source", "target"}),
    "upload": frozenset({"target", "files"}),
    "wait": frozenset({"duration", "selector", "text", "gone", "url", "load"}),
    "dialog": frozenset({"action", "text"}),
    "request_help": frozenset({"prompt", "title", "target", "until_url", "until_selector"}),
    "tab_list": frozenset(),
    "tab_new": frozenset({"url"}),
    "tab_select": frozenset({"tab_id"}),
    "tab_close": frozenset({"tab_id"}),
}


def offered(tool: str) -> frozenset[str] | None:
    """The parameters a panel session's ``tool`` takes; None when the tool is not offered."""
    extra = TOOLS.get(tool)
    return None if extra is None else COMMON | extra


def confine(arguments: dict[str, Any], folder: str | None) -> dict[str, Any]:
    """``arguments`` with ``out`` made a new private file in the conversation's folder."""
    out = arguments.get("out")
    if out is None:
        return arguments
    return {**arguments, "out": reserve(folder, str(out))}


def _out_refused(why: str, folder: str | None) -> RpcError:
    where = f" ({folder})" if folder else ""
    return RpcError(
        "invalid_params",
        f"out {why}: a side-panel agent writes files only into its conversation's own folder{where}",
        hint="give a new file name such as page.html; the result names where it was written",
    )


def reserve(folder: str | None, name: str) -> str:
    """Create ``name`` in ``folder`` (made 0700 if missing) as a new 0600 file, never through a link."""
    if not folder or not os.path.isabs(folder):
        raise _out_refused("is not available here", None)
    parent, base = os.path.split(name)
    if parent and os.path.realpath(parent) != os.path.realpath(folder):
        raise _out_refused(f"{name!r} is outside that folder", folder)
    if base in ("", ".", "..") or "\0" in base:
        raise _out_refused(f"{name!r} is not a file name", folder)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise _out_refused("has no private folder to go to", folder)
    path = os.path.join(folder, base)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise RpcError(
            "invalid_params",
            f"{path} exists already: out never replaces a file",
            hint="give another file name",
        ) from None
    os.close(fd)
    return path


def _refused(what: str, hint: str) -> RpcError:
    return RpcError("permission_denied", f"a side-panel agent {what}", "session_inactive", hint=hint)


def refusal(method: str, params: Mapping[str, Any]) -> RpcError | None:
    """Why a panel session may not make this page-tool call, or None when it may."""
    if method == "tool.tab_list" and params.get("scope") not in (None, "agent"):
        return _refused(
            "is not shown the person's other tabs",
            "act on the panel's tab; if you need another page, ask the person in your reply",
        )
    if method in ("tool.state_save", "tool.state_load"):
        return _refused(
            "does not save or load the browser's cookies and storage of every site",
            "read what you need from the page itself",
        )
    if params.get("allow_file"):
        return _refused(
            "does not open file:// pages: they would read the person's files",
            "open http(s) pages only",
        )
    if params.get("show_secrets"):
        return _refused("is not shown HttpOnly cookies or secret header values", "leave out show_secrets")
    return None
