"""Requests in flight to one extension peer: ids, replies, budgets and cancellation."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tabpilot import protocol
from tabpilot.protocol import RpcError

# Time the daemon grants a call beyond its own timeout_ms before it gives up on the extension.
BUDGET_MARGIN_S = 5.0
# The longest one progress frame may extend a call by (a person deciding on an approval card).
MAX_PROGRESS_WAIT_S = 15 * 60.0

Send = Callable[[dict[str, Any]], Awaitable[None]]
# An event that, once set, stops a call with the error its function builds from the method name.
Stopper = tuple[asyncio.Event, Callable[[str], RpcError]]
# Told of each progress frame the extension sends for a call (its payload).
ProgressListener = Callable[[dict[str, Any]], None]


def client_gone(method: str) -> RpcError:
    return RpcError("cancelled", f"{method} cancelled: the client went away", "client_disconnected")


class PeerChannel:
    """Sends requests to one extension and matches its responses; ids are ``d-<n>``, never reused."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[Any]] = {}
        # rpc id → (the call's deadline on the loop's clock, who hears its progress)
        self._deadlines: dict[str, tuple[float, ProgressListener | None]] = {}
        self._closed: RpcError | None = None
        self._outbox: collections.deque[dict[str, Any]] = collections.deque()
        self._pump: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        timeout_s: float,
        stop_on: Sequence[Stopper] = (),
        on_progress: ProgressListener | None = None,
    ) -> Any:
        """Send one request and wait for its result.

        ``timeout_s`` is the call's own timeout; the daemon waits that plus a margin. A progress
        frame from the extension (the person is being asked) moves that deadline to what the frame
        says, at most ``MAX_PROGRESS_WAIT_S`` ahead, and is handed to ``on_progress``. When the budget
        runs out, or one of the ``stop_on`` events is set (the CLI went away, the person pressed
        Stop), the extension is told to ``cancel`` the call and that stopper's error is raised.
        """
        if self._closed is not None:
            raise self._closed
        loop = asyncio.get_running_loop()
        rpc_id = f"d-{next(self._ids)}"
        future: asyncio.Future[Any] = loop.create_future()
        self._pending[rpc_id] = future
        started = loop.time()
        self._deadlines[rpc_id] = (started + timeout_s + BUDGET_MARGIN_S, on_progress)
        stoppers = {asyncio.ensure_future(event.wait()): error for event, error in stop_on}
        try:
            await self._send(protocol.request(rpc_id, method, params))
            while True:
                remaining = self._deadlines[rpc_id][0] - loop.time()
                done, _ = await asyncio.wait(
                    {future, *stoppers}, timeout=max(0.0, remaining), return_when=asyncio.FIRST_COMPLETED
                )
                if future in done:
                    return future.result()
                if done or self._deadlines[rpc_id][0] <= loop.time():
                    break
            await self._cancel_remote(rpc_id)
            for waiter, error in stoppers.items():
                if waiter in done:
                    raise error(method)
            raise RpcError(
                "timeout",
                # Progress frames may have moved the deadline: say how long it really waited.
                f"{method} got no answer from the browser within {loop.time() - started:.0f} s",
                "rpc_timeout",
            )
        finally:
            for waiter in stoppers:
                waiter.cancel()
            self._pending.pop(rpc_id, None)
            self._deadlines.pop(rpc_id, None)

    async def _cancel_remote(self, rpc_id: str) -> None:
        if self._closed is not None:
            return
        cancel_id = f"d-{next(self._ids)}"
        try:
            await self._send(protocol.request(cancel_id, "cancel", {"rpc_id": rpc_id}))
        except Exception:
            return

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a request whose answer nobody waits for (heartbeat)."""
        if self._closed is None:
            await self._send(protocol.request(f"d-{next(self._ids)}", method, params))

    def post(self, frame: dict[str, Any]) -> None:
        """Queue a frame to go out in order: a panel's replies and its chat events share one line,
        so an attach's backlog always arrives before the live events that follow it."""
        if self._closed is not None:
            return
        self._outbox.append(frame)
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        while self._outbox and self._closed is None:
            frame = self._outbox.popleft()
            with contextlib.suppress(Exception):
                await self._send(frame)

    def on_progress(self, frame: dict[str, Any]) -> bool:
        """A call is still running: push its deadline out and tell its listener; False when unknown."""
        entry = self._deadlines.get(frame["id"])
        if entry is None:
            return False
        payload = frame["progress"]
        wait_ms = payload.get("deadline_ms")
        if isinstance(wait_ms, int | float) and not isinstance(wait_ms, bool) and wait_ms > 0:
            wait_s = min(wait_ms / 1000.0, MAX_PROGRESS_WAIT_S)
            deadline = asyncio.get_running_loop().time() + wait_s + BUDGET_MARGIN_S
            self._deadlines[frame["id"]] = (max(entry[0], deadline), entry[1])
        if entry[1] is not None:
            entry[1](payload)
        return True

    def on_response(self, frame: dict[str, Any]) -> bool:
        """Resolve the matching call; False when nobody waits for this id (late or unknown)."""
        future = self._pending.get(frame["id"])
        if future is None or future.done():
            return False
        if "error" in frame:
            future.set_exception(RpcError.from_wire(frame["error"]))
        else:
            future.set_result(frame.get("result"))
        return True

    def close(self, error: RpcError) -> None:
        """Fail every waiting call with ``error``; later calls fail at once."""
        self._closed = error
        self._outbox.clear()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
