"""The side panel's engine: what `chat.send` adds before the agent CLI runs, and how fast Stop clears
its process group.

A daemon in this process with a fake extension peer (the browser is not involved); the agent is the
stdlib stand-in (tests/agents/fake_claude.py) or the real Claude Code CLI against a fake model.
Baseline, interleaved with the sends: a bare `/bin/true` spawn from the same event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.rig import Rig
from bench.stats import Record, measured, missing
from tabpilot.agents.runner import group_alive

# The agent-run test helpers import each other by bare name, as pytest puts their folders on the path.
TESTS = Path(__file__).resolve().parents[1] / "tests"
for folder in (TESTS / "unit", TESTS / "agents"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
from fake_anthropic import FakeAnthropic, Say  # noqa: E402
from fakes import FakeExtension, RunningDaemon, running_daemon  # noqa: E402

from rig import REAL_CLAUDE, configure, stand_in  # noqa: E402

SUITE = "panel"


@dataclass
class Chat:
    daemon: RunningDaemon
    peer: FakeExtension

    async def ok(self, method: str, params: dict[str, Any], timeout: float = 30.0) -> Any:
        reply = await self.peer.request(method, params, timeout)
        assert "result" in reply, reply
        return reply["result"]

    async def new(self) -> str:
        started = await self.ok("chat.start", {"tab_id": 1, "agent": "claude"})
        cid = str(started["conversation_id"])
        await self.ok("chat.attach", {"conversation_id": cid, "since_seq": 0})
        return cid

    async def until(self, cid: str, kind: str, after_seq: int, timeout: float = 60.0) -> dict[str, Any]:
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


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """The daemon passes its own environment on to the agent (sealed): set what the agent needs."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.asynccontextmanager
async def chat(binary: str | None = None) -> AsyncIterator[Chat]:
    async with running_daemon() as daemon:
        configure(daemon.home, "claude", binary or stand_in(daemon.home))
        peer = await daemon.paired_peer()
        try:
            yield Chat(daemon, peer)
        finally:
            await daemon.daemon.shutdown()
            await peer.close()


async def _spawn_overhead(samples: int) -> list[Record]:
    sends: list[float] = []
    bare: list[float] = []
    async with chat() as c:
        cid = await c.new()
        for i in range(samples + 1):
            began = time.perf_counter()
            proc = await asyncio.create_subprocess_exec("/bin/true")
            spawned = time.perf_counter()
            await proc.wait()
            began_send = time.perf_counter()
            sent = await c.ok("chat.send", {"conversation_id": cid, "text": "STUB: say ok"})
            turn = c.daemon.daemon.chats.turns.get(cid)
            await c.until(cid, "turn_end", sent["seq"])
            # The first send pays the agent's --version probe (cached 30 s), as a panel's first send does.
            if i == 0 or turn is None or turn.spawned_at is None:
                continue
            bare.append((spawned - began) * 1000)
            # spawned_at is taken when the spawn returned, i.e. after the agent's execve succeeded.
            sends.append((turn.spawned_at - began_send) * 1000)
    base = measured(SUITE, "bare /bin/true spawn", "wall_time", "ms", bare)
    send = measured(
        SUITE,
        "chat.send → agent process started",
        "wall_time",
        "ms",
        sends,
        ("bare /bin/true spawn", base.median),
        note="stand-in agent; includes the peer's WebSocket hop, planning, vetting and two log writes",
    )
    over = measured(
        SUITE,
        "chat.send overhead over a bare spawn",
        "wall_time",
        "ms",
        [s - b for s, b in zip(sends, bare, strict=True)],
    )
    return [base, send, over]


async def _stop(c: Chat, text: str, samples: int, wait_kind: str) -> tuple[list[float], list[str]]:
    times: list[float] = []
    steps: list[str] = []
    for _ in range(samples):
        cid = await c.new()
        sent = await c.ok("chat.send", {"conversation_id": cid, "text": text})
        first = await c.until(cid, wait_kind, sent["seq"])
        await c.until(cid, wait_kind, first["seq"])
        turn = c.daemon.daemon.chats.turns[cid]
        assert turn.process is not None and turn.process.pgid is not None
        pgid = turn.process.pgid
        began = time.perf_counter()
        stopped = asyncio.ensure_future(c.ok("chat.stop", {"conversation_id": cid}))
        while group_alive(pgid):
            await asyncio.sleep(0.005)
        times.append((time.perf_counter() - began) * 1000)
        steps.append(str((await stopped).get("step")))
    return times, steps


async def _stops(samples: int) -> list[Record]:
    records = []
    async with chat() as c:
        times, steps = await _stop(c, "STUB: say a | say b | hang", samples, "text")
        records.append(
            measured(
                SUITE,
                "Stop → group gone (stand-in, answers interrupt)",
                "wall_time",
                "ms",
                times,
                note=f"steps: {sorted(set(steps))}",
            )
        )
        term = max(2, samples // 3)
        times, steps = await _stop(c, "STUB: say a | say b | ignore-term | hang", term, "text")
        records.append(
            measured(
                SUITE,
                "Stop → group gone (SIGTERM ignored)",
                "wall_time",
                "ms",
                times,
                note=f"steps: {sorted(set(steps))}",
            )
        )
    if not REAL_CLAUDE.exists():
        records.append(
            missing(
                SUITE,
                "Stop → group gone (real Claude Code)",
                "wall_time",
                "ms",
                "Claude Code not installed (scripts/bootstrap)",
            )
        )
        return records
    fake = FakeAnthropic({"slow": [Say([f"w{i} " for i in range(200)], delay_s=0.05)]}).start()
    try:
        env = {
            "HOME": tempfile.mkdtemp(prefix="bench-claude-"),
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-test",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        with environment(env):
            async with chat(str(REAL_CLAUDE)) as c:
                times, steps = await _stop(c, "write [[script:slow]]", max(3, samples // 3), "text")
        records.append(
            measured(
                SUITE,
                "Stop → group gone (real Claude Code, interrupt)",
                "wall_time",
                "ms",
                times,
                note=f"steps: {sorted(set(steps))}",
            )
        )
    finally:
        fake.close()
    return records


def run(rig: Rig, samples: int) -> list[Record]:
    """The browser of the rig is not used: the panel's engine is measured against a fake peer."""

    async def main() -> list[Record]:
        return [*(await _spawn_overhead(samples)), *(await _stops(samples))]

    return asyncio.run(main())
