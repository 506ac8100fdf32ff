"""Verbs that act on the session's current page: open, back, forward, reload, eval, screenshot."""

from __future__ import annotations

import argparse
import os
import time

from tabpilot import paths
from tabpilot.cli.context import Context, parse_duration
from tabpilot.cli.files import out_path, write_private
from tabpilot.cli.outcomes import eval_text, open_line
from tabpilot.cli.render import fence, navigation_line
from tabpilot.cli.values import Count, target
from tabpilot.protocol import WAIT_UNTIL, RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAVIGATION_TIMEOUT_S = 30.0


def _add_wait_options(parser: argparse.ArgumentParser, default_timeout: float) -> None:
    parser.add_argument(
        "--wait-until",
        choices=WAIT_UNTIL,
        default="load",
        help="when the navigation counts as done (default: load)",
    )
    parser.add_argument(
        "--timeout", type=parse_duration, help=f"give up after this long (default {default_timeout:g}s)"
    )


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    for name, aliases in (("open", ["navigate"]),):
        p = sub.add_parser(
            name,
            aliases=aliases,
            parents=[common],
            help="open a URL in the session's current tab",
            description="Open URL in the session's current tab and wait until it has loaded. "
            "Without a scheme https:// is assumed (http:// for localhost); relative input like /path or "
            "#section resolves against the current page.",
        )
        p.add_argument("url", help="the address to open")
        p.add_argument("--allow-file", action="store_true", help="allow file:// URLs")
        _add_wait_options(p, NAVIGATION_TIMEOUT_S)
        p.set_defaults(handler=cmd_open)

    for name, method, verb in (
        ("back", "tool.navigate_back", "went back to"),
        ("forward", "tool.navigate_forward", "went forward to"),
    ):
        p = sub.add_parser(name, parents=[common], help=f"go {name} in the current tab's history")
        _add_wait_options(p, NAVIGATION_TIMEOUT_S)
        p.set_defaults(handler=cmd_history, method=method, verb=verb)

    p = sub.add_parser("reload", parents=[common], help="reload the current tab")
    p.add_argument("--hard", action="store_true", help="bypass the cache")
    _add_wait_options(p, NAVIGATION_TIMEOUT_S)
    p.set_defaults(handler=cmd_reload)

    p = sub.add_parser(
        "eval",
        parents=[common],
        help="evaluate JavaScript in the current page and print the value as JSON",
        description="Evaluate EXPR in the page (promises are awaited) and print its value as JSON. "
        "A page exception is printed as 'exception: …' with exit code 0.",
    )
    p.add_argument("expression", metavar="EXPR", help="a JavaScript expression")
    p.add_argument("--timeout", type=parse_duration, help="give up after this long (default 30s)")
    p.set_defaults(handler=cmd_eval)

    p = sub.add_parser(
        "screenshot",
        parents=[common],
        help="save a picture of the current tab (viewport, whole page, or one element) and print its path",
        description="Capture the visible part of the current tab (works on background tabs), the whole "
        "page with --full-page, or one element with --ref (a ref @eN, a CSS selector or text=…; it is "
        "scrolled into view first). Prints the file path; --json prints {path, width, height, …}.",
    )
    p.add_argument(
        "--out", metavar="FILE", help="where to write the image (default: $TABPILOT_HOME/screenshots/)"
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--ref", metavar="TARGET", type=target, help="only this element: @eN, a CSS selector, or text=…"
    )
    what.add_argument("--full-page", action="store_true", help="the whole page, not just the viewport")
    p.add_argument(
        "--annotate",
        action="store_true",
        help="draw ref boxes and labels; print the legend",
    )
    p.add_argument("--format", choices=("png", "jpeg"), default="png", help="image format (default png)")
    p.add_argument(
        "--quality", type=Count(0, 100), metavar="Q", help="JPEG quality 0-100 (with --format jpeg)"
    )
    p.add_argument("--timeout", type=parse_duration, help="give up after this long (default 30s)")
    p.set_defaults(handler=cmd_screenshot)


def _navigation_params(args: argparse.Namespace) -> dict[str, Any]:
    return {"wait_until": args.wait_until}


def cmd_open(args: argparse.Namespace, ctx: Context) -> int:
    params = {"url": args.url, **_navigation_params(args)}
    if args.allow_file:
        params["allow_file"] = True
    result = ctx.tool("tool.navigate", params, NAVIGATION_TIMEOUT_S)
    return ctx.emit(result, open_line(result, ctx.nonce(result)))


def cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.tool(args.method, _navigation_params(args), NAVIGATION_TIMEOUT_S)
    return ctx.emit(result, navigation_line(args.verb, result, ctx.nonce(result)))


def cmd_reload(args: argparse.Namespace, ctx: Context) -> int:
    params = {**_navigation_params(args), "hard": bool(args.hard)}
    result = ctx.tool("tool.reload", params, NAVIGATION_TIMEOUT_S)
    return ctx.emit(result, navigation_line("reloaded", result, ctx.nonce(result)))


def cmd_eval(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.tool("tool.evaluate", {"expression": args.expression})
    return ctx.emit(result, eval_text(result, ctx.nonce(result)))


def _default_screenshot_path(ctx: Context, extension: str) -> str:
    directory = paths.screenshot_dir()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{int(time.time() * 1000) % 1000:03d}"
    return os.path.join(directory, f"{ctx.session or 'default'}-{stamp}.{extension}")


def cmd_screenshot(args: argparse.Namespace, ctx: Context) -> int:
    if args.quality is not None and args.format != "jpeg":
        raise RpcError("invalid_params", "--quality applies to JPEG only", hint="add --format jpeg")
    extension = "jpg" if args.format == "jpeg" else "png"
    out = out_path(args.out if args.out else _default_screenshot_path(ctx, extension))
    import base64

    params: dict[str, Any] = {"format": args.format}
    if args.quality is not None:
        params["quality"] = args.quality
    if args.ref:
        params["ref"] = args.ref
    if args.full_page:
        params["full_page"] = True
    if args.annotate:
        if args.full_page or args.ref or args.format != "png":
            raise RpcError(
                "invalid_params",
                "--annotate draws on a PNG of the viewport",
                hint="leave out --full-page, --ref and --format jpeg",
            )
        params["annotate"] = True
    result = ctx.tool("tool.screenshot", params)
    data = base64.b64decode(result.pop("data"))
    write_private(out, data)
    result.update(path=out, bytes=len(data))
    note = (
        f"\n(the page is longer than {result['height']} px; the image stops there)"
        if result.get("cut")
        else ""
    )
    # The labels are the page's words: fenced like every page text.
    labels = "\n".join(f"{b['ref']} {b['label']}" for b in result.get("legend") or [])
    legend = (
        f"\n{fence(labels, ctx.nonce(result))}"
        if labels
        else "\n(no refs on screen)"
        if args.annotate
        else ""
    )
    return ctx.emit(result, out + note + legend)
