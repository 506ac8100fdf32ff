"""Every input gets a clean answer (issue 23), end to end: files the CLI writes are private and a write the
OS refuses is an error with a hint; a session whose managed browser died answers at once. The browser is
killed by the last test, so this module has its own."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from pathlib import Path

from harness import PageServer, Tabpilot, pid_alive, wait_until

from tabpilot.protocol import ERROR_EXIT_CODES


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def clean_error(tp: Tabpilot, *argv: str) -> dict[str, object]:
    """The text and the --json answer of a failing command: one error and a hint, its documented exit code."""
    text = tp.run(*argv, check=False)
    assert "Traceback" not in text.out + text.err, text.err
    lines = text.err.strip().splitlines()
    assert lines[0].startswith("error: ") and any(line.startswith("hint: ") for line in lines), text.err
    as_json = tp.run(*argv, "--json", check=False)
    assert "Traceback" not in as_json.out + as_json.err, as_json.err
    error: dict[str, object] = json.loads(as_json.out)["error"]
    assert error["hint"] and error["exit_code"] == ERROR_EXIT_CODES[str(error["code"])]
    assert text.code == as_json.code == error["exit_code"]
    return error


def test_every_out_file_is_private_even_one_that_was_not(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    tp.run("open", pages.url("index.html"))
    loose = tmp_path / "loose.txt"
    loose.write_text("old")
    os.chmod(loose, 0o644)
    written = {
        "snapshot": (["snapshot", "--out", str(tmp_path / "page.txt")], tmp_path / "page.txt"),
        "snapshot over a 0644 file": (["snapshot", "--out", str(loose)], loose),
        "html": (["html", "--out", str(tmp_path / "page.html")], tmp_path / "page.html"),
        "screenshot": (["screenshot", "--out", str(tmp_path / "shot.png")], tmp_path / "shot.png"),
        "pdf": (["pdf", "--out", str(tmp_path / "page.pdf")], tmp_path / "page.pdf"),
        "har": (["network", "har", "--out", str(tmp_path / "page.har")], tmp_path / "page.har"),
        "state": (["state", "save", str(tmp_path / "state.json")], tmp_path / "state.json"),
    }
    for what, (argv, path) in written.items():
        tp.run(*argv)
        assert path.stat().st_size > 0 and mode_of(path) == 0o600, (what, oct(mode_of(path)))
    assert "old" not in loose.read_text()


def test_an_out_file_the_os_refuses_is_an_error_with_a_hint(tp: Tabpilot, tmp_path: Path) -> None:
    for argv in (
        ["snapshot", "--out", "/proc/tabpilot-page.txt"],
        ["screenshot", "--out", "/proc/tabpilot-shot.png"],
        ["network", "har", "--out", "/proc/tabpilot.har"],
        ["state", "save", "/proc/tabpilot-state.json"],
        ["snapshot", "--out", str(tmp_path)],
    ):
        error = clean_error(tp, *argv)
        assert error["code"] == "invalid_params", (argv, error)


def test_a_state_file_nested_too_deeply_is_refused_cleanly(tp: Tabpilot, tmp_path: Path) -> None:
    for depth in (100, 100_000):
        deep = tmp_path / f"deep-{depth}.json"
        deep.write_text('{"cookies": ' + "[" * depth + "]" * depth + "}")
        error = clean_error(tp, "state", "load", str(deep))
        assert error["code"] in ("invalid_params", "protocol_error"), error


def test_browser_args_take_a_quoted_value_with_spaces(pages: PageServer) -> None:
    quoted = Tabpilot(
        extra_env={"TABPILOT_BROWSER_ARGS": "--remote-debugging-port=0 '--user-agent=Agent Smith/1.0 (test)'"}
    )
    try:
        quoted.run("browser", "launch", "--headless", timeout=90)
        quoted.run("open", pages.url("index.html"))
        assert json.loads(quoted.run("eval", "navigator.userAgent").out) == "Agent Smith/1.0 (test)"
    finally:
        quoted.cleanup()


def test_a_session_whose_managed_browser_died_answers_at_once(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("index.html"))
    pid = tp.browser_pid
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(pid), timeout=10)
    wait_until(lambda: tp.run("browser", "list", "--json").json["browsers"] == [], timeout=15)
    started = time.monotonic()
    error = clean_error(tp, "eval", "1")
    took = time.monotonic() - started
    assert error["code"] == "no_browser_connected" and "no longer running" in str(error["message"])
    assert "browser launch" in str(error["hint"])
    # text and --json, each well within the 30 s a browser that may come back is waited for
    assert took < 10, took
