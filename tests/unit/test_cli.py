"""The CLI without a daemon: parsing, errors, hints, and what its hot path imports."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tabpilot.cli import client, render
from tabpilot.cli.context import parse_duration
from tabpilot.cli.main import build_parser, main, verb_of
from tabpilot.protocol import RpcError

HEAVY = ("asyncio", "websockets", "importlib.resources", "rich", "click", "typing", "dataclasses")


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env["TABPILOT_HOME"] = tempfile.mkdtemp(prefix="tp-cli-")
    return env


def imported_modules(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tabpilot.cli.main", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        check=False,
    )
    return {
        line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")
    }


@pytest.mark.parametrize(
    "args", [["--version"], ["eval", "--help"], ["open", "--help"], ["tab", "list", "--help"]]
)
def test_hot_path_imports_no_heavy_module(args: list[str]) -> None:
    modules = imported_modules(*args)
    assert "argparse" in modules and "tabpilot.cli.context" in modules
    assert not [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY]


def test_a_page_verb_loads_only_its_family() -> None:
    modules = imported_modules("eval", "--help")
    assert "tabpilot.cli.page_commands" in modules
    assert "tabpilot.cli.browser_commands" not in modules and "tabpilot.cli.demo" not in modules


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (["eval", "1"], "eval"),
        (["--session", "x", "eval", "1"], "eval"),
        (["--json", "--browser", "abc", "tab", "list"], "tab"),
        (["--version"], None),
    ],
)
def test_verb_detection(argv: list[str], verb: str | None) -> None:
    assert verb_of(argv) == verb


def test_global_options_before_or_after_the_verb() -> None:
    args = build_parser(["eval", "1", "--session", "s", "--json"]).parse_args(
        ["eval", "1", "--session", "s", "--json"]
    )
    assert (args.session, args.json, args.expression) == ("s", True, "1")
    args = build_parser(["--session", "s", "eval", "1"]).parse_args(["--session", "s", "eval", "1"])
    assert args.session == "s" and not getattr(args, "json", False)


@pytest.mark.parametrize(
    ("text", "seconds"), [("30", 30.0), ("30s", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1.5s", 1.5)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_bad_duration_and_unknown_verb_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["open", "x", "--timeout", "soon"], ["frobnicate"], ["tab", "close", "-3"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert err[0].startswith("error: ") and err[-1].startswith("hint: ")


def test_error_rendering(capsys: pytest.CaptureFixture[str]) -> None:
    err = RpcError("multiple_browsers_online", "2 browsers are connected", browsers=["a", "b"])
    assert render.print_error(err, as_json=False) == 1
    text = capsys.readouterr().err
    assert "error: 2 browsers" in text and "  a\n  b\n" in text and "hint: pass --browser" in text
    assert render.print_error(RpcError("timeout", "slow", "navigation_timeout"), as_json=True) == 4
    out = capsys.readouterr().out
    assert '"reason": "navigation_timeout"' in out and '"exit_code": 4' in out


def test_daemon_status_without_daemon_is_a_clean_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tabpilot.cli.main", "daemon", "status"],
        capture_output=True,
        text=True,
        env=cli_env(),
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: the tabpilot daemon is not running")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("errno_", [errno.EACCES, errno.EPERM])
def test_a_socket_the_os_refuses_is_a_clean_error(
    errno_: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # What an agent's sandbox answers when it may not reach Unix sockets outside its folder.
    def refused(path: str) -> None:
        raise OSError(errno_, os.strerror(errno_))

    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(client, "open_socket", refused)
    for as_json in (False, True):
        code = main(["eval", "1", *(["--json"] if as_json else [])])
        assert code == 2
        out, err = capsys.readouterr()
        if as_json:
            error = json.loads(out)["error"]
            assert error["reason"] == "socket_refused" and "TABPILOT_HOME" in error["hint"]
        else:
            lines = err.strip().splitlines()
            assert lines[0].startswith("error: cannot reach the daemon's socket") and lines[1].startswith(
                "hint: "
            )


def test_a_socket_path_too_long_for_the_os_is_a_clean_error(tmp_path: Path) -> None:
    env = cli_env()
    env["TABPILOT_HOME"] = str(tmp_path / ("h" * 120))
    proc = subprocess.run(
        [sys.executable, "-m", "tabpilot.cli.main", "eval", "1"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: cannot reach the daemon's socket") and "\nhint: " in proc.stderr
