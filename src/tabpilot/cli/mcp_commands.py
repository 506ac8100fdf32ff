"""``mcp``: serve the page, tab and session verbs to an MCP client over stdio."""

from __future__ import annotations

import argparse

from tabpilot.cli.context import Context

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="run an MCP server over stdio",
        description="Serve tabpilot's page, tab and session verbs as MCP tools over stdin/stdout, relaying to "
        "the same daemon as the CLI. The client gets its own session unless --session (or TABPILOT_SESSION) "
        "names one. Page text in tool results is fenced as on the command line (--no-boundaries drops it). "
        "Example client config: command `tabpilot`, args [`mcp`].",
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot import mcp_server

    return mcp_server.main(ctx.session, ctx.browser, ctx.boundaries)
