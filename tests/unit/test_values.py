"""Every number, duration, name and target the CLI parses: sane bounds, one clear usage error each."""

from __future__ import annotations

import argparse
import json

import pytest

from tabpilot.cli.batch_commands import _argv_of
from tabpilot.cli.context import Context
from tabpilot.cli.main import main
from tabpilot.cli.values import Count, Duration, Point, TabId, Target, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"), [("0", 0.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0), ("3600", 3600.0)]
)
def test_durations_within_an_hour(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["inf", "-inf", "nan", "NaN", "1e400", "999999999999", "3601", "61m", "2h", "-1", "", "ms", "soon"],
)
def test_durations_out_of_bounds_are_usage_errors(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_duration(text)


def test_a_shorter_limit_names_itself() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="at most 10 s"):
        Duration(10)("11")


@pytest.mark.parametrize("text", ["-1", "10001", "99999999999", "1e3", "nan", "9" * 5000])
def test_key_delays_stay_under_ten_seconds(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        Count(0, 10_000, "ms")(text)


def test_counts_tab_ids_and_points() -> None:
    assert Count(0, 10)("10") == 10
    assert TabId()("2147483647") == 2147483647
    for bad in ("0", "2147483648", "x", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            TabId()(bad)
    assert Point()("10,-5.5") == {"x": 10.0, "y": -5.5}
    for bad in ("nan,1", "1,inf", "1e400,0", "200000,1", "1", "a,b"):
        with pytest.raises(argparse.ArgumentTypeError):
            Point()(bad)


@pytest.mark.parametrize("text", ['text="', "text='", 'text="Save', "text=", "text=  ", "", "   "])
def test_targets_that_can_never_match_are_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        Target()(text)


@pytest.mark.parametrize("text", ["@e12", "#save", "button.primary", 'text="Save"', "text=save", "text='x'"])
def test_good_targets_pass_unchanged(text: str) -> None:
    assert Target()(text) == text


@pytest.mark.parametrize(
    "argv",
    [
        ["wait", "1e9"],
        ["wait", "inf"],
        ["eval", "1", "--timeout", "nan"],
        ["eval", "1", "--timeout", "999999999999"],
        ["open", "x", "--timeout", "1e400"],
        ["type", "abc", "--delay", "99999999999"],
        ["click", 'text="'],
        ["--session", "", "eval", "1"],
        ["eval", "1", "--session", " "],
        ["--browser", "", "eval", "1"],
        ["session", "start", ""],
        ["screenshot", "--format", "jpeg", "--quality", "101"],
        ["scroll", "--down", "99999999"],
        ["tab", "select", "99999999999"],
    ],
)
def test_bad_values_fail_before_any_daemon_call(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*argv, "--json"])
    assert info.value.code == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid_params" and error["hint"] and error["exit_code"] == 1


def test_missing_target_mentions_quoting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["click"])
    err = capsys.readouterr().err
    assert "required: TARGET" in err and "quote" in err and "'#save'" in err


def test_batch_comments_only_at_line_start() -> None:
    ctx = Context(argparse.Namespace())
    assert _argv_of("click #save", ctx) == ["click", "#save"]
    assert _argv_of("tabpilot fill #name 'Ada Lovelace'", ctx) == ["fill", "#name", "Ada Lovelace"]
    assert _argv_of("# click #save", ctx) is None
    assert _argv_of("   # indented comment", ctx) is None
    assert _argv_of("", ctx) is None


def test_batch_help_says_where_comments_start(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["batch", "--help"])
    assert "first non-blank character is #" in " ".join(capsys.readouterr().out.split())
