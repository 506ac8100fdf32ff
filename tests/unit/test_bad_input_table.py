"""The bad-input table, generated from the parsers: every option of every verb, given no value, a value of the
wrong kind, or a value for a flag that takes none, and every verb given an option it does not know, answers with one `error:` line and a `hint:` line (one
JSON error object with --json) and exit code 1, and never a traceback. Parse-time refusals need no daemon,
so this runs in-process, in well under a second per hundred cases; tests/e2e/test_bad_input.py holds the
refusals that need the daemon, the browser or the page."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabpilot.cli import client
from tabpilot.cli.main import VERB_FAMILIES, build_parser, main
from tabpilot.cli.values import Count, Duration
from tabpilot.protocol import ERROR_EXIT_CODES

# Options every verb takes, tried once each below rather than once per verb.
SHARED = {"-h", "--help", "--json", "--no-boundaries", "--version", "--session", "--browser", "--tab"}
FLAGS = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._CountAction)


def verbs(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every runnable verb path (`tab borrow`, `panel agent set`, …) with its parser."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from verbs(child, (*path, name))


def generated() -> list[list[str]]:
    cases: list[list[str]] = []
    for family in sorted(VERB_FAMILIES):
        for path, parser in verbs(build_parser([family])):
            if path[:1] != (family,):
                continue
            cases.append([*path, "--no-such-option"])
            for action in parser._actions:
                options = [o for o in action.option_strings if o.startswith("--") and o not in SHARED]
                if not options:
                    continue
                option = options[0]
                if isinstance(action, FLAGS):
                    cases.append([*path, f"{option}=yes"])
                    continue
                if action.nargs not in ("?", "*"):
                    cases.append([*path, option])
                if action.choices:
                    cases.append([*path, option, "no-such-choice"])
                elif isinstance(action.type, Count | Duration):
                    cases.append([*path, option, "soon"])
    return cases


# The inputs that parsing refuses (the ones the daemon and the page refuse are in the e2e table).
NAMED = [
    ["cookies", "set", "a;b", "c"],
    ["cookies", "set", "a b", "c"],
    ["cookies", "set", "a", "b;c"],
    ["cookies", "set", "a=b", "c"],
    ["cookies", "set", "", "c"],
    ["request-help", "--prompt", "x", "--timeout", "0"],
    ["request-help", "--prompt", "x", "--timeout", "200ms"],
    ["snapshot", "--out", "/"],
    ["screenshot", "--out", "/tmp"],
    ["state", "save", "/"],
    ["--session", "nope", "--session"],
    ["--browser"],
    ["--tab"],
    ["--tab", "soon", "eval", "1"],
    ["eval", "1", "--no-boundaries=yes"],
]
CASES = generated() + NAMED


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A case that got past parsing must not start or reach a daemon: it fails instead."""
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "home"))

    def reached(*args: object, **kwargs: object) -> None:
        raise AssertionError("the input reached the daemon")

    monkeypatch.setattr(client, "connect", reached)
    monkeypatch.setattr(client, "start_daemon", reached)


def answer(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def test_the_table_covers_every_verb_and_holds_250_cases() -> None:
    used = {path[0] for path in CASES if path and path[0] in VERB_FAMILIES}
    assert used == set(VERB_FAMILIES), sorted(set(VERB_FAMILIES) - used)
    assert len(CASES) >= 250, len(CASES)


@pytest.mark.parametrize("argv", CASES, ids=" ".join)
def test_bad_input_gets_an_error_a_hint_and_exit_1(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = answer(argv, capsys)
    assert code == 1, (argv, code, out, err)
    lines = err.strip().splitlines()
    assert lines and lines[0].startswith("error: "), (argv, err)
    assert any(line.startswith("hint: ") for line in lines[1:]), (argv, err)
    code, out, err = answer([*argv, "--json"], capsys)
    assert code == 1, (argv, code, out, err)
    error = json.loads(out.strip().splitlines()[-1])["error"]
    assert error["exit_code"] == 1 == ERROR_EXIT_CODES[error["code"]], (argv, error)
    assert error["message"] and error["hint"], (argv, error)
