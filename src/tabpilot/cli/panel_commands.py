"""``panel``: which agent CLIs and working folders the browser's side panel may use.

These verbs are the only way to name an executable or a folder: the panel picks them by key.
"""

from __future__ import annotations

import argparse
import os
import re

from tabpilot.cli.context import Context
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:\[\]-]{0,63}$")
STATES = {"ready": "ready", "not_installed": "not installed", "needs_setup": "needs setup"}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    panel = sub.add_parser(
        "panel",
        parents=[common],
        help="choose the agent CLIs and folders the browser's side panel may use",
        description="The side panel runs your own agent CLI (Claude Code, Codex) on the tab you are on. "
        "Which binary runs, and which folders it may work in, is set here, in a terminal; the panel "
        "picks them by name. Without a workspace a conversation works in a fresh private folder.",
    )
    families = panel.add_subparsers(dest="panel_family", metavar="{agent,workspace}")
    families.required = True

    agent = families.add_parser("agent", parents=[common], help="list the agent CLIs, or set one's binary")
    verbs = agent.add_subparsers(dest="agent_verb", metavar="{list,set}")
    verbs.required = True
    p = verbs.add_parser("list", parents=[common], help="each agent: ready / not installed / needs setup")
    p.set_defaults(handler=cmd_agent_list)
    p = verbs.add_parser("set", parents=[common], help="use this binary (and model) for an agent")
    p.add_argument("name", metavar="NAME", help="claude or codex")
    p.add_argument("--bin", metavar="PATH", help="the agent's executable (default: found on PATH)")
    p.add_argument("--model", metavar="MODEL", help="the model the agent should use (default: its own)")
    p.add_argument(
        "--env",
        metavar="VAR",
        action="append",
        help="also hand the agent this variable of your environment (repeatable); it gets only PATH, HOME, "
        "locale, terminal, its own ANTHROPIC_*/CLAUDE_* or OPENAI_*/CODEX_* and what you name here",
    )
    p.add_argument("--reset", action="store_true", help="forget the binary, model and variables set before")
    p.set_defaults(handler=cmd_agent_set)

    workspace = families.add_parser(
        "workspace", parents=[common], help="folders a conversation may work in (with the agent's own tools)"
    )
    verbs = workspace.add_subparsers(dest="workspace_verb", metavar="{add,list,remove}")
    verbs.required = True
    p = verbs.add_parser("add", parents=[common], help="let the panel offer this folder")
    p.add_argument("path", metavar="PATH", help="an existing folder you own")
    p.add_argument("--label", metavar="TEXT", help="what the panel shows (default: the folder's name)")
    p.set_defaults(handler=cmd_workspace_add)
    p = verbs.add_parser("list", parents=[common], help="the folders the panel may offer")
    p.set_defaults(handler=cmd_workspace_list)
    p = verbs.add_parser("remove", parents=[common], help="stop offering a folder")
    p.add_argument("key", metavar="ID|PATH", help="its id from `panel workspace list`, or its path")
    p.set_defaults(handler=cmd_workspace_remove)


def _home() -> str:
    from tabpilot import paths

    return paths.ensure_home()


def _line(item: dict[str, Any]) -> str:
    state = STATES.get(item["state"], item["state"])
    line = f"{item['id']:<7} {state:<14} {item.get('version') or '-'}"
    if item.get("bin"):
        line += f"  {item['bin']}"
    if item.get("env"):
        line += f"  env: {', '.join(item['env'])}"
    if item.get("reason"):
        line += f"\n        {item['reason']}"
    if item.get("hint"):
        line += f"; fix: {item['hint']}"
    return line


def cmd_agent_list(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.agents import config, registry

    settings = config.load(_home())
    agents = []
    for name in registry.ADAPTERS:
        readiness = registry.probe(name, settings)
        setting = settings.agent(name)
        agents.append(
            {**readiness.to_json(), "bin": readiness.bin, "model": setting.model, "env": list(setting.env)}
        )
    return ctx.emit({"agents": agents}, "\n".join(_line(a) for a in agents))


def cmd_agent_set(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.agents import config, registry

    if args.name not in registry.ADAPTERS:
        raise RpcError(
            "invalid_params", f"unknown agent {args.name!r}", hint=f"one of: {', '.join(registry.ADAPTERS)}"
        )
    if args.model is not None and not MODEL.match(args.model):
        raise RpcError("invalid_params", f"{args.model!r} is not a model name", hint="e.g. claude-sonnet-4-5")
    home = _home()
    settings = config.load(home)
    setting = config.AgentSetting() if args.reset else settings.agent(args.name)
    if args.bin is not None:
        path = os.path.abspath(os.path.expanduser(args.bin))
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise RpcError(
                "invalid_params", f"{args.bin} is not an executable file", hint="give the agent's binary"
            )
        setting.bin = path
    if args.model is not None:
        setting.model = args.model
    for name in args.env or ():
        if not config.choosable(name):
            raise RpcError(
                "invalid_params",
                f"{name!r} cannot be handed to the agent",
                hint="name an environment variable (letters, digits, _), not TABPILOT_*, LD_PRELOAD, "
                "NODE_OPTIONS or CLAUDECODE",
            )
        if name not in setting.env:
            setting.env = (*setting.env, name)
    settings.agents[args.name] = setting
    config.save(home, settings)
    readiness = registry.probe(args.name, settings)
    result = {**readiness.to_json(), "bin": readiness.bin, "model": setting.model, "env": list(setting.env)}
    return ctx.emit(result, _line(result))


def cmd_workspace_add(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.agents import config

    home = _home()
    settings = config.load(home)
    workspace = settings.add_workspace(args.path, args.label)
    config.save(home, settings)
    result = {"id": workspace.id, "label": workspace.label, "path": workspace.path}
    return ctx.emit(result, f"{workspace.id}  {workspace.label}  {workspace.path}")


def cmd_workspace_list(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.agents import config

    settings = config.load(_home())
    workspaces = [{"id": w.id, "label": w.label, "path": w.path} for w in settings.workspaces]
    lines = [f"{w['id']}  {w['label']}  {w['path']}" for w in workspaces]
    return ctx.emit({"workspaces": workspaces}, "\n".join(lines) if lines else "no workspaces")


def cmd_workspace_remove(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.agents import config

    home = _home()
    settings = config.load(home)
    workspace = settings.remove_workspace(args.key)
    config.save(home, settings)
    result = {"removed": {"id": workspace.id, "label": workspace.label, "path": workspace.path}}
    return ctx.emit(result, f"removed {workspace.id} ({workspace.path})")
