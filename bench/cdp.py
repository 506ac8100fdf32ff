"""A raw CDP connection to one page of the bench's browser, or to tabpilot's service worker, over the
browser's own debugging port (tabpilot's link not involved)."""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

from tests.e2e.harness import DevTools
from websockets.sync.client import ClientConnection, connect


class CdpError(RuntimeError):
    """A CDP command answered with an error, or the page threw."""


class PageCdp:
    """Commands on one page target; events are dropped except while execution contexts are listed."""

    def __init__(self, ws_url: str, target_id: str) -> None:
        self.target_id = target_id  # also the id of the page's top frame
        # Like the daemon: no compression (Chromium offers deflate, which slows big frames ~30×).
        self.ws: ClientConnection = connect(ws_url, max_size=None, compression=None, open_timeout=10)
        self.last_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
        return self._call(method, params, timeout, events=None)

    def round_trip(self, method: str, params: dict[str, Any]) -> float:
        """Seconds from sending one command to having parsed its answer."""
        started = time.perf_counter()
        self.call(method, params)
        return time.perf_counter() - started

    def evaluate(self, expression: str, context_id: int | None = None) -> Any:
        """The value of a JavaScript expression (promises awaited), in the main world or `context_id`."""
        params: dict[str, Any] = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if context_id is not None:
            params["contextId"] = context_id
        result = self.call("Runtime.evaluate", params)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise CdpError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    def contexts(self) -> list[dict[str, Any]]:
        """Every execution context of the page, isolated worlds made by other clients included."""
        created: list[dict[str, Any]] = []
        # Runtime.enable reports the existing contexts as events before its own answer.
        self._call("Runtime.enable", None, 30.0, events=created)
        self.call("Runtime.disable")
        return [
            e["params"]["context"] for e in created if e.get("method") == "Runtime.executionContextCreated"
        ]

    def close(self) -> None:
        self.ws.close()

    def _call(
        self, method: str, params: dict[str, Any] | None, timeout: float, events: list[dict[str, Any]] | None
    ) -> Any:
        self.last_id += 1
        self.ws.send(json.dumps({"id": self.last_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.0, deadline - time.monotonic())))
            if message.get("id") == self.last_id:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if events is not None and "method" in message:
                events.append(message)


def tag_of(url: str) -> str | None:
    """The bench's tag of a page URL: the value of its `bench` query parameter."""
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("bench")
    return values[0] if values else None


def page_target(devtools: DevTools, tag: str, timeout: float = 10.0) -> dict[str, Any]:
    """The one page target whose URL is tagged `?bench=TAG` (each bench tab has its own tag)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [p for p in devtools.pages() if tag_of(p.get("url", "")) == tag]
        if len(found) == 1:
            return found[0]
        if time.monotonic() > deadline:
            raise CdpError(f"{len(found)} page targets are tagged bench={tag}")
        time.sleep(0.1)


def open_page(devtools: DevTools, tag: str) -> PageCdp:
    target = page_target(devtools, tag)
    return PageCdp(target["webSocketDebuggerUrl"], target["id"])


def open_worker(devtools: DevTools, timeout: float = 10.0) -> PageCdp:
    """tabpilot's service worker (its timings are read there, see extension/link/timings.js)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [
            t
            for t in devtools.targets()
            if t.get("type") == "service_worker"
            and t.get("url", "").startswith("chrome-extension://")
            and t.get("url", "").endswith("/background.js")
        ]
        if len(found) == 1:
            return PageCdp(found[0]["webSocketDebuggerUrl"], found[0]["id"])
        if time.monotonic() > deadline:
            raise CdpError(f"{len(found)} tabpilot service workers among the browser's targets")
        time.sleep(0.1)
