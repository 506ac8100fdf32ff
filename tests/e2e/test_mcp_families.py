"""One verb of each new family through MCP (`tabpilot mcp --caps all`), against the real browser: the
network log, cookies, emulation, PDF and downloads as an MCP client gets them. The results are read from
structuredContent, which a page tool's result carries only with fences off (`--no-boundaries`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from harness import TABPILOT, PageServer, Tabpilot, wait_until


class Mcp:
    def __init__(self, tp: Tabpilot) -> None:
        self.proc = subprocess.Popen(
            [TABPILOT, "mcp", "--caps", "all", "--no-boundaries"],
            env=tp.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.n = 0
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"},
        }
        self.request("initialize", hello)

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.n += 1
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n"
        )
        self.proc.stdin.flush()
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.n:
                return reply["result"]

    def call(self, tool: str, **arguments: Any) -> Any:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert not result["isError"], result
        return result["structuredContent"]

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def test_one_verb_of_each_family_through_mcp(tp: Tabpilot, pages: PageServer, tmp_path: Path) -> None:
    mcp = Mcp(tp)
    try:
        mcp.call("open", url=pages.url("login?user=lin"))
        mcp.call("open", url=pages.url("agentkit/network.html"))
        mcp.call("click", target="#load")
        # The page's fetch answers a moment after the click.
        fetched = wait_until(
            lambda: [e for e in mcp.call("network_requests", type="fetch")["entries"] if e["status"]]
        )
        assert fetched[-1]["status"] == 200 and fetched[-1]["url"].endswith("items.json?page=1")
        jar = {c["name"]: c for c in mcp.call("cookies")["cookies"]}
        assert jar["sid"]["value"].startswith("(hidden") and jar["sid"]["http_only"]
        mcp.call("open", url=pages.url("agentkit/mobile.html"))
        assert mcp.call("emulate", viewport="390x844", mobile=True)["emulating"]["viewport"] == "390x844"
        assert mcp.call("eval", expression="innerWidth")["value"] == 390
        out = tmp_path / "mcp.pdf"
        assert Path(mcp.call("pdf", out=str(out))["path"]).read_bytes()[:5] == b"%PDF-"
        mcp.call("open", url=pages.url("agentkit/downloads.html"))
        clicked = mcp.call("click", target="#attachment")
        assert clicked["download"]["state"] == "complete"
        assert mcp.call("downloads", action="wait")["download"]["path"] == clicked["download"]["path"]
    finally:
        mcp.close()
