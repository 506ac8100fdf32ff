"""The side panel's engine end to end: the real Claude Code CLI (against a fake Messages API on
loopback) run by the real daemon, acting through `tabpilot mcp` on the person's own tab in real
Chromium, driven the way the panel page will drive it (the extension's `panel` port)."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import PageServer, Tabpilot, kill_and_wait, pid_alive, wait_until
from test_consent import block, chrome, extension_page, page_target_loaded
from test_person import Person, person_at

# The fake model and the pinned CLI live with the other agent-run tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from fake_anthropic import FakeAnthropic, Say, Use

REAL_CLAUDE = Path(__file__).resolve().parents[2] / ".venv" / "node" / "node_modules" / ".bin" / "claude"
pytestmark = pytest.mark.skipif(
    not REAL_CLAUDE.exists(), reason="the Claude Code CLI is not installed (run scripts/bootstrap)"
)

PORT_JS = """
window.__events = []; window.__replies = {}; window.__n = 0;
window.__panel = chrome.runtime.connect({name: "panel"});
__panel.onMessage.addListener((m) => m.event ? __events.push(m.payload) : (__replies[m.id] = m));
window.ask = (method, params) => new Promise((resolve) => {
  const id = `q${++__n}`;
  const poll = setInterval(() => { if (__replies[id]) { clearInterval(poll); resolve(__replies[id]); } }, 10);
  __panel.postMessage({id, method, params});
});
true
"""


@pytest.fixture(scope="module")
def model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(
        {
            "order": [
                Use("mcp__tabpilot__snapshot", {}),
                Use("mcp__tabpilot__click", {"target": 'text="Place order"'}),
                Say(["Ordered ", "the bread."]),
            ],
            "again": [Say(["Still ", "here."])],
            "slow": [Say([f"w{i} " for i in range(60)], delay_s=0.25)],
            "watch": [Use("mcp__tabpilot__snapshot", {}), Say([f"w{i} " for i in range(60)], delay_s=0.25)],
        }
    ).start()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def tp(model: FakeAnthropic) -> Iterator[Tabpilot]:
    """A managed browser whose daemon hands Claude the fake model and a private HOME."""
    env = Tabpilot(
        extra_env={
            "HOME": tempfile.mkdtemp(prefix="claude-home-"),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-test",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
    )
    try:
        env.run("panel", "agent", "set", "claude", "--bin", str(REAL_CLAUDE))
        env.run("browser", "launch", "--headless", timeout=90)
        yield env
    finally:
        env.cleanup()


@pytest.fixture(scope="module")
def panel(tp: Tabpilot) -> Iterator[Person]:
    """An extension page holding the panel's port, as the side panel will."""
    with extension_page(tp, "options/options.html") as page:
        assert chrome(page, PORT_JS) is True
        yield page


def ask(panel: Person, method: str, params: dict[str, Any]) -> Any:
    reply = chrome(panel, f"ask({json.dumps(method)}, {json.dumps(params)})")
    assert "result" in reply, reply
    return reply["result"]


def events(panel: Person, cid: str) -> list[dict[str, Any]]:
    return [e for e in chrome(panel, "__events") if e["conversation_id"] == cid]


def turn_end(panel: Person, cid: str, after_seq: int, timeout: float = 60) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        return next((e for e in events(panel, cid) if e["kind"] == "turn_end" and e["seq"] > after_seq), None)

    return wait_until(ended, timeout=timeout, interval=0.1)  # type: ignore[no-any-return]


def persons_tab(panel: Person, url: str) -> dict[str, Any]:
    """The person opens the page in a window of their own."""
    win = chrome(panel, f"chrome.windows.create({{url: {json.dumps(url)}, focused: true}})")
    page_target_loaded(panel, url)
    return {"tab_id": win["tabs"][0]["id"], "window_id": win["id"]}


