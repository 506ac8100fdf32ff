"""``init-script add/list/remove``: JavaScript that runs in every document the current tab loads, before
the page's own scripts, from the next navigation on, until removed, `session stop`, or the borrowed
tab's return."""

from __future__ import annotations

import argparse
import os

from tabpilot.cli.context import Context
from tabpilot.cli.render import counted
from tabpilot.cli.values import Name
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_SOURCE_BYTES = 1024 * 1024


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    family = sub.add_parser(
        "init-script",
        parents=[common],
        help="scripts that run before the page's own in every document of this tab",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
A script added here runs first in every document the tab loads from then on (reload to apply it to
the page already shown), in the page's own world: it can stub an API or record what the page does.
It runs in the tab's frames of the same process, not in another site's frame, nor in tabs the page opens.

  tabpilot init-script add stub.js       prints its id (s1)
  tabpilot init-script list
  tabpilot init-script remove s1         or without an id: all of the tab's""",
    )
    verbs = family.add_subparsers(dest="init_script_verb", metavar="{add,list,remove}")
    verbs.required = True
    p = verbs.add_parser("add", parents=[common], help="run FILE before the page's own scripts")
    p.add_argument("file", metavar="FILE", help="a JavaScript file (at most 1 MiB)")
    p.set_defaults(handler=cmd_add)
    p = verbs.add_parser("list", parents=[common], help="the tab's init scripts")
    p.set_defaults(handler=cmd_list)
    p = verbs.add_parser("remove", parents=[common], help="remove one init script, or all of the tab's")
    p.add_argument(
        "id", type=Name("init script"), nargs="?", metavar="ID", help="its id in `init-script list`"
    )
    p.set_defaults(handler=cmd_remove)


def _listing(scripts: list[dict[str, Any]]) -> str:
    return "\n".join(f"{s['id']}  {s['name']}  {s['bytes']:,} B" for s in scripts)


def cmd_add(args: argparse.Namespace, ctx: Context) -> int:
    try:
        size = os.path.getsize(args.file)
        if size > MAX_SOURCE_BYTES:
            raise RpcError(
                "invalid_params", f"{args.file} is larger than 1 MiB", hint="give a smaller script"
            )
        with open(args.file, encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else "not UTF-8 text"
        raise RpcError(
            "invalid_params", f"cannot read {args.file}: {reason}", hint="give a JavaScript file that exists"
        ) from None
    if not source.strip():
        raise RpcError(
            "invalid_params", f"{args.file} is empty", hint="give a JavaScript file with code in it"
        )
    result = ctx.tool("tool.init_script_add", {"source": source, "name": os.path.basename(args.file)})
    added = result["added"]
    return ctx.emit(
        result,
        f"init script {added['id']} ({added['name']}) runs first in tab {result['tab_id']}'s next documents",
    )


def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.tool("tool.init_script_list", {})
    scripts = result.get("scripts", [])
    return ctx.emit(result, _listing(scripts) if scripts else f"tab {result['tab_id']} has no init script")


def cmd_remove(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.tool("tool.init_script_remove", {"id": args.id} if args.id else {})
    n = result.get("removed", 0)
    left = len(result.get("scripts", []))
    return ctx.emit(result, f"removed {counted(n, 'init script')} ({left} left)")
