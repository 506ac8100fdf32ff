"""Conversations on disk: the daemon is the single writer of each one's numbered event log.

``$TABPILOT_HOME/chats/<cid>/meta.json`` holds what the conversation is bound to;
``events.jsonl`` holds one event per line with a strictly increasing ``seq``. Folders are 0700,
files 0600: they hold what the person typed and what the agent read on their pages.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import secrets
import shutil
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from tabpilot.protocol import RpcError

CONVERSATION_ID = re.compile(r"^c-[a-z0-9]{16}$")
LIST_LIMIT = 50
TITLE_CHARS = 60


@dataclass
class Meta:
    conversation_id: str
    session_id: str
    agent: str
    workspace: str | None
    cwd: str
    tab_id: int | None
    window_id: int | None
    url: str
    page_title: str
    browser: str
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    title: str = ""
    turns: int = 0
    agent_session_id: str | None = None

    def summary(self) -> dict[str, Any]:
        return asdict(self)


class Conversation:
    """One conversation's meta and its events, loaded once and appended to in order."""

    def __init__(self, folder: str, meta: Meta, events: list[dict[str, Any]]) -> None:
        self.folder = folder
        self.meta = meta
        self.events = events

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def open_turn(self) -> str | None:
        """The id of a turn that started and has not ended."""
        open_turn = None
        for event in self.events:
            if event["kind"] == "turn_start":
                open_turn = event["turn_id"]
            elif event["kind"] == "turn_end":
                open_turn = None
        return open_turn

    def since(self, seq: int, fold: bool = False) -> list[dict[str, Any]]:
        """The events after `seq`; with `fold`, each run of one turn's text deltas as one event."""
        after = [e for e in self.events if e["seq"] > seq]
        return fold_text(after) if fold else after

    def turn_text(self, turn_id: str) -> str:
        return "".join(
            e.get("delta", "") for e in self.events if e["turn_id"] == turn_id and e["kind"] == "text"
        )

    def transcript(self) -> list[dict[str, Any]]:
        """Events with each run of text deltas merged into one ``text`` item: what history shows."""
        items: list[dict[str, Any]] = []
        for event in self.since(0, fold=True):
            item = {k: v for k, v in event.items() if k not in ("conversation_id", "delta")}
            if event["kind"] == "text":
                item["text"] = event.get("delta", "")
            items.append(item)
        return items


def fold_text(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each run of one turn's consecutive text deltas as one ``text`` event: its deltas joined, the seq
    of its last. What one view that has rendered everything up to the first event's seq should be sent
    (a view that holds part of a run would get that part twice)."""
    out: list[dict[str, Any]] = []
    for (is_text, _), group in itertools.groupby(events, key=_text_run):
        run = list(group)
        if is_text and len(run) > 1:
            out.append({**run[-1], "delta": "".join(e.get("delta", "") for e in run)})
        else:
            out.extend(run)
    return out


def _text_run(event: dict[str, Any]) -> tuple[bool, object]:
    """Groups one turn's consecutive text deltas together; every other event stands alone."""
    return (True, event.get("turn_id")) if event["kind"] == "text" else (False, id(event))


def _write_private(path: str, data: str, append: bool = False) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "a" if append else "w", encoding="utf-8") as handle:
        handle.write(data)


class ConversationStore:
    def __init__(self, home: str) -> None:
        self.root = os.path.join(home, "chats")
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        os.chmod(self.root, 0o700)
        self._open: dict[str, Conversation] = {}

    def new_id(self) -> str:
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        return "c-" + "".join(secrets.choice(alphabet) for _ in range(16))

    def folder(self, conversation_id: str) -> str:
        return os.path.join(self.root, conversation_id)

    def create(self, meta: Meta) -> Conversation:
        folder = self.folder(meta.conversation_id)
        os.makedirs(folder, mode=0o700)
        conversation = Conversation(folder, meta, [])
        self.save_meta(conversation)
        _write_private(os.path.join(folder, "events.jsonl"), "")
        self._open[meta.conversation_id] = conversation
        return conversation

    def save_meta(self, conversation: Conversation) -> None:
        conversation.meta.updated_at = time.time()
        path = os.path.join(conversation.folder, "meta.json")
        _write_private(f"{path}.tmp", json.dumps(asdict(conversation.meta)))
        os.replace(f"{path}.tmp", path)

    def get(self, conversation_id: Any) -> Conversation:
        if not isinstance(conversation_id, str) or not CONVERSATION_ID.match(conversation_id):
            raise _unknown(conversation_id)
        conversation = self._open.get(conversation_id)
        if conversation is None:
            conversation = self._load(conversation_id)
            if conversation is None:
                raise _unknown(conversation_id)
            self._open[conversation_id] = conversation
        return conversation

    def _load(self, conversation_id: str) -> Conversation | None:
        folder = self.folder(conversation_id)
        try:
            with open(os.path.join(folder, "meta.json"), encoding="utf-8") as handle:
                meta = Meta(**json.load(handle))
        except (OSError, ValueError, TypeError):
            return None
        events = []
        with (
            contextlib.suppress(FileNotFoundError),
            open(os.path.join(folder, "events.jsonl"), encoding="utf-8") as handle,
        ):
            for line in handle:
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    if isinstance(event, dict) and isinstance(event.get("seq"), int):
                        events.append(event)
        return Conversation(folder, meta, events)

    def append(
        self, conversation: Conversation, turn_id: str | None, kind: str, **data: Any
    ) -> dict[str, Any]:
        """Number the event, write it as one line, and return it (the caller broadcasts it)."""
        event = {
            "conversation_id": conversation.meta.conversation_id,
            "seq": conversation.last_seq + 1,
            "turn_id": turn_id,
            "kind": kind,
            "ts": round(time.time(), 3),
            **data,
        }
        _write_private(
            os.path.join(conversation.folder, "events.jsonl"), json.dumps(event) + "\n", append=True
        )
        conversation.events.append(event)
        return event

    def all(self) -> list[Conversation]:
        found = []
        for name in os.listdir(self.root):
            if CONVERSATION_ID.match(name):
                with contextlib.suppress(RpcError):
                    found.append(self.get(name))
        return sorted(found, key=lambda c: c.meta.updated_at, reverse=True)

    def delete(self, conversation: Conversation) -> None:
        self._open.pop(conversation.meta.conversation_id, None)
        shutil.rmtree(conversation.folder, ignore_errors=True)


def _unknown(conversation_id: Any) -> RpcError:
    return RpcError(
        "not_found",
        f"unknown conversation {conversation_id!r}",
        "unknown_conversation",
        hint="chat.list shows the conversations the daemon keeps",
    )
