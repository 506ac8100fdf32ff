"""Re-record the Claude adapter fixtures from the real CLI: `.venv/bin/python tests/agents/record_fixtures.py`.

Runs the pinned Claude Code against the fake Messages API with a one-tool MCP server, the way the
daemon plans a browser-only turn, and writes its stdout to tests/agents/fixtures/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fake_anthropic import FakeAnthropic, Say, Use

from rig import REAL_CLAUDE
from tabpilot.agents import claude
from tabpilot.agents.plans import McpServer, TurnPlan

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ECHO_MCP = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "snapshot", "description": "snapshot", "inputSchema": {"type": "object", "properties": {}}}]}
    elif m["method"] == "tools/call":
        r = {"content": [{"type": "text", "text": "- button \\"Place order\\" [@e1]"}]}
    else:
        r = {}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


def record(name: str, text: str, interrupt_after_s: float | None = None) -> None:
    fake = FakeAnthropic(
        {
            "tool": [Use("mcp__tabpilot__snapshot", {}), Say(["Hel", "lo ", "there."])],
            "slow": [Say([f"w{i} " for i in range(30)], delay_s=0.2)],
        }
    ).start()
    work = tempfile.mkdtemp()
    server = os.path.join(work, "mcp.py")
    Path(server).write_text(ECHO_MCP)
    env = {"PATH": os.environ["PATH"], **fake.claude_env(work)}
    launch = claude.plan(
        TurnPlan(
            str(REAL_CLAUDE), text, work, "browser", env, McpServer(sys.executable, [server], {}), "Be brief."
        )
    )
    proc = subprocess.Popen(
        launch.argv, env=launch.env, cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(launch.stdin_lines))
    proc.stdin.flush()
    lines, began = [], time.monotonic()
    for line in proc.stdout:
        obj = json.loads(line)
        if obj.get("type") == "control_response" and obj["response"].get("request_id") == "tp_init":
            continue  # the initialize answer lists the person's commands and skills: not a fixture
        lines.append(line)
        if interrupt_after_s is not None and time.monotonic() - began > interrupt_after_s:
            proc.stdin.write(claude.interrupt_line())
            proc.stdin.flush()
            interrupt_after_s = None
        if obj.get("type") == "result":
            proc.stdin.close()
    proc.wait()
    fake.close()
    (FIXTURES / name).write_text("".join(lines))


if __name__ == "__main__":
    record("claude-2.1.328-tool-turn.jsonl", "Look [[script:tool]]")
    record("claude-2.1.328-interrupted-turn.jsonl", "Write [[script:slow]]", interrupt_after_s=2.5)
