"""Reading pages, end to end: snapshots across iframes of both kinds and shadow DOM, stable refs, find,
text, html, the console and screenshots, all through the real CLI, daemon, extension and Chromium."""

from __future__ import annotations

import json
import re
import struct
import urllib.request
import zlib
from pathlib import Path
from typing import Any

import pytest
from harness import PageServer, Tabpilot, wait_until
from websockets.sync.client import ClientConnection, connect


def ref_of(snapshot: str, bracket_start: str) -> str:
    """The ref of the first bracket that starts with `bracket_start`, e.g. '[button "Go cross"'."""
    match = re.search(re.escape(bracket_start) + r" (@e\d+)", snapshot)
    assert match, f"no {bracket_start} in:\n{snapshot}"
    return match.group(1)


def poll(produce: Any, accept: Any, timeout: float = 10.0) -> Any:
    """Call `produce` until `accept` likes what it returned; return that."""
    latest: list[Any] = []

    def attempt() -> bool:
        latest[:] = [produce()]
        return bool(accept(latest[0]))

    wait_until(attempt, timeout)
    return latest[0]


def error_of(result: Any) -> dict[str, Any]:
    assert result.code == 1, (result.code, result.out, result.err)
    return json.loads(result.out)["error"]  # type: ignore[no-any-return]


def png_pixels(path: Path) -> tuple[int, int, Any]:
    """Width, height and a pixel reader (x, y) → (r, g, b) of an 8-bit RGB or RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, _depth, color_type = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4}[color_type]
        elif kind == b"IDAT":
            idat += body
    raw, stride, rows = zlib.decompress(idat), width * channels, []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                nearest = (
                    a
                    if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c)
                    else b
                    if abs(p - b) <= abs(p - c)
                    else c
                )
                line[x] = (line[x] + nearest) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, lambda x, y: tuple(rows[y][x * channels : x * channels + 3])


def browser_endpoint(tp: Tabpilot) -> str:
    """The browser's own DevTools endpoint (outside tabpilot)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{tp.devtools().port}/json/version", timeout=5) as response:
        return str(json.load(response)["webSocketDebuggerUrl"])


