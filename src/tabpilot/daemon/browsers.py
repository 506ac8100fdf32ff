"""Connected browsers and how a ``--browser`` value picks one."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tabpilot.daemon.peers import PeerHello
from tabpilot.daemon.rpc import PeerChannel
from tabpilot.protocol import RpcError


@dataclass
class Browser:
    hello: PeerHello
    channel: PeerChannel
    connected_at: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.monotonic)
    close: Any = None  # coroutine function that closes the socket

    @property
    def instance_id(self) -> str:
        return self.hello.instance_id

    @property
    def label(self) -> str:
        return self.hello.label

    def describe(self) -> str:
        label = f' "{self.label}"' if self.label else ""
        return f"{self.instance_id}{label} ({self.hello.browser_name} {self.hello.browser_version})"

    def to_json(self, session_ids: list[str]) -> dict[str, Any]:
        h = self.hello
        return {
            "instance_id": h.instance_id,
            "label": h.label,
            "browser": h.browser_name,
            "browser_version": h.browser_version,
            "extension_version": h.extension_version,
            "protocol_version": h.protocol_version,
            "verdict": h.verdict,
            "managed": h.launch_token is not None,
            "sessions": session_ids,
            # When this connection began (epoch seconds): a reconnect shows as a new value.
            "connected_at": round(self.connected_at, 3),
        }


class BrowserRegistry:
    def __init__(self) -> None:
        self._browsers: dict[str, Browser] = {}

    def __len__(self) -> int:
        return len(self._browsers)

    def add(self, browser: Browser) -> Browser | None:
        """Register a browser; returns the connection it replaces (same instance reconnected)."""
        previous = self._browsers.get(browser.instance_id)
        self._browsers[browser.instance_id] = browser
        return previous

    def remove(self, browser: Browser) -> bool:
        if self._browsers.get(browser.instance_id) is browser:
            del self._browsers[browser.instance_id]
            return True
        return False

    def get(self, instance_id: str) -> Browser | None:
        return self._browsers.get(instance_id)

    def all(self) -> list[Browser]:
        return list(self._browsers.values())

    def by_launch_token(self, token: str) -> Browser | None:
        return next((b for b in self._browsers.values() if b.hello.launch_token == token), None)

    def select(self, query: str | None) -> Browser:
        """The browser named by an instance id, a unique id prefix or a label; or the only one."""
        browsers = self.all()
        if not browsers:
            raise RpcError(
                "no_browser_connected",
                "no browser is connected to the tabpilot daemon",
                hint="start one with `tabpilot browser launch`, or open your browser with the tabpilot "
                "extension (pair it once with `tabpilot pair`)",
            )
        if query:
            wanted = query.strip().lower()
            exact = [b for b in browsers if b.instance_id == wanted]
            by_prefix = [b for b in browsers if b.instance_id.startswith(wanted)]
            by_label = [b for b in browsers if b.label and b.label.lower() == wanted]
            for matches in (exact, by_label, by_prefix):
                if len(matches) == 1:
                    return matches[0]
            raise RpcError(
                "not_found",
                f"no connected browser matches --browser {query!r}",
                "unknown_browser",
                browsers=[b.describe() for b in browsers],
                hint="use an instance id or label from `tabpilot browser list`",
            )
        if len(browsers) > 1:
            raise RpcError(
                "multiple_browsers_online",
                f"{len(browsers)} browsers are connected; choose one with --browser",
                browsers=[b.describe() for b in browsers],
                hint="pass --browser ID|LABEL (or set TABPILOT_BROWSER); `tabpilot browser list` shows them",
            )
        return browsers[0]
