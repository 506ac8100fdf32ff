"""The last check before any agent process starts: a pure look at the launch, refusing what is unsafe."""

from __future__ import annotations

import os
from collections.abc import Iterable

from tabpilot.agents import claude, codex, envseal
from tabpilot.agents.plans import Launch
from tabpilot.protocol import RpcError

# Flags that hand the agent the machine without asking, or widen what it may touch.
FORBIDDEN_FLAGS = (
    "dangerously",
    "yolo",
    "full-auto",
    "approve-for-me",
    "add-dir",
    "continue",
    "permission-mode",
    "settings",
    "plugin-dir",
)
FORBIDDEN_VALUES = ("bypasspermissions", "danger-full-access")
CODEX_CONFIG_KEYS = (
    "mcp_servers.tabpilot.command",
    "mcp_servers.tabpilot.args",
    "mcp_servers.tabpilot.env_vars",
    "mcp_servers.tabpilot.default_tools_approval_mode",
    "mcp_servers.tabpilot.required",
    "approval_policy",
    "developer_instructions",
)


def refuse(why: str) -> RpcError:
    return RpcError(
        "permission_denied",
        f"refused to start the agent: {why}",
        "agent_unsafe",
        hint="the launch was changed in a way tabpilot does not allow; nothing was started",
    )


def vet(
    agent: str,
    launch: Launch,
    expected_bin: str,
    allowed_cwds: Iterable[str],
    session_id: str | None,
    chosen_env: Iterable[str] = (),
) -> None:
    """Raise ``agent_unsafe`` unless ``launch`` is one tabpilot itself would build for ``agent``."""
    argv = launch.argv
    if not argv or argv[0] != expected_bin or not os.path.isabs(argv[0]):
        raise refuse(f"the executable is not the configured {agent} binary")
    for arg in argv[1:]:
        lowered = arg.lower()
        name = lowered.split("=", 1)[0]
        if name.startswith("-") and any(word in name for word in FORBIDDEN_FLAGS):
            raise refuse(f"{arg.split('=', 1)[0]} is not allowed")
        if any(value in lowered for value in FORBIDDEN_VALUES):
            raise refuse(f"{clip_arg(arg)} is not allowed")
    real_cwd = os.path.realpath(launch.cwd)
    if real_cwd not in {os.path.realpath(c) for c in allowed_cwds} or not os.path.isdir(real_cwd):
        raise refuse(f"the working folder {launch.cwd} is not one the person allowed")
    adapter = claude if agent == claude.NAME else codex if agent == codex.NAME else None
    if adapter is None:
        raise refuse(f"unknown agent {agent!r}")
    leaked = envseal.unsealed(launch.env, adapter.KEEP_ENV, chosen_env)
    if leaked:
        raise refuse(f"the environment carries {', '.join(leaked)}, which is not on its allow-list")
    if agent == claude.NAME:
        _vet_claude(argv, launch.mode, session_id)
    else:
        _vet_codex(argv, launch.mode, session_id)


def clip_arg(arg: str) -> str:
    return arg if len(arg) <= 60 else arg[:59] + "…"


def _vet_claude(argv: list[str], mode: str, session_id: str | None) -> None:
    words = [a.split("=", 1)[0] for a in argv[1:]]
    for needed in ("-p", "--strict-mcp-config", "--permission-prompt-tool", "--input-format", "--mcp-config"):
        if needed not in words:
            raise refuse(f"{needed} is missing")
    if words.count("--mcp-config") != 1:
        raise refuse("more than one --mcp-config")
    if "-r" in words or "-c" in words or "--continue" in words:
        raise refuse("only --resume=ID (equals form) may resume a conversation")
    if f"--allowedTools={claude.MCP_TOOLS}" not in argv or words.count("--allowedTools") != 1:
        raise refuse("only tabpilot's tools may be allowed without asking")
    if "--input-format=stream-json" not in argv:
        raise refuse("the person's text must go on stdin as stream-json")
    if mode == "browser" and "--tools=" not in argv:
        raise refuse("browser-only mode gives the agent no tools of its own (--tools= missing)")
    for arg in argv[1:]:
        for flag in ("--resume", "--session-id"):
            if arg == flag:
                raise refuse(f"{flag} must be given as {flag}=ID")
            if arg.startswith(flag + "="):
                value = arg.split("=", 1)[1]
                if not claude.valid_session_id(value) or value != session_id:
                    raise refuse(f"{flag} carries an id that is not this conversation's")


def _vet_codex(argv: list[str], mode: str, session_id: str | None) -> None:
    if argv[1:3] != ["exec", "--json"]:
        raise refuse("codex must run as `exec --json`")
    wanted = "--sandbox=read-only" if mode == "browser" else "--sandbox=workspace-write"
    sandboxes = [a for a in argv if a.startswith(("--sandbox", "-s"))]
    if sandboxes != [wanted]:
        raise refuse(f"the sandbox must be exactly {wanted}")
    if argv[-1] != "-":
        raise refuse("the person's text must come on stdin (`-`)")
    if "resume" in argv:
        at = argv.index("resume")
        value = argv[at + 1] if at + 1 < len(argv) else ""
        if not codex.valid_session_id(value) or value != session_id or at + 2 != len(argv) - 1:
            raise refuse("resume carries an id that is not this conversation's")
    if any(
        a.startswith(("--enable", "--disable", "--config")) or (a.startswith("-c") and a != "-c")
        for a in argv
    ):
        raise refuse("configuration is given only as -c KEY=VALUE, features only switched off")
    configs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c" and i + 1 < len(argv)]
    for value in configs:
        key, _, setting = (part.strip() for part in value.partition("="))
        if value in codex.BROWSER_ONLY_OFF:
            continue
        if key not in CODEX_CONFIG_KEYS:
            raise refuse(f"-c {key} is not allowed")
        if key == "approval_policy" and setting != '"never"':
            raise refuse("approval_policy must be never")
    if mode == "browser":
        missing = [s for s in codex.BROWSER_ONLY_OFF if s not in configs]
        if missing:
            raise refuse(f"browser-only mode switches off Codex's own tools ({missing[0]} missing)")
