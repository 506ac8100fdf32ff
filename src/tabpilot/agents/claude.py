"""Claude Code: `claude -p` with stream-json on both ends, its control protocol on stdin.

Shapes follow the recorded 2.1.328 turn (system/init, stream_event deltas, assistant, user
tool_result, result) and the control requests the vendor's SDK sends (initialize, interrupt).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tabpilot.agents.envseal import OwnEnv
from tabpilot.agents.plans import Launch, Signal, TurnPlan, clip

NAME = "claude"
LABEL = "Claude Code"
DEFAULT_BIN = "claude"
# Claude Code's auth and settings: its prefixes, and the few switches it reads without one.
KEEP_ENV = OwnEnv(
    ("ANTHROPIC_", "CLAUDE_"),
    frozenset(
        {
            "DISABLE_TELEMETRY",
            "DISABLE_AUTOUPDATER",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_BUG_COMMAND",
            "DISABLE_COST_WARNINGS",
            "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
            "MAX_THINKING_TOKENS",
            "MAX_MCP_OUTPUT_TOKENS",
            "MCP_TIMEOUT",
            "MCP_TOOL_TIMEOUT",
            "BASH_DEFAULT_TIMEOUT_MS",
            "BASH_MAX_TIMEOUT_MS",
            "BASH_MAX_OUTPUT_LENGTH",
            "ENABLE_TOOL_SEARCH",
        }
    ),
)
# Screenshots go to the model as image blocks of the person's message.
IMAGES = True
MCP_TOOLS = "mcp__tabpilot"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\[\]-]{0,63}$")


def valid_session_id(value: str) -> bool:
    return bool(UUID.match(value))


def plan(turn: TurnPlan) -> Launch:
    mcp = {"mcpServers": {"tabpilot": {"type": "stdio", "command": turn.mcp.command, "args": turn.mcp.args}}}
    if turn.mcp.env:
        mcp["mcpServers"]["tabpilot"]["env"] = turn.mcp.env
    argv = [
        turn.bin,
        "-p",
        "--output-format=stream-json",
        "--input-format=stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-prompt-tool=stdio",
        f"--mcp-config={json.dumps(mcp)}",
        "--strict-mcp-config",
        f"--allowedTools={MCP_TOOLS}",
        f"--append-system-prompt={turn.preamble}",
    ]
    if turn.mode == "browser":
        # No tool of its own: the agent's only reach is tabpilot, on the panel's tab.
        argv.append("--tools=")
    # The equals form: a dash-leading value can never become a flag of its own.
    if turn.resume_id:
        argv.append(f"--resume={turn.resume_id}")
    elif turn.new_session_id:
        argv.append(f"--session-id={turn.new_session_id}")
    if turn.model:
        argv.append(f"--model={turn.model}")
    # MCP tools are otherwise deferred behind a ToolSearch step the panel does not want.
    env = {**turn.env, "ENABLE_TOOL_SEARCH": "false"}
    return Launch(
        argv, env, turn.cwd, [initialize_line(), user_line(turn.text, turn.images)], False, turn.mode
    )


def initialize_line() -> str:
    return _line(
        {
            "type": "control_request",
            "request_id": "tp_init",
            "request": {"subtype": "initialize", "hooks": None},
        }
    )


def user_line(text: str, images: tuple[str, ...] = ()) -> str:
    content: str | list[dict[str, Any]] = text
    if images:
        # The Messages API's own blocks: the text, then each screenshot.
        content = [{"type": "text", "text": text}] + [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
            for data in images
        ]
    return _line(
        {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": None,
            "session_id": "default",
        }
    )


def interrupt_line() -> str:
    return _line(
        {"type": "control_request", "request_id": "tp_interrupt", "request": {"subtype": "interrupt"}}
    )


def allow_line(request_id: str, tool_input: dict[str, Any]) -> str:
    """The person allowed the tool, with the input Claude asked about (Claude needs it echoed)."""
    return _permission_reply(request_id, {"behavior": "allow", "updatedInput": tool_input})


def deny_line(request_id: str, message: str) -> str:
    return _permission_reply(request_id, {"behavior": "deny", "message": message})


def _permission_reply(request_id: str, answer: dict[str, Any]) -> str:
    return _line(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": answer},
        }
    )


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":")) + "\n"


class Stream:
    """Turns Claude's stdout lines into signals; one per turn (it remembers tabpilot's tool ids)."""

    def __init__(self) -> None:
        self._tabpilot_calls: set[str] = set()
        self.finished = False

    def feed(self, obj: Any) -> list[Signal]:
        if not isinstance(obj, dict):
            return []
        kind = obj.get("type")
        if kind == "system" and obj.get("subtype") == "init" and isinstance(obj.get("session_id"), str):
            return [Signal("session", {"agent_session_id": obj["session_id"]})]
        # Sub-agents talk among themselves; the panel shows the main conversation only.
        if obj.get("parent_tool_use_id") is not None:
            return []
        if kind == "stream_event":
            event = obj.get("event") or {}
            delta = event.get("delta") or {}
            if event.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
                text = delta.get("text")
                return [Signal("text", {"delta": text})] if isinstance(text, str) and text else []
            return []
        if kind == "assistant":
            return self._tool_uses(obj.get("message") or {})
        if kind == "user":
            return self._tool_results(obj.get("message") or {})
        if kind == "control_request":
            request = obj.get("request") or {}
            if request.get("subtype") == "can_use_tool":
                return [
                    Signal(
                        "permission",
                        {
                            "permission_id": str(obj.get("request_id")),
                            "tool": str(request.get("tool_name")),
                            "input": request.get("input") or {},
                        },
                    )
                ]
            return []
        if kind == "result":
            self.finished = True
            if obj.get("is_error"):
                message = obj.get("result") or obj.get("subtype") or "the agent failed"
                errors = obj.get("errors")
                if isinstance(errors, list) and errors:
                    message = "; ".join(map(str, errors))
                return [
                    Signal(
                        "failed",
                        {
                            "code": str(obj.get("subtype") or "error"),
                            "message": clip(str(message)),
                            "terminal_reason": obj.get("terminal_reason"),
                        },
                    )
                ]
            return [Signal("done", {"stop_reason": obj.get("stop_reason"), "usage": obj.get("usage") or {}})]
        return []

    def _tool_uses(self, message: dict[str, Any]) -> list[Signal]:
        signals = []
        for block in message.get("content") or []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            name, call_id = str(block.get("name")), str(block.get("id"))
            if name.startswith(MCP_TOOLS + "__"):
                # tabpilot reports its own calls, from what the daemon really did.
                self._tabpilot_calls.add(call_id)
                continue
            signals.append(
                Signal("tool", {"call_id": call_id, "name": name, "input": block.get("input") or {}})
            )
        return signals

    def _tool_results(self, message: dict[str, Any]) -> list[Signal]:
        content = message.get("content")
        if not isinstance(content, list):
            return []
        signals = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = str(block.get("tool_use_id"))
            if call_id in self._tabpilot_calls:
                continue
            signals.append(
                Signal(
                    "tool_result",
                    {
                        "call_id": call_id,
                        "ok": not block.get("is_error"),
                        "summary": clip(_text_of(block.get("content"))),
                    },
                )
            )
        return signals


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else json.dumps(content)
