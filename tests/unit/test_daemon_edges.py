"""The daemon's edges: frame size before authentication, nesting depth, and which methods clients reach."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeExtension, running_daemon
from websockets.exceptions import ConnectionClosed

from tabpilot import auth, protocol
from tabpilot.daemon import frames
from tabpilot.daemon.methods import INTERNAL_TOOLS, PUBLIC_TOOLS

REPO = Path(__file__).resolve().parents[2]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [r.getMessage() for r in bad]


async def raw_client(d: Any, line: bytes) -> dict[str, Any]:
    reader, writer = await asyncio.open_unix_connection(d.daemon_socket, limit=64 * 2**20)
    writer.write(line)
    await writer.drain()
    reply = await reader.readline()
    writer.close()
    return json.loads(reply)  # type: ignore[no-any-return]


async def test_a_frame_over_64_kib_before_authentication_closes_the_socket(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    async with running_daemon() as d:
        peer = FakeExtension(d.port)
        ws = await peer.open()
        await ws.send(json.dumps({"id": "x", "method": "system.handshake", "params": {"pad": "a" * 70_000}}))
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(ws.recv(), 3)
        assert ws.close_code == 1009
        # A handshake just under the cap is still read and answered.
        small = FakeExtension(d.port)
        await small.open()
        params = small.handshake_params("secret", auth.new_nonce())
        params["label"] = "b" * 60_000
        reply = await small.rpc(protocol.HANDSHAKE_METHOD, params)
        assert reply["error"]["code"] == "pairing_required"
        assert "result" in await d.call("daemon.status")
    no_tracebacks(caplog)


async def test_after_authentication_the_first_large_answer_gets_through() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()

        async def big(params: dict[str, Any]) -> Any:
            return {"data": "x" * 3_000_000, "format": "png"}

        peer.handlers["tool.screenshot"] = big
        reply = await d.call("tool.screenshot", {})
        assert len(reply["result"]["data"]) == 3_000_000


async def test_deep_nesting_on_the_client_socket_gets_a_clean_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with running_daemon() as d:
        for depth in (40, 100_000):
            frame = f'{{"id": "deep", "method": "daemon.status", "params": {{"x": {nested(depth)}}}}}\n'
            reply = await raw_client(d, frame.encode())
            assert reply["error"]["code"] == "protocol_error"
            assert reply["error"]["data"]["reason"] == "bad_frame"
            assert "deeper than 32 levels" in reply["error"]["message"]
        assert reply["id"] is None  # 100,000 levels: too deep to read even the id
        assert "result" in await d.call("daemon.status")
    no_tracebacks(caplog)


async def test_deep_nesting_before_authentication_is_refused_and_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    async with running_daemon() as d:
        for depth in (40, 20_000):
            ws = await FakeExtension(d.port).open()
            await ws.send(f'{{"id": "h1", "method": "system.handshake", "params": {{"x": {nested(depth)}}}}}')
            reply = json.loads(await asyncio.wait_for(ws.recv(), 3))
            assert reply["error"]["data"]["reason"] == "bad_frame"
            await asyncio.wait_for(ws.wait_closed(), 3)
            assert ws.close_code == 1008
        assert "result" in await FakeExtension(d.port).connect(
            code=(await d.call("pair.create"))["result"]["code"]
        )
    no_tracebacks(caplog)


async def test_a_deeply_nested_page_value_fails_that_call_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with running_daemon() as d:
        peer = await d.paired_peer()
        deep: Any = []
        for _ in range(400):
            deep = [deep]

        async def evaluate(params: dict[str, Any]) -> Any:
            return {"ok": True, "value": deep}

        peer.handlers["tool.evaluate"] = evaluate
        reply = await asyncio.wait_for(d.call("tool.evaluate", {"expression": "x"}), 5)
        assert reply["error"]["data"]["reason"] == "bad_frame"
        assert "deeper than 256 levels" in reply["error"]["message"]
        del peer.handlers["tool.evaluate"]
        # The browser stays connected and its next answer arrives.
        assert "result" in await d.call("tool.evaluate", {"expression": "1"})
    no_tracebacks(caplog)


async def test_nan_and_infinity_are_bad_frames_on_either_socket(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    async with running_daemon() as d:
        for constant in ("NaN", "Infinity", "-Infinity"):
            frame = f'{{"id": "inf", "method": "tool.wait", "params": {{"timeout_ms": {constant}}}}}\n'
            reply = await raw_client(d, frame.encode())
            assert (reply["id"], reply["error"]["data"]["reason"]) == ("inf", "bad_frame"), constant
            ws = await FakeExtension(d.port).open()
            await ws.send(f'{{"id": "h1", "method": "system.handshake", "params": {{"x": {constant}}}}}')
            reply = json.loads(await asyncio.wait_for(ws.recv(), 3))
            assert (reply["id"], reply["error"]["data"]["reason"]) == ("h1", "bad_frame"), constant
            await asyncio.wait_for(ws.wait_closed(), 3)
        peer = await d.paired_peer()

        async def evaluate(params: dict[str, Any]) -> Any:
            return {"ok": True, "value": float("inf")}

        peer.handlers["tool.evaluate"] = evaluate
        reply = await asyncio.wait_for(d.call("tool.evaluate", {"expression": "x"}), 5)
        assert reply["error"]["data"]["reason"] == "bad_frame"
        assert "NaN or Infinity" in reply["error"]["message"]
        del peer.handlers["tool.evaluate"]
        assert "result" in await d.call("tool.evaluate", {"expression": "1"})
    no_tracebacks(caplog)


async def test_internal_tools_are_refused_on_the_client_socket() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        assert "result" in await d.call("tool.text", {})
        for method in [*sorted(INTERNAL_TOOLS), "tool.no_such_tool", "system.ping", "cancel"]:
            reply = await d.call(method, {"session_id": "default"})
            assert reply["error"]["code"] == "unknown_method", method
        assert peer.methods().count("tool.session_stop") == 0
        assert peer.methods().count("tool.session_start") == 1  # the daemon's own, for the default session
        assert d.daemon.sessions.get("default") is not None


def test_public_and_internal_tools_are_exactly_what_the_extension_serves() -> None:
    table = (REPO / "src/tabpilot/extension/tools/index.js").read_text()
    served = set(re.findall(r'"(tool\.[a-z_]+)"', table))
    assert served == PUBLIC_TOOLS | INTERNAL_TOOLS
    assert not PUBLIC_TOOLS & INTERNAL_TOOLS


def test_depth_is_measured_without_recursion() -> None:
    assert not frames.exceeds({"a": [1, {"b": 2}]}, 3)
    assert frames.exceeds({"a": [1, {"b": []}]}, 3)
    assert frames.decode('{"a": 1}') == {"a": 1}
    assert frames.decode(b"\xff\xfe") is None
    with pytest.raises(frames.TooDeep) as caught:
        frames.decode(f'{{"id": "q", "x": {nested(50)}}}')
    assert caught.value.frame_id == "q"
