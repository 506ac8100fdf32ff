"""Verbs for sessions (one Agent Window each) and the tabs inside them."""

from __future__ import annotations

import argparse

from tabpilot.cli.context import Context, parse_duration, tab_id
from tabpilot.cli.render import fence, page_quoted, quoted
from tabpilot.cli.values import Name
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAB_TIMEOUT_S = 30.0
# How long the person gets to answer a borrow; no answer is a no.
BORROW_TIMEOUT_S = 60.0
TAB_SCOPES = ("agent", "user", "all")
SCOPE_MARKS = {"borrowed": "  (borrowed)", "user": "  (the person's tab)"}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    session = sub.add_parser(
        "session",
        parents=[common],
        help="start, stop and list sessions (one Agent Window each)",
        description="A session is one agent task in its own Agent Window. Commands without --session "
        "(or TABPILOT_SESSION) use the session 'default', created on first use.",
    )
    verbs = session.add_subparsers(dest="session_verb", metavar="{start,stop,list,resume}")
    verbs.required = True
    p = verbs.add_parser("start", parents=[common], help="start a session and print its id")
    p.add_argument(
        "name",
        nargs="?",
        type=Name("session"),
        help="session name (default: a short generated id; 'p-…' names are the side panel's)",
    )
    p.set_defaults(handler=cmd_session_start)
    p = verbs.add_parser("stop", parents=[common], help="stop a session and close its Agent Window")
    p.add_argument(
        "session_id",
        nargs="?",
        metavar="ID",
        type=Name("session"),
        help="the session (default: the current one)",
    )
    p.add_argument("--all", action="store_true", help="stop every session")
    p.set_defaults(handler=cmd_session_stop)
    p = verbs.add_parser("list", parents=[common], help="list live sessions")
    p.set_defaults(handler=cmd_session_list)
    p = verbs.add_parser(
        "resume",
        parents=[common],
        help="carry on after the person pressed Stop (ask them first)",
        description="When the person presses Stop in the page, the session's commands fail with "
        "user_aborted and it stays paused. Ask the person, then resume it with this command.",
    )
    p.add_argument("session_id", nargs="?", metavar="ID", help="the session (default: the current one)")
    p.set_defaults(handler=cmd_session_resume)

    tab = sub.add_parser(
        "tab", parents=[common], help="list, open, close and select tabs; borrow the person's with consent"
    )
    verbs = tab.add_subparsers(dest="tab_verb", metavar="{list,new,close,select,borrow,return}")
    verbs.required = True
    p = verbs.add_parser("list", parents=[common], help="list the session's tabs (* marks the current one)")
    p.add_argument(
        "--scope",
        choices=TAB_SCOPES,
        default="agent",
        help="agent: the session's tabs (default); user: the person's tabs, to ask for one; all: both",
    )
    p.set_defaults(handler=cmd_tab_list)
    p = verbs.add_parser(
        "new", parents=[common], help="open a new tab in the Agent Window and make it current"
    )
    p.add_argument("url", nargs="?", help="address to open (default about:blank)")
    p.add_argument("--allow-file", action="store_true", help="allow file:// URLs")
    p.add_argument("--timeout", type=parse_duration, help="give up after this long (default 30s)")
    p.set_defaults(handler=cmd_tab_new)
    p = verbs.add_parser("close", parents=[common], help="close a tab (default: the current one)")
    p.add_argument("tab_id", nargs="?", type=tab_id, metavar="TAB_ID")
    p.set_defaults(handler=cmd_tab_close)
    p = verbs.add_parser("select", parents=[common], help="make a tab the session's current tab")
    p.add_argument("tab_id", type=tab_id, metavar="TAB_ID")
    p.set_defaults(handler=cmd_tab_select)
    p = verbs.add_parser(
        "borrow",
        parents=[common],
        help="ask the person for one of their tabs; on Allow it joins the session as its current tab",
        description="The person sees which session asks and why, in the tab and as a notification, and "
        "answers Allow or Deny. No answer in time is a Deny. `tab return` gives the tab back.",
    )
    p.add_argument("tab_id", type=tab_id, metavar="TAB_ID", help="from `tabpilot tab list --scope user`")
    p.add_argument("--reason", metavar="TEXT", help="why you need it, shown to the person")
    p.add_argument("--timeout", type=parse_duration, help="how long the person may take (default 60s)")
    p.set_defaults(handler=cmd_tab_borrow)
    p = verbs.add_parser("return", parents=[common], help="give a borrowed tab back where it was")
    p.add_argument("tab_id", type=tab_id, metavar="TAB_ID")
    p.set_defaults(handler=cmd_tab_return)


