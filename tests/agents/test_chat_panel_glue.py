"""What the side panel needs of the chat methods: a conversation reopened from History binds to the new tab
and resumes with the same agent; a screenshot attached to a message is checked before anything starts."""

from __future__ import annotations

import asyncio
import base64
import json

from rig import chat_rig
from tabpilot import protocol


async def test_a_closed_tabs_conversation_rebinds_to_another_tab_and_resumes() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat(tab_id=7)
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say one"})
        await rig.event(cid, "turn_end", sent["seq"])
        first_session = rig.meta(cid)["agent_session_id"]
        assert rig.peer.ws is not None
        await rig.peer.ws.send(
            json.dumps(protocol.event("chat.tab_closed", {"conversation_id": cid, "tab_id": 7}))
        )
        for _ in range(100):
            if rig.meta(cid)["tab_id"] is None:
                break
            await asyncio.sleep(0.02)
        refused = await rig.fails("chat.send", {"conversation_id": cid, "text": "STUB: say two"})
        assert refused["data"]["reason"] == "tab_closed"
        wrong = await rig.fails("chat.start", {"tab_id": 9, "agent": "codex", "conversation_id": cid})
        assert wrong["code"] == "invalid_params"
        again = await rig.ok(
            "chat.start",
            {"tab_id": 9, "window_id": 2, "url": "http://y.test/", "agent": "claude", "conversation_id": cid},
        )
        assert again["conversation_id"] == cid
        assert rig.meta(cid)["tab_id"] == 9 and rig.meta(cid)["url"] == "http://y.test/"
        sent = await rig.ok("chat.send", {"conversation_id": cid, "text": "STUB: say two"})
        end = await rig.event(cid, "turn_end", sent["seq"])
        assert end["reason"] == "done"
        assert f"--resume={first_session}" in rig.records(cid)[-1]["argv"]
        starts = [f for f in rig.peer.received if f.get("method") == "tool.session_start"]
        assert starts[-1]["params"]["tab_id"] == 9


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()


async def test_screenshot_attachments_are_checked_and_refused_for_an_agent_that_cannot_take_them() -> None:
    async with chat_rig() as rig:
        cid = await rig.new_chat()
        for bad in (
            "not a list",
            [{"kind": "screenshot", "media_type": "image/png", "data": "%%%"}],
            [{"kind": "screenshot", "media_type": "image/png", "data": base64.b64encode(b"GIF89a").decode()}],
            [{"kind": "file", "media_type": "image/png", "data": PNG}],
            [{"kind": "screenshot", "media_type": "image/png", "data": PNG}] * 3,
        ):
            error = await rig.fails(
                "chat.send", {"conversation_id": cid, "text": "STUB: say x", "attachments": bad}
            )
            assert error["code"] == "invalid_params", (bad, error)
        assert rig.records(cid) == [], "nothing started"
        sent = await rig.ok(
            "chat.send",
            {
                "conversation_id": cid,
                "text": "STUB: say one",
                "attachments": [{"kind": "screenshot", "media_type": "image/png", "data": PNG}],
            },
        )
        assert (await rig.event(cid, "turn_end", sent["seq"]))["reason"] == "done"
