"""What adapters take and give: a turn to plan, the launch it becomes, the signals its output means."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class McpServer:
    """How the agent reaches tabpilot: `tabpilot mcp --session p-…`, with the run's env."""

    command: str
    args: list[str]
    env: dict[str, str]


@dataclass(frozen=True)
class TurnPlan:
    bin: str
    text: str
    cwd: str
    mode: str  # "browser" (tabpilot only, no shell) or "workspace"
    env: dict[str, str]  # already sealed
    mcp: McpServer
    preamble: str
    resume_id: str | None = None  # the agent's own conversation id, from the previous turn
    new_session_id: str | None = None  # an id we pick for the first turn, when the CLI lets us
    model: str | None = None
    images: tuple[str, ...] = ()  # base64 PNG screenshots the person attached to the message


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdin_lines: list[str]
    # Claude reads more control messages during the turn; Codex needs EOF to start.
    close_stdin: bool
    mode: str = "browser"


@dataclass
class Signal:
    """One normalised happening in an agent's output."""

    kind: str  # session | text | tool | tool_result | permission | warning | done | failed
    data: dict[str, Any] = field(default_factory=dict)


def clip(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
