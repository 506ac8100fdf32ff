"""`tabpilot mcp --caps …`: the network, storage, emulation, pdf and downloads tools are opt-in groups, so
the default tools/list stays small."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from tabpilot.mcp_server import CAPS, tool_specs

OPT_IN_TOOLS = {
    "network_requests",
    "network_route",
    "network_har",
    "cookies",
    "storage",
    "state",
    "emulate",
    "pdf",
    "downloads",
}


def listed(*words: str) -> tuple[int, list[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env["TABPILOT_HOME"] = tempfile.mkdtemp(prefix="tp-mcp-")
    code = f"import sys; from tabpilot.cli.main import main; sys.exit(main({['mcp', *words]!r}))"
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "unit", "version": "0"},
    }
    stdin = "".join(
        json.dumps({"jsonrpc": "2.0", **m}) + "\n"
        for m in ({"id": 1, "method": "initialize", "params": hello}, {"id": 2, "method": "tools/list"})
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    replies: list[dict[str, Any]] = [
        json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")
    ]
    names = [t["name"] for r in replies if r.get("id") == 2 for t in r["result"]["tools"]]
    return proc.returncode, names, proc.stdout + proc.stderr


def test_the_new_families_are_not_listed_by_default() -> None:
    code, names, _ = listed()
    assert code == 0 and "snapshot" in names and "click" in names
    assert not OPT_IN_TOOLS & set(names)


def test_caps_add_exactly_their_groups() -> None:
    code, names, _ = listed("--caps", "network,pdf")
    assert code == 0
    assert {
        "network_requests",
        "network_request",
        "network_route",
        "network_unroute",
        "network_har",
        "pdf",
    } <= set(names)
    assert not {"cookies", "emulate", "downloads"} & set(names)
    _, everything, _ = listed("--caps", "all")
    assert set(everything) >= OPT_IN_TOOLS


def test_an_unknown_group_is_a_usage_error_with_the_groups_named() -> None:
    code, _, text = listed("--caps", "teleport")
    assert code == 1 and "unknown tool group 'teleport'" in text and "network" in text


def test_every_group_names_real_verbs() -> None:
    every = {spec.words[0] for spec in tool_specs(frozenset(CAPS))}
    assert {verb for verbs in CAPS.values() for verb in verbs} <= every
