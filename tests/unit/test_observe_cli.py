"""The reading verbs' command lines without a browser: what they send and how they print results."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest

from tabpilot.cli import observe_commands, page_commands
from tabpilot.cli.context import Context
from tabpilot.cli.main import build_parser, main
from tabpilot.protocol import RpcError


class FakeContext:
    """Records the tool call and answers it like the extension would."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.printed: list[str] = []
        self.session = None
        self.boundaries = True

    nonce = Context.nonce

    def tool(self, method: str, params: dict[str, Any] | None = None, default_timeout_s: float = 30.0) -> Any:
        self.calls.append((method, dict(params or {})))
        return dict(self.result)

    def emit(self, result: Any, text: str) -> int:
        self.printed.append(text)
        return 0


def parse(*argv: str) -> Any:
    return build_parser(list(argv)).parse_args(list(argv))


def test_snapshot_flags_become_tool_params() -> None:
    ctx = FakeContext({"text": "# Page"})
    args = parse("snapshot", "-i", "--viewport", "--urls", "--ref", "@e4", "--max-tokens", "500")
    assert observe_commands.cmd_snapshot(args, ctx) == 0  # type: ignore[arg-type]
    assert ctx.calls == [
        (
            "tool.snapshot",
            {"mode": "interactive", "viewport": True, "urls": True, "ref": "@e4", "max_tokens": 500},
        )
    ]
    assert ctx.printed == ["# Page"]


def test_snapshot_out_asks_for_everything_and_prints_the_path_and_a_summary() -> None:
    folder = tempfile.mkdtemp(prefix="tp-snap-")
    path = os.path.join(folder, "page.txt")
    result = {
        "text": "# A\nline",
        "url": "http://x/",
        "title": "X",
        "tokens": 1234,
        "refs": 7,
        "truncated": False,
    }
    ctx = FakeContext(result)
    observe_commands.cmd_snapshot(parse("snapshot", "--out", path), ctx)  # type: ignore[arg-type]
    assert ctx.calls[0][1]["max_tokens"] == 0
    with open(path, encoding="utf-8") as written:
        assert written.read() == "# A\nline\n"
    assert ctx.printed == [f'{path}\nsnapshot of http://x/ "X": 2 lines, ~1,234 tokens, 7 refs']
    with pytest.raises(RpcError) as missing:
        observe_commands.cmd_snapshot(parse("snapshot", "--out", "/no/such/dir/x.txt"), ctx)  # type: ignore[arg-type]
    assert missing.value.code == "invalid_params"


def test_html_prints_a_cut_notice() -> None:
    ctx = FakeContext({"html": "<html>", "bytes": 5000, "truncated": True})
    observe_commands.cmd_html(parse("html", "--max-bytes", "6"), ctx)  # type: ignore[arg-type]
    assert ctx.printed == [
        "<html>\n<!-- tabpilot: cut at 6 of 5,000 bytes; --max-bytes 0 or --out FILE gives all of it -->"
    ]


def test_console_lines_and_paging_hints() -> None:
    entries = [
        {"seq": 3, "level": "error", "text": "boom", "url": "http://x/a.js", "line": 4, "column": 2},
        {"seq": 4, "level": "log", "text": "hi", "frame": "http://other/"},
    ]
    ctx = FakeContext({"entries": entries, "more": 2, "next_since": 4, "dropped": 0})
    observe_commands.cmd_console(parse("console", "--since", "2", "--level", "warning", "--limit", "2"), ctx)  # type: ignore[arg-type]
    assert ctx.calls == [("tool.console", {"since": 2, "level": "warning", "limit": 2})]
    assert ctx.printed == [
        "#3 error boom (http://x/a.js:4:2)\n#4 log hi [frame http://other/]\n… 2 more: tabpilot console --since 4"
    ]
    empty = FakeContext({"entries": [], "more": 0, "next_since": 9, "dropped": 0})
    observe_commands.cmd_console(parse("console", "--since", "9"), empty)  # type: ignore[arg-type]
    assert empty.printed == ["no console entries after #9 (read on later with --since 9)"]


def test_screenshot_options() -> None:
    ctx = FakeContext({"data": "", "format": "jpeg", "width": 1, "height": 1})
    folder = tempfile.mkdtemp(prefix="tp-shot-")
    out = os.path.join(folder, "a.jpg")
    page_commands.cmd_screenshot(
        parse("screenshot", "--format", "jpeg", "--quality", "70", "--ref", "#x", "--out", out), ctx
    )  # type: ignore[arg-type]
    assert ctx.calls == [("tool.screenshot", {"format": "jpeg", "quality": 70, "ref": "#x"})]
    with pytest.raises(RpcError):
        page_commands.cmd_screenshot(parse("screenshot", "--quality", "70"), ctx)  # type: ignore[arg-type]
    long_page = FakeContext({"data": "", "format": "png", "width": 1280, "height": 16384, "cut": True})
    page_commands.cmd_screenshot(parse("screenshot", "--full-page", "--out", out), long_page)  # type: ignore[arg-type]
    assert long_page.printed == [f"{out}\n(the page is longer than 16384 px; the image stops there)"]


@pytest.mark.parametrize(
    "argv",
    [
        ["snapshot", "--max-tokens", "-1"],
        ["console", "--level", "fatal"],
        ["console", "--limit", "0"],
        ["screenshot", "--full-page", "--ref", "@e1"],
        ["screenshot", "--quality", "101", "--format", "jpeg"],
    ],
)
def test_bad_options_exit_1_with_a_hint(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("hint: ")
