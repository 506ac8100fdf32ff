"""The foundation, end to end: CLI → daemon → extension → page in a real Chromium."""

from __future__ import annotations

import struct
from pathlib import Path

from harness import PageServer, Tabpilot, wait_until


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_launch_reports_the_connected_browser(tp: Tabpilot) -> None:
    browsers = tp.run("browser", "list", "--json").json["browsers"]
    assert len(browsers) == 1
    assert browsers[0]["managed"] is True and browsers[0]["verdict"] == "connected"
    again = tp.run("browser", "launch", "--json").json
    assert again["already_running"] is True and again["instance_id"] == browsers[0]["instance_id"]


def test_open_eval_and_navigate_history(tp: Tabpilot, pages: PageServer) -> None:
    opened = tp.run("open", pages.url("index.html"))
    assert opened.out.startswith(f"navigated to {pages.url('index.html')} (200)")
    assert tp.run("eval", "document.title").out.strip() == '"tabpilot test page"'
    assert tp.run("eval", "1+1").out.strip() == "2"
    assert tp.run("eval", "({a: [1, 'x'], b: null})").out.strip() == '{"a": [1, "x"], "b": null}'

    tp.run("open", pages.url("second.html"))
    hashed = tp.run("open", "#details", "--json").json  # hash-only, same document
    assert hashed["same_document"] is True and hashed["url"].endswith("second.html#details")

    back = tp.run("back", "--json").json
    assert back["url"] == pages.url("second.html") and back["same_document"] is True
    back = tp.run("back", "--json").json
    assert back["url"] == pages.url("index.html")
    assert tp.run("eval", "document.title").out.strip() == '"tabpilot test page"'
    forward = tp.run("forward", "--json").json
    assert forward["url"] == pages.url("second.html")
    assert tp.run("eval", "location.href").out.strip() == f'"{pages.url("second.html")}"'

    tp.run("eval", "window.marker = 42")
    reloaded = tp.run("reload", "--json").json
    assert reloaded["status"] == 200
    assert tp.run("eval", "typeof window.marker").out.strip() == '"undefined"'
    assert tp.run("reload", "--hard").code == 0

    status = tp.run("open", pages.url("status/404"), "--json").json
    assert status["status"] == 404


def test_eval_reports_page_exceptions_with_exit_zero(tp: Tabpilot) -> None:
    result = tp.run("eval", "notDefinedAnywhere + 1")
    assert result.code == 0
    assert result.out.startswith("exception: ReferenceError: notDefinedAnywhere is not defined")
    assert tp.run("eval", "Promise.resolve(7)").out.strip() == "7"


def test_tabs(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "tabs")
    first = tp.run("--session", "tabs", "tab", "list", "--json").json["tabs"]
    assert len(first) == 1
    created = tp.run("tab", "new", pages.url("second.html"), "--session", "tabs", "--json").json
    listed = tp.run("tab", "list", "--session", "tabs", "--json").json["tabs"]
    assert [t["tab_id"] for t in listed] == [first[0]["tab_id"], created["tab_id"]]
    assert [t["active"] for t in listed] == [False, True]
    assert tp.run("eval", "document.title", "--session", "tabs").out.strip() == '"Second page"'

    tp.run("tab", "select", str(first[0]["tab_id"]), "--session", "tabs")
    assert tp.run("eval", "location.href", "--session", "tabs").out.strip() == '"about:blank"'
    text = tp.run("tab", "list", "--session", "tabs").out
    assert text.splitlines()[0].startswith(f"* {first[0]['tab_id']}")

    closed = tp.run("tab", "close", str(created["tab_id"]), "--session", "tabs", "--json").json
    assert closed["closed"] is True
    remaining = tp.run("tab", "list", "--session", "tabs", "--json").json["tabs"]
    assert [t["tab_id"] for t in remaining] == [first[0]["tab_id"]]
    # closing the last tab keeps the Agent Window (and the session) alive with a blank tab
    last = tp.run("tab", "close", "--session", "tabs", "--json").json
    assert last["current_tab_id"] != first[0]["tab_id"]
    assert len(tp.run("tab", "list", "--session", "tabs", "--json").json["tabs"]) == 1
    tp.run("session", "stop", "tabs")


