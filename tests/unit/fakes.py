"""A fake extension peer and an in-process daemon, for unit tests of the daemon.

The fake speaks the real handshake (tabpilot.auth) over a real loopback WebSocket; tool methods
are answered by handlers the test supplies. It stands in for the browser only in unit tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from tabpilot import auth, protocol
from tabpilot.daemon.config import DaemonConfig
from tabpilot.daemon.server import DaemonServer
from tabpilot.daemon.service import Daemon

ORIGIN = f"chrome-extension://{protocol.EXTENSION_ID}"
Handler = Callable[[dict[str, Any]], Awaitable[Any]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class FakeExtension:
    port: int
    instance_id: str = field(default_factory=lambda: secrets.token_hex(4))
    secret: str | None = None
    label: str = ""
    session_ids: list[str] = field(default_factory=list)
    launch_token: str | None = None
    protocol_version: str = protocol.PROTOCOL_VERSION
    handlers: dict[str, Handler] = field(default_factory=dict)
    answer_pings: bool = True
    received: list[dict[str, Any]] = field(default_factory=list)
    ws: ClientConnection | None = None
    handshake_result: dict[str, Any] | None = None
    _reader: asyncio.Task[None] | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    _aborts: dict[str, asyncio.Event] = field(default_factory=dict)
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def open(self, origin: str = ORIGIN) -> ClientConnection:
        self.ws = await connect(f"ws://127.0.0.1:{self.port}", origin=origin, compression=None)  # type: ignore[arg-type]
        return self.ws

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return the raw reply frame (before the reader task runs)."""
        assert self.ws is not None
        frame_id = f"x-{secrets.token_hex(4)}"
        await self.ws.send(json.dumps(protocol.request(frame_id, method, params)))
        while True:
            frame = json.loads(await self.ws.recv())
            if frame.get("id") == frame_id:
                return frame

    async def request(self, method: str, params: dict[str, Any], timeout: float = 15.0) -> dict[str, Any]:
        """Send a request once authenticated (the reader runs) and return its reply frame."""
        assert self.ws is not None
        frame_id = f"x-{secrets.token_hex(4)}"
        await self.ws.send(json.dumps(protocol.request(frame_id, method, params)))
        return await self.wait_frame(lambda f: f.get("id") == frame_id and "method" not in f, timeout)

    async def wait_frame(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 15.0
    ) -> dict[str, Any]:
        """The first received frame that matches, waiting for it to arrive."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for frame in self.received:
                if match(frame):
                    return frame
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError("no matching frame arrived in time")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)

    def events(self, name: str) -> list[dict[str, Any]]:
        return [f["payload"] for f in self.received if f.get("event") == name]

    def handshake_params(self, mode: str, nonce: str, code: str | None = None) -> dict[str, Any]:
        block: dict[str, Any] = {"mode": mode, "nonce": nonce}
        if code is not None:
            block["code_proof"] = auth.pairing_code_proof(code, self.instance_id, nonce)
        params: dict[str, Any] = {
            "client": protocol.EXTENSION_CLIENT,
            "version": "0.1.0",
            "protocol_version": self.protocol_version,
            "min_compatible_protocol": protocol.MIN_COMPATIBLE_PROTOCOL,
            "instance_id": self.instance_id,
            "browser": {"name": "chromium", "version": "156.0"},
            "label": self.label,
            "session_ids": self.session_ids,
            "auth": block,
        }
        if self.launch_token:
            params["launch_token"] = self.launch_token
        return params

    async def connect(self, code: str | None = None) -> dict[str, Any]:
        """Open, handshake and authenticate; returns the authenticate reply (or the error frame)."""
        await self.open()
        nonce = auth.new_nonce()
        mode = "pair" if code is not None else "secret"
        reply = await self.rpc(protocol.HANDSHAKE_METHOD, self.handshake_params(mode, nonce, code))
        if "error" in reply:
            return reply
        self.handshake_result = reply["result"]
        daemon_nonce = reply["result"]["auth"]["nonce"]
        secret = auth.pairing_secret(code, self.instance_id, nonce) if code is not None else self.secret
        assert secret is not None
        expected = auth.daemon_proof(secret, self.instance_id, nonce, daemon_nonce)
        if reply["result"]["auth"]["proof"] != expected:
            await self.close()
            return {"error": {"code": "auth_failed", "message": "daemon proof mismatch", "data": {}}}
        proof = auth.extension_proof(secret, self.instance_id, nonce, daemon_nonce)
        done = await self.rpc(protocol.AUTHENTICATE_METHOD, {"proof": proof})
        if "result" in done:
            self.secret = secret
            self._reader = asyncio.ensure_future(self._serve())
        return done

    async def _serve(self) -> None:
        assert self.ws is not None
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                frame = json.loads(raw)
                self.received.append(frame)
                self._arrived.set()
                self._arrived = asyncio.Event()
                if protocol.classify(frame) != "request":
                    continue
                task = asyncio.ensure_future(self._answer(frame))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _answer(self, frame: dict[str, Any]) -> None:
        assert self.ws is not None
        method, params = frame["method"], frame.get("params") or {}
        if method == "system.ping":
            if self.answer_pings:
                await self.ws.send(json.dumps(protocol.response(frame["id"], {})))
            return
        if method == "cancel":
            abort = self._aborts.get(params.get("rpc_id", ""))
            if abort is not None:
                abort.set()
            await self.ws.send(json.dumps(protocol.response(frame["id"], {"cancelled": abort is not None})))
            return
        handler = self.handlers.get(method, self._default)
        abort = asyncio.Event()
        self._aborts[frame["id"]] = abort
        work = asyncio.ensure_future(handler(params))
        stop = asyncio.ensure_future(abort.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._aborts.pop(frame["id"], None)
        if stop.done() and not work.done():
            work.cancel()
            err = protocol.RpcError("cancelled", "rpc aborted by daemon cancel", "rpc_cancelled")
            reply = protocol.error_response(frame["id"], err)
        else:
            stop.cancel()
            try:
                reply = protocol.response(frame["id"], work.result())
            except protocol.RpcError as err:
                reply = protocol.error_response(frame["id"], err)
        with contextlib.suppress(Exception):
            await self.ws.send(json.dumps(reply))

    async def _default(self, params: dict[str, Any]) -> Any:
        return {"window_id": 1, "tab_id": 2, "echo": params}

    def methods(self) -> list[str]:
        return [f["method"] for f in self.received if "method" in f]

    async def send_progress(self, method: str, payload: dict[str, Any]) -> None:
        """An interim frame for the latest request of ``method`` (the person is being asked)."""
        assert self.ws is not None
        rpc_id = next(f["id"] for f in reversed(self.received) if f.get("method") == method)
        await self.ws.send(json.dumps(protocol.progress(rpc_id, payload)))

    async def send_event(self, name: str, payload: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(protocol.event(name, payload)))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()


@dataclass
class RunningDaemon:
    daemon: Daemon
    server: DaemonServer
    home: str
    port: int

    async def call(self, method: str, params: dict[str, Any] | None = None, **context: Any) -> dict[str, Any]:
        """One client request over the real Unix socket; returns the reply frame."""
        reader, writer = await asyncio.open_unix_connection(self.daemon_socket, limit=64 * 2**20)
        frame = {"id": "c1", "method": method, "params": params or {}, **context}
        writer.write((json.dumps(frame) + "\n").encode())
        await writer.drain()
        line = await reader.readline()
        writer.close()
        return json.loads(line)

    async def call_and_hang_up(
        self, method: str, params: dict[str, Any], after_s: float, **context: Any
    ) -> None:
        """Send a request and disconnect before the reply, like a CLI hit by Ctrl-C."""
        _, writer = await asyncio.open_unix_connection(self.daemon_socket)
        frame = {"id": "c2", "method": method, "params": params, **context}
        writer.write((json.dumps(frame) + "\n").encode())
        await writer.drain()
        await asyncio.sleep(after_s)
        writer.close()

    @property
    def daemon_socket(self) -> str:
        return f"{self.home}/daemon.sock"

    async def paired_peer(self, **kwargs: Any) -> FakeExtension:
        """A fake extension that pairs with a fresh code and stays connected."""
        code = (await self.call("pair.create"))["result"]["code"]
        peer = FakeExtension(self.port, **kwargs)
        reply = await peer.connect(code=code)
        assert "result" in reply, reply
        return peer


@contextlib.asynccontextmanager
async def running_daemon(home: str | None = None, **config: Any) -> AsyncIterator[RunningDaemon]:
    """A daemon in a fresh home, or in ``home`` (as a restarted daemon finds its paired browsers)."""
    home = home or tempfile.mkdtemp(prefix="tp-unit-")
    port = free_port()
    daemon = Daemon(home, port, DaemonConfig(**{"startup_wait_s": 0.5, **config}))
    server = DaemonServer(daemon)
    await server.start()
    try:
        yield RunningDaemon(daemon, server, home, port)
    finally:
        await server.stop()
