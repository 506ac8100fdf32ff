"""request-help's command line without a browser: what it sends, the line it prints, its exit code."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any

import pytest

from tabpilot.cli.context import Context
from tabpilot.cli.main import build_parser


class FakeContext:
    """Records the tool call and answers it like the extension would."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, Any], float]] = []
        self.printed: list[str] = []
        self.boundaries = True

    nonce = Context.nonce

    def timeout_s(self, default: float) -> float:
        return default

    def tool(self, method: str, params: dict[str, Any] | None = None, default_timeout_s: float = 30.0) -> Any:
        self.calls.append((method, dict(params or {}), default_timeout_s))
        return dict(self.result)

    def emit(self, result: Any, text: str) -> int:
        self.printed.append(text)
        return 0


def run(result: dict[str, Any], *argv: str) -> tuple[int, FakeContext]:
    ctx = FakeContext(result)
    args = build_parser(list(argv)).parse_args(list(argv))
    return args.handler(args, ctx), ctx


def test_request_help_sends_its_options_and_says_what_the_person_did() -> None:
    code, ctx = run(
        {"outcome": "continued", "note": "done, it was the blue one"},
        *("request-help", "--prompt", "Pick a colour", "--title", "Colour"),
        *("--target", "@e3", "--target", "#save", "--until-selector", "#thanks"),
    )
    method, params, timeout = ctx.calls[0]
    assert (method, timeout) == ("tool.request_help", 300.0)
    assert params == {
        "prompt": "Pick a colour",
        "title": "Colour",
        "targets": ["@e3", "#save"],
        "until_selector": "#thanks",
    }
    assert code == 0 and ctx.printed == [
        'continued: the person pressed Done; their note: "done, it was the blue one"'
    ]


@pytest.mark.parametrize(
    ("result", "code", "line"),
    [
        ({"outcome": "continued"}, 0, "continued: the person pressed Done"),
        (
            {"outcome": "completed", "until": {"url": "*/home*"}, "url": "https://x/home"},
            0,
            "completed: the URL matched */home* (https://x/home)",
        ),
        ({"outcome": "completed", "until": {"selector": "#ok"}}, 0, "completed: #ok is visible"),
        (
            {"outcome": "cancelled"},
            1,
            "cancelled: the person declined; ask them what they want before going on",
        ),
        ({"outcome": "timed_out"}, 1, "timed_out: nobody answered within 300s; do not wait for the person"),
    ],
)
def test_each_outcome_has_its_line_and_only_going_on_exits_0(
    result: dict[str, Any], code: int, line: str
) -> None:
    got, ctx = run(result, "request-help", "--prompt", "p", "--until-url", "*/home*")
    assert ctx.calls[0][1]["until_url"] == "*/home*"
    assert (got, ctx.printed) == (code, [line])


def test_until_url_and_until_selector_exclude_each_other() -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser(["request-help"]).parse_args(
            ["request-help", "--prompt", "p", "--until-url", "a", "--until-selector", "b"]
        )
    assert exit_info.value.code == 1


def test_disabled_answers_at_once_without_a_daemon() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    # No daemon can be reached there: disabled must not even try.
    env.update(TABPILOT_HOME=tempfile.mkdtemp(prefix="tp-help-"), TABPILOT_REQUEST_HELP="off")
    proc = subprocess.run(
        [sys.executable, "-m", "tabpilot.cli.main", "request-help", "--prompt", "anyone?", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=20,
        check=False,
    )
    assert (proc.returncode, proc.stdout.strip()) == (1, '{"outcome": "disabled"}')
    assert not os.path.exists(os.path.join(env["TABPILOT_HOME"], "daemon.json"))
