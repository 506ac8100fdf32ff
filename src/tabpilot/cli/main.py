"""``tabpilot``: the argparse tree and the dispatch of one command."""

from __future__ import annotations

import argparse
import os
import sys

from tabpilot import __version__
from tabpilot.cli.context import Context, tab_id
from tabpilot.cli.render import guarded, print_error
from tabpilot.cli.values import Name
from tabpilot.protocol import RpcError

# typing costs ~5 ms per command; annotations are strings, so it is imported for checkers only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

DESCRIPTION = """\
Drive your real browser from the shell: each session works in its own Agent Window.

  tabpilot open https://example.com      open a page in the session's current tab
  tabpilot eval document.title           run JavaScript, print the value as JSON
  tabpilot screenshot                    save a PNG, print its path
  tabpilot session stop                  close the Agent Window when done

Global options (before or after the verb): --session NAME (or TABPILOT_SESSION; default
'default'), --browser ID|LABEL (or TABPILOT_BROWSER), --tab TAB_ID (default: the session's
current tab), --json, --no-boundaries (page text is fenced between `<<<page nonce=N` and
`>>>page nonce=N` lines by default; or TABPILOT_BOUNDARIES=off).
Exit codes: 0 ok, 1 user error, 2 daemon/transport, 3 browser/CDP, 4 timeout, 5 version/pairing.
"""


class Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one error line plus a hint (JSON with --json), exit code 1."""

    # Set per command line by main(): argparse fails before the options are known.
    json_errors = False
    # Set by callers that parse on behalf of another program (the MCP server): raise, do not exit.
    raise_errors = False

    def error(self, message: str) -> NoReturn:
        hint = f"see `{self.prog} --help`"
        if "arguments are required" in message and ("TARGET" in message or "SOURCE" in message):
            # In a shell an unquoted `#id` starts a comment: the target vanished before we saw it.
            hint = (
                f'give the element as @eN, a CSS selector or text="…"; quote a selector that starts '
                f"with # or holds spaces, e.g. `{self.prog} '#save'` (see `{self.prog} --help`)"
            )
        err = RpcError("invalid_params", message, hint=hint)
        if Parser.raise_errors:
            raise err
        sys.exit(print_error(err, Parser.json_errors))

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse builds a formatter for every add_argument, and without a width the formatter
        # imports shutil (bz2, lzma, fnmatch: ~4 ms) to ask for the terminal's size.
        return self.formatter_class(prog=self.prog, width=_terminal_width())


def _terminal_width() -> int:
    """What shutil.get_terminal_size would say: $COLUMNS, else the terminal's width, else 80."""
    raw = os.environ.get("COLUMNS", "")
    if raw.isdigit():
        columns = int(raw)
    else:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(columns - 2, 40)


def _untranslated(message: str) -> str:
    return message


