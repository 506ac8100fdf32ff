"""The real Claude Code CLI (npm, pinned; installed by scripts/bootstrap) run by the daemon's chat
methods against a fake Messages API on loopback, with the real `tabpilot mcp` as its only tools."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, Say, Use

from rig import REAL_CLAUDE, ChatRig, chat_rig
from tabpilot.agents import config as panel_config
from tabpilot.agents.runner import group_alive

pytestmark = pytest.mark.skipif(
    not REAL_CLAUDE.exists(), reason="the Claude Code CLI is not installed (run scripts/bootstrap)"
)

SNAPSHOT = {
    "text": '- button "Place order" [@e1]',
    "url": "http://shop.test/",
    "title": "Shop",
    "tokens": 6,
    "refs": 1,
}


def claude_env(monkeypatch: pytest.MonkeyPatch, fake: FakeAnthropic) -> None:
    """What the daemon passes on to Claude: the fake model, a private HOME, no traffic elsewhere."""
    for name, value in fake.claude_env(tempfile.mkdtemp(prefix="claude-home-")).items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def fake_model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(
        {
            "tool": [Use("mcp__tabpilot__snapshot", {}), Say(["Hel", "lo, ", "done"])],
            "again": [Say(["second ", "turn"])],
            "slow": [Say([f"w{i} " for i in range(40)], delay_s=0.25)],
        }
    ).start()
    yield fake
    fake.close()


async def answer_snapshot(params: dict[str, Any]) -> Any:
    return SNAPSHOT


async def send(rig: ChatRig, cid: str, text: str) -> dict[str, Any]:
    return await rig.ok("chat.send", {"conversation_id": cid, "text": text}, timeout=30)


async def test_a_turn_streams_text_and_a_real_tabpilot_call_then_the_next_turn_resumes(
    monkeypatch: pytest.MonkeyPatch, fake_model: FakeAnthropic
) -> None:
    claude_env(monkeypatch, fake_model)
    async with chat_rig(str(REAL_CLAUDE)) as rig:
        rig.peer.handlers["tool.snapshot"] = answer_snapshot
        cid = await rig.new_chat()
        sent = await send(rig, cid, "Look at this page [[script:tool]]")
        end = await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        events = [e for e in rig.events(cid) if e["turn_id"] == end["turn_id"]]
        kinds = [e["kind"] for e in events]
        assert kinds[:3] == ["user", "turn_start", "session"], kinds
        assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
        assert len({e["seq"] for e in events}) == len(events)
        tool = next(e for e in events if e["kind"] == "tool")
        result = next(e for e in events if e["kind"] == "tool_result")
        texts = [e for e in events if e["kind"] == "text"]
        assert tool["name"] == "snapshot" and tool["source"] == "tabpilot"
        assert result["call_id"] == tool["call_id"] and result["ok"] is True
        assert tool["seq"] < result["seq"] < texts[0]["seq"] < end["seq"]
        assert "".join(t["delta"] for t in texts) == "Hello, done"
        assert end["interrupted"] is False and end["reason"] == "done" and end["text"] == "Hello, done"
        # The call went to the panel session, and Claude handed the page back to its model.
        session_id = rig.meta(cid)["session_id"]
        calls = [f for f in rig.peer.received if f.get("method") == "tool.snapshot"]
        assert [c["params"]["session_id"] for c in calls] == [session_id]
        offered = [t["name"] for t in fake_model.main_requests()[0]["tools"]]
        # Browser-only: tabpilot's page tools and nothing else; no way to open a session of its own.
        assert offered and all(name.startswith("mcp__tabpilot__") for name in offered), offered
        assert "mcp__tabpilot__click" in offered and "mcp__tabpilot__session_start" not in offered
        after_tool = fake_model.main_requests()[1]["messages"]
        assert "Place order" in str(after_tool[-1]["content"])

        first_session = rig.meta(cid)["agent_session_id"]
        sent = await send(rig, cid, "And now? [[script:again]]")
        end = await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        assert end["text"] == "second turn" and end["reason"] == "done"
        sessions = [e["agent_session_id"] for e in rig.events(cid) if e["kind"] == "session"]
        assert sessions == [first_session, first_session]
        # Resumed: the model sees the first turn's messages before the new one.
        resumed = str(fake_model.main_requests()[-1]["messages"])
        assert "Look at this page" in resumed and "Hello, done" in resumed


async def test_stop_interrupts_claude_ends_its_group_and_keeps_the_partial_text(
    monkeypatch: pytest.MonkeyPatch, fake_model: FakeAnthropic
) -> None:
    claude_env(monkeypatch, fake_model)
    async with chat_rig(str(REAL_CLAUDE)) as rig:
        cid = await rig.new_chat()
        sent = await send(rig, cid, "Write a lot [[script:slow]]")
        first = await rig.event(cid, "text", sent["seq"], timeout=60)
        await rig.event(cid, "text", first["seq"], timeout=10)
        turn = rig.daemon.daemon.chats.turns[cid]
        assert turn.process is not None and turn.process.pgid is not None
        pgid = turn.process.pgid
        began = time.monotonic()
        stopped = await rig.ok("chat.stop", {"conversation_id": cid}, timeout=30)
        took = time.monotonic() - began
        assert stopped["stopped"] is True
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert end["interrupted"] is True and end["reason"] == "stopped"
        full = "".join(f"w{i} " for i in range(40))
        assert end["text"] and full.startswith(end["text"]) and end["text"] != full
        assert took < 5.0, took
        await asyncio.sleep(0)
        assert not group_alive(pgid)


# Credentials a deny-list by name shape let through (issue 22): each value is looked for in what the
# model received.
UNLISTED = {
    "DB_URL": "postgres://app:pw-db-1@db.test/shop",
    "MONGODB_URI": "mongodb://app:pw-mongo-2@mongo.test/shop",
    "HTTPS_PROXY": "http://me:pw-proxy-3@proxy.test:3128",
    "JWT": "eyJhbGciOiJIUzI1NiJ9.pw-jwt-4",
    "BEARER": "pw-bearer-5",
    "DEPLOY_HOOK_URL": "https://hooks.test/services/pw-hook-6",
    "GITHUB_TOKEN": "pw-github-7",
}


async def test_the_agents_environment_is_an_allow_list_seen_through_its_own_shell(
    monkeypatch: pytest.MonkeyPatch, fake_model: FakeAnthropic
) -> None:
    claude_env(monkeypatch, fake_model)
    for name, value in UNLISTED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the test's own loopback links skip the proxy
    monkeypatch.setenv("PERSONS_CHOICE", "chosen-for-claude-8")
    fake_model.scripts["env"] = [Use("Bash", {"command": "env", "description": "list env"}), Say(["Seen."])]
    async with chat_rig(str(REAL_CLAUDE)) as rig:
        config = panel_config.load(rig.daemon.home)
        workspace = config.add_workspace(tempfile.mkdtemp(prefix="claude-ws-"), "ws")
        config.agents["claude"].env = ("PERSONS_CHOICE",)
        panel_config.save(rig.daemon.home, config)
        cid = await rig.new_chat(workspace=workspace.id)
        sent = await send(rig, cid, "What is set? [[script:env]]")
        asked = await rig.event(cid, "permission", sent["seq"], timeout=60)
        process = rig.daemon.daemon.chats.turns[cid].process
        assert process is not None and process.pgid is not None
        environ = Path(f"/proc/{process.pgid}/environ").read_bytes().decode().split("\0")
        answer = {"conversation_id": cid, "permission_id": asked["permission_id"], "decision": "allow"}
        await rig.ok("chat.answer", answer)
        end = await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        assert end["reason"] == "done", end
        names = {entry.split("=", 1)[0] for entry in environ if entry}
        assert not names & set(UNLISTED), names & set(UNLISTED)
        assert {"PATH", "HOME", "ANTHROPIC_BASE_URL", "PERSONS_CHOICE", "TABPILOT_RUN"} <= names
        # The shell's `env` went back to the model: the person's choice is there, nothing unlisted is.
        received = json.dumps(fake_model.requests)
        assert "chosen-for-claude-8" in received
        leaked = [name for name, value in UNLISTED.items() if value in received]
        assert not leaked, leaked