class BrowserCdp:
    """Commands on the browser's own DevTools connection, optionally in a page session."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.last_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self.last_id += 1
        message: dict[str, Any] = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=10))
            if reply.get("id") == self.last_id:
                assert "error" not in reply, reply
                return reply["result"]

    def page_session(self, url: str) -> str:
        page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["url"] == url)
        return str(
            self.call("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        )


@pytest.fixture(scope="module")
def frames_url(pages: PageServer, other_site: PageServer) -> str:
    return pages.url(f"frames.html?other={other_site.origin}")


def open_frames(tp: Tabpilot, url: str) -> str:
    """Open the frames page; the snapshot once the cross-site frame has loaded."""
    tp.run("open", url)
    return str(poll(lambda: tp.run("snapshot").out, lambda out: "Go cross" in out))


def test_snapshot_reads_both_kinds_of_iframe_with_working_refs(
    tp: Tabpilot, frames_url: str, other_site: PageServer
) -> None:
    snapshot = open_frames(tp, frames_url)
    assert '--- iframe "Same-origin frame"' in snapshot and '--- iframe "Cross-origin frame"' in snapshot
    for text in ("Text of the top document.", "Text of the same frame.", "Text of the cross frame."):
        assert text in snapshot
    # The cross-site frame really runs in its own process: the browser lists it as a target of its own.
    frame_targets = [t for t in tp.devtools().targets() if t.get("type") == "iframe"]
    assert any(t["url"].startswith(other_site.origin) for t in frame_targets), frame_targets

    same, cross = ref_of(snapshot, '[button "Go same"'), ref_of(snapshot, '[button "Go cross"')
    for ref, frame in ((same, "same"), (cross, "cross")):
        html = tp.run("html", "--ref", ref, "--json").json
        assert f'data-frame="{frame}"' in html["html"] and html["label"] == f'button "Go {frame}"'
    # CSS and text targets search every frame.
    assert 'data-frame="cross"' in tp.run("html", "--ref", 'text="Go cross"').out
    assert 'data-frame="cross"' in tp.run("html", "--ref", "text=go CROSS").out
    assert 'data-frame="same"' in tp.run("html", "--ref", "#go").out
    code = tp.run("html", "--ref", "#code", "--json").json
    assert code["label"] == 'textbox "Code"' and code["ref"] == ref_of(snapshot, '[textbox "Code"')


def test_ref_takes_any_target_on_snapshot_and_text(tp: Tabpilot, frames_url: str) -> None:
    snapshot = open_frames(tp, frames_url)
    # A heading by its text: its section, as with its ref.
    section = tp.run("snapshot", "--ref", "text=Cross origin").out
    assert "Text of the cross frame." in section and "Text of the top document." not in section
    # A CSS selector for an element of the cross-site frame: that element only, with working refs.
    button = tp.run("snapshot", "--ref", "#go", "--json").json
    assert button["text"].count("[button") == 1
    words = tp.run("text", "--ref", 'text="Text of the cross frame."').out.strip()
    assert words == "Text of the cross frame."
    assert tp.run("text", "--ref", "#top-button").out.strip() == '[button "Top button"]'
    missing = error_of(tp.run("snapshot", "--ref", "#nothing-like-this", "--json", check=False))
    assert missing["reason"] == "selector_not_found"
    assert "Go cross" in snapshot


def test_snapshot_reads_open_shadow_dom_and_css_pierces_it(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("shadow.html"))
    snapshot = tp.run("snapshot").out
    for text in ("## Card of Ada", "Shadow text about Ada. Slotted note for Ada", "Shadow text about Grace."):
        assert text in snapshot
    # Closed shadow roots are shown to the person, so the agent reads them too (issue 10).
    assert "Closed shadow button" in snapshot
    follow = ref_of(snapshot, '[button "Follow Grace"')
    assert "Follow Grace" in tp.run("html", "--ref", follow).out
    # a descendant combinator across the shadow boundary, and a shadow root inside a shadow root
    assert (
        tp.run("html", "--ref", "#grace .follow").out.strip()
        == '<button class="follow" type="button">Follow Grace</button>'
    )
    assert "Badge of Ada" in tp.run("html", "--ref", "name-badge button").out
    assert "Badge of Grace" in tp.run("html", "--ref", "text=badge of grace").out
    badge = tp.run("html", "--ref", "user-card#grace name-badge .badge", "--json").json
    assert badge["ref"] == ref_of(snapshot, '[button "Badge of Grace"')


def test_refs_are_stable_and_a_removed_element_is_stale(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("shadow.html"))
    first = tp.run("snapshot").out
    second = tp.run("snapshot").out
    assert first == second, "the same live elements keep their refs"
    follow = ref_of(first, '[button "Follow Grace"')
    assert tp.run("text", "--ref", follow).out.strip() == '[button "Follow Grace"]'

    tp.run("eval", "document.getElementById('grace').remove()")
    stale = error_of(tp.run("text", "--ref", follow, "--json", check=False))
    assert (stale["code"], stale["reason"]) == ("not_found", "ref_stale")
    assert "snapshot" in stale["hint"]
    assert ref_of(tp.run("snapshot").out, '[button "Follow Ada"') == ref_of(first, '[button "Follow Ada"')

    tp.run("open", "about:blank")
    assert tp.run("snapshot").out.strip() == "(nothing visible on about:blank)"
    never = error_of(tp.run("snapshot", "--ref", "@e99999", "--json", check=False))
    assert never["reason"] == "ref_not_found"
    # a ref of the document the tab showed before (about:blank replaced it)
    ada = ref_of(first, '[button "Follow Ada"')
    assert error_of(tp.run("html", "--ref", ada, "--json", check=False))["reason"] == "ref_stale"
    assert (
        error_of(tp.run("html", "--ref", "#nothing-here", "--json", check=False))["reason"]
        == "selector_not_found"
    )
    bad = error_of(tp.run("html", "--ref", "##bad", "--json", check=False))
    assert (bad["code"], bad["reason"]) == ("invalid_params", "invalid_selector")


def test_a_large_page_is_cut_with_a_notice_and_whole_in_a_file(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    tp.run("open", pages.url("large.html"))
    result = tp.run("snapshot", "--json").json
    assert result["truncated"] is True and result["tokens"] <= 12000 < result["total_tokens"]
    notice = result["text"].splitlines()[-1]
    assert notice.startswith("[… cut at ~12000 tokens:") and "--ref @eN" in notice and "--out FILE" in notice
    # The notice names the sections left out with refs that read them.
    section, ref = re.search(r"## (Section \d+) (@e\d+)", notice.split("Left out:")[1]).groups()  # type: ignore[union-attr]
    part = tp.run("snapshot", "--ref", ref).out
    assert part.startswith(f"## {section}\n") and part.count("## Section") == 1

    out = tmp_path / "large.txt"
    written = tp.run("snapshot", "--out", str(out)).out.splitlines()
    assert written[0] == str(out) and re.search(r"\d[\d,]* lines, ~[\d,]+ tokens, [\d,]+ refs", written[1])
    whole = out.read_text()
    assert (
        "The last line of the very large page." in whole
        and "## Section 600" in whole
        and "[… cut" not in whole
    )

    small = tp.run("snapshot", "--max-tokens", "300").out
    assert len(small) < 2000 and small.splitlines()[-1].startswith("[… cut at ~300 tokens")

    interactive = tp.run("snapshot", "-i", "--max-tokens", "0").out
    assert '[button "Action 1" @e' in interactive and "Paragraph 1 of" not in interactive
    assert "## Section 600" in interactive
    viewport = tp.run("snapshot", "--viewport").out
    assert (
        "## Section 1\n" in viewport and "## Section 60\n" not in viewport and "Section 600" not in viewport
    )
    urls = tp.run("snapshot", "--urls", "--max-tokens", "400").out
    assert re.search(r"\[Link 1 @e\d+ #s1\]", urls)
    assert not re.search(r"\[Link 1 @e\d+ #s1\]", tp.run("snapshot", "--max-tokens", "400").out)


def test_find_text_and_html(tp: Tabpilot, frames_url: str, tmp_path: Path) -> None:
    snapshot = open_frames(tp, frames_url)
    found = tp.run("find", "go CROSS").out.splitlines()
    assert found[0] == '1 match for "go CROSS":'
    assert '--- iframe "Cross-origin frame"' in found[1]
    assert ref_of(found[-1], '[button "Go cross"') == ref_of(snapshot, '[button "Go cross"')
    assert tp.run("find", "no such words anywhere").out.strip() == '0 matches for "no such words anywhere".'

    text = tp.run("text").out
    assert "Text of the cross frame." in text and "@e" not in text and '[button "Go same"]' in text
    frame = ref_of(snapshot, '--- iframe "Same-origin frame"')
    inside = tp.run("text", "--ref", frame).out
    assert "Inside the same frame" in inside and "Top button" not in inside

    cut = tp.run("html", "--max-bytes", "200").out.splitlines()
    assert cut[-1].startswith("<!-- tabpilot: cut at 200 of ")
    assert len("\n".join(cut[:-1]).encode()) <= 200
    out = tmp_path / "page.html"
    written = tp.run("html", "--out", str(out)).out.splitlines()
    assert written[0] == str(out) and written[1].startswith("HTML of the page: ")
    assert out.read_text().startswith("<!DOCTYPE html>") and '<iframe id="cross"' in out.read_text()


def test_console_keeps_its_numbering_through_a_debugger_reattach(tp: Tabpilot, pages: PageServer) -> None:
    url = pages.url("console.html")
    tp.run("open", url)
    # the uncaught exception and the failed request come a moment after the load
    before = poll(lambda: tp.run("console", "--json").json["entries"], lambda entries: len(entries) >= 7)
    logged = [e for e in before if e["source"] == "console"]
    assert [e["text"] for e in logged] == [
        "boot {ready: true, n: 2}",
        "info line",
        "careful: disk almost full",
        "broken widget",
        "details for debugging",
    ]
    assert [e["level"] for e in logged] == ["log", "info", "warning", "error", "debug"]
    assert any(
        e["source"] == "exception" and e["text"] == "Uncaught TypeError: bad thing happened" for e in before
    )
    assert any(e["source"] == "browser" and "404" in e["text"] for e in before)
    assert [e["seq"] for e in before] == list(range(1, len(before) + 1))
    severe = tp.run("console", "--level", "warning").out.splitlines()
    assert severe and all(re.match(r"#\d+ (warning|error) ", line) for line in severe)

    # The debugger is detached for real: the tab goes to a page extensions may not debug, then back.
    with connect(browser_endpoint(tp), max_size=2**24) as ws:
        browser = BrowserCdp(ws)
        session = browser.page_session(url)
        browser.call("Page.navigate", {"url": "chrome://version"}, session)
        wait_until(lambda: tp.run("eval", "1", check=False).code == 3)
        history = browser.call("Page.getNavigationHistory", {}, session)
        back = history["entries"][history["currentIndex"] - 1]["id"]
        browser.call("Page.navigateToHistoryEntry", {"entryId": back}, session)
    wait_until(lambda: tp.run("eval", "location.href", check=False).out.strip() == json.dumps(url))

    tp.run("eval", "document.getElementById('log').click()")
    after = poll(
        lambda: tp.run("console", "--json").json["entries"], lambda entries: "clicked 1" in str(entries)
    )
    assert after[: len(before)] == before, "numbers and entries from before the re-attach are kept"
    seqs = [e["seq"] for e in after]
    assert seqs == list(range(1, len(after) + 1)), "the sequence never went back"
    keys = [(e["time"], e.get("url"), e.get("line"), e.get("column")) for e in after]
    assert len(keys) == len(set(keys)), (
        "messages Chrome sent again after the re-attach were not counted twice"
    )
    assert after[-1]["text"] == "clicked 1"
    since = tp.run("console", "--since", str(after[-2]["seq"])).out.splitlines()
    assert len(since) == 1 and since[0].startswith(f"#{after[-1]['seq']} log clicked 1 ")


def test_screenshots_of_an_element_the_whole_page_and_jpeg(
    tp: Tabpilot, pages: PageServer, frames_url: str, tmp_path: Path
) -> None:
    tp.run("open", pages.url("large.html"))
    tp.run("eval", "scrollTo(0, 5000)")
    box = tmp_path / "box.png"
    shot = tp.run("screenshot", "--ref", "#box", "--out", str(box), "--json").json
    assert (shot["width"], shot["height"]) == (120, 90)
    width, height, pixel = png_pixels(box)
    blue = (30, 60, 220)
    assert {pixel(x, y) for x in (1, width // 2, width - 2) for y in (1, height // 2, height - 2)} == {blue}

    open_frames(tp, frames_url)
    for frame in ("same", "cross"):
        swatch = tmp_path / f"{frame}.png"
        tp.run("screenshot", "--ref", f'text="Swatch of the {frame} frame"', "--out", str(swatch))
        width, height, pixel = png_pixels(swatch)
        assert (width, height) == (200, 30)
        corners = {pixel(x, y) for x in (1, width // 2, width - 2) for y in (1, height // 2, height - 2)}
        assert corners == {(0, 160, 80)}, frame

    tp.run("open", pages.url("forms.html"))
    page_height = json.loads(tp.run("eval", "document.documentElement.scrollHeight").out)
    viewport_height = json.loads(tp.run("eval", "innerHeight").out)
    assert page_height > viewport_height
    full = tp.run("screenshot", "--full-page", "--out", str(tmp_path / "full.png"), "--json").json
    assert full["height"] == page_height and png_pixels(tmp_path / "full.png")[1] == page_height
    jpeg = tp.run(
        "screenshot", "--format", "jpeg", "--quality", "50", "--out", str(tmp_path / "v.jpg"), "--json"
    ).json
    assert jpeg["format"] == "jpeg" and jpeg["height"] == viewport_height
    assert (tmp_path / "v.jpg").read_bytes()[:2] == b"\xff\xd8"
    assert tp.run("screenshot", "--quality", "50", check=False).code == 1
