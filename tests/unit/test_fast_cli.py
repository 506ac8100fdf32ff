"""The hot path against the full CLI: a table of argv shapes and daemon replies through both, with the same
exit code, stdout, stderr and request — and only built-in modules imported on the hot path.

The daemon here is a fake peer on the real Unix socket: it records each request line and answers what
the case says (a result, an error of every class, a malformed or missing reply). The same table runs
against a real daemon and browser in tests/e2e/test_fast_path.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabpilot import paths, protocol
from tabpilot.cli import action_commands, fast, observe_commands, page_commands
from tabpilot.protocol import ERROR_EXIT_CODES

TABPILOT = str(Path(sys.executable).with_name("tabpilot"))
FULL = [sys.executable, "-m", "tabpilot.cli.main"]


class FakeDaemon:
    """Answers each request line on $TABPILOT_HOME/daemon.sock with `reply` (bytes; None: hang up)."""

    def __init__(self, home: str) -> None:
        self.path = paths.socket_path(home)
        self.reply: bytes | None = b""
        self.requests: list[dict[str, Any]] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.requests.append(json.loads(data))
                if self.reply is not None:
                    conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def daemon() -> Iterator[FakeDaemon]:
    home = tempfile.mkdtemp(prefix="tp-fast-")
    peer = FakeDaemon(home)
    yield peer
    peer.close()


def env_for(daemon: FakeDaemon, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env["TABPILOT_HOME"] = os.path.dirname(daemon.path)
    env.update(extra)
    return env


def both(daemon: FakeDaemon, argv: list[str], reply: bytes | None, **extra: str) -> None:
    """Run argv through the installed command (hot path) and the full CLI; everything must match."""
    runs = []
    for command in ([TABPILOT], FULL):
        daemon.reply, daemon.requests = reply, []
        proc = subprocess.run(
            [*command, *argv], env=env_for(daemon, **extra), capture_output=True, text=True, check=False
        )
        runs.append((proc.returncode, proc.stdout, proc.stderr, daemon.requests))
    assert runs[0] == runs[1], f"{argv}: hot path {runs[0]} != full CLI {runs[1]}"
    assert "Traceback" not in runs[0][2]


def result(value: Any) -> bytes:
    return (json.dumps({"id": "cli", "result": value}, ensure_ascii=False) + "\n").encode()


def error(code: str, message: str, **data: Any) -> bytes:
    wire: dict[str, Any] = {"code": code, "message": message}
    if data:
        wire["data"] = data
    return (json.dumps({"id": "cli", "error": wire}) + "\n").encode()


BUTTON = {"label": 'button "Sävé 💾"', "ref": "e1"}
ACTION = {
    "tab_id": 7,
    "target": BUTTON,
    "navigated": {"url": "http://127.0.0.1/next?q=ü", "status": 200, "committed": True},
    "opened_tab": {"tab_id": 9, "url": "http://127.0.0.1/popup", "kept": True, "current": True},
    "dialog": {"type": "confirm", "message": "Delete “3” files?\nReally", "handled": "open"},
    "snapshot": '# Next\n[button "Done" @e2]',
}
RESULTS: dict[str, Any] = {
    "tool.click": ACTION,
    "tool.hover": {"target": {"label": "link “Home”"}},
    "tool.focus": {"target": None},
    "tool.fill": {"target": BUTTON, "value": "x" * 100, "navigated": {"url": "u", "committed": False}},
    "tool.type": {"target": BUTTON, "dialog": {"type": "alert", "message": "hi", "handled": "accepted"}},
    "tool.press": {"pressed": ["Control+a", "Backspace"], "target": BUTTON},
    "tool.select": {
        "target": BUTTON,
        "selected": [{"label": "Ham", "matched_by": "label"}, {"label": "Olives", "matched_by": "value"}],
    },
    "tool.check": {"target": BUTTON, "changed": False},
    "tool.evaluate": {"ok": True, "value": {"a": [1, 2.5, None, True, {"é": "💥\u2028"}], "n": -0.0}},
    "tool.navigate": {"url": "http://127.0.0.1/ä", "status": 404, "title": "Ünïcode " * 20},
    "tool.snapshot": {"text": '# Title\n[button "Go" @e1]', "tokens": 9},
    "tool.text": {"text": "  \n", "url": "http://127.0.0.1/empty"},
    "tool.find": {"text": '1 match for "Name":\n[textbox "Name" @e4]'},
    "tool.wait": {"waited_ms": 1234, "target": BUTTON, "url": "http://127.0.0.1/done"},
}

# (argv, whether the hot path takes it). Everything it does not take runs the full CLI in-process.
SHAPES: list[tuple[list[str], bool]] = [
    (["click", "@e1"], True),
    (["click", "@e1", "--json"], True),
    (["click", "--json", "@e1"], True),
    (["click", "@e12", "--session", "s-1.a_b"], True),
    (["click", "@e1", "--double"], True),
    (["click", "@e1", "--button", "right"], True),
    (["click", "@e1", "--button", "middle", "--snapshot"], True),
    (["click", "@e1", "--diff"], True),
    (["hover", "@e2"], True),
    (["focus", "@e2"], True),
    (["fill", "@e3", "héllo wörld 💥"], True),
    (["fill", "@e3", "a b", "--diff", "--json"], True),
    (["type", "hello"], True),
    (["type", "x", "--ref", "@e3"], True),
    (["press", "Tab"], True),
    (["press", "Control+A", "Backspace", "--ref", "@e3"], True),
    (["select", "@e4", "M"], True),
    (["select", "@e4", "Ham", "Olives"], True),
    (["check", "@e5"], True),
    (["uncheck", "@e5"], True),
    (["eval", "1+1"], True),
    (["eval", "document.title", "--json"], True),
    (["eval", "'a b' + \"c\""], True),
    (["open", "http://127.0.0.1/"], True),
    (["open", "127.0.0.1/x", "--wait-until", "commit", "--allow-file"], True),
    (["snapshot"], True),
    (["snapshot", "-i"], True),
    (["snapshot", "--interactive", "--viewport", "--urls"], True),
    (["snapshot", "--ref", "@e4", "--json"], True),
    (["text"], True),
    (["text", "--ref", "@e4"], True),
    (["find", "Name"], True),
    (["wait", "--text", "Saved"], True),
    (["wait", "--selector", "@e4"], True),
    (["wait", "--gone", "@e4"], True),
    (["wait", "--url", "*/done"], True),
    (["wait", "--load", "networkidle"], True),
    # Blank or odd values the full CLI passes on as they are (the page or the daemon judges them).
    (["eval", " "], True),
    (["find", " "], True),
    (["fill", "@e3", " "], True),
    (["press", "Foo+Bar", " "], True),
    (["wait", "--text", "\t"], True),
    (["open", "javascript:1"], True),
    (["click", "@e99999999999999999999"], True),
    # Every global option before the verb, and after it (how the README, the skill and agents write them).
    (["--json", "eval", "1"], True),
    (["--json", "snapshot"], True),
    (["--session", "s1", "click", "@e1"], True),
    (["--session", "default", "eval", "1"], True),
    (["--browser", "b1", "click", "@e1"], True),
    (["click", "@e1", "--browser", "b1"], True),
    (["--tab", "3", "text"], True),
    (["click", "@e1", "--tab", "3"], True),
    (["--no-boundaries", "find", "Name"], True),
    (
        ["--json", "--session", "s1", "--browser", "b1", "--tab", "3", "--no-boundaries", "snapshot", "-i"],
        True,
    ),
    (["--session", "s1", "fill", "@e3", "x", "--json", "--tab", "12"], True),
    (["--json", "wait", "--text", "Saved", "--timeout", "1.5s"], True),
    (["eval", "1+1", "--timeout", "2s"], True),
    (["open", "http://127.0.0.1/", "--timeout", "90"], True),
    (["press", "Enter", "--timeout", "500ms"], True),
    (["hover", "@e2", "--timeout", "0"], True),
    (["select", "@e4", "M", "--timeout", "2m"], True),
    (["find", "x", "--timeout", "1h"], True),
    # Not the hot path's: help, abbreviations, `--`, `=`, options before the verb, unsure values.
    ([], False),
    (["-h"], False),
    (["--help"], False),
    (["--version", "--json"], False),
    (["click", "-h"], False),
    (["click", "@e1", "--help"], False),
    (["click"], False),
    (["click", "@e1", "@e2"], False),
    (["click", "--snap", "@e1"], False),
    (["click", "@e1", "--js"], False),
    (["click", "--", "@e1"], False),
    (["click", "@e1", "--button=right"], False),
    (["click", "@e1", "--button", "up"], False),
    (["click", "@e1", "--timeout", "2s"], True),
    (["click", "@e1", "--at", "1,2"], False),
    (["click", "#id"], False),
    (["click", 'text="Save"'], False),
    (["click", "@e0"], False),
    (["click", "@e01"], False),
    (["click", "@e1", "--snapshot", "--diff"], False),
    (["click", "@e1", "--json", "--json"], False),
    (["clik", "@e1"], False),
    (["navigate", "http://127.0.0.1/"], False),
    (["eval", "-1"], False),
    (["eval", ""], False),
    (["eval", "1", "2"], False),
    (["fill", "@e3"], False),
    (["fill", "@e3", ""], False),
    (["fill", "@e3", "--json", "x"], False),
    (["press", "Tab", "--json", "Enter"], False),
    (["press"], False),
    (["select", "@e4"], False),
    (["type", "x", "--delay", "10"], False),
    (["type", "-x"], False),
    (["wait"], False),
    (["wait", "2s"], False),
    (["wait", "--text", "a", "--url", "b"], False),
    (["wait", "--load", "idle"], False),
    (["wait", "--text"], False),
    (["snapshot", "--max-tokens", "10"], False),
    (["snapshot", "-i", "extra"], False),
    (["snapshot", "-iv"], False),
    (["snapshot", "--ref", "#x"], False),
    (["find", "x", "--limit", "3"], False),
    (["click", "@e1", "--session", ""], False),
    (["click", "@e1", "--session", "bad name"], False),
    (["click", "@e1", "--session", "-x"], False),
    (["click", "@e1", "--session"], False),
    # Globals the hot path cannot prove equivalent: given twice, misplaced, or values it does not read itself.
    (["--json", "click", "@e1", "--json"], False),
    (["--session", "a", "click", "@e1", "--session", "b"], False),
    (["--timeout", "2s", "click", "@e1"], False),
    (["--snapshot", "click", "@e1"], False),
    (["--sess", "s1", "click", "@e1"], False),
    (["--session=s1", "click", "@e1"], False),
    (["--json"], False),
    (["--session", "s1"], False),
    (["--json", "clik", "@e1"], False),
    (["--json", "navigate", "http://127.0.0.1/"], False),
    (["--browser", "", "click", "@e1"], False),
    (["--browser", "my browser", "click", "@e1"], False),
    (["--tab", "0", "click", "@e1"], False),
    (["--tab", "007", "click", "@e1"], False),
    (["--tab", "-3", "click", "@e1"], False),
    (["--tab", "2147483648", "click", "@e1"], False),
    (["--tab", "x", "click", "@e1"], False),
    (["click", "@e1", "--timeout", "1e3"], False),
    (["click", "@e1", "--timeout", "3601"], False),
    (["click", "@e1", "--timeout", "2S"], False),
    (["click", "@e1", "--timeout", " 2s"], False),
    (["click", "@e1", "--timeout", "1.2.3"], False),
    (["click", "@e1", "--timeout", "ms"], False),
    (["click", "@e1", "--timeout"], False),
    (["click", "@e1", "--timeout", "inf"], False),
    (["click", "@e1", "--timeout", "2s", "--timeout", "3s"], False),
    (["open", "http://127.0.0.1/", "--wait-until", "bogus"], False),
]


@pytest.mark.parametrize(("argv", "hot"), SHAPES, ids=[" ".join(a) or "(none)" for a, _ in SHAPES])
def test_every_argv_shape_prints_what_the_full_cli_prints(
    daemon: FakeDaemon, argv: list[str], hot: bool
) -> None:
    call = fast.plan(argv)
    assert (call is not None) == hot
    method = (
        call.method
        if call
        else {"eval": "tool.evaluate", "open": "tool.navigate"}.get(argv[0] if argv else "")
    )
    reply = result(RESULTS.get(method or "", {"target": BUTTON, "text": "t", "ok": True, "value": 1}))
    both(daemon, argv, reply)


# Every error class the daemon sends, with and without a reason, a hint, extra data or a browsers list.
ERRORS = [error(code, f"it failed: {code} “ü”") for code in sorted(ERROR_EXIT_CODES)] + [
    error("not_found", "@e3 is stale: the page changed", reason="ref_stale"),
    error("not_found", "@e9 was never given out", reason="ref_not_found", hint="take a snapshot"),
    error("timeout", "the page did not answer", reason="tool_timeout", elapsed_ms=5000),
    error("multiple_browsers_online", "two browsers", browsers=["a1 Chrome", "b2 Brave"]),
    error("invalid_params", "odd", reason="no_such_reason"),
    error("cdp_failed", "nested", details={"a": [1, {"b": None}]}),
    (json.dumps({"id": "cli", "error": {"code": "weird", "message": "x"}}) + "\n").encode(),
    (json.dumps({"id": "cli", "error": "a string"}) + "\n").encode(),
    b'{"id": "cli"}\n',
    b'{"id": "cli", "result": 1} trailing\n',
    b"not json\n",
    b"\xef\xbb\xbf" + result({"ok": True, "value": 1}),
    b"",
    None,
]


@pytest.mark.parametrize("reply", ERRORS, ids=range(len(ERRORS)))
@pytest.mark.parametrize("argv", [["click", "@e1"], ["eval", "1", "--json"]])
def test_every_error_reply_is_reported_alike(
    daemon: FakeDaemon, argv: list[str], reply: bytes | None
) -> None:
    both(daemon, argv, reply)


def test_the_session_variable_and_odd_homes(daemon: FakeDaemon) -> None:
    reply = result(RESULTS["tool.click"])
    both(daemon, ["click", "@e1"], reply, TABPILOT_SESSION="agent-7")
    both(daemon, ["click", "@e1"], reply, TABPILOT_SESSION="")
    both(daemon, ["click", "@e1"], reply, TABPILOT_SESSION="no good")
    both(daemon, ["click", "@e1"], reply, TABPILOT_BROWSER="b1")
    both(daemon, ["click", "@e1"], reply, TABPILOT_BROWSER="")
    both(daemon, ["click", "@e1"], reply, TABPILOT_BROWSER="a browser")
    both(daemon, ["--browser", "b2", "click", "@e1"], reply, TABPILOT_BROWSER="b1")
    both(daemon, ["--session", "s9", "click", "@e1"], reply, TABPILOT_SESSION="agent-7")
    home = os.path.dirname(daemon.path)
    both(daemon, ["click", "@e1"], reply, TABPILOT_HOME=home + "/")
    both(daemon, ["click", "@e1"], reply, TABPILOT_HOME=home + "/../" + os.path.basename(home))


def test_socket_path_is_the_full_clis_where_it_is_given() -> None:
    cases = [
        {"TABPILOT_HOME": "/tmp/a b/ü"},
        {"HOME": "/home/x/"},
        {"HOME": "/"},
        {"TABPILOT_HOME": "rel"},
        {"TABPILOT_HOME": "/a/../b"},
        {"TABPILOT_HOME": "/a//b"},
        {"HOME": ""},
        {},
    ]
    for env in cases:
        with _environ(env):
            path = fast.socket_path()
            if path is not None:
                assert path == paths.socket_path().encode()
    with _environ({"TABPILOT_HOME": "/tmp/a b/ü"}):
        assert fast.socket_path() is not None


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("TABPILOT_HOME", "HOME")}
    for key in saved:
        os.environ.pop(key, None)
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_defaults_are_the_full_clis() -> None:
    assert fast.ACTION_TIMEOUT_S == action_commands.ACTION_TIMEOUT_S
    assert fast.WAIT_TIMEOUT_S == action_commands.WAIT_TIMEOUT_S
    assert fast.PAGE_TIMEOUT_S == page_commands.NAVIGATION_TIMEOUT_S
    assert fast.LOAD_STATES == action_commands.LOAD_STATES
    assert fast.WAIT_UNTIL == protocol.WAIT_UNTIL
    assert observe_commands.DEFAULT_MAX_TOKENS  # snapshot/text on the hot path never pass max_tokens


def test_the_hot_path_imports_only_built_in_modules(daemon: FakeDaemon) -> None:
    def modules(command: list[str]) -> set[str]:
        env = env_for(daemon, PYTHONPROFILEIMPORTTIME="1")
        proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr[-500:]
        lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
        return {line.rsplit("|", 1)[-1].strip() for line in lines[1:]}

    daemon.reply = result(RESULTS["tool.evaluate"])
    bare = modules([sys.executable, "-S", "-P", "-c", "pass"])
    used = modules([TABPILOT, "eval", "1+1"]) - bare
    ours = {m for m in used if m.split(".")[0] == "tabpilot"}
    assert used - ours == {"_json", "_socket", "_tabpilot_launcher"}
    assert ours == {
        "tabpilot",
        "tabpilot.cli",
        "tabpilot.cli.fast",
        "tabpilot.cli.client",
        "tabpilot.cli.fastjson",
        "tabpilot.cli.render",
        "tabpilot.cli.outcomes",
    }


# One hot argv per verb, answered with the session's page nonce: the fences must match too.
FENCED = list({argv[0]: argv for argv, hot in reversed(SHAPES) if hot and argv[0] in fast.VERBS}.values())


@pytest.mark.parametrize("argv", FENCED, ids=[" ".join(a) for a in FENCED])
def test_page_text_is_fenced_alike_on_both_paths(daemon: FakeDaemon, argv: list[str]) -> None:
    call = fast.plan(argv)
    assert call is not None
    reply = result({**RESULTS[call.method], "page_nonce": "483920175562"})
    both(daemon, argv, reply)
    both(daemon, [*argv, "--no-boundaries"], reply)
    both(daemon, argv, reply, TABPILOT_BOUNDARIES="off")
    assert fast.plan([*argv, "--no-boundaries"]) is not None


def test_a_large_answer_reaches_a_pipe_whole_before_the_hot_path_leaves(daemon: FakeDaemon) -> None:
    # The hot path ends its process without the interpreter's clean-up: what it printed must be out.
    page = "Zeile ü💥 " * 60_000 + "end"
    both(daemon, ["text"], result({"text": page}))
    both(daemon, ["snapshot", "--json"], result({"text": page, "tokens": 1}))


def test_a_reader_that_stops_early_ends_the_hot_path_quietly(daemon: FakeDaemon) -> None:
    daemon.reply = result({"text": "line\n" * 200_000})
    reader = subprocess.Popen(["head", "-c", "5"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    proc = subprocess.run(
        [TABPILOT, "text", "--no-boundaries"],
        env=env_for(daemon),
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    assert reader.stdin is not None and reader.stdout is not None
    reader.stdin.close()
    assert reader.stdout.read() == b"line\n"
    reader.wait(timeout=10)
    assert proc.returncode == 0
    assert proc.stderr == ""


@pytest.mark.parametrize("closed", ["1", "2"])
def test_a_closed_output_stream_ends_the_hot_path_as_it_ends_the_full_cli(
    daemon: FakeDaemon, closed: str
) -> None:
    daemon.reply = result(RESULTS["tool.evaluate"])
    runs = []
    for command in (TABPILOT, " ".join(FULL)):
        proc = subprocess.run(
            f"{command} eval 1+1 {closed}>&-",
            shell=True,
            env=env_for(daemon),
            capture_output=True,
            text=True,
            check=False,
        )
        runs.append((proc.returncode, proc.stdout, proc.stderr))
    assert runs[0] == runs[1]
    assert "Traceback" not in runs[0][2]
