"""The real Codex CLI (npm, pinned; installed by scripts/bootstrap) run by the daemon's chat methods
against a fake Responses API, reached through the person's own Codex config (a custom provider)."""

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
from fake_openai import FakeOpenAI, Say, Use

from rig import REAL_CODEX, ChatRig, chat_rig, configure
from tabpilot.agents import config as panel_config

pytestmark = pytest.mark.skipif(
    not REAL_CODEX.exists(), reason="the Codex CLI is not installed (run scripts/bootstrap)"
)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(
        {
            "tool": [Use("mcp__tabpilot__snapshot", {}), Say(["Looked ", "at it."])],
            "again": [Say(["Second."])],
        }
    ).start()
    home = tempfile.mkdtemp(prefix="codex-home-")
    os.makedirs(os.path.join(home, ".codex"))
    # The person's own Codex config names the provider; tabpilot adds only its MCP server.
    Path(home, ".codex", "config.toml").write_text(
        f'model = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{fake.base_url}"\nwire_api = "responses"\n'
    )
    monkeypatch.setenv("HOME", home)
    monkeypatch.setenv("CODEX_HOME", os.path.join(home, ".codex"))
    yield fake
    fake.close()


async def answer_snapshot(params: dict[str, Any]) -> Any:
    return {
        "text": '- button "Place order" [@e1]',
        "url": "http://shop.test/",
        "title": "Shop",
        "tokens": 6,
        "refs": 1,
    }


async def send(rig: ChatRig, cid: str, text: str) -> dict[str, Any]:
    return await rig.ok("chat.send", {"conversation_id": cid, "text": text}, timeout=30)


async def test_a_codex_turn_calls_tabpilot_then_the_next_turn_resumes_its_thread(
    fake_model: FakeOpenAI,
) -> None:
    async with chat_rig() as rig:
        configure(rig.daemon.home, "codex", str(REAL_CODEX))
        rig.peer.handlers["tool.snapshot"] = answer_snapshot
        cid = await rig.new_chat(agent="codex")
        sent = await send(rig, cid, "Look [[script:tool]]")
        end = await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        events = [e for e in rig.events(cid) if e["turn_id"] == end["turn_id"]]
        kinds = [e["kind"] for e in events if not (e["kind"] == "error" and e.get("fatal") is False)]
        assert kinds == ["user", "turn_start", "session", "tool", "tool_result", "text", "turn_end"], kinds
        tool = next(e for e in events if e["kind"] == "tool")
        assert tool["source"] == "tabpilot" and tool["name"] == "snapshot"
        assert end["text"] == "Looked at it." and end["reason"] == "done" and end["interrupted"] is False
        calls = [f for f in rig.peer.received if f.get("method") == "tool.snapshot"]
        assert [c["params"]["session_id"] for c in calls] == [rig.meta(cid)["session_id"]]
        assert "Place order" in str(fake_model.requests[1]["body"]["input"][-1])

        thread = rig.meta(cid)["agent_session_id"]
        sent = await send(rig, cid, "Again [[script:again]]")
        end = await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        assert end["text"] == "Second."
        sessions = [e["agent_session_id"] for e in rig.events(cid) if e["kind"] == "session"]
        assert sessions == [thread, thread]
        assert "Look [[script:tool]]" in str(fake_model.requests[-1]["body"]["input"])


async def test_stop_ends_a_codex_turn_and_its_process_group(fake_model: FakeOpenAI) -> None:
    fake_model.scripts["slow"] = [Use("mcp__tabpilot__snapshot", {})]
    async with chat_rig() as rig:
        configure(rig.daemon.home, "codex", str(REAL_CODEX))

        async def never(params: dict[str, Any]) -> Any:
            await asyncio.sleep(120)

        rig.peer.handlers["tool.snapshot"] = never
        cid = await rig.new_chat(agent="codex")
        sent = await send(rig, cid, "Wait [[script:slow]]")
        await rig.event(cid, "tool", sent["seq"], timeout=60)
        pgid = rig.daemon.daemon.chats.turns[cid].process.pgid  # type: ignore[union-attr]
        began = time.monotonic()
        stopped = await rig.ok("chat.stop", {"conversation_id": cid}, timeout=30)
        assert stopped["stopped"] is True and time.monotonic() - began < 7
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert end["interrupted"] is True and end["reason"] == "stopped"
        result = await rig.event(cid, "tool_result", sent["seq"])
        assert result["ok"] is False and result["code"] == "user_aborted"


# Codex's own tools for reading what MCP servers publish, and its question to the person.
CODEX_INNOCUOUS = {
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
    "request_user_input",
}


def tool_names(request: dict[str, Any]) -> set[str]:
    """Every tool offered to the model; an MCP server's tools sit in a namespace named after it."""
    names = set()
    for tool in request["body"].get("tools") or []:
        if tool.get("type") == "namespace":
            names |= {f"{tool['name']}__{t['name']}" for t in tool.get("tools") or []}
        else:
            names.add(str(tool.get("name") or tool.get("type")))
    return names


async def test_browser_only_codex_is_offered_no_shell_and_cannot_read_the_pairing_secret(
    fake_model: FakeOpenAI,
) -> None:
    async with chat_rig() as rig:
        secret_file = Path(rig.daemon.home, "paired.json")
        fake_model.scripts["steal"] = [
            Use("exec_command", {"cmd": f"cat {secret_file}"}),
            Use("mcp__tabpilot__snapshot", {}),
            Say(["Done."]),
        ]
        configure(rig.daemon.home, "codex", str(REAL_CODEX))
        rig.peer.handlers["tool.snapshot"] = answer_snapshot
        cid = await rig.new_chat(agent="codex")
        sent = await send(rig, cid, "Look [[script:steal]]")
        await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        offered = tool_names(fake_model.requests[0])
        assert "mcp__tabpilot__snapshot" in offered
        assert {n for n in offered if not n.startswith("mcp__tabpilot__")} <= CODEX_INNOCUOUS, offered
        pairing = secret_file.read_text()
        assert len(pairing) > 20 and secret_file.exists()
        assert all(pairing not in json.dumps(r) for r in fake_model.requests)
        assert all('"secret"' not in json.dumps(r["body"].get("input")) for r in fake_model.requests), (
            "the pairing file reached the model"
        )


async def test_workspace_codex_keeps_its_own_shell(fake_model: FakeOpenAI) -> None:
    async with chat_rig() as rig:
        folder = tempfile.mkdtemp(prefix="codex-ws-")
        config = panel_config.load(rig.daemon.home)
        workspace = config.add_workspace(folder, "ws")
        panel_config.save(rig.daemon.home, config)
        configure(rig.daemon.home, "codex", str(REAL_CODEX))
        cid = await rig.new_chat(agent="codex", workspace=workspace.id)
        sent = await send(rig, cid, "Hi [[script:again]]")
        await rig.event(cid, "turn_end", sent["seq"], timeout=60)
        assert "exec_command" in tool_names(fake_model.requests[0])
