"""A daemon with a fake extension peer and an agent CLI configured in panel.json, for chat tests."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakes import FakeExtension, RunningDaemon, running_daemon

from tabpilot.agents import config as panel_config

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAKE_CLAUDE = HERE / "fake_claude.py"
REAL_CLAUDE = REPO / ".venv" / "node" / "node_modules" / ".bin" / "claude"
REAL_CODEX = REPO / ".venv" / "node" / "node_modules" / ".bin" / "codex"


def stand_in(folder: str) -> str:
    """An executable `claude` that runs the stand-in (exec keeps its pid: it leads its group)."""
    path = os.path.join(folder, "claude")
    with open(path, "w") as handle:
        handle.write(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    os.chmod(path, stat.S_IRWXU)
    return path


@dataclass
class ChatRig:
    daemon: RunningDaemon
    peer: FakeExtension

    async def ok(self, method: str, params: dict[str, Any] | None = None, timeout: float = 20.0) -> Any:
        reply = await self.peer.request(method, params or {}, timeout)
        assert "result" in reply, reply
        return reply["result"]

    async def fails(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = await self.peer.request(method, params or {})
        assert "error" in reply, reply
        return reply["error"]

    async def new_chat(self, agent: str = "claude", tab_id: int = 7, **extra: Any) -> str:
        started = await self.ok(
            "chat.start", {"tab_id": tab_id, "window_id": 1, "url": "http://x.test/", "agent": agent, **extra}
        )
        await self.ok("chat.attach", {"conversation_id": started["conversation_id"], "since_seq": 0})
        return str(started["conversation_id"])

    def events(self, cid: str) -> list[dict[str, Any]]:
        return [e for e in self.peer.events("chat.event") if e["conversation_id"] == cid]

    async def event(self, cid: str, kind: str, after_seq: int = 0, timeout: float = 20.0) -> dict[str, Any]:
        frame = await self.peer.wait_frame(
            lambda f: (
                f.get("event") == "chat.event"
                and f["payload"]["conversation_id"] == cid
                and f["payload"]["kind"] == kind
                and f["payload"]["seq"] > after_seq
            ),
            timeout,
        )
        return dict(frame["payload"])

    def meta(self, cid: str) -> dict[str, Any]:
        return json.loads(Path(self.daemon.home, "chats", cid, "meta.json").read_text())

    def records(self, cid: str) -> list[dict[str, Any]]:
        """What each stand-in run recorded about itself, oldest first."""
        work = Path(self.daemon.home, "chats", cid, "work")
        found = [json.loads(p.read_text()) for p in work.glob("record-*.json")]
        return sorted(found, key=lambda r: r["started"])


def configure(home: str, agent: str, binary: str) -> None:
    config = panel_config.load(home)
    config.agents[agent] = panel_config.AgentSetting(bin=binary)
    panel_config.save(home, config)


@contextlib.asynccontextmanager
async def chat_rig(binary: str | None = None, **daemon_config: Any) -> AsyncIterator[ChatRig]:
    async with running_daemon(**daemon_config) as daemon:
        configure(daemon.home, "claude", binary or stand_in(daemon.home))
        peer = await daemon.paired_peer()
        try:
            yield ChatRig(daemon, peer)
        finally:
            await daemon.daemon.shutdown()
            await peer.close()
