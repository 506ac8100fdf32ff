"""The conversation log's backlog: what a reopening panel is sent after the last seq it rendered,
its text deltas folded (one run of deltas, one event)."""

from __future__ import annotations

from typing import Any

from tabpilot.agents.store import Conversation, Meta


def log(*kinds: tuple[str, str, str]) -> Conversation:
    """Events numbered from 1: (kind, turn, delta)."""
    events: list[dict[str, Any]] = []
    for seq, (kind, turn, delta) in enumerate(kinds, start=1):
        event: dict[str, Any] = {
            "conversation_id": "c-x",
            "seq": seq,
            "turn_id": turn,
            "kind": kind,
            "ts": seq,
        }
        if kind == "text":
            event["delta"] = delta
        events.append(event)
    meta = Meta("c-x", "p-x", "claude", None, "/tmp", 1, 1, "http://x.test/", "X", "b")
    return Conversation("/nonexistent", meta, events)


EVENTS = [
    ("user", "t1", ""),
    ("turn_start", "t1", ""),
    ("text", "t1", "Hel"),
    ("text", "t1", "lo "),
    ("tool", "t1", ""),
    ("tool_result", "t1", ""),
    ("text", "t1", "done"),
    ("text", "t1", "."),
    ("turn_end", "t1", ""),
    ("user", "t2", ""),
    ("turn_start", "t2", ""),
    ("text", "t2", "two"),
]


def test_each_run_of_deltas_folds_into_one_event_carrying_the_seq_of_its_last() -> None:
    assert log(*EVENTS).since(0) == log(*EVENTS).events, "unfolded unless asked"
    got = log(*EVENTS).since(0, fold=True)
    assert [(e["seq"], e["kind"], e.get("delta")) for e in got] == [
        (1, "user", None),
        (2, "turn_start", None),
        (4, "text", "Hello "),
        (5, "tool", None),
        (6, "tool_result", None),
        (8, "text", "done."),
        (9, "turn_end", None),
        (10, "user", None),
        (11, "turn_start", None),
        (12, "text", "two"),
    ]
    assert log(*EVENTS).events[2]["delta"] == "Hel", "the log itself is left as it was"


def test_from_any_seq_the_backlog_holds_every_later_delta_once() -> None:
    conversation = log(*EVENTS)
    for since in range(len(EVENTS) + 1):
        got = conversation.since(since, fold=True)
        later = [e for e in conversation.events if e["seq"] > since]
        assert "".join(e.get("delta", "") for e in got) == "".join(e.get("delta", "") for e in later)
        assert all(e["seq"] > since for e in got)
        assert [e["seq"] for e in got] == sorted({e["seq"] for e in got})
        assert (got[-1]["seq"] if got else since) == (later[-1]["seq"] if later else since)
