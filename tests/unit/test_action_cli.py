"""The action verbs' command lines without a browser: what they send and the one line they print."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from tabpilot.cli import action_commands, outcomes
from tabpilot.cli.context import Context
from tabpilot.cli.main import build_parser, main
from tabpilot.protocol import RpcError


class FakeContext:
    """Records the tool call and answers it like the extension would."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result
        self.calls: list[tuple[str, dict[str, Any], float]] = []
        self.printed: list[str] = []
        self.boundaries = True

    nonce = Context.nonce

    def tool(self, method: str, params: dict[str, Any] | None = None, default_timeout_s: float = 30.0) -> Any:
        self.calls.append((method, dict(params or {}), default_timeout_s))
        return dict(self.result)

    def emit(self, result: Any, text: str) -> int:
        self.printed.append(text)
        return 0


def run(result: dict[str, Any], *argv: str) -> FakeContext:
    ctx = FakeContext(result)
    args = build_parser(list(argv)).parse_args(list(argv))
    args.handler(args, ctx)
    return ctx


SAVE = {"ref": "e12", "label": 'button "Save"'}


def test_click_sends_its_options_and_says_where_it_went() -> None:
    ctx = run(
        {"target": SAVE, "navigated": {"url": "http://x/done", "status": 200, "committed": True}},
        *("click", "@e12", "--double", "--modifiers", "Shift, Control", "--at", "3,4.5", "--diff"),
    )
    method, params, timeout = ctx.calls[0]
    assert method == "tool.click" and timeout == 5.0
    assert params == {
        "target": "@e12",
        "button": "left",
        "click_count": 2,
        "modifiers": ["Shift", "Control"],
        "position": {"x": 3.0, "y": 4.5},
        "after": "diff",
    }
    assert ctx.printed == ['double-clicked button "Save" @e12 → navigated to http://x/done (200)']
    right = run({"target": {"ref": None, "label": "link"}}, "click", "a", "--button", "right")
    assert right.printed == ["right-clicked link"]


@pytest.mark.parametrize(
    ("result", "line"),
    [
        (
            {"opened_tab": {"tab_id": 7, "url": "http://x/", "kept": True, "current": True}},
            " → opened tab 7 http://x/ (kept in this session, now current)",
        ),
        (
            {"navigated": {"url": "http://x/#a", "same_document": True, "committed": True}},
            " → went to http://x/#a (same document)",
        ),
        (
            {"navigated": {"url": "http://slow/", "committed": False}},
            " → navigating to http://slow/ (not committed yet)",
        ),
        ({"dialog": {"type": "alert", "message": "Hi", "handled": "accepted"}}, ' → alert "Hi" (accepted)'),
        (
            {"dialog": {"type": "confirm", "message": "Sure?", "handled": "open"}},
            ' → dialog: confirm "Sure?" — tabpilot dialog accept|dismiss',
        ),
        (
            {"dialog": {"type": "beforeunload", "message": "", "handled": "open"}},
            " → dialog: beforeunload — tabpilot dialog accept|dismiss",
        ),
        ({}, ""),
    ],
)
def test_outcome_suffixes(result: dict[str, Any], line: str) -> None:
    assert outcomes.outcome_text(result) == line


def test_fill_type_press_and_select_lines() -> None:
    assert run({"target": SAVE, "value": "a@b.c"}, "fill", "@e12", "a@b.c").printed == [
        'filled button "Save" @e12 = "a@b.c"'
    ]
    typed = run({"typed": 2}, "type", "hé", "--delay", "50")
    assert typed.calls[0][1] == {"text": "hé", "delay_ms": 50}
    assert typed.calls[0][2] == pytest.approx(5.1)
    assert typed.printed == ['typed "hé"']
    pressed = run(
        {"pressed": ["Control+A", "Backspace"], "target": SAVE}, "press", "ctrl+a", "Backspace", "--ref", "#x"
    )
    assert pressed.calls[0][1] == {"keys": ["ctrl+a", "Backspace"], "target": "#x"}
    assert pressed.printed == ['pressed Control+A, Backspace in button "Save" @e12']
    chosen = [
        {"value": "m", "label": "M", "matched_by": "label"},
        {"value": "l", "label": "Large", "matched_by": "value"},
    ]
    selected = run(
        {"target": {"ref": "e7", "label": 'listbox "Size"'}, "selected": chosen}, "select", "@e7", "M", "l"
    )
    assert selected.printed == ['selected "M", "Large" in listbox "Size" @e7 (matched by label and value)']


def test_check_uncheck_and_already() -> None:
    box = {"ref": "e3", "label": 'checkbox "Subscribe"'}
    assert run({"target": box, "changed": True}, "check", "@e3").printed == [
        'checked checkbox "Subscribe" @e3'
    ]
    assert run({"target": box, "changed": False}, "uncheck", "@e3").printed == [
        'checkbox "Subscribe" @e3 was already unchecked'
    ]
    assert run({"target": box, "changed": True}, "uncheck", "@e3").calls[0][1] == {
        "target": "@e3",
        "checked": False,
    }