def _common_options() -> argparse.ArgumentParser:
    # SUPPRESS keeps a value given before the verb from being reset by the subparser's default.
    common = Parser(add_help=False)
    common.add_argument(
        "--session", metavar="NAME", type=Name("session"), default=argparse.SUPPRESS, help="session to act in"
    )
    common.add_argument(
        "--browser",
        metavar="ID|LABEL",
        type=Name("browser"),
        default=argparse.SUPPRESS,
        help="browser to use",
    )
    common.add_argument(
        "--tab",
        metavar="TAB_ID",
        type=tab_id,
        default=argparse.SUPPRESS,
        help="tab to act on (default: current)",
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    common.add_argument(
        "--no-boundaries",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print page text without the <<<page nonce=…>>> fences (or TABPILOT_BOUNDARIES=off)",
    )
    return common


# Which module registers each verb: a command imports and builds only its own family's parsers.
VERB_FAMILIES = {
    "open": "page_commands",
    "navigate": "page_commands",
    "back": "page_commands",
    "forward": "page_commands",
    "reload": "page_commands",
    "eval": "page_commands",
    "screenshot": "page_commands",
    "session": "session_commands",
    "tab": "session_commands",
    "browser": "browser_commands",
    "pair": "browser_commands",
    "extension": "browser_commands",
    "daemon": "browser_commands",
    "demo": "demo",
    "snapshot": "observe_commands",
    "find": "observe_commands",
    "text": "observe_commands",
    "html": "observe_commands",
    "console": "observe_commands",
    "click": "action_commands",
    "hover": "action_commands",
    "focus": "action_commands",
    "fill": "action_commands",
    "type": "action_commands",
    "press": "action_commands",
    "select": "action_commands",
    "check": "action_commands",
    "uncheck": "action_commands",
    "scroll": "action_commands",
    "drag": "action_commands",
    "upload": "action_commands",
    "wait": "action_commands",
    "dialog": "action_commands",
    "install-skill": "skill_commands",
    "doctor": "doctor_commands",
    "status": "doctor_commands",
    "batch": "batch_commands",
    "mcp": "mcp_commands",
    "request-help": "human_commands",
    "downloads": "download_commands",
    "network": "network_commands",
    "cookies": "storage_commands",
    "storage": "storage_commands",
    "state": "storage_commands",
    "emulate": "emulate_commands",
    "init-script": "init_script_commands",
    "pdf": "pdf_commands",
    "panel": "panel_commands",
}
FAMILY_ORDER = (
    "page_commands",
    "observe_commands",
    "action_commands",
    "human_commands",
    "download_commands",
    "network_commands",
    "storage_commands",
    "emulate_commands",
    "init_script_commands",
    "pdf_commands",
    "session_commands",
    "browser_commands",
    "skill_commands",
    "doctor_commands",
    "batch_commands",
    "mcp_commands",
    "panel_commands",
    "demo",
)
OPTIONS_WITH_VALUE = ("--session", "--browser", "--tab")


def verb_of(argv: list[str]) -> str | None:
    """The first word that is not an option (or an option's value)."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in OPTIONS_WITH_VALUE:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


class _Discard:
    """Stands in for the parsers of the other verbs of a family: accepts every call, builds nothing."""

    def __getattr__(self, name: str) -> _Discard:
        return self

    def __call__(self, *args: object, **kwargs: object) -> _Discard:
        return self


class _OneVerb:
    """A subparsers action that really builds only one verb (a family registers several)."""

    def __init__(self, sub: Any, verb: str) -> None:
        self._sub = sub
        self._verb = verb

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if name == self._verb or self._verb in kwargs.get("aliases", ()):
            return self._sub.add_parser(name, **kwargs)
        return _Discard()


def build_parser(argv: list[str] | None = None) -> Parser:
    """The parser; given argv with a known verb, only that verb's family is registered."""
    common = _common_options()
    parser = Parser(
        prog="tabpilot",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"tabpilot {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=Parser)
    sub.required = True
    verb = verb_of(argv) if argv is not None else None
    family = VERB_FAMILIES.get(verb) if verb is not None else None
    for name in (family,) if family else FAMILY_ORDER:
        # __import__ (not importlib) so `python -X importtime` accounts for these imports too.
        __import__(f"tabpilot.cli.{name}")
        # Building every parser of a family costs ~5 ms for the action verbs: build the one in use.
        target = _OneVerb(sub, verb) if family and verb is not None else sub
        sys.modules[f"tabpilot.cli.{name}"].register(target, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words == ["--version"]:
        # The commonest probe of all: answer it without building every verb's parser.
        print(f"tabpilot {__version__}")
        return 0
    Parser.json_errors = "--json" in words
    # tabpilot speaks English only; asking gettext for argparse's own words stats locale files (~2 ms).
    argparse._ = _untranslated  # type: ignore[attr-defined]
    args = build_parser(words).parse_args(words)
    ctx = Context(args)
    handler: Any = args.handler
    return guarded(lambda: handler(args, ctx), ctx.as_json, ctx.boundaries)


if __name__ == "__main__":
    sys.exit(main())
