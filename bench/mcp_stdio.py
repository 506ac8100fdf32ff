"""A blocking MCP client over `tabpilot mcp`'s stdio (newline-delimited JSON-RPC), so an MCP tool call can
be timed in the same interleaved loop as whole CLI processes."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.e2e.harness import TABPILOT, kill_and_wait

from bench.rig import Rig

PROTOCOL = "2025-06-18"


class McpStdio:
    """One `tabpilot mcp --session NAME` process, spoken to one request at a time."""

    def __init__(self, rig: Rig, session: str) -> None:
        self.proc = subprocess.Popen(
            [TABPILOT, "mcp", "--session", session],
            env=rig.tp.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0
        try:
            self.request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            )
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        except (OSError, RuntimeError, ValueError):
            self.close()
            raise

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request (notifications and logs in between are skipped)."""
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"tabpilot mcp ended during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]  # type: ignore[no-any-return]

    def tool(self, name: str, arguments: dict[str, Any]) -> bool:
        """Call a tool; True when it succeeded."""
        return not self.request("tools/call", {"name": name, "arguments": arguments}).get("isError", False)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_and_wait(self.proc.pid)
            self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