def agent_runs(home: str) -> list[int]:
    """Pids of processes that carry a run token of this home's daemon (the agent and its MCP server)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"TABPILOT_HOME={home}".encode() in environ and any(v.startswith(b"TABPILOT_RUN=") for v in environ):
            found.append(int(entry))
    return found


def test_a_turn_acts_on_the_persons_own_tab_and_the_next_one_resumes(
    tp: Tabpilot, panel: Person, pages: PageServer, model: FakeAnthropic
) -> None:
    url = pages.url("panel-shop.html")
    bound = persons_tab(panel, url)
    windows_before = len(chrome(panel, "chrome.windows.getAll()"))
    started = ask(panel, "chat.start", {**bound, "url": url, "title": "Corner shop", "agent": "claude"})
    cid, session_id = started["conversation_id"], started["session_id"]
    ask(panel, "chat.attach", {"conversation_id": cid, "since_seq": 0})
    sent = ask(panel, "chat.send", {"conversation_id": cid, "text": "Order the bread [[script:order]]"})
    end = turn_end(panel, cid, sent["seq"])

    got = events(panel, cid)
    assert [e["seq"] for e in got] == list(range(1, len(got) + 1))
    tools = [e for e in got if e["kind"] == "tool"]
    results = [e for e in got if e["kind"] == "tool_result"]
    assert [t["name"] for t in tools] == ["snapshot", "click"]
    assert [r["ok"] for r in results] == [True, True], results
    assert tools[0]["seq"] < results[0]["seq"] < tools[1]["seq"] < results[1]["seq"]
    texts = [e for e in got if e["kind"] == "text"]
    assert results[1]["seq"] < texts[0]["seq"] < end["seq"]
    assert end["text"] == "Ordered the bread." and end["interrupted"] is False
    # The click landed, trusted, on the person's own tab: no Agent Window, nothing borrowed.
    with person_at(tp, url) as person:
        assert person.eval("document.querySelector('#status').textContent") == "ordered"
    assert len(chrome(panel, "chrome.windows.getAll()")) == windows_before
    assert chrome(panel, f"chrome.tabs.get({bound['tab_id']})")["windowId"] == bound["window_id"]
    clicked = json.loads(results[1]["summary"])
    assert clicked["tab_id"] == bound["tab_id"] and "Place order" in clicked["target"]["name"]
    # Claude handed what tabpilot's snapshot saw back to its model.
    assert "Place order" in json.dumps(model.main_requests()[1]["messages"][-1])

    # Outside a live turn the panel session refuses every command.
    refused = tp.run("--session", session_id, "--json", "snapshot", check=False)
    assert refused.code == 1 and json.loads(refused.out)["error"]["reason"] == "session_inactive"

    sent = ask(panel, "chat.send", {"conversation_id": cid, "text": "Still there? [[script:again]]"})
    end = turn_end(panel, cid, sent["seq"])
    assert end["text"] == "Still here."
    sessions = [e["agent_session_id"] for e in events(panel, cid) if e["kind"] == "session"]
    assert len(sessions) == 2 and sessions[0] == sessions[1]
    resumed = json.dumps(model.main_requests()[-1]["messages"])
    assert "Order the bread" in resumed and "Ordered the bread." in resumed


def test_a_daemon_restart_mid_turn_closes_the_turn_as_interrupted(
    tp: Tabpilot, panel: Person, pages: PageServer
) -> None:
    url = pages.url("panel-shop.html") + "?restart"
    bound = persons_tab(panel, url)
    cid = ask(panel, "chat.start", {**bound, "url": url, "agent": "claude"})["conversation_id"]
    ask(panel, "chat.attach", {"conversation_id": cid, "since_seq": 0})
    sent = ask(panel, "chat.send", {"conversation_id": cid, "text": "Write a lot [[script:slow]]"})
    wait_until(lambda: sum(e["kind"] == "text" for e in events(panel, cid)) >= 2, timeout=60)
    runs = agent_runs(tp.home)
    assert runs, "the agent is not running"
    pgid = os.getpgid(runs[0])
    daemon = tp.daemon_pid
    assert daemon is not None
    os.kill(daemon, signal.SIGKILL)
    wait_until(lambda: not pid_alive(daemon), timeout=10)
    tp.run("session", "list")  # any command starts a new daemon on the same home

    def closed() -> dict[str, Any] | None:
        reply = chrome(panel, f"ask('chat.get', {json.dumps({'conversation_id': cid})})")
        items = reply.get("result", {}).get("items", [])
        return items[-1] if items and items[-1]["kind"] == "turn_end" else None

    end = wait_until(closed, timeout=30, interval=0.3)
    assert end["interrupted"] is True and end["reason"] == "daemon_restarted"
    assert end["text"].startswith("w0 w1 ") and end["seq"] > sent["seq"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)
    for pid in agent_runs(tp.home):
        kill_and_wait(pid)


def test_stop_in_the_page_ends_the_panel_turn_and_keeps_its_text(
    tp: Tabpilot, panel: Person, pages: PageServer
) -> None:
    url = pages.url("panel-shop.html") + "?stop"
    bound = persons_tab(panel, url)
    cid = ask(panel, "chat.start", {**bound, "url": url, "agent": "claude"})["conversation_id"]
    ask(panel, "chat.attach", {"conversation_id": cid, "since_seq": 0})
    sent = ask(panel, "chat.send", {"conversation_id": cid, "text": "Watch [[script:watch]]"})
    wait_until(lambda: sum(e["kind"] == "text" for e in events(panel, cid)) >= 2, timeout=60)
    with person_at(tp, url) as person:
        x, y = person.wait_for(action="stop")  # the badge shows on the person's tab while the agent works
        person.click(x, y)
    end = turn_end(panel, cid, sent["seq"], timeout=15)
    assert end["interrupted"] is True and end["reason"] == "stopped"
    assert end["text"].startswith("w0 w1 ")
    wait_until(lambda: not agent_runs(tp.home), timeout=10)


def test_a_panel_session_cannot_act_on_a_blocked_site(
    tp: Tabpilot, panel: Person, other_site: PageServer, model: FakeAnthropic
) -> None:
    block(panel, "localhost")
    try:
        url = other_site.url("panel-shop.html")
        bound = persons_tab(panel, url)
        cid = ask(panel, "chat.start", {**bound, "url": url, "agent": "claude"})["conversation_id"]
        ask(panel, "chat.attach", {"conversation_id": cid, "since_seq": 0})
        sent = ask(panel, "chat.send", {"conversation_id": cid, "text": "Order it [[script:order]]"})
        end = turn_end(panel, cid, sent["seq"])
        errors = [e for e in events(panel, cid) if e["kind"] == "error"]
        assert errors and errors[0]["code"] == "blocked_site", errors
        assert end["reason"] == "done"
        # The agent was told no, twice, and the page never saw a click.
        told = json.dumps(model.main_requests()[-1]["messages"])
        assert told.count("blocked") >= 2
        with person_at(tp, url) as person:
            assert person.eval("document.querySelector('#status').textContent") == "nothing ordered"
    finally:
        block(panel)
