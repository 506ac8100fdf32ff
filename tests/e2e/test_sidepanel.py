"""The side panel end to end: the person types in the panel (real keys, trusted clicks), the real daemon
runs the real Claude Code CLI against a fake Messages API on loopback, and the agent drives the person's
tab through tabpilot. Most tests use the panel popped out (`sidepanel.html?tab=ID`, the same page in a
tab); one opens the real side panel with a trusted click.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import REPO, PageServer, Tabpilot, wait_until
from panel_world import (
    REAL_CLAUDE,
    Fail,
    FakeAnthropic,
    Say,
    Use,
    agent_runs,
    assert_people_words,
    claude_browser,
    open_tab,
    popped_out,
)
from test_consent import EXTENSION, block, chrome, extension_page
from test_person import Person, person_at
from websockets.sync.client import connect

PANEL = f"{EXTENSION}/sidepanel/sidepanel.html"

pytestmark = pytest.mark.skipif(
    not REAL_CLAUDE.exists(), reason="the Claude Code CLI is not installed (run scripts/bootstrap)"
)

SLOW = [f"w{i} " for i in range(120)]
LONG = [f"x{i} " for i in range(700)]
SCRIPTS = {
    "click": [
        Use("mcp__tabpilot__snapshot", {}),
        Use("mcp__tabpilot__click", {"target": "text=Sign in"}),
        Say(["I clicked ", "**Sign in**", " for you."], delay_s=0.15),
    ],
    "slow": [Say(SLOW, delay_s=0.05)],
    "long": [Say(LONG, delay_s=0.025)],
    "quick": [Say(["Quick ", "answer."])],
    "fails": [Fail(500)],
    "table": [
        Use("mcp__tabpilot__snapshot", {}),
        Say(
            [
                "Prices:\n\n| Item | Price |\n|:---|---:|\n| Tea | 2 |\n| Cake **slice** | 3 |\n\n",
                "Run:\n\n```sh\necho 'tea · cake'\n```\n",
            ]
        ),
    ],
    "again": [Say(["second ", "turn"])],
    # What a page could make an agent repeat: markup and a script link.
    "hostile": [
        Say(['<img src=x onerror="window.__pwned = 1">', " [win](javascript:window.__pwned=2)", " **bold**"])
    ],
}


@pytest.fixture(scope="module")
def model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(SCRIPTS).start()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def argv_log() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tp-claude-"))
    yield folder / "argv.log"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def tp(model: FakeAnthropic, argv_log: Path) -> Iterator[Tabpilot]:
    """The managed browser and daemon; the daemon's agent is the real Claude Code, pointed at the fake model.

    The agent is started through a two-line wrapper that notes its argv (to see `--resume`) and then
    becomes the real CLI (`exec`, same process)."""
    home = argv_log.parent / "home"
    home.mkdir()
    wrapper = argv_log.parent / "claude"
    # Two retries (not ten, over minutes) when the fake model fails on purpose.
    wrapper.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{argv_log}"\nCLAUDE_CODE_MAX_RETRIES=2 exec "{REAL_CLAUDE}" "$@"\n'
    )
    wrapper.chmod(stat.S_IRWXU)
    with claude_browser(model, wrapper, claude_home=str(home)) as env:
        yield env


@pytest.fixture(scope="module")
def browser_ui(tp: Tabpilot) -> Iterator[Person]:
    with extension_page(tp, "options/options.html") as page:
        yield page


# ----- what the person does ---------------------------------------------------------------------


def activate(browser_ui: Person, tab_id: int) -> None:
    chrome(browser_ui, f"chrome.tabs.update({tab_id}, {{active: true}})")


def click_on(panel: Person, selector: str) -> None:
    panel.click(*panel.element_center(selector))


def say(panel: Person, text: str) -> None:
    """The person clicks into the composer, types the message and presses Enter."""
    wait_until(lambda: panel.eval("!document.querySelector('#input').disabled"), timeout=20)
    click_on(panel, "#input")
    panel.send("Input.insertText", {"text": text[:-1]})
    panel.type(text[-1])
    panel.send(
        "Input.dispatchKeyEvent",
        {"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"},
    )
    panel.send(
        "Input.dispatchKeyEvent",
        {"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13},
    )


def agent_text(panel: Person) -> str:
    return str(
        panel.eval("[...document.querySelectorAll('.bubble.agent')].map(e => e.textContent).join(' ')")
    )


def words(text: str) -> list[str]:
    return text.split()


def user_bubbles(panel: Person) -> list[str]:
    return list(panel.eval("[...document.querySelectorAll('.bubble.user .words')].map(e => e.textContent)"))


def tool_rows(panel: Person) -> list[dict[str, Any]]:
    return list(
        panel.eval(
            "[...document.querySelectorAll('.tool')].map(e => ({verb: e.querySelector('.verb').textContent,"
            " target: e.querySelector('.target').textContent, status: e.dataset.status,"
            " state: e.querySelector('.state').textContent, outcome: e.querySelector('.outcome')?.textContent ?? ''}))"
        )
    )


def running(panel: Person) -> bool:
    return bool(panel.eval("document.querySelector('#send').textContent === 'Stop'"))


def conversations(tp: Tabpilot) -> list[dict[str, Any]]:
    root = Path(tp.home, "chats")
    return [json.loads((d / "meta.json").read_text()) for d in root.glob("c-*")] if root.exists() else []


def events_of(tp: Tabpilot, cid: str) -> list[dict[str, Any]]:
    path = Path(tp.home, "chats", cid, "events.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def conversation_of(tp: Tabpilot, tab_id: int) -> dict[str, Any]:
    return wait_until(lambda: next((c for c in conversations(tp) if c["tab_id"] == tab_id), None))  # type: ignore[no-any-return]


def turn_ended(tp: Tabpilot, cid: str, turns: int = 1) -> list[dict[str, Any]]:
    return [e for e in events_of(tp, cid) if e["kind"] == "turn_end"][turns - 1 : turns]


# ----- the tests --------------------------------------------------------------------------------


def test_a_turn_streams_into_the_panel_with_a_real_click_on_the_bound_tab(
    tp: Tabpilot, browser_ui: Person, pages: PageServer, tmp_path: Path
) -> None:
    url = pages.url("panel-signin.html")
    tab = open_tab(browser_ui, url)
    with popped_out(tp, tab) as panel:
        # What the panel shows while it changes: the agent's text at every change.
        panel.eval(
            "window.__seen = []; new MutationObserver(() => { const b = document.querySelectorAll('.bubble.agent');"
            " if (b.length) __seen.push(b[b.length - 1].textContent); })"
            ".observe(document.querySelector('#timeline'), {childList: true, subtree: true, characterData: true})"
        )
        say(panel, "Please sign me in [[script:click]]")
        wait_until(lambda: user_bubbles(panel) == ["Please sign me in [[script:click]]"])
        wait_until(lambda: running(panel), timeout=20)
        wait_until(lambda: "for you." in agent_text(panel) and not running(panel), timeout=60)
        assert agent_text(panel) == "I clicked Sign in for you."
        assert panel.eval("document.querySelector('.bubble.agent strong').textContent") == "Sign in"
        seen = panel.eval("__seen")
        assert len(set(seen)) >= 3 and seen[-1] == "I clicked Sign in for you.", seen
        rows = tool_rows(panel)
        assert [r["verb"] for r in rows] == ["snapshot", "click"], rows
        assert all(r["status"] == "ok" and r["state"].startswith("ok · ") for r in rows), rows
        assert rows[1]["target"] == "text=Sign in"
        assert "Sign in" in rows[1]["outcome"], rows
        # The tool rows came before the text that followed them.
        order = panel.eval("[...document.querySelector('#timeline').children].map(e => e.className)")
        assert order == ["bubble user", "tool", "tool", "bubble agent"], order
        with person_at(tp, url) as page:
            clicks = page.eval("__events.filter(e => e.type === 'click').map(e => [e.target, e.trusted])")
            assert clicks == [["signin", True]]
            assert page.eval("document.querySelector('#state').textContent") == "Signed in"
        cid = conversation_of(tp, tab)["conversation_id"]
        seqs = [e["seq"] for e in events_of(tp, cid)]
        assert seqs == list(range(1, len(seqs) + 1))
        shot = tmp_path / "sidepanel.png"
        panel.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 380, "height": 560, "deviceScaleFactor": 1, "mobile": False},
        )
        time.sleep(0.3)
        shot.write_bytes(
            __import__("base64").b64decode(panel.send("Page.captureScreenshot", {"format": "png"})["data"])
        )
        if os.environ.get("TABPILOT_DOCS_SCREENSHOT"):
            shutil.copy(shot, REPO / "docs" / "sidepanel.png")
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def where(panel: Person) -> dict[str, Any]:
    return dict(
        panel.eval(
            "(() => { const w = document.querySelector('#where'); return {hidden: w.hidden,"
            " title: w.querySelector('.tab-title').textContent, site: w.querySelector('.tab-site').textContent,"
            " agent: w.querySelector('.agent-line').textContent, markup: w.querySelectorAll('*').length}; })()"
        )
    )


def test_the_header_names_the_bound_tab_and_follows_its_navigation_and_title(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    url = pages.url("panel-signin.html") + "?header"
    tab = open_tab(browser_ui, url)
    site = url.split("/")[2]
    with popped_out(tp, tab) as panel:
        wait_until(lambda: where(panel)["title"] == "Panel shop", timeout=20)
        shown = where(panel)
        assert not shown["hidden"] and shown["site"] == site, shown
        wait_until(lambda: where(panel)["agent"].startswith("Claude Code · "), timeout=20)
        second = pages.url("second.html") + "?header"
        chrome(browser_ui, f"chrome.tabs.update({tab}, {{url: {json.dumps(second)}}})")
        wait_until(lambda: where(panel)["title"] == "Second page", timeout=20)
        # The page names itself with markup: the header shows it as words, and adds no element.
        markup = where(panel)["markup"]
        with person_at(tp, second) as page:
            page.eval("document.title = '<img src=x onerror=\"window.__pwned = 1\">Renamed'")
        wait_until(
            lambda: where(panel)["title"] == '<img src=x onerror="window.__pwned = 1">Renamed', timeout=20
        )
        assert where(panel)["markup"] == markup
        assert panel.eval("window.__pwned === undefined")
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_an_api_failure_shows_working_then_each_retry_then_words_for_the_person(
    tp: Tabpilot, browser_ui: Person, pages: PageServer, model: FakeAnthropic
) -> None:
    url = pages.url("panel-signin.html") + "?fails"
    tab = open_tab(browser_ui, url)
    with popped_out(tp, tab) as panel:
        # Everything the panel said about the failing turn, as it said it.
        panel.eval(
            "window.__status = []; new MutationObserver(() => { const w = !document.querySelector('#working').hidden;"
            " const r = [...document.querySelectorAll('.notice.retry')].map(e => e.textContent).join('');"
            " const u = document.querySelectorAll('.bubble.user').length;"
            " const last = __status.at(-1); if (!last || last.w !== w || last.r !== r || last.u !== u) __status.push({w, r, u}); })"
            ".observe(document.body, {childList: true, subtree: true, characterData: true, attributes: true})"
        )
        asked = len(model.main_requests())
        say(panel, "Hello [[script:fails]]")
        wait_until(
            lambda: panel.eval("!!document.querySelector('.notice.error')") and not running(panel), timeout=90
        )
        status = panel.eval("__status")
        # Working from the moment Send was pressed, before the person's bubble came back from the daemon.
        assert status[0]["w"] and status[0]["u"] == 0, status
        retries = [s["r"] for s in status if s["r"].startswith("Retrying")]
        assert any("attempt 1 of 2" in r for r in retries) and any("attempt 2 of 2" in r for r in retries), (
            status
        )
        assert all(s["w"] for s in status if s["r"].startswith("Retrying")), status
        assert not panel.eval("!document.querySelector('#working').hidden")
        final = panel.eval("document.querySelector('.notice.retry').textContent")
        assert final.startswith("Retried 2 times (at most 2)"), final
        error = panel.eval("document.querySelector('.notice.error').textContent")
        assert error.startswith("Your agent's model service failed"), error
        assert "success" not in error and "{" not in error and "api_error" not in error, error
        # The model really was asked three times: the first try and two retries.
        assert len(model.main_requests()) - asked == 3
        cid = conversation_of(tp, tab)["conversation_id"]
        kinds = [e["kind"] for e in events_of(tp, cid)]
        assert kinds.count("retry") == 2, kinds
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


@contextlib.contextmanager
def clipboard_readable(tp: Tabpilot) -> Iterator[None]:
    """The panel may read the clipboard, for as long as this DevTools session (which holds the grant) lasts."""
    with urllib.request.urlopen(f"http://127.0.0.1:{tp.devtools().port}/json/version", timeout=5) as response:
        endpoint = json.load(response)["webSocketDebuggerUrl"]
    grant = {"origin": EXTENSION, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]}
    with connect(endpoint, max_size=2**24) as ws:
        ws.send(json.dumps({"id": 1, "method": "Browser.grantPermissions", "params": grant}))
        while json.loads(ws.recv(timeout=10)).get("id") != 1:
            pass
        yield


def clipboard(panel: Person) -> str:
    reply = panel.send(
        "Runtime.evaluate",
        {"expression": "navigator.clipboard.readText()", "awaitPromise": True, "returnByValue": True},
    )
    return str(reply["result"].get("value"))


def test_a_table_renders_as_a_table_copy_buttons_copy_and_tool_rows_read_decoded(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    url = pages.url("panel-signin.html") + "?table"
    tab = open_tab(browser_ui, url)
    # The page names itself with characters a clipped JSON result would carry escaped.
    with person_at(tp, url) as page:
        page.eval("document.title = 'Café · menu'")
    with clipboard_readable(tp), popped_out(tp, tab) as panel:
        say(panel, "Prices please [[script:table]]")
        wait_until(
            lambda: panel.eval("!!document.querySelector('.bubble.agent pre')") and not running(panel),
            timeout=60,
        )
        cells = panel.eval(
            "[...document.querySelectorAll('.bubble.agent table tr')].map(r => [...r.children].map(c => c.tagName + ':' + c.textContent))"
        )
        assert cells == [["TH:Item", "TH:Price"], ["TD:Tea", "TD:2"], ["TD:Cake slice", "TD:3"]], cells
        assert (
            panel.eval("getComputedStyle(document.querySelector('.bubble.agent td:last-child')).textAlign")
            == "right"
        )
        # The buttons' words add nothing to the message's text.
        assert "Copy" not in agent_text(panel)
        rows = tool_rows(panel)
        assert rows[0]["outcome"].startswith('read "Café · menu"'), rows
        assert not any("\\u" in r["outcome"] or "\\u" in r["target"] for r in rows), rows
        click_on(panel, ".bubble.agent .copy-code")
        wait_until(lambda: clipboard(panel) == "echo 'tea · cake'")
        assert panel.eval("document.querySelector('.copy-code').dataset.state") == "copied"
        click_on(panel, ".bubble.agent .copy-message")
        wait_until(lambda: clipboard(panel).startswith("Prices:\n\n| Item | Price |"))
        assert clipboard(panel).endswith("```sh\necho 'tea · cake'\n```\n")
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_attached_page_selection_and_screenshot_reach_the_model_fenced_as_untrusted_data(
    tp: Tabpilot, browser_ui: Person, pages: PageServer, model: FakeAnthropic
) -> None:
    url = pages.url("panel-signin.html") + "?attach"
    tab = open_tab(browser_ui, url)
    with person_at(tp, url) as page:
        page.eval("getSelection().selectAllChildren(document.querySelector('#words'))")
    with popped_out(tp, tab) as panel:
        for kind in ("page", "selection", "screenshot"):
            click_on(panel, f"[data-attach='{kind}']")
        assert (
            panel.eval(
                "[...document.querySelectorAll('[data-attach]')].map(b => b.getAttribute('aria-pressed'))"
            )
            == ["true"] * 3
        )
        asked = len(model.main_requests())
        say(panel, "What is on this page? [[script:quick]]")
        wait_until(lambda: agent_text(panel) == "Quick answer." and not running(panel), timeout=60)
        assert user_bubbles(panel) == ["What is on this page? [[script:quick]]"]
        chips = panel.eval("[...document.querySelectorAll('.bubble.user .chip')].map(e => e.textContent)")
        assert chips == ["Page: Panel shop", "Selection"], chips
        assert panel.eval(
            "[...document.querySelectorAll('[data-attach]')].every(b => b.getAttribute('aria-pressed') === 'false')"
        )
    sent = next(
        m["content"]
        for r in model.main_requests()[asked:]
        for m in r["messages"]
        if m["role"] == "user" and "What is on this page?" in json.dumps(m["content"])
    )
    assert isinstance(sent, list), sent
    message = next(
        b["text"] for b in sent if b.get("type") == "text" and "What is on this page?" in b["text"]
    )
    assert "untrusted data from a web page" in message
    page_block = message[message.index("<<<untrusted page ") :]
    marker = page_block.split(" ", 3)[2]
    assert 'button "Sign in"' in page_block.split(f"<<<end {marker}>>>")[0]
    assert "<<<untrusted selection " in message and "Some words the person can select." in message
    images = [b for b in sent if b.get("type") == "image"]
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"
    assert __import__("base64").b64decode(images[0]["source"]["data"]).startswith(b"\x89PNG")
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_markup_in_the_agents_reply_stays_text_and_a_script_link_is_no_link(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html") + "?hostile")
    with popped_out(tp, tab) as panel:
        say(panel, "Repeat the page [[script:hostile]]")
        wait_until(lambda: agent_text(panel).endswith("bold") and not running(panel), timeout=60)
        bubble = "document.querySelector('.bubble.agent')"
        assert panel.eval(f"{bubble}.textContent").startswith('<img src=x onerror="window.__pwned = 1">')
        assert panel.eval(f"{bubble}.querySelectorAll('img, script, [onerror]').length") == 0
        assert panel.eval(f"{bubble}.querySelectorAll('a').length") == 0
        assert panel.eval(f"{bubble}.querySelector('strong').textContent") == "bold"
        assert panel.eval("window.__pwned === undefined")
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_closing_and_reopening_the_panel_mid_stream_loses_and_doubles_nothing(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html"))
    full = words("".join(LONG))
    with popped_out(tp, tab) as panel:
        say(panel, "Write a lot [[script:long]]")
        wait_until(lambda: agent_text(panel) != "", timeout=30)
    cid = conversation_of(tp, tab)["conversation_id"]
    shown: list[int] = []
    for _ in range(20):
        # Closed (above, or at the end of the last cycle) while the agent writes on; then reopened.
        sent = words("".join(e["delta"] for e in events_of(tp, cid) if e["kind"] == "text"))
        with popped_out(tp, tab) as panel:
            text = wait_until(lambda: agent_text(panel), timeout=20)
            now = words(text)
            assert now == full[: len(now)], "what shows is exactly what the agent sent, nothing doubled"
            assert len(now) >= len(sent), "everything sent before the reopening shows at once"
            count = len(now)
            shown.append(count)
            if count < len(full):
                # The live reply continues in the reopened panel.
                wait_until(lambda n=count: len(words(agent_text(panel))) > n, timeout=10, interval=0.02)
            later = words(agent_text(panel))
            assert later == full[: len(later)] and len(later) >= len(now)
    with popped_out(tp, tab) as panel:
        wait_until(lambda: not running(panel) and len(words(agent_text(panel))) == len(full), timeout=60)
        assert words(agent_text(panel)) == full
    assert shown == sorted(shown) and shown[0] < len(full), shown
    assert sum(1 for n in shown if n < len(full)) >= 10, f"most reopenings were mid-stream: {shown}"
    assert turn_ended(tp, cid)[0]["reason"] == "done"
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_two_conversations_in_two_tabs_stream_at_once_and_switching_tabs_stops_neither(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    a = open_tab(browser_ui, pages.url("panel-signin.html"))
    b = open_tab(browser_ui, pages.url("panel-signin.html") + "?b")
    full = words("".join(SLOW))
    with popped_out(tp, a) as panel_a, popped_out(tp, b) as panel_b:
        say(panel_a, "First tab [[script:slow]]")
        wait_until(lambda: agent_text(panel_a) != "", timeout=30)
        say(panel_b, "Second tab [[script:slow]]")
        wait_until(lambda: agent_text(panel_b) != "", timeout=30)
        assert running(panel_a), "A still runs while B streams"
        for tab in (a, b, a, b):
            activate(browser_ui, tab)
            time.sleep(0.2)
        for panel in (panel_a, panel_b):
            wait_until(lambda p=panel: not running(p), timeout=60)
            assert words(agent_text(panel)) == full
    ca, cb = conversation_of(tp, a), conversation_of(tp, b)
    assert ca["conversation_id"] != cb["conversation_id"]
    ends = [turn_ended(tp, c["conversation_id"])[0] for c in (ca, cb)]
    assert [e["reason"] for e in ends] == ["done", "done"]
    first_b = next(e for e in events_of(tp, cb["conversation_id"]) if e["kind"] == "text")
    assert first_b["ts"] < ends[0]["ts"], "the two turns overlapped"
    for tab in (a, b):
        chrome(browser_ui, f"chrome.tabs.remove({tab})")


def key(panel: Person, name: str, shift: bool = False) -> None:
    code = {"Enter": 13}[name]
    base = {"key": name, "code": name, "windowsVirtualKeyCode": code, "modifiers": 8 if shift else 0}
    panel.send("Input.dispatchKeyEvent", {"type": "keyDown", **base, "text": "\r"})
    panel.send("Input.dispatchKeyEvent", {"type": "keyUp", **base})


def test_the_composer_shift_enter_breaks_the_line_queues_during_a_turn_and_shows_latest(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html") + "?composer")
    with popped_out(tp, tab) as panel:
        panel.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 320, "height": 330, "deviceScaleFactor": 1, "mobile": False},
        )
        wait_until(lambda: panel.eval("!document.querySelector('#input').disabled"), timeout=20)
        click_on(panel, "#input")
        panel.send("Input.insertText", {"text": "line one"})
        key(panel, "Enter", shift=True)
        panel.send("Input.insertText", {"text": "line two [[script:slow]]"})
        key(panel, "Enter")
        wait_until(lambda: user_bubbles(panel) == ["line one\nline two [[script:slow]]"])
        wait_until(lambda: running(panel) and len(words(agent_text(panel))) >= 3, timeout=30)
        # Typed while the agent answers: queued, sent when the turn ends.
        click_on(panel, "#input")
        panel.send("Input.insertText", {"text": "and then [[script:quick]]"})
        key(panel, "Enter")
        wait_until(lambda: panel.eval("document.querySelector('#queued').textContent").startswith("1 queued"))
        assert len(user_bubbles(panel)) == 1
        # The person scrolls up to read: the view stays there and offers Latest.
        wait_until(
            lambda: panel.eval(
                "(t => t.scrollHeight > t.clientHeight + 60)(document.querySelector('#timeline'))"
            ),
            timeout=30,
        )
        panel.eval("document.querySelector('#timeline').scrollTop = 0")
        wait_until(lambda: panel.eval("!document.querySelector('#latest').hidden"))
        click_on(panel, "#latest")
        assert panel.eval(
            "(t => t.scrollHeight - t.scrollTop - t.clientHeight < 48)(document.querySelector('#timeline'))"
        )
        wait_until(lambda: len(user_bubbles(panel)) == 2, timeout=60)
        assert user_bubbles(panel)[1] == "and then [[script:quick]]"
        wait_until(lambda: agent_text(panel).endswith("Quick answer.") and not running(panel), timeout=60)
        assert panel.eval("document.querySelector('#queued').hidden")
    cid = conversation_of(tp, tab)["conversation_id"]
    kinds = [e["kind"] for e in events_of(tp, cid) if e["kind"] in ("user", "turn_end")]
    assert kinds == ["user", "turn_end", "user", "turn_end"], (
        "the queued message waited for the first turn's end"
    )
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_stop_ends_the_turn_within_a_second_and_keeps_the_partial_text(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html"))
    full = words("".join(SLOW))
    with popped_out(tp, tab) as panel:
        say(panel, "Write slowly [[script:slow]]")
        wait_until(lambda: len(words(agent_text(panel))) >= 5, timeout=30)
        began = time.monotonic()
        click_on(panel, "#send")
        wait_until(
            lambda: panel.eval("!!document.querySelector('.notice.stopped')"), timeout=5, interval=0.02
        )
        took = time.monotonic() - began
        assert took <= 1.0, took
        assert panel.eval("document.querySelector('.notice.stopped').textContent") == "Stopped"
        assert not running(panel)
        kept = words(agent_text(panel))
        assert 5 <= len(kept) < len(full) and kept == full[: len(kept)]
        assert panel.eval("document.querySelector('.bubble.agent').classList.contains('interrupted')")
    cid = conversation_of(tp, tab)["conversation_id"]
    end = turn_ended(tp, cid)[0]
    assert end["interrupted"] is True and end["reason"] == "stopped"
    assert words(end["text"]) == kept
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_closing_the_bound_tab_stops_its_run_and_history_resumes_the_same_claude_session(
    tp: Tabpilot, browser_ui: Person, pages: PageServer, argv_log: Path
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html"))
    with popped_out(tp, tab) as panel:
        say(panel, "Remember this [[script:slow]]")
        wait_until(lambda: len(words(agent_text(panel))) >= 3, timeout=30)
        cid = conversation_of(tp, tab)["conversation_id"]
        assert agent_runs(tp.home), "the agent runs"
        chrome(browser_ui, f"chrome.tabs.remove({tab})")
        end = wait_until(lambda: turn_ended(tp, cid), timeout=10)[0]
    assert end["interrupted"] is True and end["reason"] == "tab_closed"
    wait_until(lambda: not agent_runs(tp.home), timeout=10)
    claude_session = json.loads(Path(tp.home, "chats", cid, "meta.json").read_text())["agent_session_id"]
    assert claude_session

    other = open_tab(browser_ui, pages.url("panel-signin.html") + "?again")
    with popped_out(tp, other) as panel:
        click_on(panel, "#history-button")
        row = f"#history-list button[data-conversation='{cid}']"
        wait_until(lambda: panel.eval(f"!!document.querySelector({json.dumps(row)})"))
        assert (
            panel.eval(f"document.querySelector({json.dumps(row)} + ' .title').textContent")
            == "Remember this [[script:slow]]"
        )
        first = panel.eval("document.querySelector('#history-list button').dataset.conversation")
        assert first == cid, "newest first"
        click_on(panel, row)
        wait_until(lambda: user_bubbles(panel) == ["Remember this [[script:slow]]"])
        assert panel.eval("!!document.querySelector('.notice.interrupted')")
        say(panel, "And now? [[script:again]]")
        wait_until(lambda: agent_text(panel).endswith("second turn") and not running(panel), timeout=60)
    assert conversation_of(tp, other)["conversation_id"] == cid
    resumed = argv_log.read_text().splitlines()[-1]
    assert f"--resume={claude_session}" in resumed, resumed
    chrome(browser_ui, f"chrome.tabs.remove({other})")


def test_the_panel_on_a_blocked_site_refuses_to_start_and_to_attach(
    tp: Tabpilot, browser_ui: Person, other_site: PageServer
) -> None:
    block(browser_ui, "localhost")
    tab = open_tab(browser_ui, other_site.url("panel-signin.html"))
    try:
        before = len(conversations(tp))
        with popped_out(tp, tab) as panel:
            wait_until(lambda: panel.eval("document.querySelector('#input').disabled"))
            assert "blocked" in panel.eval("document.querySelector('#composer-note').textContent")
            assert panel.eval("[...document.querySelectorAll('[data-attach]')].every(b => b.disabled)")
            # Even asked directly, as the page's own script could, the worker refuses.
            asked = chrome(
                panel,
                "new Promise((resolve) => { const p = chrome.runtime.connect({name: 'tabpilot-panel'}); const got = {};"
                " p.onMessage.addListener((m) => { if (m.id) got[m.id] = m; if (got[1] && got[2]) resolve(got); });"
                f" p.postMessage({{id: 1, op: 'start', params: {{tab_id: {tab}, agent: 'claude'}}}});"
                f" p.postMessage({{id: 2, op: 'tab', params: {{tab_id: {tab}}}}});"
                " })",
            )
            assert asked["1"]["error"]["reason"] == "site_blocked", asked
            assert asked["2"]["result"]["blocked"]["reason"] == "site_blocked"
        assert len(conversations(tp)) == before
    finally:
        block(browser_ui)
        chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_a_web_page_and_a_content_script_cannot_make_the_worker_start_a_turn(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    url = pages.url("panel-signin.html") + "?hostile"
    tab = open_tab(browser_ui, url)
    before = len(conversations(tp))
    with person_at(tp, url) as page:
        assert page.eval(
            "typeof chrome === 'undefined' || chrome.runtime === undefined || chrome.runtime.connect === undefined"
        )
        # The content script's world (ours, in every page): it can open a port, but not this one.
        page.n += 1
        page.ws.send(json.dumps({"id": page.n, "method": "Runtime.enable"}))
        contexts: list[dict[str, Any]] = []
        while True:
            message = json.loads(page.ws.recv(timeout=10))
            if message.get("method") == "Runtime.executionContextCreated":
                contexts.append(message["params"]["context"])
            if message.get("id") == page.n:
                break
        world = next(
            c
            for c in contexts
            if c.get("auxData", {}).get("type") == "isolated" and c.get("name") == "tabpilot"
        )
        reply = page.send(
            "Runtime.evaluate",
            {
                "contextId": world["id"],
                "awaitPromise": True,
                "returnByValue": True,
                # Also in the shape the worker's second, deleted bridge took (port "panel", daemon methods).
                "expression": (
                    "new Promise((resolve) => { const p = chrome.runtime.connect({name: 'tabpilot-panel'}); const got = [];"
                    " const old = chrome.runtime.connect({name: 'panel'}); old.onMessage.addListener((m) => got.push(m));"
                    f" old.postMessage({{id: 'o1', method: 'chat.start', params: {{tab_id: {tab}, agent: 'claude'}}}});"
                    " p.onMessage.addListener((m) => got.push(m));"
                    " p.onDisconnect.addListener(() => setTimeout(() => resolve({closed: true, got}), 1000));"
                    f" p.postMessage({{id: 1, op: 'start', params: {{tab_id: {tab}, agent: 'claude'}}}});"
                    " p.postMessage({id: 2, op: 'history'}); setTimeout(() => resolve({closed: false, got}), 3000); })"
                ),
            },
        )
        assert reply["result"]["value"] == {"closed": True, "got": []}, reply
    time.sleep(0.5)
    assert len(conversations(tp)) == before
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_the_real_side_panel_opens_on_a_trusted_click_and_follows_the_active_tab(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    a = open_tab(browser_ui, pages.url("panel-signin.html") + "?a")
    b = open_tab(browser_ui, pages.url("panel-signin.html") + "?b")
    for tab, text in ((a, "About A [[script:quick]]"), (b, "About B [[script:quick]]")):
        with popped_out(tp, tab) as panel:
            say(panel, text)
            wait_until(lambda p=panel: agent_text(p) == "Quick answer." and not running(p), timeout=60)
    with extension_page(tp, "popup/popup.html") as popup:
        window_id = chrome(popup, "chrome.windows.getCurrent()")["id"]
        # A popup is in front when the person clicks it: a click on a tab in the background is no
        # person's click (Chromium may hold a hidden page's input).
        activate(browser_ui, chrome(popup, "chrome.tabs.getCurrent()")["id"])
        wait_until(lambda: popup.eval("document.visibilityState") == "visible", timeout=10)
        click_on(popup, "#open-panel")
        try:
            target = wait_until(
                lambda: next((t for t in tp.devtools().targets() if t["url"] == PANEL), None), timeout=10
            )
        except AssertionError:
            raise AssertionError(
                f"no side panel: the popup says {popup.eval('document.body.innerText')!r}"
            ) from None
        assert target["type"] == "page"
        try:
            with person_at(tp, PANEL) as panel:
                # Shown beside the page: visible, and as narrow as a side panel is.
                # Its own document, not the target's initial about:blank, and laid out (a loaded
                # machine showed it visible with no width yet).
                shown = "[location.href, document.readyState, document.visibilityState, innerWidth > 0]"
                wait_until(lambda: panel.eval(shown) == [PANEL, "complete", "visible", True], timeout=10)
                width = panel.eval("innerWidth")
                assert 280 <= width <= 520, width
                assert chrome(panel, "chrome.windows.getCurrent()")["id"] == window_id
                # Its keyboard command is registered with the browser. Headless Chromium binds it to no
                # key (its shortcut reads "") and has no context menu to click: those two openers are
                # node-tested (tests/js/panel/opener.test.js).
                commands = chrome(panel, "chrome.commands.getAll()")
                assert any(c["name"] == "open-side-panel" for c in commands), commands
                activate(browser_ui, a)
                wait_until(lambda: user_bubbles(panel) == ["About A [[script:quick]]"], timeout=10)
                activate(browser_ui, b)
                wait_until(lambda: user_bubbles(panel) == ["About B [[script:quick]]"], timeout=10)
                assert agent_text(panel) == "Quick answer."
                assert_people_words(panel)
        finally:
            # A failure above must not be hidden by the close failing too.
            popup.eval(f"chrome.sidePanel.close({{windowId: {window_id}}}).catch(() => {{}})")
    for tab in (a, b):
        chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_the_popup_lists_panel_conversations_and_stop_all_stops_them_with_the_agent_sessions(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html") + "?popup")
    tp.run("session", "start", "popup-agent", timeout=30)
    try:
        with popped_out(tp, tab) as panel:
            say(panel, "Busy for a while [[script:slow]]")
            wait_until(lambda: agent_text(panel) != "", timeout=30)
            cid = conversation_of(tp, tab)["conversation_id"]
            with extension_page(tp, "popup/popup.html") as popup:
                row = f"#conversations li[data-conversation='{cid}']"
                wait_until(lambda: popup.eval(f"!!document.querySelector({json.dumps(row)})"), timeout=10)
                assert "running" in popup.eval(f"document.querySelector({json.dumps(row)}).textContent")
                assert popup.eval("!!document.querySelector('#sessions li[data-session=\"popup-agent\"]')")
                click_on(popup, "#stop-all")
                end = wait_until(lambda: turn_ended(tp, cid), timeout=10)[0]
                assert end["reason"] == "stopped" and end["interrupted"] is True
                sessions = tp.run("session", "list", "--json").json["sessions"]
                assert next(s for s in sessions if s["session_id"] == "popup-agent")["paused"] is True
            wait_until(lambda: panel.eval("!!document.querySelector('.notice.stopped')"))
    finally:
        tp.run("session", "stop", "popup-agent", check=False)
        chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_after_the_service_worker_restarts_the_panel_reconnects_and_misses_nothing(
    tp: Tabpilot, browser_ui: Person, pages: PageServer
) -> None:
    tab = open_tab(browser_ui, pages.url("panel-signin.html") + "?restart")
    full = words("".join(LONG))
    with popped_out(tp, tab) as panel:
        say(panel, "Keep writing [[script:long]]")
        wait_until(lambda: len(words(agent_text(panel))) >= 20, timeout=30)
        # The browser stops the extension's worker, as it does when it sleeps; the panel page stays.
        panel.send("ServiceWorker.enable")
        versions: list[dict[str, Any]] = []
        while not any(v.get("runningStatus") == "running" for v in versions):
            message = json.loads(panel.ws.recv(timeout=10))
            if message.get("method") == "ServiceWorker.workerVersionUpdated":
                versions = [v for v in message["params"]["versions"] if v["scriptURL"].startswith(EXTENSION)]
        running_version = next(v for v in versions if v.get("runningStatus") == "running")
        before = len(words(agent_text(panel)))
        panel.send("ServiceWorker.stopWorker", {"versionId": running_version["versionId"]})
        stopped = False
        while not stopped:
            message = json.loads(panel.ws.recv(timeout=10))
            if message.get("method") == "ServiceWorker.workerVersionUpdated":
                stopped = any(
                    v["versionId"] == running_version["versionId"] and v.get("runningStatus") == "stopped"
                    for v in message["params"]["versions"]
                )
        panel.send("ServiceWorker.disable")
        try:
            wait_until(lambda: not running(panel) and len(words(agent_text(panel))) == len(full), timeout=90)
        except AssertionError:
            shows = panel.eval("document.body.innerText")[-600:]
            end = turn_ended(tp, conversation_of(tp, tab)["conversation_id"])
            raise AssertionError(
                f"running={running(panel)}, {len(words(agent_text(panel)))} of {len(full)} words; "
                f"the panel shows {shows!r}; the turn's end: {end}"
            ) from None
        assert words(agent_text(panel)) == full
        assert before < len(full), "the worker stopped mid-stream"
    cid = conversation_of(tp, tab)["conversation_id"]
    assert turn_ended(tp, cid)[0]["reason"] == "done"
    chrome(browser_ui, f"chrome.tabs.remove({tab})")
