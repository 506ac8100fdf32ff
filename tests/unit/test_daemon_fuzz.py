"""Malformed frames against a real daemon process, on both sockets: it neither crashes nor logs a
traceback, and the next honest client is served."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect

from tabpilot import auth, protocol

ORIGIN = f"chrome-extension://{protocol.EXTENSION_ID}"
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass
class Daemon:
    home: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def socket_path(self) -> str:
        return os.path.join(self.home, "daemon.sock")

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return json.loads(
            self.send_line(json.dumps({"id": "c", "method": method, "params": params or {}}).encode())
        )

    def send_line(self, data: bytes, wait_s: float = 3.0) -> bytes:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(wait_s)
            sock.connect(self.socket_path)
            sock.sendall(data if data.endswith(b"\n") else data + b"\n")
            chunks = []
            with contextlib.suppress(TimeoutError, ConnectionError):
                while not chunks or not chunks[-1].endswith(b"\n"):
                    chunk = sock.recv(1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
            return b"".join(chunks)

    def ws(self) -> ClientConnection:
        return connect(f"ws://127.0.0.1:{self.port}", origin=ORIGIN, compression=None, open_timeout=5)  # type: ignore[arg-type]

    def logs(self) -> str:
        found = []
        for name in ("daemon.log", "daemon.out"):
            path = Path(self.home, "logs", name)
            if path.exists():
                found.append(path.read_text(errors="replace"))
        return "\n".join(found)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    home = tempfile.mkdtemp(prefix="tp-fuzz-")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env.update(TABPILOT_HOME=home, TABPILOT_PORT=str(port), TABPILOT_STARTUP_WAIT_S="0.1")
    os.makedirs(os.path.join(home, "logs"), mode=0o700)
    with open(os.path.join(home, "logs", "daemon.out"), "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tabpilot.daemon"], env=env, stdout=out, stderr=out, start_new_session=True
        )
    running = Daemon(home, port, process)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(running.socket_path):
            assert process.poll() is None and time.monotonic() < deadline, running.logs()
            time.sleep(0.05)
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def honest_peer(d: Daemon) -> Iterator[tuple[ClientConnection, str]]:
    """An extension that pairs with a fresh code: (its socket, its instance id)."""
    with d.ws() as ws:
        yield ws, pair(d, ws)


def pair(d: Daemon, ws: ClientConnection) -> str:
    code = d.call("pair.create")["result"]["code"]
    instance_id = secrets.token_hex(4)
    nonce = auth.new_nonce()
    block = {"mode": "pair", "nonce": nonce, "code_proof": auth.pairing_code_proof(code, instance_id, nonce)}
    hello = {
        "client": protocol.EXTENSION_CLIENT,
        "version": "0.1.0",
        "protocol_version": protocol.PROTOCOL_VERSION,
        "min_compatible_protocol": protocol.MIN_COMPATIBLE_PROTOCOL,
        "instance_id": instance_id,
        "browser": {"name": "chromium", "version": "156.0"},
        "auth": block,
    }
    ws.send(json.dumps(protocol.request("h", protocol.HANDSHAKE_METHOD, hello)))
    reply = json.loads(ws.recv(5))
    secret = auth.pairing_secret(code, instance_id, nonce)
    proof = auth.extension_proof(secret, instance_id, nonce, reply["result"]["auth"]["nonce"])
    ws.send(json.dumps(protocol.request("a", protocol.AUTHENTICATE_METHOD, {"proof": proof})))
    assert json.loads(ws.recv(5))["result"]["authenticated"] is True
    return instance_id


def assert_healthy(d: Daemon) -> None:
    """Alive, no traceback logged, and both sockets serve an honest client."""
    assert d.process.poll() is None, d.logs()
    logs = d.logs()
    assert "Traceback" not in logs and '"level": "error"' not in logs, logs[-3000:]
    status = d.call("daemon.status")
    assert status["result"]["pid"] == d.process.pid
    with honest_peer(d) as (_, instance_id):
        listed = d.call("browser.list")["result"]["browsers"]
        assert instance_id in [b["instance_id"] for b in listed]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
METHODS = st.sampled_from(
    [
        protocol.HANDSHAKE_METHOD,
        protocol.AUTHENTICATE_METHOD,
        "tool.session_stop",
        "tool.session_start",
        "tool.snapshot",
        "session.list",
        "session.resume",
        "pair.wait",
        "browser.list",
        "cancel",
    ]
) | st.text(max_size=30)
AUTH_BLOCKS = st.fixed_dictionaries(
    {},
    optional={
        "mode": st.sampled_from(["pair", "secret", "other"]) | json_values,
        "nonce": st.sampled_from(["00" * 16, "zz"]) | json_values,
        "code_proof": json_values,
    },
)
HANDSHAKE_PARAMS = st.fixed_dictionaries(
    {},
    optional={
        "protocol_version": st.sampled_from(["1.0", "2.0", "1.x", "", "9" * 30]) | json_values,
        "min_compatible_protocol": st.sampled_from(["1.0", "0.1", "-1"]) | json_values,
        "instance_id": st.sampled_from(["deadbeef", "DEADBEEF", ""]) | json_values,
        "auth": AUTH_BLOCKS | json_values,
        "browser": json_values,
        "label": json_values,
        "session_ids": json_values,
        "launch_token": json_values,
        "proof": json_values,
        "timeout_ms": json_values,
        "code": json_values,
        "session_id": json_values,
    },
)
FRAMES = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=6) | json_values,
        "method": METHODS | json_values,
        "params": HANDSHAKE_PARAMS | json_values,
        "result": json_values,
        "error": json_values,
        "event": st.sampled_from(["session.user_interrupt", "session.window_closed", "browser.label_changed"])
        | json_values,
        "payload": json_values,
        "session": json_values,
        "browser": json_values,
    },
)


def deep_frame(depth: int) -> str:
    return '{"id": "d", "method": "system.handshake", "params": {"x": ' + "[" * depth + "]" * depth + "}}"


DEEP = st.integers(min_value=30, max_value=20_000).map(deep_frame)
# Well-formed JSON of every shape, deep nesting, and bytes that are not JSON (or not UTF-8) at all.
PAYLOADS = (
    FRAMES.map(json.dumps)
    | json_values.map(json.dumps)
    | DEEP
    | st.binary(max_size=300)
    | st.text(max_size=300)
)


def test_client_socket_survives_malformed_requests(daemon: Daemon) -> None:
    @FUZZ
    @given(payload=PAYLOADS)
    @example(payload=deep_frame(5000))
    @example(payload=b"\xff\xfe{")
    def send(payload: str | bytes) -> None:
        data = payload if isinstance(payload, bytes) else payload.encode()
        # Every line gets an answer, an error for all but the few honest requests among them.
        frame = json.loads(daemon.send_line(data.replace(b"\n", b" "), wait_s=5.0))
        assert "error" in frame or "result" in frame

    send()
    assert_healthy(daemon)


def test_extension_socket_survives_malformed_frames_before_authentication(daemon: Daemon) -> None:
    @FUZZ
    @given(payloads=st.lists(PAYLOADS, min_size=1, max_size=3))
    @example(payloads=[deep_frame(5000)])
    @example(payloads=[json.dumps({"id": "r", "method": "x"}), json.dumps({"id": "s", "method": "y"})])
    def send(payloads: list[str | bytes]) -> None:
        # Frames are handled in order: the daemon has read ours once it answers the close.
        with contextlib.suppress(WebSocketException, OSError), daemon.ws() as ws:
            for payload in payloads:
                ws.send(payload)

    send()
    assert_healthy(daemon)


def test_extension_socket_survives_malformed_frames_from_a_paired_peer(daemon: Daemon) -> None:
    @FUZZ
    @given(payloads=st.lists(PAYLOADS, min_size=1, max_size=3))
    @example(payloads=[deep_frame(5000)])
    @example(payloads=[json.dumps({"id": "r", "method": "x"}), json.dumps({"id": "s", "method": "y"})])
    def send(payloads: list[str | bytes]) -> None:
        with contextlib.suppress(WebSocketException, OSError), honest_peer(daemon) as (ws, _):
            for payload in payloads:
                ws.send(payload)

    send()
    assert_healthy(daemon)
