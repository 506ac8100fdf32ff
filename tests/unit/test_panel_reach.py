"""What a side-panel agent's `tabpilot mcp` offers: tools and parameters as an allow-list, and files
only as new private files in the conversation's own folder."""

from __future__ import annotations

import io
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tabpilot.agents import reach
from tabpilot.mcp_server import McpServer, tool_specs
from tabpilot.protocol import RpcError

ALL_CAPS = frozenset({"network", "storage", "emulation", "pdf", "downloads"})


def panel_server(monkeypatch: pytest.MonkeyPatch, files: str | None) -> tuple[McpServer, io.BytesIO]:
    monkeypatch.setenv("TABPILOT_RUN", "run-token")
    monkeypatch.setenv("TABPILOT_HOME", tempfile.mkdtemp(prefix="tp-reach-"))
    if files is None:
        monkeypatch.delenv(reach.FILES_ENV, raising=False)
    else:
        monkeypatch.setenv(reach.FILES_ENV, files)
    out = io.BytesIO()
    # Even asked for every opt-in group, a panel session gets only what reach.py lists.
    return McpServer("p-abc", None, out, caps=ALL_CAPS), out


def rpc(server: McpServer, out: io.BytesIO, method: str, params: dict[str, Any]) -> dict[str, Any]:
    server.receive(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode())
    for thread in server._calls:
        thread.join(20)
    answer = json.loads(out.getvalue().splitlines()[-1])
    return dict(answer["result"])


def test_a_panel_session_is_offered_only_the_listed_tools_and_parameters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, out = panel_server(monkeypatch, tempfile.mkdtemp())
    tools = {t["name"]: t for t in rpc(server, out, "tools/list", {})["tools"]}
    assert set(tools) == set(reach.TOOLS)
    for name, tool in tools.items():
        assert set(tool["inputSchema"]["properties"]) <= reach.COMMON | reach.TOOLS[name], name
    for gone in (
        "upload_files",
        "state",
        "cookies",
        "storage",
        "network_har",
        "pdf",
        "tab_borrow",
        "session_start",
    ):
        assert gone not in tools
    assert "allow_file" not in tools["open"]["inputSchema"]["properties"]
    assert "scope" not in tools["tab_list"]["inputSchema"]["properties"]
    assert tools["snapshot"]["inputSchema"]["properties"]["out"]["description"] == reach.OUT_HELP


def test_the_table_names_only_real_tools_and_parameters() -> None:
    real = {spec.name: {a.dest for a in spec.actions} for spec in tool_specs(ALL_CAPS)}
    for name, params in reach.TOOLS.items():
        assert name in real, name
        assert params <= real[name], (name, params - real[name])


@pytest.mark.parametrize(
    "arguments",
    [
        {"out": "/tmp/authorized_keys"},
        {"out": "../../x.pth"},
        {"out": os.path.expanduser("~/.ssh/authorized_keys")},
        {"out": ".."},
    ],
)
def test_an_out_outside_the_conversations_folder_is_refused_and_nothing_is_written(
    monkeypatch: pytest.MonkeyPatch, arguments: dict[str, Any]
) -> None:
    files = tempfile.mkdtemp()
    server, out = panel_server(monkeypatch, files)
    answer = rpc(server, out, "tools/call", {"name": "html", "arguments": arguments})
    assert answer["isError"] is True
    text = answer["content"][0]["text"]
    assert text.startswith("error: out ") and "own folder" in text and "\nhint: " in text
    assert os.listdir(files) == []


def test_an_out_is_a_new_private_file_in_the_folder_never_through_a_link() -> None:
    files = os.path.join(tempfile.mkdtemp(), "files")
    path = reach.reserve(files, "page.html")
    assert path == os.path.join(files, "page.html")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_IMODE(os.stat(files).st_mode) == 0o700
    assert reach.reserve(files, os.path.join(files, "again.html")).endswith("/again.html")
    with pytest.raises(RpcError, match="exists already"):
        reach.reserve(files, "page.html")
    target = Path(tempfile.mkdtemp(), "authorized_keys")
    os.symlink(target, os.path.join(files, "keys"))
    with pytest.raises(RpcError, match="exists already"):
        reach.reserve(files, "keys")
    assert not target.exists()
    with pytest.raises(RpcError, match="not available"):
        reach.reserve(None, "page.html")


def test_a_shell_session_keeps_every_tool_and_its_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TABPILOT_RUN", raising=False)
    out = io.BytesIO()
    server = McpServer("default", None, out)
    tools = {t["name"]: t for t in rpc(server, out, "tools/list", {})["tools"]}
    assert "session_start" in tools and "scope" in tools["tab_list"]["inputSchema"]["properties"]
    assert tools["html"]["inputSchema"]["properties"]["out"]["description"] == "write it to this file"
