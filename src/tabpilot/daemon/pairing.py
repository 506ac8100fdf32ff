"""One-time pairing codes (with a throttle on wrong guesses) and the store of paired browsers."""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from tabpilot import auth
from tabpilot.protocol import RpcError

CODE_TTL_S = 300.0
MAX_FAILURES = 5
FAILURE_WINDOW_S = 60.0
LOCKOUT_S = 60.0


@dataclass
class PairingCode:
    display: str
    expires_at: float
    used_by: str | None = None
    # Made by `browser launch` for the browser it starts: exempt from the throttle on wrong codes.
    launch: bool = False

    @property
    def normalized(self) -> str:
        return auth.normalize_code(self.display)


@dataclass
class PairingCodes:
    """Live codes from ``tabpilot pair``; wrong guesses beyond the limit lock pairing for a while.

    A lockout lasts ``lockout_s`` and is followed by as long a time in which wrong codes cannot lock
    again, so a flood of them holds a person's pairing (the popup retries every few seconds) back
    for at most ``lockout_s``. Launch codes are never throttled: they are too long to guess.
    """

    clock: Callable[[], float] = time.monotonic
    max_failures: int = MAX_FAILURES
    failure_window_s: float = FAILURE_WINDOW_S
    lockout_s: float = LOCKOUT_S
    _codes: dict[str, PairingCode] = field(default_factory=dict)
    _failures: deque[float] = field(default_factory=deque)
    _locked_until: float = 0.0
    _open_until: float = 0.0

    def create(self, ttl_s: float = CODE_TTL_S, code: str | None = None, launch: bool = False) -> PairingCode:
        display = code or (auth.new_launch_code() if launch else auth.new_pairing_code())
        entry = PairingCode(display=display, expires_at=self.clock() + ttl_s, launch=launch)
        self._codes[entry.normalized] = entry
        return entry

    def get(self, code: str) -> PairingCode | None:
        return self._codes.get(auth.normalize_code(code))

    def is_live(self, entry: PairingCode) -> bool:
        return entry.used_by is None and self.clock() < entry.expires_at

    def retry_after(self) -> float:
        """Seconds until pairing attempts are accepted again; 0 when not throttled."""
        return max(0.0, self._locked_until - self.clock())

    def match(self, instance_id: str, nonce: str, code_proof: object) -> PairingCode:
        """The live code the extension proved it holds; raises ``auth_failed`` otherwise."""
        self._drop_expired()
        found = self._proven(instance_id, nonce, code_proof, launch=True)
        if found is not None:
            return found
        wait = self.retry_after()
        if wait > 0:
            raise RpcError(
                "auth_failed",
                f"too many wrong pairing codes; pairing is locked for {wait:.0f} s",
                "pairing_throttled",
                retry_after_s=round(wait, 1),
            )
        found = self._proven(instance_id, nonce, code_proof, launch=False)
        if found is not None:
            return found
        self._record_failure()
        raise RpcError("auth_failed", "wrong or expired pairing code", "wrong_pairing_code")

    def _proven(self, instance_id: str, nonce: str, code_proof: object, launch: bool) -> PairingCode | None:
        for entry in self._codes.values():
            if entry.launch != launch or not self.is_live(entry):
                continue
            if auth.proofs_equal(auth.pairing_code_proof(entry.display, instance_id, nonce), code_proof):
                return entry
        return None

    def consume(self, entry: PairingCode, instance_id: str) -> None:
        entry.used_by = instance_id

    def _record_failure(self) -> None:
        now = self.clock()
        self._failures.append(now)
        while self._failures and now - self._failures[0] > self.failure_window_s:
            self._failures.popleft()
        if len(self._failures) >= self.max_failures and now >= self._open_until:
            self._locked_until = now + self.lockout_s
            self._open_until = self._locked_until + self.lockout_s
            self._failures.clear()

    def _drop_expired(self) -> None:
        now = self.clock()
        # Used codes stay until they expire so `pair.wait` can still read who used them.
        for key in [k for k, v in self._codes.items() if now >= v.expires_at]:
            del self._codes[key]


@dataclass
class PairedBrowser:
    instance_id: str
    secret: str
    label: str = ""
    browser: str = ""
    paired_at: float = 0.0


class SecretStore:
    """Secrets of paired browsers, in a JSON file readable only by the user (0600)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._entries: dict[str, PairedBrowser] = {}
        self._load()

    def _load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as handle:
                raw = json.load(handle)
        except (FileNotFoundError, ValueError):
            return
        if not isinstance(raw, dict):
            return
        for instance_id, entry in raw.items():
            if isinstance(entry, dict) and isinstance(entry.get("secret"), str):
                self._entries[instance_id] = PairedBrowser(
                    instance_id=instance_id,
                    secret=entry["secret"],
                    label=str(entry.get("label", "")),
                    browser=str(entry.get("browser", "")),
                    paired_at=float(entry.get("paired_at", 0.0)),
                )

    def _save(self) -> None:
        payload = {
            e.instance_id: {
                "secret": e.secret,
                "label": e.label,
                "browser": e.browser,
                "paired_at": e.paired_at,
            }
            for e in self._entries.values()
        }
        tmp = f"{self.path}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=1)
        os.replace(tmp, self.path)

    def secret_for(self, instance_id: str) -> str | None:
        entry = self._entries.get(instance_id)
        return entry.secret if entry else None

    def put(self, instance_id: str, secret: str, label: str = "", browser: str = "") -> None:
        self._entries[instance_id] = PairedBrowser(instance_id, secret, label, browser, time.time())
        self._save()

    def remove(self, instance_id: str) -> bool:
        if self._entries.pop(instance_id, None) is None:
            return False
        self._save()
        return True

    def all(self) -> list[PairedBrowser]:
        return list(self._entries.values())
