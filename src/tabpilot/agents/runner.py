"""The one spawn point of agent CLIs: a process in its own group, line-wise output, the Stop ladder."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterator
from typing import Any

from tabpilot.agents.plans import Launch

log = logging.getLogger("tabpilot.agents")

# Claude answers an interrupt within a few hundred ms with its partial message and `result`; the
# partial text is already in the log from the deltas, so Stop does not wait long for it.
INTERRUPT_WAIT_S = 0.5
EXIT_AFTER_EOF_S = 0.3
TERM_GRACE_S = 5.0
STDERR_KEEP = 4000
LINE_LIMIT = 16 * 1024 * 1024


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class AgentProcess:
    """One agent CLI process for one turn. ``pgid`` equals its pid: it leads its own group."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.proc: asyncio.subprocess.Process | None = None
        self.pgid: int | None = None
        self.started_at: float | None = None
        self.stderr_tail = ""
        self.finished = asyncio.Event()  # the CLI reported the end of its turn
        self._stderr_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.launch.argv,
            cwd=self.launch.cwd,
            env=self.launch.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        self.pgid = self.proc.pid
        self.started_at = time.monotonic()
        self._stderr_task = asyncio.ensure_future(self._read_stderr())
        for line in self.launch.stdin_lines:
            await self.write(line)
        if self.launch.close_stdin:
            await self.close_stdin()

    async def write(self, line: str) -> bool:
        """Send one line to the CLI's stdin; False when it no longer reads."""
        assert self.proc is not None and self.proc.stdin is not None
        if self.proc.stdin.is_closing():
            return False
        try:
            self.proc.stdin.write(line.encode() if line.endswith("\n") else (line + "\n").encode())
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def close_stdin(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        if not self.proc.stdin.is_closing():
            self.proc.stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await self.proc.stdin.wait_closed()

    async def lines(self) -> AsyncIterator[Any]:
        """Each JSON object the CLI prints; other lines are logged and skipped."""
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            try:
                raw = await self.proc.stdout.readline()
            except (ValueError, asyncio.LimitOverrunError):
                log.warning("agent %s printed an over-long line; skipped", self.pgid)
                continue
            if not raw:
                return
            text = raw.decode(errors="replace").strip()
            if not text:
                continue
            try:
                yield json.loads(text)
            except ValueError:
                log.info("agent %s: %s", self.pgid, text[:200])

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self.stderr_tail = (self.stderr_tail + chunk.decode(errors="replace"))[-STDERR_KEEP:]

    async def wait(self) -> int:
        assert self.proc is not None
        code = await self.proc.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    async def stop(self, interrupt_line: str | None) -> str:
        """The Stop ladder after questions are denied: interrupt → EOF → SIGTERM to the group →
        SIGKILL after 5 s. Returns the last step it needed."""
        assert self.proc is not None and self.pgid is not None
        step = "interrupt"
        if interrupt_line is not None and self.proc.returncode is None and await self.write(interrupt_line):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.finished.wait(), INTERRUPT_WAIT_S)
        await self.close_stdin()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.proc.wait()), EXIT_AFTER_EOF_S)
        # The leader may be gone while its children (its MCP server, its shell) live on.
        if group_alive(self.pgid):
            step = "sigterm"
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pgid, signal.SIGTERM)
            if not await self._group_gone(TERM_GRACE_S):
                step = "sigkill"
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.pgid, signal.SIGKILL)
                await self._group_gone(TERM_GRACE_S)
        return step

    async def _group_gone(self, within_s: float) -> bool:
        assert self.proc is not None and self.pgid is not None
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if self.proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.proc.wait()), 0.02)
            if self.proc.returncode is not None and not group_alive(self.pgid):
                return True
            await asyncio.sleep(0.02)
        return not group_alive(self.pgid)
