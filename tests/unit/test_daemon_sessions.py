"""Routing through sessions: default session, FIFO queues, cancel, timeouts, expiry, heartbeat."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from fakes import running_daemon

from tabpilot.daemon import rpc
from tabpilot.protocol import RpcError


def result(reply: dict[str, Any]) -> Any:
    assert "result" in reply, reply
    return reply["result"]


def error(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    return reply["error"]


async def wait_for(predicate: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_default_session_is_created_on_first_use() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        reply = result(await d.call("tool.evaluate", {"expression": "1+1", "timeout_ms": 1000}))
        assert reply["echo"]["session_id"] == "default"
        assert reply["echo"]["timeout_ms"] == 1000
        assert peer.methods() == ["tool.session_start", "tool.evaluate"]
        sessions = result(await d.call("session.list"))["sessions"]
        assert [s["session_id"] for s in sessions] == ["default"]


async def test_named_sessions_must_be_started_and_get_their_own_window() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        err = error(await d.call("tool.evaluate", {"expression": "1"}, session="work"))
        assert (err["code"], err["data"]["reason"]) == ("not_found", "unknown_session")
        assert "session list" in err["data"]["hint"] and "session start work" in err["data"]["hint"]
        started = result(await d.call("session.start", {"name": "work"}))
        assert started["session_id"] == "work"
        generated = result(await d.call("session.start", {}))["session_id"]
        assert len(generated) == 4 and generated != "work"
        dup = error(await d.call("session.start", {"name": "work"}))
        assert dup["data"]["reason"] == "session_exists"
        bad = error(await d.call("session.start", {"name": "no spaces please"}))
        assert bad["code"] == "invalid_params"
        result(await d.call("tool.evaluate", {"expression": "1"}, session="work"))
        starts = [f["params"]["session_id"] for f in peer.received if f.get("method") == "tool.session_start"]
        assert starts == ["work", generated]


async def test_calls_in_one_session_run_in_order_and_sessions_run_side_by_side() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        gate = asyncio.Event()
        order: list[str] = []

        async def slow(params: dict[str, Any]) -> Any:
            order.append(f"start {params['session_id']} {params['expression']}")
            if params["expression"] == "first":
                await gate.wait()
            order.append(f"end {params['session_id']} {params['expression']}")
            return {"ok": True}

        peer.handlers["tool.evaluate"] = slow
        result(await d.call("session.start", {"name": "a"}))
        result(await d.call("session.start", {"name": "b"}))
        first = asyncio.ensure_future(d.call("tool.evaluate", {"expression": "first"}, session="a"))
        await wait_for(lambda: "start a first" in order)
        second = asyncio.ensure_future(d.call("tool.evaluate", {"expression": "second"}, session="a"))
        other = await d.call("tool.evaluate", {"expression": "other"}, session="b")
        result(other)  # session b was not held up by a's slow call
        await asyncio.sleep(0.1)
        assert "start a second" not in order
        pending = result(await d.call("session.list"))["sessions"]
        assert {s["session_id"]: s["pending"] for s in pending}["a"] == 1
        gate.set()
        result(await first)
        result(await second)
        assert order.index("end a first") < order.index("start a second")


async def test_client_hang_up_cancels_the_call_in_the_extension() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        cancelled = asyncio.Event()

        async def forever(params: dict[str, Any]) -> Any:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        peer.handlers["tool.navigate"] = forever
        result(await d.call("session.start", {"name": "s"}))
        await d.call_and_hang_up("tool.navigate", {"url": "http://127.0.0.1/slow"}, 0.2, session="s")
        await asyncio.wait_for(cancelled.wait(), 3)
        cancels = [f for f in peer.received if f.get("method") == "cancel"]
        navigate = next(f for f in peer.received if f.get("method") == "tool.navigate")
        assert cancels[0]["params"] == {"rpc_id": navigate["id"]}
        # the queue is free again
        result(await d.call("tool.evaluate", {"expression": "1"}, session="s"))


async def test_queued_call_of_a_departed_client_never_runs() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        gate = asyncio.Event()

        async def held(params: dict[str, Any]) -> Any:
            await gate.wait()
            return {}

        peer.handlers["tool.reload"] = held
        result(await d.call("session.start", {"name": "q"}))
        first = asyncio.ensure_future(d.call("tool.reload", {}, session="q"))
        await wait_for(lambda: "tool.reload" in peer.methods())
        await d.call_and_hang_up("tool.evaluate", {"expression": "queued"}, 0.1, session="q")
        await asyncio.sleep(0.1)
        gate.set()
        result(await first)
        await asyncio.sleep(0.1)
        assert "tool.evaluate" not in peer.methods()


async def test_a_call_without_answer_times_out_and_is_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rpc, "BUDGET_MARGIN_S", 0.2)
    async with running_daemon() as d:
        peer = await d.paired_peer()

        async def mute(params: dict[str, Any]) -> Any:
            await asyncio.sleep(30)

        peer.handlers["tool.evaluate"] = mute
        started = time.monotonic()
        err = error(await d.call("tool.evaluate", {"expression": "1", "timeout_ms": 300}))
        assert (err["code"], err["data"]["reason"]) == ("timeout", "rpc_timeout")
        assert time.monotonic() - started < 3
        await wait_for(lambda: "cancel" in peer.methods())


async def test_errors_from_the_extension_pass_through() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()

        async def refuse(params: dict[str, Any]) -> Any:
            raise RpcError("invalid_params", "javascript: URLs are refused", "url_scheme_refused")

        peer.handlers["tool.navigate"] = refuse
        err = error(await d.call("tool.navigate", {"url": "javascript:alert(1)"}))
        # With the session's page-text nonce, as a result has it: an error may quote the page.
        assert err == {
            "code": "invalid_params",
            "message": "javascript: URLs are refused",
            "data": {
                "reason": "url_scheme_refused",
                "page_nonce": d.daemon.sessions.require("default").page_nonce,
            },
        }
        assert (
            error(await d.call("tool.navigate", {"url": "x", "timeout_ms": -1}))["code"] == "invalid_params"
        )
        assert error(await d.call("nonsense.method"))["code"] == "unknown_method"


async def test_session_stop_closes_the_window_and_forgets_the_session() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        for name in ("a", "b", "c"):
            result(await d.call("session.start", {"name": name}))
        assert result(await d.call("session.stop", {"session_id": "a"}))["stopped"] == ["a"]
        assert error(await d.call("session.stop", {"session_id": "a"}))["data"]["reason"] == "unknown_session"
        assert sorted(result(await d.call("session.stop", {"all": True}))["stopped"]) == ["b", "c"]
        stops = [f["params"]["session_id"] for f in peer.received if f.get("method") == "tool.session_stop"]
        assert sorted(stops) == ["a", "b", "c"]
        assert result(await d.call("session.list"))["sessions"] == []


async def test_window_closed_by_the_person_ends_the_session() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        result(await d.call("session.start", {"name": "w"}))
        await peer.send_event("session.window_closed", {"session_id": "w", "reason": "user_closed_window"})
        await wait_for(lambda: d.daemon.sessions.get("w") is None)


async def test_idle_sessions_expire() -> None:
    async with running_daemon(session_idle_s=0.3) as d:
        peer = await d.paired_peer()
        result(await d.call("session.start", {"name": "idle"}))
        await wait_for(lambda: "tool.session_stop" in peer.methods(), timeout=4)
        assert d.daemon.sessions.get("idle") is None


async def test_heartbeat_keeps_a_live_peer_and_drops_a_silent_one() -> None:
    async with running_daemon(heartbeat_s=0.2, peer_timeout_s=0.9, reconnect_grace_s=0.2) as d:
        live = await d.paired_peer(label="live")
        silent = await d.paired_peer(label="silent")
        silent.answer_pings = False
        result(await d.call("session.start", {"name": "s1"}, browser="silent"))
        await wait_for(lambda: len(d.daemon.browsers) == 1, timeout=5)
        assert d.daemon.browsers.all()[0].label == "live"
        assert live.methods().count("system.ping") >= 2
        await wait_for(lambda: d.daemon.sessions.get("s1") is None, timeout=4)


async def test_browser_choice() -> None:
    async with running_daemon() as d:
        assert error(await d.call("tool.evaluate", {"expression": "1"}))["code"] == "no_browser_connected"
        one = await d.paired_peer(label="Work Chrome")
        await d.paired_peer(label="Home")
        err = error(await d.call("tool.evaluate", {"expression": "1"}))
        assert err["code"] == "multiple_browsers_online"
        assert len(err["data"]["browsers"]) == 2 and "--browser" in err["data"]["hint"]
        assert (
            result(await d.call("session.start", {"name": "w"}, browser="work chrome"))["browser"]
            == one.instance_id
        )
        by_prefix = result(await d.call("session.start", {"name": "p"}, browser=one.instance_id[:5]))
        assert by_prefix["browser"] == one.instance_id
        missing = error(await d.call("session.start", {"name": "x"}, browser="nope"))
        assert (missing["code"], missing["data"]["reason"]) == ("not_found", "unknown_browser")
        # a started session is pinned: no --browser needed any more
        result(await d.call("tool.evaluate", {"expression": "1"}, session="w"))


async def test_reconnecting_browser_keeps_its_sessions_and_a_restarted_daemon_adopts_them() -> None:
    async with running_daemon(reconnect_grace_s=5) as d:
        peer = await d.paired_peer()
        result(await d.call("session.start", {"name": "keep"}))
        await peer.close()
        await wait_for(lambda: len(d.daemon.browsers) == 0)
        assert d.daemon.sessions.get("keep") is not None
        pending = asyncio.ensure_future(d.call("tool.evaluate", {"expression": "1"}, session="keep"))
        await asyncio.sleep(0.2)
        again = type(peer)(
            d.port, instance_id=peer.instance_id, secret=peer.secret, session_ids=["keep", "adopted"]
        )
        assert "result" in await again.connect()
        result(await pending)  # the call waited for the browser to come back
        assert {s.session_id for s in d.daemon.sessions} == {"keep", "adopted"}


async def test_extension_that_lost_the_default_session_gets_a_new_one() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        result(await d.call("tool.evaluate", {"expression": "1"}))
        calls = {"n": 0}

        async def forgetful(params: dict[str, Any]) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:
                raise RpcError("not_found", "session default unknown", "unknown_session")
            return {"ok": True}

        peer.handlers["tool.evaluate"] = forgetful
        answer = result(await d.call("tool.evaluate", {"expression": "1"}))
        assert answer.pop("page_nonce") == d.daemon.sessions.require("default").page_nonce
        assert answer == {"ok": True}
        assert peer.methods().count("tool.session_start") == 2


async def test_daemon_exits_when_idle() -> None:
    async with running_daemon(daemon_idle_s=0.3) as d:
        await asyncio.wait_for(d.daemon.stop_requested.wait(), 4)


async def test_stop_pressed_by_the_person_aborts_running_and_queued_calls() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        cancelled = asyncio.Event()

        async def long_wait(params: dict[str, Any]) -> Any:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        peer.handlers["tool.wait"] = long_wait
        result(await d.call("session.start", {"name": "s"}))
        running = asyncio.ensure_future(d.call("tool.wait", {"timeout_ms": 20000}, session="s"))
        await wait_for(lambda: "tool.wait" in peer.methods())
        queued = asyncio.ensure_future(d.call("tool.evaluate", {"expression": "1"}, session="s"))
        await wait_for(lambda: d.daemon.sessions.get("s").waiting == 1)  # type: ignore[union-attr]
        started = time.monotonic()
        await peer.send_event("session.user_interrupt", {"session_id": "s"})
        first, second = error(await running), error(await queued)
        assert time.monotonic() - started < 1.0
        assert (first["code"], first["data"]["reason"]) == ("user_aborted", "user_interrupt")
        assert "ask them" in first["data"]["hint"]
        assert (second["code"], second["data"]["reason"]) == ("user_aborted", "user_interrupt")
        await asyncio.wait_for(cancelled.wait(), 2)  # the extension was told to cancel
        assert "tool.evaluate" not in peer.methods()  # the queued call never ran

        paused = error(await d.call("tool.evaluate", {"expression": "1"}, session="s"))
        assert paused["data"]["reason"] == "session_paused"
        listed = result(await d.call("session.list"))["sessions"]
        assert listed[0]["paused"] is True
        assert result(await d.call("session.resume", {}, session="s")) == {"session_id": "s", "resumed": True}
        result(await d.call("tool.evaluate", {"expression": "1"}, session="s"))


async def test_the_person_can_resume_from_the_page() -> None:
    async with running_daemon() as d:
        peer = await d.paired_peer()
        result(await d.call("session.start", {"name": "s"}))
        await peer.send_event("session.user_interrupt", {"session_id": "s"})
        await wait_for(lambda: d.daemon.sessions.get("s").paused)  # type: ignore[union-attr]
        await peer.send_event("session.user_resume", {"session_id": "s"})
        await wait_for(lambda: not d.daemon.sessions.get("s").paused)  # type: ignore[union-attr]
        result(await d.call("tool.evaluate", {"expression": "1"}, session="s"))


async def test_another_browser_cannot_stop_a_session() -> None:
    async with running_daemon() as d:
        await d.paired_peer(label="owner")
        other = await d.paired_peer(label="other")
        result(await d.call("session.start", {"name": "s"}, browser="owner"))
        await other.send_event("session.user_interrupt", {"session_id": "s"})
        await asyncio.sleep(0.1)
        assert not d.daemon.sessions.get("s").paused  # type: ignore[union-attr]


async def test_a_restarted_daemon_waits_for_the_browser_to_bring_a_named_session_back() -> None:
    async with running_daemon() as first:
        peer = await first.paired_peer()
        home, instance_id, secret = first.home, peer.instance_id, peer.secret
        await peer.close()
    async with running_daemon(home=home, startup_wait_s=10) as d:
        pending = asyncio.ensure_future(d.call("tool.evaluate", {"expression": "1"}, session="p1"))
        await asyncio.sleep(0.6)  # the extension's reconnect takes about this long
        assert not pending.done()
        again = type(peer)(d.port, instance_id=instance_id, secret=secret, session_ids=["p1"])
        assert "result" in await again.connect()
        assert result(await pending)["echo"]["session_id"] == "p1"
        # every paired browser is back: a session none of them brought is unknown at once
        started = time.monotonic()
        err = error(await d.call("tool.evaluate", {"expression": "1"}, session="p2"))
        assert time.monotonic() - started < 0.5 and err["data"]["reason"] == "unknown_session"
        assert "not one of them" in err["data"]["hint"]
        await again.close()


async def test_browser_option_must_name_the_session_s_connected_browser() -> None:
    async with running_daemon() as d:
        one = await d.paired_peer(label="Work")
        await d.paired_peer(label="Home")
        result(await d.call("session.start", {"name": "w"}, browser="work"))
        unknown = error(
            await d.call("tool.evaluate", {"expression": "1"}, session="w", browser="nonexistent")
        )
        assert (unknown["code"], unknown["data"]["reason"]) == ("not_found", "unknown_browser")
        other = error(await d.call("tool.evaluate", {"expression": "1"}, session="w", browser="home"))
        assert other["code"] == "invalid_params" and one.instance_id in other["message"]
        result(await d.call("tool.evaluate", {"expression": "1"}, session="w", browser="work"))
        listed = error(await d.call("session.list", browser="nonexistent"))
        assert listed["data"]["reason"] == "unknown_browser"
        assert result(await d.call("session.list", browser="home"))["sessions"]
