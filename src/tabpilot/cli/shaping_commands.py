"""``network headers`` and ``network credentials``: what the session's requests to one origin carry
(extra headers, HTTP basic credentials), sent by the browser with every request to that origin and to
no other, until cleared or the session stops. Registered into the ``network`` family."""

from __future__ import annotations

import argparse

from tabpilot.cli.context import Context
from tabpilot.cli.render import counted
from tabpilot.cli.values import Header, OneLine, WebOrigin

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def credentials(text: str) -> dict[str, str]:
    """``USER:PASSWORD`` → the two (the password may hold colons, the user may not)."""
    user, sep, password = text.partition(":")
    if not sep or not user:
        raise argparse.ArgumentTypeError("credentials are USER:PASSWORD (e.g. alice:s3cret)")
    OneLine(4096, "credentials")(text)
    return {"username": user, "password": password}


credentials.json_type = "string"  # type: ignore[attr-defined]


def register_verbs(verbs: Any, common: argparse.ArgumentParser) -> None:
    """Add ``headers`` and ``credentials`` to the network family's verbs."""
    p = verbs.add_parser(
        "headers",
        parents=[common],
        help="extra headers for every request to one origin (no origin: list them)",
        description="Every request the session's tabs make to ORIGIN carries these headers (they replace "
        "the origin's earlier ones); requests elsewhere do not. Values are never printed back.",
    )
    p.add_argument(
        "origin", type=WebOrigin(), nargs="?", metavar="ORIGIN", help="e.g. https://api.example.com"
    )
    p.add_argument("header", type=Header(), nargs="*", metavar="'NAME: VALUE'", help="e.g. 'X-Api-Key: abc'")
    p.add_argument("--clear", action="store_true", help="remove the origin's headers")
    p.set_defaults(handler=cmd_headers)

    p = verbs.add_parser(
        "credentials",
        parents=[common],
        help="HTTP basic credentials for every request to one origin",
        description="Requests to ORIGIN (and only there: not after a redirect elsewhere) carry "
        "Authorization: Basic for USER:PASSWORD. Note that the command line shows in the process list.",
    )
    p.add_argument("origin", type=WebOrigin(), metavar="ORIGIN", help="e.g. https://intranet.example.com")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "credentials", type=credentials, nargs="?", metavar="USER:PASSWORD", help="e.g. alice:s3cret"
    )
    what.add_argument("--clear", action="store_true", help="remove the origin's credentials")
    p.set_defaults(handler=cmd_credentials)


def _listing(shaping: list[dict[str, Any]]) -> str:
    if not shaping:
        return "no origin is shaped in this session"
    lines = []
    for s in shaping:
        parts = [", ".join(s["headers"])] if s["headers"] else []
        parts += ["basic credentials"] if s["credentials"] else []
        lines.append(f"{s['origin']}: {'; '.join(parts)}")
    return "\n".join(lines)


def cmd_headers(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.protocol import RpcError

    if args.origin is None:
        if args.header or args.clear:
            raise RpcError(
                "invalid_params",
                "headers need their ORIGIN",
                hint="e.g. `tabpilot network headers https://api.example.com 'X-Api-Key: abc'`",
            )
        result = ctx.tool("tool.network_headers", {})
        return ctx.emit(result, _listing(result.get("shaping", [])))
    if bool(args.header) == bool(args.clear):
        raise RpcError(
            "invalid_params",
            "give 'NAME: VALUE' headers or --clear",
            hint="e.g. `tabpilot network headers https://api.example.com 'X-Api-Key: abc'`",
        )
    params: dict[str, Any] = {"origin": args.origin}
    if args.clear:
        params["clear"] = True
    else:
        params["headers"] = dict(args.header)
    result = ctx.tool("tool.network_headers", params)
    shaped = counted(len(result.get("shaping", [])), "origin")
    if args.clear:
        return ctx.emit(result, f"requests to {args.origin} carry no extra headers ({shaped} shaped)")
    names = ", ".join(name for name, _ in args.header)
    return ctx.emit(result, f"requests to {args.origin} carry {names} ({shaped} shaped)")


def cmd_credentials(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"origin": args.origin}
    if args.clear:
        params["clear"] = True
    else:
        params.update(args.credentials)
    result = ctx.tool("tool.network_credentials", params)
    if args.clear:
        return ctx.emit(result, f"requests to {args.origin} carry no credentials")
    return ctx.emit(
        result, f"requests to {args.origin} carry basic credentials for {args.credentials['username']}"
    )
