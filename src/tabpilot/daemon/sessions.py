"""Sessions: one agent task, one Agent Window, one FIFO queue of calls."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tabpilot.protocol import PANEL_SESSION_PREFIX, RpcError

DEFAULT_SESSION = "default"
SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
# Decimal digits: the tokenizer packs three to a token, so both boundary lines cost 18 tokens.
NONCE_DIGITS = 12


def new_page_nonce() -> str:
    """The random mark of this session's page-text boundaries (about 40 bits)."""
    return f"{secrets.randbelow(10**NONCE_DIGITS):0{NONCE_DIGITS}d}"


def check_session_name(name: str) -> str:
    if not SESSION_NAME.match(name):
        raise RpcError(
            "invalid_params",
            f"bad session name {name!r}",
            hint="use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        )
    if name.startswith(PANEL_SESSION_PREFIX):
        raise RpcError(
            "invalid_params",
            f"session names starting with {PANEL_SESSION_PREFIX!r} are the side panel's",
            hint="pick a name that does not start with 'p-'",
        )
    return name


def stopped_by_person(method: str) -> RpcError:
    return RpcError(
        "user_aborted",
        f"{method} was stopped: the person pressed Stop",
        "user_interrupt",
        hint="the person stopped you; ask them before continuing, then run `tabpilot session resume`",
    )


@dataclass
class Session:
    session_id: str
    browser_id: str
    created_at: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.monotonic)
    window_id: int | None = None
    # "agent": its own Agent Window; "panel": the person's tab, while its side-panel turn runs.
    kind: str = "agent"
    offline_since: float | None = None
    queue: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0
    # Set when the person presses Stop: running and queued calls end, new ones are refused until
    # the agent (or the person) resumes the session.
    interrupted: asyncio.Event = field(default_factory=asyncio.Event)
    # Sent with every tool result: the CLI fences page text between lines carrying it.
    page_nonce: str = field(default_factory=new_page_nonce)

    @property
    def paused(self) -> bool:
        return self.interrupted.is_set()

    def interrupt(self) -> None:
        self.interrupted.set()

    def resume(self) -> bool:
        """Clear a pause; True when the session was paused."""
        if not self.interrupted.is_set():
            return False
        self.interrupted = asyncio.Event()
        return True

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def idle_s(self) -> float:
        return time.monotonic() - self.last_used

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "browser": self.browser_id,
            "window_id": self.window_id,
            "created_at": self.created_at,
            "idle_s": round(self.idle_s(), 1),
            "pending": self.waiting,
            "online": self.offline_since is None,
            "paused": self.paused,
            "kind": self.kind,
        }


class SessionRegistry:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def require(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise RpcError(
                "not_found",
                f"unknown session {session_id!r}",
                "unknown_session",
                # Only a session that is not listed may be started: starting a live one fails.
                hint=f"`tabpilot session list` shows the live sessions; {session_id!r} is not one of them, "
                f"so `tabpilot session start {session_id}` starts it anew (its old tabs are gone)",
            )
        return session

    def new_id(self) -> str:
        while True:
            candidate = "".join(secrets.choice(_ID_ALPHABET) for _ in range(4))
            if candidate not in self._sessions:
                return candidate

    def add(self, session: Session) -> Session:
        if session.session_id in self._sessions:
            raise RpcError(
                "invalid_params",
                f"session {session.session_id!r} already exists",
                "session_exists",
                hint="pick another name, or use it with --session",
            )
        self._sessions[session.session_id] = session
        return session

    def remove(self, session_id: str) -> Session | None:
        return self._sessions.pop(session_id, None)

    def of_browser(self, browser_id: str) -> list[Session]:
        return [s for s in self._sessions.values() if s.browser_id == browser_id]
