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
from collections.abc import Iterator
from pathlib import Path

from bench.rig import Rig
from bench.stats import Record, measured, missing
from tabpilot.agents.runner import group_alive

# The agent-run test helpers import each other by bare name, as pytest puts their folders on the path.
TESTS = Path(__file__).resolve().parents[1] / "tests"
for folder in (TESTS / "unit", TESTS / "agents"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
from fake_anthropic import FakeAnthropic, Say  # noqa: E402

from rig import REAL_CLAUDE, ChatRig, chat_rig  # noqa: E402

SUITE = "panel"


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


async def _spawn_overhead(samples: int) -> list[Record]:
    sends: list[float] = []
    bare: list[float] = []
    async with chat_rig() as c:
        cid = await c.new_chat()
        for i in range(samples + 1):
            began = time.perf_counter()
            proc = await asyncio.create_subprocess_exec("/bin/true")
            spawned = time.perf_counter()
            await proc.wait()
            began_send = time.perf_counter()
            sent = await c.ok("chat.send", {"conversation_id": cid, "text": "STUB: say ok"})
            turn = c.daemon.daemon.chats.turns.get(cid)
            await c.event(cid, "turn_end", sent["seq"], timeout=60)
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


async def _stop(c: ChatRig, text: str, samples: int, wait_kind: str) -> tuple[list[float], list[str]]:
    times: list[float] = []
    steps: list[str] = []
    for _ in range(samples):
        cid = await c.new_chat()
        sent = await c.ok("chat.send", {"conversation_id": cid, "text": text})
        first = await c.event(cid, wait_kind, sent["seq"], timeout=60)
        await c.event(cid, wait_kind, first["seq"], timeout=60)
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
    async with chat_rig() as c:
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
        env = fake.claude_env(tempfile.mkdtemp(prefix="bench-claude-"))
        with environment(env):
            async with chat_rig(str(REAL_CLAUDE)) as c:
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
