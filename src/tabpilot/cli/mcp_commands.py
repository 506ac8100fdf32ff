"""``mcp``: serve the page, tab and session verbs to an MCP client over stdio."""

from __future__ import annotations

import argparse

from tabpilot.cli.context import Context
from tabpilot.protocol import RpcError

# The opt-in tool groups (their verbs: tabpilot.mcp_server.CAPS), named here so --help needs no import.
CAP_GROUPS = ("network", "storage", "emulation", "pdf", "downloads")

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
        "names one. Page text in tool results and errors is fenced as on the command line, and a page tool's "
        "result comes as that text only, without structuredContent (--no-boundaries drops the fences and "
        "adds it). "
        "Example client config: command `tabpilot`, args [`mcp`]. The network, cookies/storage/state, "
        "emulate/init-script, pdf and downloads tools are opt-in: args [`mcp`, `--caps`, `network,storage`].",
    )
    p.add_argument(
        "--caps",
        metavar="GROUP[,GROUP]",
        help=f"also serve these tool groups: {', '.join(CAP_GROUPS)} (or all)",
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    names = {c.strip() for c in (args.caps or "").split(",") if c.strip()}
    if "all" in names:
        names = set(CAP_GROUPS)
    unknown = sorted(names - set(CAP_GROUPS))
    if unknown:
        raise RpcError(
            "invalid_params",
            f"unknown tool group {unknown[0]!r}",
            hint=f"groups: {', '.join(CAP_GROUPS)}, all",
        )
    from tabpilot import mcp_server

    return mcp_server.main(ctx.session, ctx.browser, ctx.boundaries, frozenset(names))
