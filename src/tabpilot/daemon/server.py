"""Moves bytes: the loopback WebSocket for extensions and the Unix socket for CLI/MCP clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from tabpilot import __version__, launcher, paths, protocol
from tabpilot.daemon import frames
from tabpilot.daemon.browsers import Browser
from tabpilot.daemon.config import DaemonConfig
from tabpilot.daemon.rpc import PeerChannel
from tabpilot.daemon.service import CLIENT_PROGRESS, Daemon
from tabpilot.protocol import RpcError

log = logging.getLogger("tabpilot.daemon")

MAX_FRAME_BYTES = 64 * 1024 * 1024
# Until a peer has proved it is paired, a handshake is all it may send: a few hundred bytes.
PRE_AUTH_FRAME_BYTES = 64 * 1024
UNIX_PATH_MAX = 107


def allowed_origins() -> list[str]:
    """Extension origins only: ours (fixed by the manifest key) plus any the person configured."""
    extra = os.environ.get("TABPILOT_ALLOWED_ORIGINS", "")
    origins = [f"chrome-extension://{protocol.EXTENSION_ID}"]
    origins += [
        o.strip()
        for o in extra.split(",")
        if o.strip().startswith(("chrome-extension://", "moz-extension://"))
    ]
    return origins


class DaemonServer:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.config: DaemonConfig = daemon.config
        self._ws_server: Server | None = None
        self._unix_server: asyncio.AbstractServer | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Future[Any]] = set()
        self._hosts = {f"127.0.0.1:{daemon.port}", f"localhost:{daemon.port}"}

    # ----- extension side -------------------------------------------------------------------

    def _check_host(self, connection: ServerConnection, request: Request) -> Response | None:
        # A web page cannot forge Origin, but DNS rebinding can point a name at 127.0.0.1.
        hosts = request.headers.get_all("Host")
        if len(hosts) != 1 or hosts[0] not in self._hosts:
            return connection.respond(HTTPStatus.FORBIDDEN, "tabpilot: wrong Host\n")
        return None

    async def _serve_peer(self, ws: ServerConnection) -> None:
        authenticator = self.daemon.new_authenticator()
        step = None
        try:
            async with asyncio.timeout(self.config.handshake_timeout_s):
                while not authenticator.authenticated:
                    try:
                        frame = frames.decode(await ws.recv())
                    except frames.BadFrame as deep:
                        err = RpcError("protocol_error", str(deep), "bad_frame")
                        step = authenticator.refuse(deep.frame_id, err)
                    else:
                        step = authenticator.on_frame(frame)
                    if step is None:
                        continue
                    if step.authenticated is not None:
                        # Set before the reply goes out: the peer's next frame is read with it.
                        ws.protocol.max_message_size = MAX_FRAME_BYTES
                    await ws.send(json.dumps(step.reply))
                    if step.close:
                        log.info("peer refused: %s", step.reply.get("error", {}).get("message"))
                        await ws.close(1008, "tabpilot: refused")
                        return
        except TimeoutError:
            log.info("peer did not authenticate within %.0f s", self.config.handshake_timeout_s)
            await ws.close(1008, "tabpilot: authentication timeout")
            return
        except ConnectionClosed:
            return
        assert step is not None and step.authenticated is not None

        async def send(frame: dict[str, Any]) -> None:
            await ws.send(json.dumps(frame))

        browser = Browser(hello=step.authenticated, channel=PeerChannel(send), close=ws.close)
        await self.daemon.browser_connected(browser, step.paired_with)
        why = "connection closed"
        try:
            async for raw in ws:
                browser.last_seen = time.monotonic()
                try:
                    frame = frames.decode(raw, frames.PEER_MAX_DEPTH)
                except frames.BadFrame as deep:
                    log.warning("browser %s sent a %s", browser.instance_id, deep)
                    if deep.frame_id is not None:
                        err = RpcError("protocol_error", f"the browser's answer was a {deep}", "bad_frame")
                        browser.channel.on_response(protocol.error_response(deep.frame_id, err))
                    continue
                self._on_peer_frame(browser, ws, frame)
        except ConnectionClosed as exc:
            why = f"connection lost ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
        finally:
            self.daemon.browser_disconnected(browser, why)

    def _on_peer_frame(self, browser: Browser, ws: ServerConnection, frame: Any) -> None:
        kind = protocol.classify(frame)
        if kind == "response":
            browser.channel.on_response(frame)
        elif kind == "progress":
            browser.channel.on_progress(frame)
        elif kind == "event":
            self.daemon.browser_event(browser, frame["event"], frame.get("payload") or {})
        elif kind == "request":
            self._spawn(self.daemon.browser_request(browser, frame))
        else:
            log.warning("dropped a malformed frame from %s", browser.instance_id)

    def _spawn(self, coro: Any) -> None:
        """Run a fire-and-forget coroutine, keeping a reference until it is done."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Future[Any]) -> None:
        self._background.discard(task)
        # A reply to a peer that has gone meanwhile is nothing to report.
        if not task.cancelled() and not isinstance(task.exception(), ConnectionClosed | None):
            log.warning("background send failed: %r", task.exception())

    # ----- client side ----------------------------------------------------------------------

    async def _serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                reply = protocol.error_response(
                    None, RpcError("invalid_params", "request larger than 64 MiB")
                )
                writer.write((json.dumps(reply) + "\n").encode())
                return
            if not line:
                return
            try:
                frame = frames.decode(line)
            except frames.BadFrame as deep:
                err = RpcError("protocol_error", str(deep), "bad_frame")
                writer.write((json.dumps(protocol.error_response(deep.frame_id, err)) + "\n").encode())
                await writer.drain()
                return
            abandon = asyncio.Event()
            frame_id = frame.get("id") if isinstance(frame, dict) else None
            if isinstance(frame_id, str):
                CLIENT_PROGRESS.set(lambda payload: self._progress(writer, frame_id, payload, abandon))
            watcher = asyncio.ensure_future(self._watch_client(reader, abandon))
            try:
                reply = await self.daemon.handle_client(frame, abandon)
            finally:
                watcher.cancel()
            if not abandon.is_set():
                writer.write((json.dumps(reply) + "\n").encode())
                await writer.drain()
        except (ConnectionError, BrokenPipeError):
            pass
        finally:
            writer.close()

    @staticmethod
    def _progress(
        writer: asyncio.StreamWriter, frame_id: str, payload: dict[str, Any], abandon: asyncio.Event
    ) -> None:
        """Tell a waiting client its call still runs and how long it may yet take (no secrets: no card)."""
        if abandon.is_set() or writer.is_closing():
            return
        relayed = {k: payload[k] for k in ("waiting", "deadline_ms") if k in payload}
        writer.write((json.dumps(protocol.progress(frame_id, relayed)) + "\n").encode())

    @staticmethod
    async def _watch_client(reader: asyncio.StreamReader, abandon: asyncio.Event) -> None:
        """The client keeps its end open until it has the reply; EOF means it went away."""
        with contextlib.suppress(ConnectionError):
            while await reader.read(4096):
                pass
        abandon.set()

    # ----- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        home = self.daemon.home
        sock = paths.socket_path(home)
        if len(sock.encode()) > UNIX_PATH_MAX:
            raise OSError(f"socket path too long for a Unix socket ({len(sock)} bytes): {sock}")
        self._ws_server = await serve(
            self._serve_peer,
            "127.0.0.1",
            self.daemon.port,
            origins=allowed_origins(),  # type: ignore[arg-type]
            process_request=self._check_host,
            compression=None,
            max_size=PRE_AUTH_FRAME_BYTES,
            ping_interval=None,
        )
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock)  # we hold the lock, so a leftover socket is stale
        old_umask = os.umask(0o177)
        try:
            self._unix_server = await asyncio.start_unix_server(
                self._serve_client, path=sock, limit=MAX_FRAME_BYTES
            )
        finally:
            os.umask(old_umask)
        os.chmod(sock, 0o600)
        self._write_state()
        self._tasks = [
            asyncio.ensure_future(self._heartbeat()),
            asyncio.ensure_future(self._housekeeping()),
        ]
        log.info("daemon %s listening on 127.0.0.1:%d and %s", __version__, self.daemon.port, sock)

    def _write_state(self) -> None:
        state = {
            "pid": os.getpid(),
            "port": self.daemon.port,
            "version": __version__,
            "socket": paths.socket_path(self.daemon.home),
            "started_at": time.time(),
        }
        target = paths.state_path(self.daemon.home)
        with open(f"{target}.tmp", "w", encoding="utf-8") as handle:
            json.dump(state, handle)
        os.replace(f"{target}.tmp", target)

    async def _heartbeat(self) -> None:
        interval = min(self.config.heartbeat_s, self.config.peer_timeout_s / 3)
        last_ping = 0.0
        while True:
            await asyncio.sleep(interval)
            for browser in self.daemon.silent_browsers():
                log.warning(
                    "browser %s silent for %.0f s: dropping it",
                    browser.instance_id,
                    time.monotonic() - browser.last_seen,
                )
                self.daemon.browser_disconnected(browser, "heartbeat timeout")
                if browser.close is not None:
                    self._spawn(browser.close(1011, "tabpilot: heartbeat timeout"))
            if time.monotonic() - last_ping >= self.config.heartbeat_s:
                last_ping = time.monotonic()
                for browser in self.daemon.browsers.all():
                    with contextlib.suppress(Exception):
                        await browser.channel.notify("system.ping", {})

    async def _housekeeping(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            try:
                await self.daemon.housekeeping()
            except Exception:
                log.exception("housekeeping failed")

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await self.daemon.shutdown()
        for browser in self.daemon.browsers.all():
            if browser.close is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(browser.close(1001, "tabpilot: daemon stopping"), 2.0)
        if self._unix_server is not None:
            self._unix_server.close()
        if self._ws_server is not None:
            self._ws_server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws_server.wait_closed(), 3.0)
        for path in (paths.socket_path(self.daemon.home), paths.state_path(self.daemon.home)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def managed_gone(home: str, token: str) -> bool:
    """Whether the managed browser launched with ``token`` no longer runs (stopped, replaced, or dead)."""
    state = launcher.read_state(home)
    return state is None or state.launch_token != token or not launcher.is_alive(state)


async def run(home: str, port: int, config: DaemonConfig) -> None:
    daemon = Daemon(home, port, config, managed_gone=lambda token: managed_gone(home, token))
    server = DaemonServer(daemon)
    await server.start()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, daemon.stop_requested.set)
    try:
        await daemon.stop_requested.wait()
    finally:
        log.info("daemon stopping")
        await server.stop()
