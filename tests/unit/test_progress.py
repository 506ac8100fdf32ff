"""Progress frames: a call the person is being asked about outlives its own timeout, end to end
from the (fake) extension through the daemon to the CLI's client, and no further than they say."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from fakes import FakeExtension, running_daemon

from tabpilot.cli import client
from tabpilot.daemon import rpc
from tabpilot.protocol import RpcError

ASKED = {"waiting": "approval", "deadline_ms": 2000, "approval": {"rule": "form-submit", "target": "x"}}


def asks_then_answers(peer: FakeExtension, after_s: float) -> Any:
    async def handler(params: dict[str, Any]) -> Any:
        await asyncio.sleep(0.05)
        await peer.send_progress("tool.click", ASKED)
        await asyncio.sleep(after_s)
        return {"clicked": True}

    return handler


async def lines_of(socket_path: str, frame: dict[str, Any]) -> list[dict[str, Any]]:
    reader, writer = await asyncio.open_unix_connection(socket_path)
    writer.write((json.dumps(frame) + "\n").encode())
    await writer.drain()
    lines = []
    while line := await reader.readline():
        lines.append(json.loads(line))
        if "progress" not in lines[-1]:
            break
    writer.close()
    return lines


async def test_a_progress_frame_keeps_the_call_alive_and_reaches_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    async with running_daemon() as d:
        peer = await d.paired_peer()
        peer.handlers["tool.click"] = asks_then_answers(peer, 1.0)
        frame = {"id": "c1", "method": "tool.click", "params": {"target": "@e1", "timeout_ms": 300}}
        started = time.monotonic()
        lines = await lines_of(d.daemon_socket, frame)
        assert time.monotonic() - started > 1.0
        # Only how long to wait crosses to the client: what the card says stays in the browser.
        assert lines[0] == {"id": "c1", "progress": {"waiting": "approval", "deadline_ms": 2000}}
        assert lines[-1]["result"]["clicked"] is True


async def test_without_progress_the_same_call_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    async with running_daemon() as d:
        peer = await d.paired_peer()

        async def slow(params: dict[str, Any]) -> Any:
            await asyncio.sleep(1.0)
            return {"clicked": True}

        peer.handlers["tool.click"] = slow
        reply = await d.call("tool.click", {"target": "@e1", "timeout_ms": 300})
        assert reply["error"]["data"]["reason"] == "rpc_timeout"


async def test_a_progress_frame_extends_the_call_no_further_than_the_daemon_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    monkeypatch.setattr(rpc, "MAX_PROGRESS_WAIT_S", 0.3)
    async with running_daemon() as d:
        peer = await d.paired_peer()
        peer.handlers["tool.click"] = asks_then_answers(peer, 5.0)
        started = time.monotonic()
        frame = {"id": "c1", "method": "tool.click", "params": {"target": "@e1", "timeout_ms": 300}}
        lines = await lines_of(d.daemon_socket, frame)
        assert lines[-1]["error"]["data"]["reason"] == "rpc_timeout"
        assert time.monotonic() - started < 2.5


async def test_a_timeout_after_progress_says_how_long_the_call_really_waited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    async with running_daemon() as d:
        peer = await d.paired_peer()
        # The progress frame moves a 0.5 s budget out to about 2.25 s; nobody answers.
        peer.handlers["tool.click"] = asks_then_answers(peer, 5.0)
        frame = {"id": "c1", "method": "tool.click", "params": {"target": "@e1", "timeout_ms": 300}}
        lines = await lines_of(d.daemon_socket, frame)
        error = lines[-1]["error"]
        assert error["data"]["reason"] == "rpc_timeout"
        waited = int(error["message"].rsplit("within ", 1)[1].split(" ", 1)[0])
        assert waited >= 2, error["message"]


async def test_the_cli_client_waits_past_its_margin_while_progress_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    monkeypatch.setattr(client, "REPLY_MARGIN_S", 0.5)
    monkeypatch.setenv("TABPILOT_HOME", "/nonexistent")
    async with running_daemon() as d:
        peer = await d.paired_peer()
        peer.handlers["tool.click"] = asks_then_answers(peer, 1.5)
        heard: list[dict[str, Any]] = []

        def call() -> Any:
            import threading

            client.progress_listeners[threading.get_ident()] = heard.append
            try:
                request = client.frame("tool.click", {"target": "@e1", "timeout_ms": 100}, None, None)
                return client.exchange(client.open_socket(d.daemon_socket), request, 0.1)
            finally:
                client.progress_listeners.pop(threading.get_ident(), None)

        assert (await asyncio.to_thread(call))["clicked"] is True
        assert heard == [{"waiting": "approval", "deadline_ms": 2000}]

        # A client that hears no progress gives up after its own timeout and margin.
        async def mute(params: dict[str, Any]) -> Any:
            await asyncio.sleep(3)

        peer.handlers["tool.click"] = mute
        request = client.frame("tool.click", {"target": "@e1", "timeout_ms": 100}, None, None)
        with pytest.raises(RpcError) as caught:
            await asyncio.to_thread(client.exchange, client.open_socket(d.daemon_socket), request, 0.1)
        assert caught.value.reason == "rpc_timeout"


async def test_tabpilot_mcp_tells_its_client_while_the_person_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from tabpilot.mcp_server import McpServer

    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    async with running_daemon() as d:
        monkeypatch.setenv("TABPILOT_HOME", d.home)
        monkeypatch.setenv("TABPILOT_PORT", str(d.port))
        monkeypatch.delenv("TABPILOT_RUN", raising=False)
        peer = await d.paired_peer()
        peer.handlers["tool.click"] = asks_then_answers(peer, 0.5)
        out = io.BytesIO()
        server = McpServer("default", None, out)
        call = {"name": "click", "arguments": {"target": "@e1"}, "_meta": {"progressToken": "tok-1"}}
        server.receive(
            json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}).encode()
        )
        for thread in server._calls:
            await asyncio.to_thread(thread.join, 20)
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        progress = [m for m in lines if m.get("method") == "notifications/progress"]
        assert progress == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {
                    "progressToken": "tok-1",
                    "progress": 1,
                    "message": "waiting for the person's answer",
                },
            }
        ]
        answer = next(m for m in lines if m.get("id") == 7)
        assert answer["result"]["isError"] is False


async def test_a_reply_whose_value_says_progress_is_still_the_reply() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()

        async def tricky(params: dict[str, Any]) -> Any:
            return {"tab_id": 2, "ok": True, "value": {"progress": {"deadline_ms": 1}}}

        peer.handlers["tool.evaluate"] = tricky
        request = client.frame("tool.evaluate", {"expression": "x", "timeout_ms": 1000}, None, None)
        result = await asyncio.to_thread(client.exchange, client.open_socket(d.daemon_socket), request, 1.0)
        assert result["value"] == {"progress": {"deadline_ms": 1}}
