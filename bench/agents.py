"""What an agent pays at the other doors: the skill's size, the MCP tools/list, MCP round trips, and
`batch` against one process per command.

Baselines from the same run: the same verbs as whole CLI processes.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

from tests.e2e.harness import TABPILOT

from bench.refs import find_ref
from bench.rig import Rig
from bench.stats import Record, measured, missing
from bench.tokens import count

SUITE = "agents"
SESSION = "agents-cli"
SKILL = Path(__file__).resolve().parents[1] / "src" / "tabpilot" / "skill" / "SKILL.md"
BATCH_CLICKS = 20


def _cli_times(rig: Rig, argv: list[str], samples: int) -> list[float]:
    times = []
    for _ in range(samples):
        run = rig.cli(*argv, session=SESSION)
        if run.ok:
            times.append(run.seconds * 1000)
    return times


async def _mcp(rig: Rig, url: str, samples: int) -> dict[str, object]:
    """tools/list size and client-side round trips of eval and click, in the MCP client's own session."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=TABPILOT, args=["mcp"], env=rig.tp.env)
    async with Client(params) as client:
        listed = await client.list_tools()
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
        await client.call_tool("open", {"url": url})
        snapshot = await client.call_tool("snapshot", {})
        button = find_ref(snapshot.content[0].text, "button", "Count")
        timings: dict[str, list[float]] = {"eval": [], "click": []}
        for name, arguments in (("eval", {"expression": "1+1"}), ("click", {"target": button or ""})):
            for _ in range(samples):
                started = time.perf_counter()
                result = await client.call_tool(name, arguments)
                if not result.is_error:
                    timings[name].append((time.perf_counter() - started) * 1000)
        return {"tools": tools, "timings": timings}


def _cap_group_sizes() -> list[Record]:
    """What each opt-in tool group (`tabpilot mcp --caps GROUP`) adds to tools/list."""
    from tabpilot.mcp_server import CAPS, tool_specs

    def listed(specs: list) -> list[dict[str, object]]:
        return [{"name": s.name, "description": s.description, "inputSchema": s.schema} for s in specs]

    default = {s.name for s in tool_specs()}
    records = []
    for group in CAPS:
        added = listed([s for s in tool_specs(frozenset({group})) if s.name not in default])
        case = f"MCP --caps {group} adds ({len(added)} {'tool' if len(added) == 1 else 'tools'})"
        records.append(measured(SUITE, case, "tokens", "o200k", [count(json.dumps(added))]))
    return records


INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        }
    )
    + "\n"
).encode()


def _mcp_initialize_times(rig: Rig, samples: int) -> list[float]:
    """From spawning `tabpilot mcp` to its answer to `initialize` (what a client waits before anything)."""
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        proc = subprocess.Popen(
            [TABPILOT, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=rig.tp.env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        answered = b'"result"' in proc.stdout.readline()
        elapsed = (time.perf_counter() - started) * 1000
        proc.stdin.close()
        proc.wait(timeout=10)
        if answered:
            times.append(elapsed)
    return times


def run(rig: Rig, samples: int) -> list[Record]:
    records = [
        measured(SUITE, "SKILL.md", "tokens", "o200k", [count(SKILL.read_text())]),
        *_cap_group_sizes(),
    ]
    url = rig.fixture_url("bench-form.html", SESSION)
    rig.start_session(SESSION, url)
    try:
        snapshot = rig.cli("snapshot", session=SESSION)
        button = find_ref(snapshot.out, "button", "Count")
        if button is None:
            return [
                *records,
                missing(SUITE, "click", "wall_time", "ms", "n/a (no Count button in the snapshot)"),
            ]
        cli_eval = _cli_times(rig, ["eval", "1+1"], samples)
        cli_click = _cli_times(rig, ["click", button], samples)
        cli_eval_median = measured(SUITE, "cli eval 1+1", "wall_time", "ms", cli_eval)
        cli_click_median = measured(SUITE, "cli click @eN", "wall_time", "ms", cli_click)
        records += [cli_eval_median, cli_click_median]
        records.append(
            measured(
                SUITE,
                "MCP start to initialize answered",
                "wall_time",
                "ms",
                _mcp_initialize_times(rig, max(5, samples // 2)),
                baseline=("cli eval 1+1", cli_eval_median.median),
            )
        )
        try:
            mcp = asyncio.run(_mcp(rig, url, samples))
        except ImportError:
            records.append(
                missing(
                    SUITE, "MCP", "wall_time", "ms", "n/a (the MCP SDK, a dev dependency, is not installed)"
                )
            )
        else:
            tools = mcp["tools"]
            timings = mcp["timings"]
            assert isinstance(tools, list) and isinstance(timings, dict)
            records.append(
                measured(
                    SUITE,
                    f"MCP tools/list ({len(tools)} tools)",
                    "tokens",
                    "o200k",
                    [count(json.dumps(tools))],
                )
            )
            records.append(
                measured(
                    SUITE,
                    "MCP eval 1+1",
                    "wall_time",
                    "ms",
                    timings["eval"],
                    baseline=("cli eval 1+1", cli_eval_median.median),
                )
            )
            records.append(
                measured(
                    SUITE,
                    "MCP click @eN",
                    "wall_time",
                    "ms",
                    timings["click"],
                    baseline=("cli click @eN", cli_click_median.median),
                )
            )
        records += _batch(rig, button, max(3, samples // 10))
    finally:
        rig.stop_session(SESSION)
    return records


def _batch(rig: Rig, button: str, rounds: int) -> list[Record]:
    """20 clicks in one `batch` process against 20 separate `tabpilot click` processes."""
    script = ("\n".join([f"click {button}"] * BATCH_CLICKS) + "\n").encode()
    separate, batched = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(BATCH_CLICKS):
            rig.cli("click", button, session=SESSION)
        separate.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        subprocess.run(
            [TABPILOT, "--session", SESSION, "batch"],
            input=script,
            env=rig.tp.env,
            capture_output=True,
            check=False,
        )
        batched.append((time.perf_counter() - started) * 1000)
    alone = measured(SUITE, f"{BATCH_CLICKS} separate clicks", "wall_time", "ms", separate)
    return [
        alone,
        measured(
            SUITE,
            f"batch of {BATCH_CLICKS} clicks",
            "wall_time",
            "ms",
            batched,
            baseline=(f"{BATCH_CLICKS} separate clicks", alone.median),
        ),
    ]