def cmd_session_start(args: argparse.Namespace, ctx: Context) -> int:
    params = {"name": args.name} if args.name else {}
    result = ctx.call("session.start", params, timeout_s=20.0)
    return ctx.emit(result, result["session_id"])


def cmd_session_stop(args: argparse.Namespace, ctx: Context) -> int:
    if args.all and args.session_id:
        raise RpcError(
            "invalid_params",
            "give a session id or --all, not both",
            hint="`tabpilot session stop ID` stops one, `tabpilot session stop --all` every one",
        )
    params: dict[str, Any] = (
        {"all": True} if args.all else {"session_id": args.session_id or ctx.session or "default"}
    )
    result = ctx.call("session.stop", params, timeout_s=20.0)
    stopped = result.get("stopped", [])
    return ctx.emit(result, f"stopped {', '.join(stopped)}" if stopped else "no session to stop")


def cmd_session_list(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.call("session.list")
    lines = []
    for s in result["sessions"]:
        state = "" if s.get("online", True) else "  (browser offline)"
        state += "  (paused: the person pressed Stop)" if s.get("paused") else ""
        pending = f"  {s['pending']} queued" if s.get("pending") else ""
        lines.append(f"{s['session_id']}  browser {s['browser']}  idle {s['idle_s']:.0f}s{pending}{state}")
    return ctx.emit(result, "\n".join(lines) if lines else "no sessions")


def cmd_session_resume(args: argparse.Namespace, ctx: Context) -> int:
    params = {"session_id": args.session_id} if args.session_id else {}
    result = ctx.call("session.resume", params, timeout_s=10.0)
    text = (
        f"resumed {result['session_id']}" if result["resumed"] else f"{result['session_id']} was not paused"
    )
    return ctx.emit(result, text)


def cmd_tab_list(args: argparse.Namespace, ctx: Context) -> int:
    params = {"scope": args.scope} if args.scope != "agent" else {}
    result = ctx.tool("tool.tab_list", params, TAB_TIMEOUT_S)
    lines = [
        f"{'*' if t.get('active') else ' '} {t['tab_id']}  {quoted(t.get('title'), 60)}  {t.get('url', '')}"
        + SCOPE_MARKS.get(t.get("scope", ""), "")
        for t in result["tabs"]
    ]
    # Titles are the pages': the listing is one fenced block.
    return ctx.emit(result, fence("\n".join(lines), ctx.nonce(result)) if lines else "no tabs")


def cmd_tab_new(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {}
    if args.url:
        params["url"] = args.url
    if args.allow_file:
        params["allow_file"] = True
    result = ctx.tool("tool.tab_create", params, TAB_TIMEOUT_S)
    return ctx.emit(result, f"opened tab {result['tab_id']} {result.get('url', '')}")


def cmd_tab_close(args: argparse.Namespace, ctx: Context) -> int:
    params = {"tab_id": args.tab_id} if args.tab_id else {}
    result = ctx.tool("tool.tab_close", params, TAB_TIMEOUT_S)
    return ctx.emit(result, f"closed tab {result['tab_id']}; current tab is {result.get('current_tab_id')}")


def cmd_tab_select(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.tool("tool.tab_select", {"tab_id": args.tab_id}, TAB_TIMEOUT_S)
    return ctx.emit(
        result,
        f"selected tab {result['tab_id']} {page_quoted(result.get('title'), ctx.nonce(result))} "
        f"{result.get('url', '')}",
    )


def cmd_tab_borrow(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"tab_id": args.tab_id}
    if args.reason:
        params["reason"] = args.reason
    result = ctx.tool("tool.tab_borrow", params, BORROW_TIMEOUT_S)
    tab_id = result["tab_id"]
    return ctx.emit(
        result,
        f"borrowed tab {tab_id} {page_quoted(result.get('title'), ctx.nonce(result))} {result.get('url', '')} "
        f"(now current; give it back with `tabpilot tab return {tab_id}`)",
    )


def cmd_tab_return(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.tool("tool.tab_return", {"tab_id": args.tab_id}, TAB_TIMEOUT_S)
    where = f"window {result.get('window_id')} at index {result.get('index')}"
    if result.get("fallback"):
        where += " (its own window was closed)"
    return ctx.emit(result, f"returned tab {result['tab_id']} to {where}")
