"""Codex CLI: `codex exec --json`, the prompt on stdin (`-`), `exec resume ID` for later turns.

Event shapes are those of codex-rs/exec's JSONL output (thread.started, item.*, turn.*). Agent
messages come whole, not per token, so the panel shows Codex replies per message.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tabpilot.agents.envseal import OwnEnv
from tabpilot.agents.plans import Launch, Signal, TurnPlan, clip

NAME = "codex"
LABEL = "Codex"
DEFAULT_BIN = "codex"
KEEP_ENV = OwnEnv(("OPENAI_", "CODEX_"))
# `codex exec` takes images only as files on its command line: the panel's screenshots are refused.
IMAGES = False
THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# Browser-only turns switch off every Codex tool that reaches past the browser: its shell (exec_command,
# write_stdin; a read-only sandbox still reads every file), file and image reads, subagents (each with a
# shell), the web and the person's connected apps. What is left is tabpilot's MCP tools.
BROWSER_ONLY_OFF = (
    "features.shell_tool=false",
    "features.unified_exec=false",
    "features.view_image=false",
    "features.multi_agent=false",
    "features.multi_agent_v2=false",
    "features.goals=false",
    "features.apps=false",
    "features.plugins=false",
    "features.computer_use=false",
    "features.browser_use=false",
    "features.browser_use_external=false",
    "features.image_generation=false",
    'web_search="disabled"',
)


def valid_session_id(value: str) -> bool:
    return bool(THREAD_ID.match(value))


def _toml(value: Any) -> str:
    """A TOML value: JSON strings and string arrays are valid TOML; tables are written inline."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def plan(turn: TurnPlan) -> Launch:
    sandbox = "read-only" if turn.mode == "browser" else "workspace-write"
    argv = [
        turn.bin,
        "exec",
        "--json",
        "--skip-git-repo-check",
        f"--sandbox={sandbox}",
        f"--cd={turn.cwd}",
        "-c",
        f"mcp_servers.tabpilot.command={_toml(turn.mcp.command)}",
        "-c",
        f"mcp_servers.tabpilot.args={_toml(turn.mcp.args)}",
        # Codex hands MCP servers a minimal env: name the variables tabpilot's server needs.
        "-c",
        f"mcp_servers.tabpilot.env_vars={_toml(sorted(turn.mcp.env))}",
        # Without it the first request can leave before tabpilot's server has listed its tools.
        "-c",
        "mcp_servers.tabpilot.required=true",
        # Headless Codex refuses any MCP call it would ask about: tabpilot's tools are pre-approved
        # (tabpilot asks the person itself where it matters); everything else stays "never".
        "-c",
        'mcp_servers.tabpilot.default_tools_approval_mode="approve"',
        "-c",
        'approval_policy="never"',
        "-c",
        f"developer_instructions={_toml(turn.preamble)}",
    ]
    if turn.mode == "browser":
        for setting in BROWSER_ONLY_OFF:
            argv += ["-c", setting]
    if turn.model:
        argv.append(f"--model={turn.model}")
    if turn.resume_id:
        argv += ["resume", turn.resume_id]
    argv.append("-")
    env = {**turn.env, **turn.mcp.env}
    return Launch(argv, env, turn.cwd, [turn.text], True, turn.mode)


class Stream:
    """Turns Codex's JSONL into signals, sending only text not emitted yet for each message."""

    def __init__(self) -> None:
        self._emitted: dict[str, str] = {}
        self.finished = False

    def feed(self, obj: Any) -> list[Signal]:
        if not isinstance(obj, dict):
            return []
        kind = obj.get("type")
        if kind == "thread.started" and isinstance(obj.get("thread_id"), str):
            return [Signal("session", {"agent_session_id": obj["thread_id"]})]
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._item(kind, obj.get("item") or {})
        if kind == "turn.completed":
            self.finished = True
            return [Signal("done", {"stop_reason": "end_turn", "usage": obj.get("usage") or {}})]
        if kind == "turn.failed":
            self.finished = True
            error = obj.get("error") or {}
            return [Signal("failed", {"code": "turn_failed", "message": clip(str(error.get("message", "")))})]
        if kind == "error":
            # Codex reports retries and warnings this way; a fatal one is followed by turn.failed.
            return [
                Signal("warning", {"code": "agent_warning", "message": clip(str(obj.get("message", "")))})
            ]
        return []

    def _item(self, kind: str, item: dict[str, Any]) -> list[Signal]:
        item_type, item_id = item.get("type"), str(item.get("id"))
        if item_type == "agent_message":
            text = str(item.get("text") or "")
            before = self._emitted.get(item_id, "")
            if not text.startswith(before) or len(text) == len(before):
                return []
            self._emitted[item_id] = text
            return [Signal("text", {"delta": text[len(before) :]})]
        if item_type == "mcp_tool_call" and item.get("server") == "tabpilot":
            return []  # tabpilot reports its own calls
        if item_type in ("command_execution", "mcp_tool_call", "web_search", "file_change"):
            if kind == "item.started":
                return [
                    Signal("tool", {"call_id": item_id, "name": _tool_name(item), "input": _tool_input(item)})
                ]
            if kind == "item.completed":
                return [
                    Signal(
                        "tool_result",
                        {"call_id": item_id, "ok": _tool_ok(item), "summary": _tool_summary(item)},
                    )
                ]
        if item_type == "error" and kind == "item.completed":
            return [
                Signal("warning", {"code": "agent_warning", "message": clip(str(item.get("message", "")))})
            ]
        return []


def _tool_name(item: dict[str, Any]) -> str:
    if item.get("type") == "mcp_tool_call":
        return f"{item.get('server')}.{item.get('tool')}"
    return str(item.get("type"))


def _tool_input(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("type") == "command_execution":
        return {"command": item.get("command")}
    if item.get("type") == "mcp_tool_call":
        return {"arguments": item.get("arguments")}
    if item.get("type") == "web_search":
        return {"query": item.get("query")}
    return {"changes": item.get("changes")}


def _tool_ok(item: dict[str, Any]) -> bool:
    if item.get("type") == "command_execution":
        return item.get("exit_code") == 0
    return item.get("status") not in ("failed", "declined") and not item.get("error")


def _tool_summary(item: dict[str, Any]) -> str:
    if item.get("type") == "command_execution":
        return clip(str(item.get("aggregated_output") or ""))
    if item.get("error"):
        return clip(str(item["error"]))
    return clip(
        json.dumps(item.get("result")) if item.get("result") is not None else str(item.get("status", ""))
    )
