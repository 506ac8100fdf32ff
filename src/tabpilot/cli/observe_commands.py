"""Verbs that read the page: snapshot, find, text, html, console."""

from __future__ import annotations

import argparse

from tabpilot.cli.context import Context, parse_duration
from tabpilot.cli.files import out_path, write_private
from tabpilot.cli.outcomes import find_text, page_text
from tabpilot.cli.render import fence, page_quoted
from tabpilot.cli.values import Count, target
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MAX_TOKENS = 12000
DEFAULT_HTML_BYTES = 100_000
LEVELS = ("error", "warning", "info", "log", "debug")
MAX_TOKENS = 10_000_000
MAX_BYTES = 1_000_000_000
MAX_LIMIT = 100_000


def _max_tokens_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-tokens",
        type=Count(0, MAX_TOKENS),
        metavar="N",
        help=f"cut after about N tokens (default {DEFAULT_MAX_TOKENS}; 0 = no limit)",
    )


def _timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=parse_duration, help="give up after this long (default 30s)")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""
    p = sub.add_parser(
        "snapshot",
        parents=[common],
        help="print the page as text, with a ref @eN on everything you can act on",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Print the current page as the agent should read it: all visible text as readable lines, headings,
lists, tables as rows, landmarks and dialogs, and every element you can act on in brackets with a
ref, role, name, value and states, e.g. [button "Save" @e12] or [textbox "Email" @e5 required].
Same-origin and cross-origin iframes and open shadow DOM are included. A ref stays the same for
the same element while the page lives; use it with click, fill, … and with --ref here.

  tabpilot snapshot                 the whole page, up to ~12000 tokens (a last line says what was cut)
  tabpilot snapshot -i              only what you can act on, under its headings
  tabpilot snapshot --ref @e40      one element's part of the page (a heading: its section); --ref
                                    takes any target: '#main', 'text="Prices"' work too
  tabpilot snapshot --out page.txt  the whole page into a file; prints the path and a summary
  tabpilot snapshot --diff          only what changed since this tab's last snapshot (- and + lines)""",
    )
    p.add_argument("-i", "--interactive", action="store_true", help="only actionable elements, with context")
    p.add_argument("--viewport", action="store_true", help="only what is on screen now")
    p.add_argument(
        "--ref", metavar="TARGET", type=target, help="only this element's subtree (a heading: its section)"
    )
    p.add_argument("--urls", action="store_true", help="show the URL of every link")
    p.add_argument(
        "--diff", action="store_true", help="only what changed since this tab's last snapshot (same options)"
    )
    _max_tokens_option(p)
    p.add_argument("--out", metavar="FILE", help="write the whole (uncut) snapshot to FILE")
    _timeout_option(p)
    p.set_defaults(handler=cmd_snapshot)

    p = sub.add_parser(
        "find",
        parents=[common],
        help="print the snapshot lines that contain TEXT, with refs and their section",
        description="Search the page's snapshot for TEXT (any case) and print each matching line with "
        "its ref, under the landmark and heading it belongs to. Iframes and shadow DOM included.",
    )
    p.add_argument("text", metavar="TEXT", help="the text to look for")
    p.add_argument(
        "--limit", type=Count(1, MAX_LIMIT), metavar="N", help="show at most N matches (default 50)"
    )
    _timeout_option(p)
    p.set_defaults(handler=cmd_find)

    p = sub.add_parser(
        "text",
        parents=[common],
        help="print the readable text of the page or of one element",
        description="Print the page's readable text (the snapshot without refs; form controls keep "
        'their [role "name"] brackets). With --ref, only that element\'s text.',
    )
    p.add_argument("--ref", metavar="TARGET", type=target, help="only this element (a heading: its section)")
    _max_tokens_option(p)
    _timeout_option(p)
    p.set_defaults(handler=cmd_text)

    p = sub.add_parser(
        "html",
        parents=[common],
        help="print the HTML of the page or of one element",
        description="Print the page's HTML (open shadow roots as <template shadowrootmode>), or one "
        "element's with --ref (a ref @eN, a CSS selector or text=…). Cut at --max-bytes; --out "
        "writes all of it to a file.",
    )
    p.add_argument("--ref", metavar="TARGET", type=target, help="the element: @eN, a CSS selector, or text=…")
    p.add_argument(
        "--max-bytes",
        type=Count(0, MAX_BYTES),
        metavar="N",
        help=f"cut after N bytes of UTF-8 (default {DEFAULT_HTML_BYTES:,}; 0 = no limit)",
    )
    p.add_argument("--out", metavar="FILE", help="write the HTML to FILE (uncut unless --max-bytes)")
    _timeout_option(p)
    p.set_defaults(handler=cmd_html)

    p = sub.add_parser(
        "console",
        parents=[common],
        help="print what the page wrote to the console (errors, warnings, logs)",
        description="Print the current tab's console entries: console.* calls, uncaught exceptions and "
        "the browser's own messages (failed requests…), oldest first, each with a sequence number "
        "that never goes back in this tab. Read on from where you were with --since N.",
    )
    p.add_argument("--since", type=Count(), metavar="N", help="only entries after number N")
    p.add_argument(
        "--level", choices=LEVELS, help="only this level and more severe (error > warning > info/log > debug)"
    )
    p.add_argument("--limit", type=Count(1, MAX_LIMIT), metavar="N", help="at most N entries (default 100)")
    p.set_defaults(handler=cmd_console)


