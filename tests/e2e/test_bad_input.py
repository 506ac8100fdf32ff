"""The bad-input table: every verb given wrong input answers with one `error:` line and a `hint:`
line (or one JSON error object with --json), the exit code docs/json-output.md gives for its code,
and never a traceback. Run against a real daemon and browser, so the daemon's and the extension's
refusals are in the table too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from harness import TABPILOT, PageServer, Tabpilot

from tabpilot.protocol import ERROR_EXIT_CODES

NOWHERE = "/nonexistent-tabpilot-folder"
# (argv, exit code). 1: usage or user error, 2: daemon/transport, 3: browser, 4: timeout, 5: version.
PARSING = [
    # pages
    (["open"], 1),
    (["open", "x", "--timeout", "inf"], 1),
    (["open", "x", "--timeout", "-1"], 1),
    (["open", "x", "--wait-until", "soon"], 1),
    (["navigate"], 1),
    (["back", "--timeout", "nan"], 1),
    (["forward", "extra"], 1),
    (["reload", "--hard", "x"], 1),
    (["eval"], 1),
    (["eval", "1", "--timeout", "1e400"], 1),
    (["eval", "1", "--timeout", "999999999999"], 1),
    (["screenshot", "--format", "gif"], 1),
    (["screenshot", "--quality", "50"], 1),
    (["screenshot", "--format", "jpeg", "--quality", "101"], 1),
    (["screenshot", "--ref", "@e1", "--full-page"], 1),
    (["screenshot", "--out", f"{NOWHERE}/x.png"], 1),
    # reading
    (["snapshot", "--max-tokens", "-1"], 1),
    (["snapshot", "--max-tokens", "1e3"], 1),
    (["snapshot", "--max-tokens", "99999999999999"], 1),
    (["snapshot", "--ref", 'text="'], 1),
    (["snapshot", "--out", f"{NOWHERE}/x.txt"], 1),
    (["snapshot", "--bogus"], 1),
    (["find"], 1),
    (["find", "x", "--limit", "0"], 1),
    (["text", "--max-tokens", "x"], 1),
    (["text", "--ref", ""], 1),
    (["html", "--max-bytes", "-5"], 1),
    (["html", "--ref", "text="], 1),
    (["console", "--level", "fatal"], 1),
    (["console", "--since", "-1"], 1),
    (["console", "--limit", "99999999"], 1),
    # acting
    (["click"], 1),
    (["click", 'text="'], 1),
    (["click", "text='Save"], 1),
    (["click", "@e1", "--button", "top"], 1),
    (["click", "@e1", "--at", "1"], 1),
    (["click", "@e1", "--at", "nan,nan"], 1),
    (["click", "@e1", "--at", "1e400,0"], 1),
    (["click", "@e1", "--timeout", "999999999999"], 1),
    (["click", "@e1", "--snapshot", "--diff"], 1),
    (["hover"], 1),
    (["focus", "  "], 1),
    (["fill", "@e1"], 1),
    (["fill"], 1),
    (["type"], 1),
    (["type", "x", "--delay", "99999999999"], 1),
    (["type", "x", "--delay", "-1"], 1),
    (["type", "x", "--ref", ""], 1),
    (["press"], 1),
    (["press", "Enter", "--timeout", "nan"], 1),
    (["select", "@e1"], 1),
    (["check"], 1),
    (["uncheck", "text='"], 1),
    (["scroll"], 1),
    (["scroll", "--down", "--up"], 1),
    (["scroll", "--to", "middle"], 1),
    (["scroll", "--down", "99999999"], 1),
    (["drag", "@e1"], 1),
    (["upload", "@e1"], 1),
    (["wait", "1e9"], 1),
    (["wait", "inf"], 1),
    (["wait", "nan"], 1),
    (["wait"], 1),
    (["wait", "2s", "--text", "x"], 1),
    (["wait", "--load", "never"], 1),
    (["wait", "--text", "x", "--timeout", "2h"], 1),
    (["dialog", "maybe"], 1),
    (["dialog", "dismiss", "--text", "x"], 1),
    (["request-help"], 1),
    (["request-help", "--prompt", "x", "--timeout", "inf"], 1),
    (["request-help", "--prompt", "x", "--until-url", "a", "--until-selector", "b"], 1),
    (["request-help", "--prompt", "x", "--target", 'text="'], 1),
    # sessions and tabs
    (["session"], 1),
    (["session", "bogus"], 1),
    (["session", "start", ""], 1),
    (["session", "stop", "x", "--all"], 1),
    (["tab"], 1),
    (["tab", "select"], 1),
    (["tab", "select", "x"], 1),
    (["tab", "select", "0"], 1),
    (["tab", "close", "-3"], 1),
    (["tab", "borrow", "99999999999"], 1),
    (["tab", "new", "--timeout", "nan"], 1),
    (["tab", "list", "--scope", "everyone"], 1),
    # setup
    (["browser"], 1),
    (["browser", "launch", "--headed", "--headless"], 1),
    (["browser", "launch", "--timeout", "inf"], 1),
    (["pair", "--bogus"], 1),
    (["extension"], 1),
    (["extension", "path", "x"], 1),
    (["daemon"], 1),
    (["daemon", "restart"], 1),
    (["install-skill", "--harness", "notepad"], 1),
    (["install-skill", "--project", NOWHERE], 1),
    (["doctor", "x"], 1),
    (["status", "x"], 1),
    (["batch", f"{NOWHERE}/steps.txt"], 1),
    (["mcp", "x"], 1),
    # the side panel's setup
    (["panel"], 1),
    (["panel", "agent", "set", "sh"], 1),
    (["panel", "agent", "set", "claude", "--bin", f"{NOWHERE}/claude"], 1),
    (["panel", "agent", "set", "claude", "--model", "--yolo x"], 1),
    (["panel", "workspace", "add", NOWHERE], 1),
    (["panel", "workspace", "remove", "ws-none-0000"], 1),
    (["demo", "x"], 1),
    # agent kit: downloads, network, storage, emulation, pdf
    (["downloads", "sometimes"], 1),
    (["downloads", "wait", "--timeout", "soon"], 1),
    (["snapshot", "--diff", "-i"], 1),
    (["screenshot", "--annotate", "--full-page"], 1),
    (["screenshot", "--annotate", "--format", "jpeg"], 1),
    (["network"], 1),
    (["network", "requests", "--type", "gif"], 1),
    (["network", "request", "0"], 1),
    (["network", "route", "*", "--status", "99", "--body", "x"], 1),
    (["network", "route", "*"], 1),
    (["network", "route", "*", "--file", f"{NOWHERE}/body"], 1),
    (["network", "har"], 1),
    (["network", "har", "--out", f"{NOWHERE}/x.har"], 1),
    (["cookies", "eat"], 1),
    (["cookies", "get"], 1),
    (["cookies", "set", "a"], 1),
    (["cookies", "set", "a", "b", "--expires", "soon"], 1),
    (["storage"], 1),
    (["storage", "disk"], 1),
    (["storage", "local", "set", "k"], 1),
    (["state", "save"], 1),
    (["state", "load", f"{NOWHERE}/state.json"], 1),
    (["state", "save", f"{NOWHERE}/state.json"], 1),
    (["emulate"], 1),
    (["emulate", "--viewport", "390"], 1),
    (["emulate", "--viewport", "0x844"], 1),
    (["emulate", "--device", "toaster"], 1),
    (["emulate", "--geolocation", "91,0"], 1),
    (["emulate", "--viewport", "390x844", "--dpr", "nan"], 1),
    (["emulate", "--mobile"], 1),
    (["emulate", "--reset", "--offline"], 1),
    (["pdf", "--out", f"{NOWHERE}/x.pdf"], 1),
    # global options
    (["--session", "", "eval", "1"], 1),
    (["eval", "1", "--session", " "], 1),
    (["--browser", "", "eval", "1"], 1),
    (["--tab", "0", "eval", "1"], 1),
    (["--tab", "x", "eval", "1"], 1),
    (["--tab", "99999999999", "eval", "1"], 1),
    (["frobnicate"], 1),
    ([], 1),
]
# Answered by the daemon or the extension, on index.html in the default session.
REFUSED = [
    (["--session", "nope", "eval", "1"], 1),
    (["--browser", "nonexistent", "eval", "1"], 1),
    (["--browser", "nonexistent", "session", "list"], 1),
    (["--tab", "99999", "eval", "1"], 1),
    (["click", "@e99999"], 1),
    (["click", "#nothing-here", "--timeout", "300ms"], 4),
    (["hover", "text=nothing like this", "--timeout", "300ms"], 4),
    (["open", "javascript:alert(1)"], 1),
    (["open", "javascript:1"], 1),
    (["open", "JavaScript:0/x"], 1),
    (["tab", "new", "javascript:1"], 1),
    (["session", "start", "p-x"], 1),
    (["cookies", "set", "a;b", "c"], 1),
    (["request-help", "--prompt", "x", "--timeout", "0"], 1),
    (["snapshot", "--out", "/proc/tabpilot-page.txt"], 1),
    (["screenshot", "--out", "/proc/tabpilot-shot.png"], 1),
    (["open", "file:///etc/passwd"], 1),
    (["open", "http://[bad"], 1),
    (["press", "NoSuchKey"], 1),
    (["select", "h1", "x"], 1),
    (["upload", "h1", f"{NOWHERE}/file.txt"], 1),
    (["dialog", "accept"], 1),
    (["fill", "h1", "x"], 1),
    (["session", "stop", "nope"], 1),
    (["session", "resume", "nope"], 1),
    (["session", "start", "bad name!"], 1),
    (["tab", "select", "99999"], 1),
    (["tab", "close", "99999"], 1),
    (["snapshot", "--ref", "@e99999"], 1),
    (["text", "--ref", "#nothing-here"], 1),
    (["html", "--ref", "#nothing-here"], 1),
    (["wait", "--selector", "#nothing-here", "--timeout", "300ms"], 4),
    (["scroll", "#nothing-here", "--down", "--timeout", "300ms"], 4),
    (["drag", "#nothing-here", "h1", "--timeout", "300ms"], 4),
    (["downloads", "wait", "--timeout", "300ms"], 4),
    (["network", "request", "99999"], 1),
    (["cookies", "get", "no-such-cookie"], 1),
    (["emulate", "--timezone", "Mars/Olympus"], 1),
]


def run(tp: Tabpilot, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TABPILOT, *argv],
        env=tp.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def check(tp: Tabpilot, argv: list[str], code: int) -> None:
    text = run(tp, argv)
    assert "Traceback" not in text.stdout + text.stderr, (argv, text.stderr)
    assert text.returncode == code, (argv, text.returncode, text.stderr)
    lines = text.stderr.strip().splitlines()
    assert lines and lines[0].startswith("error: "), (argv, text.stderr)
    assert any(line.startswith("hint: ") for line in lines[1:]), (argv, text.stderr)
    as_json = run(tp, [*argv, "--json"]) if argv else run(tp, ["--json"])
    assert "Traceback" not in as_json.stdout + as_json.stderr, (argv, as_json.stderr)
    assert as_json.returncode == code, (argv, as_json.returncode, as_json.stdout)
    error = json.loads(as_json.stdout.strip().splitlines()[-1])["error"]
    assert error["exit_code"] == code and ERROR_EXIT_CODES[error["code"]] == code, (argv, error)
    assert error["message"] and error["hint"], (argv, error)


def test_the_table_covers_every_verb() -> None:
    from test_bad_input_shaping import CASES as SHAPING

    from tabpilot.cli.main import VERB_FAMILIES

    cases = PARSING + REFUSED + SHAPING
    assert len(cases) >= 100
    used = {word for argv, _ in cases for word in argv if word in VERB_FAMILIES}
    assert used == set(VERB_FAMILIES), sorted(set(VERB_FAMILIES) - used)


@pytest.mark.parametrize(
    ("argv", "code"), PARSING, ids=lambda v: " ".join(v) if isinstance(v, list) else None
)
def test_bad_arguments(tp: Tabpilot, argv: list[str], code: int) -> None:
    check(tp, argv, code)


@pytest.fixture(scope="module")
def on_a_page(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("index.html"))
    assert tp.run("snapshot").code == 0


@pytest.mark.parametrize(
    ("argv", "code"), REFUSED, ids=lambda v: " ".join(v) if isinstance(v, list) else None
)
def test_refusals(tp: Tabpilot, on_a_page: None, argv: list[str], code: int) -> None:
    check(tp, argv, code)


def test_a_batch_line_that_fails_says_so_with_its_hint(tp: Tabpilot, tmp_path: Path) -> None:
    steps = tmp_path / "steps.txt"
    steps.write_text("# the target is missing\nclick\n")
    check(tp, ["batch", str(steps)], 1)


def test_a_script_url_that_looks_like_host_and_port_is_a_refused_scheme(
    tp: Tabpilot, on_a_page: None
) -> None:
    for url in ("javascript:1", "JavaScript:0/x", "data:1"):
        answer = run(tp, ["open", url, "--json"])
        error = json.loads(answer.stdout)["error"]
        assert (error["code"], error["reason"]) == ("invalid_params", "url_scheme_refused"), (url, error)