def test_scroll_directions_amounts_and_ends() -> None:
    down = run({"direction": "down", "moved": 600, "y": 600, "max_y": 4000}, "scroll", "--down")
    assert down.calls[0][1] == {"direction": "down"}
    assert down.printed == ["scrolled down 600 px (now at 600 of 4000)"]
    side = run(
        {"direction": "left", "moved": 50, "x": 0, "max_x": 300, "target": SAVE},
        "scroll",
        "#box",
        "--left",
        "50",
    )
    assert side.calls[0][1] == {"target": "#box", "direction": "left", "amount": 50}
    assert side.printed == ['scrolled button "Save" @e12 left 50 px (now at 0 of 300)']
    bottom = run({"y": 900, "max_y": 900}, "scroll", "--to", "bottom")
    assert bottom.calls[0][1] == {"to": "bottom"} and bottom.printed == [
        "scrolled to bottom (now at 900 of 900)"
    ]


def test_drag_upload_and_sizes(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    dragged = run(
        {"source": SAVE, "target": {"ref": None, "label": "list"}, "html5": True}, "drag", "@e12", "ul"
    )
    assert dragged.printed == ['dragged button "Save" @e12 to list (HTML5 drag and drop)']
    monkeypatch.chdir(tmp_path)
    files = [{"name": "a.pdf", "size": 12_345}, {"name": "b.txt", "size": 3}]
    uploaded = run({"target": SAVE, "files": files, "via": "chooser"}, "upload", "@e12", "a.pdf", "~/b.txt")
    sent = uploaded.calls[0][1]
    assert sent["paths"] == [str(tmp_path / "a.pdf"), os.path.expanduser("~/b.txt")]
    assert uploaded.calls[0][2] == 30.0
    assert uploaded.printed == [
        'uploaded 2 files to button "Save" @e12 through its file chooser (a.pdf 12 kB, b.txt 3 B)'
    ]
    sizes = [action_commands.human_size(n) for n in (0, 999, 1000, 1500, 12_345, 2_500_000, 3 * 10**9)]
    assert sizes == ["0 B", "999 B", "1.0 kB", "1.5 kB", "12 kB", "2.5 MB", "3.0 GB"]


def test_wait_forms() -> None:
    text = run({"waited_ms": 1234}, "wait", "--text", "Done")
    assert text.calls[0][1] == {"text": "Done"} and text.calls[0][2] == 10.0
    assert text.printed == ['waited 1.2 s for text "Done"']
    url = run({"waited_ms": 0, "url": "http://x/done"}, "wait", "--url", "*/done")
    assert url.printed == ['waited 0.0 s for URL "*/done" (http://x/done)']
    element = run({"waited_ms": 300, "target": SAVE}, "wait", "--selector", "#save")
    assert element.printed == ['waited 0.3 s for button "Save" @e12']
    slept = run({}, "wait", "10ms")
    assert slept.calls == [] and slept.printed == ["waited 0.0 s"]
    for argv in (["wait"], ["wait", "1s", "--text", "x"], ["wait", "--text", "x", "--gone", "y"]):
        with pytest.raises(RpcError) as caught:
            run({}, *argv)
        assert caught.value.code == "invalid_params" and caught.value.data["hint"]


def test_dialog_status_answers_and_text() -> None:
    assert run({"dialog": None}, "dialog").printed == ["no dialog is open"]
    pending = {"type": "prompt", "message": "Name?", "handled": "open"}
    assert run({"dialog": pending}, "dialog").printed == [
        'dialog: prompt "Name?" — tabpilot dialog accept|dismiss'
    ]
    answered = run(
        {"answered": {"type": "prompt", "message": "Name?", "handled": "accepted", "text": "Bob"}},
        *("dialog", "accept", "--text", "Bob"),
    )
    assert answered.calls[0][1] == {"action": "accept", "text": "Bob"}
    assert answered.printed == ['accepted prompt "Name?" with "Bob"']
    with pytest.raises(RpcError):
        run({}, "dialog", "dismiss", "--text", "x")


@pytest.mark.parametrize(
    "argv",
    [
        ["click"],
        ["click", "#a", "--at", "3"],
        ["click", "#a", "--button", "top"],
        ["click", "#a", "--snapshot", "--diff"],
        ["scroll"],
        ["scroll", "--down", "--up"],
        ["scroll", "--down", "-5"],
        ["type", "x", "--delay", "fast"],
        ["select", "#s"],
        ["upload", "#f"],
    ],
)
def test_bad_arguments_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "hint: " in err


def test_an_action_verb_imports_nothing_heavy() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tabpilot.cli.main", "click", "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")
    }
    assert "tabpilot.cli.action_commands" in modules
    heavy = ("asyncio", "websockets", "typing", "dataclasses", "mimetypes", "base64")
    assert not [m for m in modules if m.split(".")[0] in heavy]


def test_a_download_the_person_did_not_allow_says_so() -> None:
    held = {"name": "receipt.txt", "state": "interrupted", "error": "NOT_ALLOWED"}
    assert outcomes.download_text(held) == "download of receipt.txt failed (the person did not allow it)"
    blocked = {**held, "error": "BLOCKED_SITE"}
    assert outcomes.download_text(blocked) == "download of receipt.txt failed (blocked site)"