def write_text(path: str, text: str) -> None:
    write_private(path, text if text.endswith("\n") else text + "\n")


def cmd_snapshot(args: argparse.Namespace, ctx: Context) -> int:
    out = out_path(args.out) if args.out else None
    if args.diff and (out or args.ref or args.interactive or args.viewport or args.urls):
        raise RpcError(
            "invalid_params",
            "--diff compares with the last snapshot, taken with its own options",
            hint="run `tabpilot snapshot` with the options you want first, then `tabpilot snapshot --diff` alone",
        )
    params: dict[str, Any] = {"mode": "interactive" if args.interactive else "full"}
    if args.diff:
        params["diff"] = True
    if args.viewport:
        params["viewport"] = True
    if args.urls:
        params["urls"] = True
    if args.ref:
        params["ref"] = args.ref
    if args.max_tokens is not None:
        params["max_tokens"] = args.max_tokens
    elif out:
        params["max_tokens"] = 0
    result = ctx.tool("tool.snapshot", params)
    if not out:
        return ctx.emit(result, page_text(result, ctx.nonce(result)))
    write_text(out, result["text"])
    text = result.pop("text")
    result["path"] = out
    lines = text.count("\n") + 1
    summary = (
        f"snapshot of {result.get('url', '')} {page_quoted(result.get('title'), ctx.nonce(result))}: "
        f"{lines:,} lines, "
        f"~{result.get('tokens', 0):,} tokens, {result.get('refs', 0):,} refs"
    )
    if result.get("truncated"):
        summary += f" (cut: ~{result.get('omitted_tokens', 0):,} tokens left out)"
    return ctx.emit(result, f"{out}\n{summary}")


def cmd_find(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"text": args.text}
    if args.limit:
        params["max_matches"] = args.limit
    result = ctx.tool("tool.find", params)
    return ctx.emit(result, find_text(result, ctx.nonce(result)))


def cmd_text(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {}
    if args.ref:
        params["ref"] = args.ref
    if args.max_tokens is not None:
        params["max_tokens"] = args.max_tokens
    result = ctx.tool("tool.text", params)
    return ctx.emit(result, page_text(result, ctx.nonce(result)))


def cmd_html(args: argparse.Namespace, ctx: Context) -> int:
    out = out_path(args.out) if args.out else None
    params: dict[str, Any] = {}
    if args.ref:
        params["ref"] = args.ref
    if args.max_bytes is not None:
        params["max_bytes"] = args.max_bytes
    elif out:
        params["max_bytes"] = 0
    result = ctx.tool("tool.html", params)
    cut = ""
    if result.get("truncated"):
        cut = (
            f"<!-- tabpilot: cut at {params.get('max_bytes', DEFAULT_HTML_BYTES):,} of {result['bytes']:,} "
            "bytes; --max-bytes 0 or --out FILE gives all of it -->"
        )
    if not out:
        return ctx.emit(result, fence(result["html"], ctx.nonce(result)) + (f"\n{cut}" if cut else ""))
    write_text(out, result["html"])
    result.pop("html")
    result["path"] = out
    what = result.get("label") or "the page"
    summary = f"HTML of {what}: {result['bytes']:,} bytes" + (" (cut)" if cut else "")
    return ctx.emit(result, f"{out}\n{summary}")


def console_line(entry: dict[str, Any]) -> str:
    """``#12 error Uncaught TypeError: … (app.js:10:5)``"""
    where = ""
    url = entry.get("url")
    if url:
        where = url
        if entry.get("line"):
            where += f":{entry['line']}"
            if entry.get("column"):
                where += f":{entry['column']}"
        where = f" ({where})"
    frame = f" [frame {entry['frame']}]" if entry.get("frame") else ""
    return f"#{entry['seq']} {entry['level']} {entry['text']}{where}{frame}"


def cmd_console(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {}
    if args.since is not None:
        params["since"] = args.since
    if args.level:
        params["level"] = args.level
    if args.limit:
        params["limit"] = args.limit
    result = ctx.tool("tool.console", params)
    lines = [console_line(entry) for entry in result.get("entries", [])]
    if lines:
        lines = [fence("\n".join(lines), ctx.nonce(result))]
    if result.get("dropped"):
        lines.insert(0, f"({result['dropped']} older entries are no longer kept)")
    if result.get("more") and args.since is None:
        lines.insert(0, f"({result['more']} earlier entries not shown: tabpilot console --since 0)")
    elif result.get("more"):
        lines.append(f"… {result['more']} more: tabpilot console --since {result['next_since']}")
    if not lines:
        after = f" after #{args.since}" if args.since is not None else ""
        lines.append(f"no console entries{after} (read on later with --since {result.get('next_since', 0)})")
    return ctx.emit(result, "\n".join(lines))
