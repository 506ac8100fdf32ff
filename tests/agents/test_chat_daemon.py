"""The daemon's chat methods with a stand-in agent CLI and a fake extension peer (fast; no browser)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from pathlib import Path

import pytest
from fakes import running_daemon

from rig import ChatRig, chat_rig
from tabpilot.agents.runner import group_alive
from tabpilot.daemon.service import Daemon


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def turn(rig: ChatRig, cid: str, text: str) -> dict:
    sent = await rig.ok("chat.send", {"conversation_id": cid, "text": text, "client_msg_id": "m1"})
    return await rig.event(cid, "turn_end", sent["seq"])


async def test_a_turn_streams_numbered_events_in_order_into_a_private_log() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        end = await turn(rig, cid, "STUB: say Hel | say lo")
        events = rig.events(cid)
        assert [e["kind"] for e in events] == ["user", "turn_start", "session", "text", "text", "turn_end"]
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert {e["turn_id"] for e in events} == {end["turn_id"]}
        assert [e["delta"] for e in events if e["kind"] == "text"] == ["Hel", "lo"]
        assert end["interrupted"] is False and end["reason"] == "done" and end["text"] == "Hello"
        folder = Path(rig.daemon.home, "chats", cid)
        assert mode(folder) == 0o700 and mode(folder / "work") == 0o700
        assert mode(folder / "events.jsonl") == 0o600 and mode(folder / "meta.json") == 0o600
        on_disk = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
        assert on_disk == events
        # A panel reopening after seq 3 gets the rest; asked folded, the reply's deltas come as one event
        # that carries the seq of its last (after seq 4, only what it has not rendered). History merges too.
        attached = await rig.ok("chat.attach", {"conversation_id": cid, "since_seq": 3})
        assert [e["seq"] for e in attached["events"]] == [4, 5, 6] and attached["running"] is False
        folded = await rig.ok("chat.attach", {"conversation_id": cid, "since_seq": 3, "fold": True})
        assert [(e["seq"], e.get("delta")) for e in folded["events"]] == [(5, "Hello"), (6, None)]
        folded = await rig.ok("chat.attach", {"conversation_id": cid, "since_seq": 4, "fold": True})
        assert [(e["seq"], e.get("delta")) for e in folded["events"]] == [(5, "lo"), (6, None)]
        got = await rig.ok("chat.get", {"conversation_id": cid})
        assert [i["kind"] for i in got["items"]] == ["user", "turn_start", "session", "text", "turn_end"]
        assert got["items"][3]["text"] == "Hello" and got["conversation"]["title"] == "STUB: say Hel | say lo"
        listed = await rig.ok("chat.list")
        assert [c["conversation_id"] for c in listed["conversations"]] == [cid]


async def test_the_persons_text_reaches_stdin_never_argv_and_the_env_is_sealed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-token")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-keep")
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("MONGODB_URI", "mongodb://app:pw@mongo.test/shop")
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        await turn(rig, cid, "--yolo STUB: say fine")
        record = rig.records(cid)[0]
        assert not any("--yolo" in arg for arg in record["argv"]), record["argv"]
        assert any("--yolo STUB: say fine" in line for line in record["stdin"])
        env = record["env"]
        assert "AWS_SECRET_ACCESS_KEY" not in env and "GITHUB_TOKEN" not in env and "CLAUDECODE" not in env
        assert "MONGODB_URI" not in env
        assert env["ANTHROPIC_API_KEY"] == "sk-keep"
        assert env["TABPILOT_RUN"] and env["TABPILOT_HOME"] == rig.daemon.home
        assert "--tools=" in record["argv"] and "--strict-mcp-config" in record["argv"]
        assert record["cwd"] == str(Path(rig.daemon.home, "chats", cid, "work"))


async def test_the_second_turn_resumes_the_agents_own_conversation() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        await turn(rig, cid, "STUB: say one")
        first_session = rig.meta(cid)["agent_session_id"]
        await turn(rig, cid, "STUB: say two")
        first, second = rig.records(cid)
        assert f"--session-id={first_session}" in first["argv"]
        assert f"--resume={first_session}" in second["argv"]
        assert not any(a.startswith("--session-id") for a in second["argv"])
        sessions = [e["agent_session_id"] for e in rig.events(cid) if e["kind"] == "session"]
        assert sessions == [first_session, first_session]


async def test_a_tampered_resume_id_is_refused_before_anything_starts() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        await turn(rig, cid, "STUB: say one")
        meta_path = Path(rig.daemon.home, "chats", cid, "meta.json")
        conversation = rig.daemon.daemon.chats.store.get(cid)
        conversation.meta.agent_session_id = "--dangerously-skip-permissions"
        error = await rig.fails("chat.send", {"conversation_id": cid, "text": "STUB: say two"})
        assert error["data"]["reason"] == "agent_unsafe"
        assert len(rig.records(cid)) == 1 and meta_path.exists()


async def test_stop_ends_the_whole_process_group_and_keeps_the_partial_text() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say partial | child | hang"})
        await rig.event(cid, "text", sent["seq"])
        await asyncio.sleep(0.2)
        record = rig.records(cid)[0]
        pgid, child = record["pid"], record["children"][0]
        assert group_alive(pgid)
        began = time.monotonic()
        stopped = await rig.ok("chat.stop", {"conversation_id": cid})
        took = time.monotonic() - began
        assert stopped["stopped"] is True
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)
        assert (
            not Path(f"/proc/{child}").exists()
            or "Z" in Path(f"/proc/{child}/stat").read_text().split(") ")[1][:1]
        )
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert end["interrupted"] is True and end["reason"] == "stopped" and end["text"] == "partial"
        # the agent got the interrupt on its stdin before anything was killed
        assert any('"interrupt"' in line for line in rig.records(cid)[0]["stdin"])
        assert took < 3.0, took
        got = await rig.ok("chat.get", {"conversation_id": cid})
        assert got["items"][-1]["interrupted"] is True


async def test_stop_kills_an_agent_that_ignores_sigterm_after_five_seconds() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        sent = await rig.ok(
            "chat.send", {"conversation_id": cid, "text": "STUB: say stubborn | ignore-term | hang"}
        )
        await rig.event(cid, "text", sent["seq"])
        await asyncio.sleep(0.2)
        pgid = rig.records(cid)[0]["pid"]
        began = time.monotonic()
        stopped = await rig.ok("chat.stop", {"conversation_id": cid}, timeout=30)
        took = time.monotonic() - began
        assert stopped["step"] == "sigkill"
        assert not group_alive(pgid)
        assert 5.0 <= took < 7.5, took
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert end["interrupted"] is True and end["text"] == "stubborn"


async def test_a_panel_session_answers_only_during_its_turn_and_with_its_run_token() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        session_id = rig.meta(cid)["session_id"]
        assert session_id.startswith("p-") and len(session_id) == 22

        async def snapshot(run: str | None) -> dict:
            context = {"session": session_id, **({"run": run} if run else {})}
            return await rig.daemon.call("tool.snapshot", {}, **context)

        before = await snapshot(None)
        assert before["error"]["data"]["reason"] == "session_inactive"
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say working | hang"})
        await rig.event(cid, "text", sent["seq"])
        await asyncio.sleep(0.2)
        token = rig.records(cid)[0]["env"]["TABPILOT_RUN"]
        assert (await snapshot(None))["error"]["data"]["reason"] == "session_inactive"
        assert (await snapshot("not-the-token"))["error"]["data"]["reason"] == "session_inactive"
        good = await snapshot(token)
        assert "result" in good, good
        # The browser was told about the panel session (bound to the tab) and got the call in it.
        starts = [f for f in rig.peer.received if f.get("method") == "tool.session_start"]
        assert starts[-1]["params"]["kind"] == "panel" and starts[-1]["params"]["tab_id"] == 7
        calls = [f for f in rig.peer.received if f.get("method") == "tool.snapshot"]
        assert calls[-1]["params"]["session_id"] == session_id
        tool = await rig.event(cid, "tool", sent["seq"])
        result = await rig.event(cid, "tool_result", tool["seq"])
        assert tool["name"] == "snapshot" and tool["source"] == "tabpilot"
        assert result["call_id"] == tool["call_id"] and result["ok"] is True
        # With the token, only page tools: no session of its own, no daemon control.
        for method in ("session.start", "daemon.stop"):
            refused = await rig.daemon.call(method, {}, run=token)
            assert refused["error"]["code"] == "permission_denied", refused
        listed = await rig.daemon.call("session.list")
        assert session_id not in [s["session_id"] for s in listed["result"]["sessions"]]
        await rig.ok("chat.stop", {"conversation_id": cid})
        assert (await snapshot(token))["error"]["data"]["reason"] == "session_inactive"


async def test_a_panel_session_with_its_token_is_refused_the_persons_other_tabs_and_every_sites_cookies() -> (
    None
):
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        session_id = rig.meta(cid)["session_id"]
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say working | hang"})
        await rig.event(cid, "text", sent["seq"])
        await asyncio.sleep(0.2)
        token = rig.records(cid)[0]["env"]["TABPILOT_RUN"]
        for method, params in (
            ("tool.tab_list", {"scope": "user"}),
            ("tool.tab_list", {"scope": "all"}),
            ("tool.state_save", {}),
            ("tool.state_load", {"state": {"cookies": [], "origins": []}}),
            ("tool.cookies", {"action": "list", "show_secrets": True}),
            ("tool.network_requests", {"detail": True, "show_secrets": True}),
            ("tool.navigate", {"url": "file:///etc/passwd", "allow_file": True}),
        ):
            refused = await rig.daemon.call(method, params, session=session_id, run=token)
            assert refused["error"]["code"] == "permission_denied", (method, refused)
            assert "side-panel agent" in refused["error"]["message"]
        reached = {f.get("method") for f in rig.peer.received}
        withheld = {"tool.tab_list", "tool.state_save", "tool.state_load", "tool.cookies", "tool.navigate"}
        assert not reached & withheld, reached
        own = await rig.daemon.call("tool.tab_list", {}, session=session_id, run=token)
        assert "result" in own, own
        await rig.ok("chat.stop", {"conversation_id": cid})


async def test_a_new_daemon_closes_a_turn_the_previous_one_left_open() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say half | hang"})
        await rig.event(cid, "text", sent["seq"])
        await asyncio.sleep(0.2)
        pgid = rig.records(cid)[0]["pid"]
        # What a daemon that died mid-turn leaves behind, found by the next one on the same home.
        Daemon(rig.daemon.home, 0)
        lines = [
            json.loads(line)
            for line in Path(rig.daemon.home, "chats", cid, "events.jsonl").read_text().splitlines()
        ]
        end = lines[-1]
        assert (
            end["kind"] == "turn_end" and end["interrupted"] is True and end["reason"] == "daemon_restarted"
        )
        assert end["text"] == "half"
        for _ in range(100):
            if not group_alive(pgid):
                break
            await asyncio.sleep(0.05)
        assert not group_alive(pgid)


async def test_a_browser_that_still_holds_a_dead_turns_panel_session_is_told_to_release_it() -> None:
    async with running_daemon() as daemon:
        leftover = "p-" + "a" * 20
        peer = await daemon.paired_peer(session_ids=[leftover, "agent-task"])
        frame = await peer.wait_frame(lambda f: f.get("method") == "tool.session_stop", 10)
        assert frame["params"]["session_id"] == leftover
        await asyncio.sleep(0.2)
        stops = [f["params"]["session_id"] for f in peer.received if f.get("method") == "tool.session_stop"]
        assert stops == [leftover], "only the panel session is released; an Agent Window session is adopted"
        await peer.close()


async def test_bad_starts_are_refused_with_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    async with chat_rig() as rig:
        unknown = await rig.fails("chat.start", {"tab_id": 3, "agent": "claude", "workspace": "ws-nope-0000"})
        assert unknown["data"]["reason"] == "unknown_workspace"
        missing = await rig.fails("chat.start", {"tab_id": 3, "agent": "codex"})
        assert missing["data"]["reason"] == "agent_missing"
        assert (await rig.fails("chat.start", {"tab_id": 3, "agent": "sh"}))["data"][
            "reason"
        ] == "agent_missing"
        assert (await rig.fails("chat.start", {"agent": "claude"}))["code"] == "invalid_params"
        listed = await rig.ok("agent.list")
        states = {a["id"]: a for a in listed["agents"]}
        assert states["claude"]["state"] == "ready" and states["claude"]["version"] == "2.1.328 (Claude Code)"
        assert (
            states["codex"]["state"] == "not_installed" and "panel agent set codex" in states["codex"]["hint"]
        )
        cid = await rig.new_chat()
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say a | hang"})
        busy = await rig.fails("chat.send", {"conversation_id": cid, "text": "again"})
        assert busy["data"]["reason"] == "run_in_progress"
        await rig.event(cid, "text", sent["seq"])
        await rig.ok("chat.stop", {"conversation_id": cid})
        assert (await rig.ok("chat.delete", {"conversation_id": cid}))["deleted"] is True
        assert not Path(rig.daemon.home, "chats", cid).exists()
        assert (await rig.fails("chat.get", {"conversation_id": cid}))["data"][
            "reason"
        ] == "unknown_conversation"


async def test_an_unauthenticated_peer_reaches_no_chat_method() -> None:
    async with chat_rig() as rig:
        from fakes import FakeExtension

        stranger = FakeExtension(rig.daemon.port)
        await stranger.open()
        reply = await stranger.rpc("chat.list", {})
        assert reply["error"]["data"]["reason"] == "handshake_required"
        await stranger.close()


async def test_stop_first_denies_the_agents_open_question() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        text = 'STUB: say asking | ask Bash {"command": "touch x"} | say after'
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": text})
        asked = await rig.event(cid, "permission", sent["seq"])
        assert asked["tool"] == "Bash" and asked["input"] == {"command": "touch x"}
        attached = await rig.ok("chat.attach", {"conversation_id": cid, "since_seq": asked["seq"]})
        assert attached["pending"] == [asked["permission_id"]]
        await rig.ok("chat.stop", {"conversation_id": cid})
        denied = await rig.event(cid, "permission_end", asked["seq"])
        assert denied["decision"] == "deny" and denied["why"] == "stopped"
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert denied["seq"] < end["seq"] and end["interrupted"] is True
        # the agent got the deny on its stdin before it was interrupted
        stdin = rig.records(cid)[0]["stdin"]
        answers = [i for i, line in enumerate(stdin) if '"behavior":"deny"' in line]
        interrupts = [i for i, line in enumerate(stdin) if '"interrupt"' in line]
        assert answers and interrupts and answers[0] < interrupts[0]


async def test_an_agent_that_dies_or_fails_ends_its_turn_with_what_it_wrote() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        end = await turn(rig, cid, "STUB: say half | exit 3")
        assert (end["reason"], end["interrupted"], end["exit_code"], end["text"]) == (
            "agent_exited",
            True,
            3,
            "half",
        )
        error = next(e for e in rig.events(cid) if e["kind"] == "error")
        assert error["code"] == "agent_exited" and error["fatal"] is True
        end = await turn(rig, cid, "STUB: fail the model is overloaded")
        assert end["reason"] == "failed" and end["interrupted"] is False
        failure = [e for e in rig.events(cid) if e["kind"] == "error"][-1]
        assert failure["message"] == "the model is overloaded" and failure["fatal"] is True


@pytest.mark.parametrize(
    ("event", "reason"), [("chat.tab_closed", "tab_closed"), ("session.user_interrupt", "stopped")]
)
async def test_closing_the_tab_or_stop_in_the_page_ends_the_turn(event: str, reason: str) -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say busy | hang"})
        await rig.event(cid, "text", sent["seq"])
        await rig.peer.wait_frame(lambda f: f.get("method") == "tool.session_start")
        await asyncio.sleep(0.1)
        await rig.peer.send_event(event, {"session_id": rig.meta(cid)["session_id"]})
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert end["interrupted"] is True and end["reason"] == reason and end["text"] == "busy"
        if event == "chat.tab_closed":
            error = await rig.fails("chat.send", {"conversation_id": cid, "text": "again"})
            assert error["data"]["reason"] == "tab_closed"


async def test_the_persons_answer_to_the_agents_own_question_goes_back_to_it() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        text = 'STUB: ask Bash {"command": "touch x"} | say after'
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": text})
        asked = await rig.event(cid, "permission", sent["seq"])
        refused = await rig.peer.request(
            "chat.answer", {"conversation_id": cid, "permission_id": "nope", "decision": "allow"}
        )
        assert refused["error"]["code"] == "not_found"
        bad = await rig.peer.request(
            "chat.answer",
            {"conversation_id": cid, "permission_id": asked["permission_id"], "decision": "yes"},
        )
        assert bad["error"]["code"] == "invalid_params"
        answer = {"conversation_id": cid, "permission_id": asked["permission_id"], "decision": "allow"}
        assert await rig.ok("chat.answer", answer) == {"answered": True, "decision": "allow"}
        allowed = await rig.event(cid, "permission_end", asked["seq"])
        assert (allowed["decision"], allowed["why"]) == ("allow", "person")
        await rig.event(cid, "turn_end", sent["seq"])
        # Claude gets the input it asked about back with the yes (its control protocol wants it).
        stdin = rig.records(cid)[0]["stdin"]
        reply = next(json.loads(line) for line in stdin if '"behavior":"allow"' in line)
        assert reply["response"]["response"] == {"behavior": "allow", "updatedInput": {"command": "touch x"}}
        again = await rig.peer.request("chat.answer", answer)
        assert again["error"]["code"] == "not_found", "an answered question takes no second answer"


async def test_the_extensions_cards_land_in_the_timeline_and_one_left_open_ends_with_its_turn() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say busy | hang"})
        await rig.event(cid, "text", sent["seq"])
        session_id = rig.meta(cid)["session_id"]
        card = {
            "rule": "form-submit",
            "title": "Submit a form",
            "target": 'button "Pay"',
            "site": "shop.test",
            "always": True,
        }
        for approval_id in ("ap-1", "ap-2"):
            await rig.peer.send_event(
                "chat.approval",
                {
                    "session_id": session_id,
                    "conversation_id": cid,
                    "approval_id": approval_id,
                    "state": "asked",
                    **card,
                },
            )
        # Another session cannot put a card into this conversation.
        await rig.peer.send_event(
            "chat.approval",
            {"session_id": "p-other", "conversation_id": cid, "approval_id": "ap-3", "state": "asked"},
        )
        asked = await rig.event(cid, "approval", sent["seq"])
        assert {k: asked[k] for k in ("approval_id", "rule", "target", "always")} == {
            "approval_id": "ap-1",
            "rule": "form-submit",
            "target": 'button "Pay"',
            "always": True,
        }
        await rig.peer.send_event(
            "chat.approval",
            {
                "session_id": session_id,
                "conversation_id": cid,
                "approval_id": "ap-1",
                "state": "answered",
                "decision": "deny",
                "via": "panel",
            },
        )
        ended = await rig.event(cid, "approval_end", asked["seq"])
        assert (ended["approval_id"], ended["decision"], ended["via"]) == ("ap-1", "deny", "panel")
        await rig.ok("chat.stop", {"conversation_id": cid})
        await rig.event(cid, "turn_end", sent["seq"])
        ends = [(e["approval_id"], e["decision"]) for e in rig.events(cid) if e["kind"] == "approval_end"]
        assert ends == [("ap-1", "deny"), ("ap-2", "stopped")]
        assert [e["approval_id"] for e in rig.events(cid) if e["kind"] == "approval"] == ["ap-1", "ap-2"]
