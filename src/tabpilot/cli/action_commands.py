"""Verbs that act on the page like a person: click, fill, type, press, select, check, scroll, drag, upload, wait, dialog.

Each prints one line of outcome (what was acted on, and what it set off: a navigation, a new tab, a
dialog); ``--snapshot`` / ``--diff`` append a fresh snapshot or what changed since the last one.
"""

from __future__ import annotations

import argparse
import os
import time

from tabpilot.cli.context import Context, parse_duration
from tabpilot.cli.outcomes import (
    action_text,
    check_line,
    click_line,
    dialog_line,
    dialog_text,
    fill_line,
    inline,
    press_line,
    select_line,
    simple_line,
    target_text,
    type_line,
    wait_line,
)
from tabpilot.cli.render import quoted
from tabpilot.cli.values import Count, Point, target
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ACTION_TIMEOUT_S = 5.0
WAIT_TIMEOUT_S = 10.0
UPLOAD_TIMEOUT_S = 30.0
TARGET_HELP = '@eN (a ref from `tabpilot snapshot`), a CSS selector, or text="…"'
LOAD_STATES = ("domcontentloaded", "load", "networkidle")
MAX_KEY_DELAY_MS = 10_000
MAX_SCROLL_PX = 1_000_000


def _add_common(p: argparse.ArgumentParser, default_timeout: float = ACTION_TIMEOUT_S) -> None:
    p.add_argument(
        "--timeout",
        type=parse_duration,
        help=f"how long to wait for the element to be ready and for what the action starts "
        f"(default {default_timeout:g}s)",
    )
    after = p.add_mutually_exclusive_group()
    after.add_argument("--snapshot", action="store_true", help="print a fresh snapshot after")
    after.add_argument("--diff", action="store_true", help="print what changed since the last snapshot")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add this family's verbs to the parser."""

    def add(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(
            name, parents=[common], help=help_text, description=description
        )
        return parser

    ready = (
        "Waits (up to --timeout, default 5s) until the target is attached, visible, stable, enabled and "
        "receives the pointer, scrolling it into view; a covered element fails naming what covers it."
    )
    p = add("click", "click an element", f"Click TARGET ({TARGET_HELP}) with the mouse. {ready}")
    p.add_argument("target", metavar="TARGET", type=target)
    p.add_argument("--button", choices=("left", "right", "middle"), default="left")
    p.add_argument("--double", action="store_true", help="double-click")
    p.add_argument("--modifiers", metavar="KEYS", help="keys held during the click: Shift,Control,Alt,Meta")
    p.add_argument(
        "--at", type=Point(), metavar="X,Y", help="click at this offset from the element's top-left"
    )
    _add_common(p)
    p.set_defaults(handler=cmd_click)

    p = add("hover", "move the mouse over an element", f"Hover TARGET. {ready}")
    p.add_argument("target", metavar="TARGET", type=target)
    _add_common(p)
    p.set_defaults(handler=cmd_simple, method="tool.hover", verb="hovered")

    p = add("focus", "focus an element", "Give TARGET the keyboard focus.")
    p.add_argument("target", metavar="TARGET", type=target)
    _add_common(p)
    p.set_defaults(handler=cmd_simple, method="tool.focus", verb="focused")

    p = add(
        "fill",
        "replace the text of a field",
        "Clear TARGET (input, textarea, contenteditable or rich editor) and enter TEXT as typed text, "
        "then check the field holds it. Date, time, colour and range inputs take their value format.",
    )
    p.add_argument("target", metavar="TARGET", type=target)
    p.add_argument("text", metavar="TEXT")
    _add_common(p)
    p.set_defaults(handler=cmd_fill)

    p = add(
        "type",
        "type text key by key",
        "Type TEXT with a key press per character (any Unicode) into the focused element, or into --ref.",
    )
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--ref", metavar="TARGET", type=target, help="focus this element first")
    p.add_argument(
        "--delay",
        type=Count(0, MAX_KEY_DELAY_MS, "ms"),
        metavar="MS",
        default=0,
        help=f"pause between keys (at most {MAX_KEY_DELAY_MS} ms)",
    )
    _add_common(p)
    p.set_defaults(handler=cmd_type)

    p = add(
        "press",
        "press keys or combos",
        "Press each KEY in turn: names (Enter, Tab, Escape, ArrowDown, PageDown, F5 …, case-insensitive, "
        "aliases like Esc or Return), single characters, or combos like Control+A, Shift+Tab, Meta+Shift+Z.",
    )
    p.add_argument("keys", metavar="KEY", nargs="+")
    p.add_argument("--ref", metavar="TARGET", type=target, help="focus this element first")
    _add_common(p)
    p.set_defaults(handler=cmd_press)

    p = add(
        "select",
        "choose options of a <select>",
        "Select the options of TARGET whose value or visible label is VALUE (several for a multi-select; "
        "the others are deselected). Disabled options are refused.",
    )
    p.add_argument("target", metavar="TARGET", type=target)
    p.add_argument("values", metavar="VALUE", nargs="+")
    _add_common(p)
    p.set_defaults(handler=cmd_select)

    for name, checked in (("check", True), ("uncheck", False)):
        p = add(
            name,
            f"{name} a checkbox, radio or switch",
            f"Make TARGET (checkbox, radio, switch, native or ARIA) {name}ed by clicking it when needed.",
        )
        p.add_argument("target", metavar="TARGET", type=target)
        _add_common(p)
        p.set_defaults(handler=cmd_check, checked=checked)

    p = add(
        "scroll",
        "scroll the page or an element",
        "Scroll the page (or TARGET's scrollable box) by PX (default: most of a screen) or to an end.",
    )
    p.add_argument("target", metavar="TARGET", nargs="?", type=target)
    way = p.add_mutually_exclusive_group(required=True)
    for direction in ("down", "up", "left", "right"):
        way.add_argument(
            f"--{direction}",
            nargs="?",
            const=0,
            type=Count(0, MAX_SCROLL_PX, "px"),
            metavar="PX",
            help=f"scroll {direction} by PX (default: most of a screen)",
        )
    way.add_argument("--to", choices=("top", "bottom", "left", "right"), help="scroll to that end")
    _add_common(p)
    p.set_defaults(handler=cmd_scroll)

    p = add(
        "drag",
        "drag an element onto another",
        "Press the mouse on SOURCE, move to TARGET in steps and release; HTML5 drag and drop works too.",
    )
    p.add_argument("source", metavar="SOURCE", type=target)
    p.add_argument("target", metavar="TARGET", type=target)
    _add_common(p)
    p.set_defaults(handler=cmd_drag)

    p = add(
        "upload",
        "give files to a file input or drop zone",
        "Hand FILEs to TARGET: a file input (hidden ones too), its label or button, or a drop zone. "
        "The page receives them as a person's pick (or drop) would deliver them.",
    )
    p.add_argument("target", metavar="TARGET", type=target)
    p.add_argument("files", metavar="FILE", nargs="+")
    _add_common(p, UPLOAD_TIMEOUT_S)
    p.set_defaults(handler=cmd_upload)

    p = add(
        "wait",
        "wait for an element, text, URL, load state or a while",
        "Wait until something is true (up to --timeout, default 10s), or for DURATION (e.g. 2s, 500ms).",
    )
    p.add_argument("duration", metavar="DURATION", nargs="?", type=parse_duration)
    p.add_argument("--selector", metavar="TARGET", type=target, help="until this element is visible")
    p.add_argument("--text", metavar="TEXT", help="until the page shows this text (case-insensitive)")
    p.add_argument("--gone", metavar="TARGET", type=target, help="until this element is hidden or gone")
    p.add_argument("--url", metavar="PATTERN", help="until the URL matches (a part of it, or a glob with *)")
    p.add_argument("--load", choices=LOAD_STATES, help="until the page reaches this load state")
    p.add_argument(
        "--timeout", type=parse_duration, help=f"give up after this long (default {WAIT_TIMEOUT_S:g}s)"
    )
    p.set_defaults(handler=cmd_wait)

    p = add(
        "dialog",
        "answer the page's confirm/prompt/beforeunload dialog",
        "accept or dismiss the JavaScript dialog open on the current tab (alerts are accepted at once); "
        "without an action, say which dialog is open.",
    )
    p.add_argument("action", nargs="?", choices=("accept", "dismiss"))
    p.add_argument("--text", metavar="TEXT", help="the answer to a prompt (with accept)")
    p.add_argument(
        "--timeout", type=parse_duration, help=f"give up after this long (default {ACTION_TIMEOUT_S:g}s)"
    )
    p.set_defaults(handler=cmd_dialog)


# ----- running a tool and saying what happened (the lines: tabpilot.cli.outcomes) ----------------


def _run(
    args: argparse.Namespace,
    ctx: Context,
    method: str,
    params: dict[str, Any],
    default_timeout: float = ACTION_TIMEOUT_S,
) -> Any:
    if args.snapshot:
        params["after"] = "snapshot"
    elif args.diff:
        params["after"] = "diff"
    return ctx.tool(method, params, default_timeout)


def _emit(ctx: Context, result: dict[str, Any], line: str) -> int:
    return ctx.emit(result, action_text(result, line, ctx.nonce(result)))


def _mark(ctx: Context, result: dict[str, Any]) -> str | None:
    """The nonce for page strings in this action's line (see outcomes.inline)."""
    return inline(result, ctx.nonce(result))


# ----- the verbs ---------------------------------------------------------------------------------


def cmd_click(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {
        "target": args.target,
        "button": args.button,
        "click_count": 2 if args.double else 1,
    }
    if args.modifiers:
        params["modifiers"] = [m.strip() for m in args.modifiers.split(",") if m.strip()]
    if args.at:
        params["position"] = args.at
    result = _run(args, ctx, "tool.click", params)
    return _emit(ctx, result, click_line(result, args.button, args.double, ctx.nonce(result)))


def cmd_simple(args: argparse.Namespace, ctx: Context) -> int:
    result = _run(args, ctx, args.method, {"target": args.target})
    return _emit(ctx, result, simple_line(result, args.verb, ctx.nonce(result)))


def cmd_fill(args: argparse.Namespace, ctx: Context) -> int:
    result = _run(args, ctx, "tool.fill", {"target": args.target, "value": args.text})
    return _emit(ctx, result, fill_line(result, ctx.nonce(result)))


def cmd_type(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"text": args.text, "delay_ms": args.delay}
    if args.ref:
        params["target"] = args.ref
    # Typing slowly takes its time on top of the wait for the element.
    typing_s = args.delay * len(args.text) / 1000
    result = _run(args, ctx, "tool.type", params, ACTION_TIMEOUT_S + typing_s)
    return _emit(ctx, result, type_line(result, args.text, ctx.nonce(result)))


def cmd_press(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {"keys": args.keys}
    if args.ref:
        params["target"] = args.ref
    result = _run(args, ctx, "tool.press", params)
    return _emit(ctx, result, press_line(result, args.keys, ctx.nonce(result)))


def cmd_select(args: argparse.Namespace, ctx: Context) -> int:
    result = _run(args, ctx, "tool.select", {"target": args.target, "values": args.values})
    return _emit(ctx, result, select_line(result, ctx.nonce(result)))


def cmd_check(args: argparse.Namespace, ctx: Context) -> int:
    result = _run(args, ctx, "tool.check", {"target": args.target, "checked": args.checked})
    return _emit(ctx, result, check_line(result, args.checked, ctx.nonce(result)))


def cmd_scroll(args: argparse.Namespace, ctx: Context) -> int:
    params: dict[str, Any] = {}
    if args.target:
        params["target"] = args.target
    if args.to:
        params["to"] = args.to
    else:
        for direction in ("down", "up", "left", "right"):
            amount = getattr(args, direction)
            if amount is not None:
                params["direction"] = direction
                if amount:
                    params["amount"] = amount
    result = _run(args, ctx, "tool.scroll", params)
    what = f" {target_text(result['target'], _mark(ctx, result))}" if result.get("target") else ""
    horizontal = result.get("direction") in ("left", "right") or args.to in ("left", "right")
    pos, end = (
        (result.get("x", 0), result.get("max_x", 0))
        if horizontal
        else (result.get("y", 0), result.get("max_y", 0))
    )
    how = f"to {args.to}" if args.to else f"{result.get('direction')} {result.get('moved', 0)} px"
    return _emit(ctx, result, f"scrolled{what} {how} (now at {pos} of {end})")


def cmd_drag(args: argparse.Namespace, ctx: Context) -> int:
    result = _run(args, ctx, "tool.drag", {"source": args.source, "target": args.target})
    how = " (HTML5 drag and drop)" if result.get("html5") else ""
    mark = _mark(ctx, result)
    line = (
        f"dragged {target_text(result.get('source'), mark)} to {target_text(result.get('target'), mark)}{how}"
    )
    return _emit(ctx, result, line)


def human_size(size: int) -> str:
    """``12 B``, ``3.4 kB``, ``12 MB`` (decimal units)."""
    value = float(size)
    unit = "B"
    for bigger in ("kB", "MB", "GB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    if unit == "B":
        return f"{size} B"
    return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"


def cmd_upload(args: argparse.Namespace, ctx: Context) -> int:
    # The daemon reads the files: it may run with another working directory.
    paths = [os.path.abspath(os.path.expanduser(f)) for f in args.files]
    result = _run(args, ctx, "tool.upload", {"target": args.target, "paths": paths}, UPLOAD_TIMEOUT_S)
    files = result.get("files") or []
    listing = ", ".join(f"{f.get('name')} {human_size(int(f.get('size', 0)))}" for f in files)
    count = f"{len(files)} file" + ("" if len(files) == 1 else "s")
    via = {"drop": " by drag and drop", "chooser": " through its file chooser"}.get(result.get("via", ""), "")
    what = target_text(result.get("target"), _mark(ctx, result))
    return _emit(ctx, result, f"uploaded {count} to {what}{via} ({listing})")


def cmd_wait(args: argparse.Namespace, ctx: Context) -> int:
    conditions = {
        "selector": args.selector,
        "text": args.text,
        "gone": args.gone,
        "url": args.url,
        "load": args.load,
    }
    given = {k: v for k, v in conditions.items() if v is not None}
    if args.duration is not None:
        if given:
            raise RpcError(
                "invalid_params", "give a DURATION or one condition, not both", hint="e.g. `tabpilot wait 2s`"
            )
        started = time.monotonic()
        time.sleep(args.duration)
        result = {"waited_ms": round((time.monotonic() - started) * 1000)}
        return ctx.emit(result, f"waited {result['waited_ms'] / 1000:.1f} s")
    if len(given) != 1:
        raise RpcError(
            "invalid_params",
            "give exactly one of DURATION, --selector, --text, --gone, --url, --load",
            hint='e.g. `tabpilot wait --text "Saved"` or `tabpilot wait 2s`',
        )
    ((kind, value),) = given.items()
    result = ctx.tool("tool.wait", {kind: value}, WAIT_TIMEOUT_S)
    return ctx.emit(result, wait_line(result, kind, value, ctx.nonce(result)))


def cmd_dialog(args: argparse.Namespace, ctx: Context) -> int:
    if args.text is not None and args.action != "accept":
        raise RpcError(
            "invalid_params", "--text goes with accept", hint='`tabpilot dialog accept --text "answer"`'
        )
    params: dict[str, Any] = {"action": args.action or "status"}
    if args.text is not None:
        params["text"] = args.text
    result = ctx.tool("tool.dialog", params, ACTION_TIMEOUT_S)
    if args.action is None:
        dialog = result.get("dialog")
        line = dialog_line(dialog, ctx.nonce(result)) if isinstance(dialog, dict) else "no dialog is open"
        return ctx.emit(result, line)
    answered = result.get("answered") or {}
    verb = "accepted" if answered.get("handled") == "accepted" else "dismissed"
    with_text = f" with {quoted(answered['text'])}" if "text" in answered else ""
    line = f"{verb} {dialog_text(answered, _mark(ctx, result))}{with_text}"
    return _emit(ctx, result, line)
