"""``batch``: several commands, one per line, in one process (no start-up cost per step)."""

from __future__ import annotations

import argparse
import shlex
import sys

from tabpilot.cli.context import Context
from tabpilot.protocol import EXIT_USER, RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "batch",
        parents=[common],
        help="run several commands (one per line, from a file or stdin) in one process",
        description="Read tabpilot commands, one per line (a leading `tabpilot` is optional; blank lines "
        "are skipped), and run them in order in this process, printing each outcome. A line whose first "
        "non-blank character is # is a comment; a # anywhere else is part of a word, so `click #save` "
        "means the CSS selector #save (unlike in a shell, no quotes needed). Words are split as a shell "
        "does, with quotes. Stops at the first failure with its exit code, unless --keep-going. "
        "--session, --browser, --json and --no-boundaries given to batch apply to every line that does not set its own.",
    )
    p.add_argument("file", nargs="?", help="file with the commands (default: stdin)")
    p.add_argument("--keep-going", action="store_true", help="run every line even after a failure")
    p.set_defaults(handler=cmd_batch)


def _lines(args: argparse.Namespace) -> list[str]:
    if args.file and args.file != "-":
        try:
            with open(args.file, encoding="utf-8") as handle:
                return handle.read().splitlines()
        except OSError as exc:
            raise RpcError(
                "invalid_params",
                f"cannot read {args.file}: {exc.strerror}",
                hint="give a readable file with one command per line, or pipe the commands in on stdin",
            ) from None
    return sys.stdin.read().splitlines()


def _argv_of(line: str, ctx: Context) -> list[str] | None:
    if line.lstrip().startswith("#"):
        return None
    # Comments only at the start of a line: `click #save` is a CSS id, not `click` and a comment.
    words = shlex.split(line)
    if not words:
        return None
    if words[0] == "tabpilot":
        words = words[1:]
    # The batch's own globals go first, so a line's own options (parsed later) win.
    inherited = []
    if ctx.session:
        inherited += ["--session", ctx.session]
    if ctx.browser:
        inherited += ["--browser", ctx.browser]
    if ctx.as_json:
        inherited.append("--json")
    if not ctx.boundaries:
        inherited.append("--no-boundaries")
    return inherited + words


def _run_line(argv: list[str], as_json: bool) -> int:
    from tabpilot.cli.main import main, verb_of
    from tabpilot.cli.render import print_error

    if verb_of(argv) == "batch":
        return print_error(
            RpcError(
                "invalid_params", "batch cannot run batch", hint="put the commands themselves in the file"
            ),
            as_json,
        )
    try:
        return main(argv)
    except SystemExit as stop:  # argparse reports bad arguments by exiting
        return stop.code if isinstance(stop.code, int) else EXIT_USER


def cmd_batch(args: argparse.Namespace, ctx: Context) -> int:
    first_failure = 0
    for number, line in enumerate(_lines(args), 1):
        try:
            argv = _argv_of(line, ctx)
        except ValueError as exc:
            print(f"error: line {number}: cannot split {line!r}: {exc}", file=sys.stderr)
            code = EXIT_USER
        else:
            if argv is None:
                continue
            sys.stdout.flush()
            code = _run_line(argv, ctx.as_json)
        if code != 0:
            if not ctx.as_json:
                print(f"error: line {number} failed with exit code {code}: {line.strip()}", file=sys.stderr)
            first_failure = first_failure or code
            if not args.keep_going:
                return code
    return first_failure
