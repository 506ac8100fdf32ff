"""``downloads``: the files this session's pages downloaded, and waiting for one."""

from __future__ import annotations

import argparse

from tabpilot.cli.context import Context, parse_duration
from tabpilot.cli.outcomes import download_text

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_WAIT_S = 30.0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    p = sub.add_parser(
        "downloads",
        parents=[common],
        help="list the files this session downloaded, or wait for one",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
A click or `open` that starts a download says so in its line (name, size, path). In a managed
browser (`tabpilot browser launch`) files go to $TABPILOT_HOME/downloads/SESSION/; in your own
browser, to its usual folder. A file never replaces one of the same name ("report (1).csv").

  tabpilot downloads              this session's downloads, one line each
  tabpilot downloads wait         wait until the latest download is complete (or the next one starts
                                  and completes), print its path""",
    )
    p.add_argument(
        "action", nargs="?", choices=("list", "wait"), default="list", help="list (default) or wait"
    )
    p.add_argument(
        "--timeout", type=parse_duration, help=f"wait: give up after this long (default {DEFAULT_WAIT_S:g}s)"
    )
    p.set_defaults(handler=cmd_downloads)


def cmd_downloads(args: argparse.Namespace, ctx: Context) -> int:
    if args.action == "wait":
        result = ctx.tool("tool.downloads_wait", {}, DEFAULT_WAIT_S)
        return ctx.emit(result, download_text(result["download"], ctx.nonce(result)))
    result = ctx.tool("tool.downloads_list", {})
    items = result.get("downloads", [])
    nonce = ctx.nonce(result)
    lines = [f"#{d.get('id')} {download_text(d, nonce)}" for d in items]
    return ctx.emit(result, "\n".join(lines) if lines else "no downloads in this session yet")
