"""Verbs that bring the person in: request-help."""

from __future__ import annotations

import argparse
import os

from tabpilot.cli.context import Context
from tabpilot.cli.render import page_quoted
from tabpilot.cli.values import Duration, target

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HELP_TIMEOUT_S = 300.0
# Unattended machines: nobody is there to answer, so asking would only wait out the timeout.
DISABLE_VARIABLE = "TABPILOT_REQUEST_HELP"
# Outcomes after which the agent may go on; the others exit 1 so `request-help && next` stops there.
GO_ON = ("continued", "completed")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    p = sub.add_parser(
        "request-help",
        parents=[common],
        help="ask the person to do something in the current tab (log in, solve a captcha, decide)",
        description="Bring the current tab to the front with a panel showing PROMPT, the targets outlined, "
        "a countdown, a note field, Done and Cancel, and wait. Outcomes: continued (Done, with their note), "
        "completed (the --until-url/--until-selector condition came true), cancelled, timed_out, and "
        f"disabled ({DISABLE_VARIABLE}=off: nobody is watching). Exit 0 for continued and completed, 1 otherwise. "
        "The page may navigate meanwhile (a login redirects): the panel follows the tab.",
    )
    p.add_argument("--prompt", required=True, metavar="TEXT", help="what the person should do")
    p.add_argument("--title", metavar="T", help="the panel's title")
    p.add_argument(
        "--target",
        action="append",
        default=[],
        type=target,
        metavar="@eN|SELECTOR",
        help="outline this element for the person (repeatable)",
    )
    p.add_argument(
        "--timeout",
        type=Duration(low_s=1.0, why=" (the person needs time to answer)"),
        help=f"how long to wait for the person, at least 1s (default {HELP_TIMEOUT_S / 60:g}m)",
    )
    until = p.add_mutually_exclusive_group()
    until.add_argument(
        "--until-url",
        metavar="PATTERN",
        help="done once the tab's URL matches (a part of it, or a glob with *)",
    )
    until.add_argument("--until-selector", metavar="S", help="done once this element is visible")
    p.set_defaults(handler=cmd_request_help)


def outcome_line(result: dict[str, Any], timeout_s: float, nonce: str | None = None) -> str:
    """The one line an agent reads: the outcome first, then what it means for the next step."""
    outcome = result.get("outcome")
    if outcome == "continued":
        note = result.get("note")
        # The note is typed into a panel that lives in the page, so the page could have written it.
        note_part = f"; their note: {page_quoted(note, nonce, 500)}" if note else ""
        return "continued: the person pressed Done" + note_part
    if outcome == "completed":
        until = result.get("until") or {}
        if "url" in until:
            return f"completed: the URL matched {until['url']} ({result.get('url', '')})"
        return f"completed: {until.get('selector', 'the condition')} is visible"
    if outcome == "cancelled":
        return "cancelled: the person declined; ask them what they want before going on"
    if outcome == "timed_out":
        return f"timed_out: nobody answered within {timeout_s:g}s; do not wait for the person"
    if outcome == "disabled":
        return f"disabled: {DISABLE_VARIABLE}=off, nobody is watching this browser; do not wait for a person"
    return f"{outcome}"


def cmd_request_help(args: argparse.Namespace, ctx: Context) -> int:
    timeout_s = ctx.timeout_s(HELP_TIMEOUT_S)
    if os.environ.get(DISABLE_VARIABLE, "").strip().lower() == "off":
        result: dict[str, Any] = {"outcome": "disabled"}
    else:
        params: dict[str, Any] = {"prompt": args.prompt}
        if args.title:
            params["title"] = args.title
        if args.target:
            params["targets"] = args.target
        if args.until_url:
            params["until_url"] = args.until_url
        if args.until_selector:
            params["until_selector"] = args.until_selector
        result = ctx.tool("tool.request_help", params, HELP_TIMEOUT_S)
    ctx.emit(result, outcome_line(result, timeout_s, ctx.nonce(result)))
    return 0 if result.get("outcome") in GO_ON else 1