def test_screenshot_is_a_png_of_the_viewport(tp: Tabpilot, pages: PageServer, tmp_path: Path) -> None:
    tp.run("open", pages.url("colors.html"))
    out = tmp_path / "shot.png"
    printed = tp.run("screenshot", "--out", str(out)).out.strip()
    assert printed == str(out)
    width = int(tp.run("eval", "Math.round(innerWidth * devicePixelRatio)").out)
    height = int(tp.run("eval", "Math.round(innerHeight * devicePixelRatio)").out)
    assert png_size(out) == (width, height)
    assert width >= 800 and height >= 500
    described = tp.run("screenshot", "--json").json
    assert Path(described["path"]).is_file() and described["width"] == width
    assert "data" not in described


def test_sessions_side_by_side_and_stop_closes_the_window(tp: Tabpilot, pages: PageServer) -> None:
    devtools = tp.devtools()
    tp.run("session", "start", "left")
    tp.run("session", "start", "right")
    tp.run("--session", "left", "open", pages.url("index.html"))
    tp.run("--session", "right", "open", pages.url("second.html"))
    assert tp.run("--session", "left", "eval", "document.title").out.strip() == '"tabpilot test page"'
    assert tp.run("--session", "right", "eval", "document.title").out.strip() == '"Second page"'
    sessions = {s["session_id"]: s for s in tp.run("session", "list", "--json").json["sessions"]}
    assert sessions["left"]["window_id"] != sessions["right"]["window_id"]
    left_tabs = {t["tab_id"] for t in tp.run("--session", "left", "tab", "list", "--json").json["tabs"]}
    right_tabs = {t["tab_id"] for t in tp.run("--session", "right", "tab", "list", "--json").json["tabs"]}
    assert left_tabs and right_tabs and not (left_tabs & right_tabs)

    urls = [p["url"] for p in devtools.pages()]
    assert pages.url("second.html") in urls
    assert tp.run("session", "stop", "right").out.strip() == "stopped right"
    wait_until(lambda: pages.url("second.html") not in [p["url"] for p in devtools.pages()])
    assert tp.run("--session", "left", "eval", "document.title").out.strip() == '"tabpilot test page"'
    gone = tp.run("--session", "right", "eval", "1", check=False)
    assert gone.code == 1 and "unknown session 'right'" in gone.err
    tp.run("session", "stop", "left")


def test_bad_input_gets_one_line_and_a_hint(tp: Tabpilot) -> None:
    cases = [
        (["frobnicate"], 1, "invalid choice"),
        (["open", "javascript:alert(1)"], 1, "javascript"),
        (["open", "https://exa mple.com"], 1, ""),
        (["open", "file:///etc/hostname"], 1, "--allow-file"),
        (["--session", "nope", "eval", "1"], 1, "unknown session 'nope'"),
        (["tab", "select", "999999"], 1, "999999"),
        (["tab", "select", "abc"], 1, "not a tab id"),
        (["--browser", "nothing-like-this", "session", "start", "x"], 1, "nothing-like-this"),
    ]
    for args, code, fragment in cases:
        result = tp.run(*args, check=False)
        assert result.code == code, (args, result)
        lines = result.err.strip().splitlines()
        assert lines[0].startswith("error: ") and fragment in result.err, (args, result.err)
        assert lines[-1].startswith("hint: "), (args, result.err)
        assert "Traceback" not in result.err
    as_json = tp.run("--json", "tab", "select", "999999", check=False)
    error = as_json.json["error"]
    assert error["reason"] == "unknown_tab" and error["exit_code"] == 1 and error["hint"]
