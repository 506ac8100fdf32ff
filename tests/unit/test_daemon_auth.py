"""Who may connect: Origin and Host checks, pairing, mutual proofs, throttling, private sockets."""

from __future__ import annotations

import asyncio
import json
import os
import stat

import pytest
from fakes import FakeExtension, running_daemon
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tabpilot import auth, protocol


async def test_web_page_origin_is_refused_before_upgrade() -> None:
    async with running_daemon() as d:
        for origin in ("http://evil.example", "https://127.0.0.1", "null", "chrome-extension://" + "a" * 32):
            with pytest.raises(InvalidStatus) as info:
                await connect(f"ws://127.0.0.1:{d.port}", origin=origin)  # type: ignore[arg-type]
            assert info.value.response.status_code == 403
        with pytest.raises(InvalidStatus):
            await connect(f"ws://127.0.0.1:{d.port}")  # no Origin at all


async def test_rebound_host_header_is_refused() -> None:
    async with running_daemon() as d:
        reader, writer = await asyncio.open_connection("127.0.0.1", d.port)
        writer.write(
            (
                "GET / HTTP/1.1\r\n"
                f"Host: evil.example:{d.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: chrome-extension://{protocol.EXTENSION_ID}\r\n\r\n"
            ).encode()
        )
        status_line = await reader.readline()
        writer.close()
        assert b" 403 " in status_line


async def test_unpaired_peer_gets_pairing_required_and_nothing_else() -> None:
    async with running_daemon() as d:
        peer = FakeExtension(d.port, secret=auth.new_secret())
        reply = await peer.connect()
        assert reply["error"]["code"] == "pairing_required"
        assert reply["error"]["data"]["reason"] == "not_paired"
        status = await d.call("browser.list")
        assert status["result"]["browsers"] == []


async def test_tool_frame_before_authentication_is_refused() -> None:
    async with running_daemon() as d:
        peer = FakeExtension(d.port)
        ws = await peer.open()
        reply = await peer.rpc("tool.navigate", {"url": "https://example.com"})
        assert reply["error"]["code"] == "auth_failed"
        assert reply["error"]["data"]["reason"] == "handshake_required"
        await asyncio.wait_for(ws.wait_closed(), 2)
        assert ws.close_code == 1008


async def test_tool_frame_between_handshake_and_proof_is_refused() -> None:
    async with running_daemon() as d:
        code = (await d.call("pair.create"))["result"]["code"]
        peer = FakeExtension(d.port)
        await peer.open()
        hello = await peer.rpc(
            protocol.HANDSHAKE_METHOD, peer.handshake_params("pair", auth.new_nonce(), code)
        )
        assert "result" in hello
        reply = await peer.rpc("tool.evaluate", {"expression": "1+1"})
        assert reply["error"]["data"]["reason"] == "handshake_required"


async def test_pairing_then_reconnect_with_the_derived_secret() -> None:
    async with running_daemon() as d:
        created = (await d.call("pair.create"))["result"]
        waiter = asyncio.ensure_future(d.call("pair.wait", {"code": created["code"], "timeout_ms": 5000}))
        await asyncio.sleep(0.05)
        peer = FakeExtension(d.port, label="Work")
        done = await peer.connect(code=created["code"].lower().replace("-", " "))
        assert done["result"] == {"authenticated": True, "paired": True, "instance_id": peer.instance_id}
        paired = (await waiter)["result"]
        assert paired["instance_id"] == peer.instance_id and paired["label"] == "Work"

        store = os.path.join(d.home, "paired.json")
        assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
        with open(store) as handle:
            assert json.load(handle)[peer.instance_id]["secret"] == peer.secret
        await peer.close()

        again = FakeExtension(d.port, instance_id=peer.instance_id, secret=peer.secret)
        reply = await again.connect()
        assert reply["result"]["paired"] is False
        # the code was consumed: it cannot pair a second browser
        thief = FakeExtension(d.port)
        assert (await thief.connect(code=created["code"]))["error"]["data"]["reason"] == "wrong_pairing_code"


async def test_peer_with_a_wrong_secret_is_refused_and_gets_no_tool_frames() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        await peer.close()
        impostor = FakeExtension(d.port, instance_id=peer.instance_id, secret=auth.new_secret())
        reply = await impostor.connect()
        # The impostor cannot verify the daemon's proof, and cannot produce its own.
        assert reply["error"]["code"] == "auth_failed"
        raw = FakeExtension(d.port, instance_id=peer.instance_id)
        await raw.open()
        nonce = auth.new_nonce()
        hello = await raw.rpc(protocol.HANDSHAKE_METHOD, raw.handshake_params("secret", nonce))
        assert "result" in hello
        bad = await raw.rpc(protocol.AUTHENTICATE_METHOD, {"proof": "00" * 32})
        assert bad["error"]["code"] == "auth_failed" and bad["error"]["data"]["reason"] == "bad_proof"
        result = await d.call("tool.evaluate", {"expression": "1+1"})
        assert result["error"]["code"] == "no_browser_connected"
        assert raw.received == [] and impostor.received == []


async def test_daemon_proves_itself_to_the_extension() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        await peer.close()
        nonce = auth.new_nonce()
        again = FakeExtension(d.port, instance_id=peer.instance_id, secret=peer.secret)
        await again.open()
        hello = (await again.rpc(protocol.HANDSHAKE_METHOD, again.handshake_params("secret", nonce)))[
            "result"
        ]
        expected = auth.daemon_proof(peer.secret or "", peer.instance_id, nonce, hello["auth"]["nonce"])
        assert hello["auth"]["proof"] == expected
        assert hello["server"] == protocol.DAEMON_NAME and hello["verdict"] == "connected"


async def test_wrong_codes_are_throttled() -> None:
    async with running_daemon() as d:
        code = (await d.call("pair.create"))["result"]["code"]
        reasons = []
        for _ in range(6):
            reply = await FakeExtension(d.port).connect(code="WRNG-CODE")
            reasons.append(reply["error"]["data"]["reason"])
        assert reasons[:5] == ["wrong_pairing_code"] * 5
        assert reasons[5] == "pairing_throttled"
        # while throttled even the right code is refused
        locked = await FakeExtension(d.port).connect(code=code)
        assert locked["error"]["data"]["reason"] == "pairing_throttled"
        assert locked["error"]["data"]["retry_after_s"] > 0


async def test_incompatible_protocol_is_rejected() -> None:
    async with running_daemon() as d:
        peer = FakeExtension(d.port, protocol_version="2.0")
        reply = await peer.connect(code=(await d.call("pair.create"))["result"]["code"])
        assert reply["error"]["code"] == "version_too_old"
        skewed = await d.paired_peer(protocol_version="1.7")
        assert skewed.handshake_result is not None and skewed.handshake_result["verdict"] == "version_skew"


async def test_silent_unauthenticated_socket_is_closed() -> None:
    async with running_daemon(handshake_timeout_s=0.3) as d:
        ws = await FakeExtension(d.port).open()
        await asyncio.wait_for(ws.wait_closed(), 3)
        assert ws.close_code == 1008


async def test_state_dir_and_socket_are_private() -> None:
    async with running_daemon() as d:
        sock = os.path.join(d.home, "daemon.sock")
        assert stat.S_ISSOCK(os.stat(sock).st_mode)
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
