"""What every command handler gets: the global options and one way to call the daemon."""

from __future__ import annotations

import argparse
import os

from tabpilot.cli import client, render
from tabpilot.cli.values import parse_duration, tab_id

__all__ = ["Context", "parse_duration", "tab_id"]

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


BOUNDARIES_VARIABLE = "TABPILOT_BOUNDARIES"


def boundaries_on(args: argparse.Namespace) -> bool:
    """Page text is fenced unless ``--no-boundaries`` or ``TABPILOT_BOUNDARIES=off``."""
    if getattr(args, "no_boundaries", False):
        return False
    return not render.boundaries_off(os.environ.get(BOUNDARIES_VARIABLE))


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.as_json: bool = bool(getattr(args, "json", False))
        self.session: str | None = (
            getattr(args, "session", None) or os.environ.get("TABPILOT_SESSION") or None
        )
        self.browser: str | None = (
            getattr(args, "browser", None) or os.environ.get("TABPILOT_BROWSER") or None
        )
        self.tab: int | None = getattr(args, "tab", None)
        self.boundaries: bool = boundaries_on(args)
        # Where results go instead of stdout (the MCP server collects them this way).
        self.sink: Callable[[Any, str], None] | None = None

    def timeout_s(self, default: float) -> float:
        value = getattr(self.args, "timeout", None)
        return default if value is None else float(value)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 30.0) -> Any:
        return client.call(
            method,
            params,
            session=self.session,
            browser=self.browser,
            timeout_s=timeout_s,
        )

    def tool(self, method: str, params: dict[str, Any] | None = None, default_timeout_s: float = 30.0) -> Any:
        """Call a page tool in the current session, passing ``--timeout`` as ``timeout_ms`` and
        ``--tab`` as ``tab_id`` (unless the verb names its own tab)."""
        timeout = self.timeout_s(default_timeout_s)
        payload = dict(params or {})
        payload["timeout_ms"] = int(timeout * 1000)
        if self.tab is not None:
            payload.setdefault("tab_id", self.tab)
        return self.call(method, payload, timeout)

    def nonce(self, result: Any) -> str | None:
        """The session's boundary nonce the daemon sent with ``result``; None when fencing is off."""
        return render.page_nonce(result, self.boundaries)

    def emit(self, result: Any, text: str) -> int:
        """Print the result: ``--json`` gets the object, people and agents the one-line text."""
        if self.sink is not None:
            self.sink(result, text)
            return 0
        return render.emit(result, text, self.as_json)
