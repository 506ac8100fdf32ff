"""``install-skill``: teach the agent harnesses on this machine how to use tabpilot."""

from __future__ import annotations

import argparse
import os
import sys

from tabpilot.cli.context import Context
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from tabpilot.skill.install import Target


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "install-skill",
        parents=[common],
        help="install the tabpilot skill into your agent harnesses (Claude Code, Codex, Cursor, …)",
        description="Write the tabpilot SKILL.md where agent harnesses look for skills "
        "(<skills folder>/tabpilot/SKILL.md). Without options it asks which detected harnesses to use; "
        "--yes installs into every detected one. Never needs root.",
    )
    p.add_argument("--yes", action="store_true", help="install into every detected harness without asking")
    p.add_argument("--harness", action="append", metavar="NAME", help="a harness by name (repeatable)")
    p.add_argument("--list", action="store_true", help="show each harness, its folder, detected? installed?")
    p.add_argument("--uninstall", action="store_true", help="remove what install-skill wrote")
    p.add_argument("--project", metavar="DIR", help="install into a project's folders (.claude/skills, …)")
    p.set_defaults(handler=cmd_install_skill)


def _home() -> Any:
    from pathlib import Path

    return Path(os.path.expanduser("~"))


def _targets(args: argparse.Namespace) -> list[Target]:
    from pathlib import Path

    from tabpilot.skill import install

    names = None
    if args.harness:
        unknown = [n for n in args.harness if n not in install.BY_NAME]
        if unknown:
            raise RpcError(
                "invalid_params",
                f"unknown harness {', '.join(unknown)}",
                hint=f"choose from: {', '.join(install.BY_NAME)}",
            )
        names = list(dict.fromkeys(args.harness))
    if args.project:
        project = Path(args.project).expanduser().resolve()
        if not project.is_dir():
            raise RpcError(
                "invalid_params", f"no such folder: {project}", hint="give an existing project folder"
            )
        return install.project_targets(project, names)
    return install.user_targets(_home(), names)


def _choose(targets: list[Target], args: argparse.Namespace) -> list[Target]:
    """Which targets to act on: named ones, all detected ones (--yes), or the person's pick."""
    home = _home()
    if args.harness:
        return targets
    if args.project:
        detected = [t for t in targets if (t.skills_dir.parent).exists()] or targets
    else:
        detected = [t for t in targets if t.harness.detected(home)]
    if args.uninstall:
        return targets
    if not detected and args.yes:
        return []
    if not detected:
        raise RpcError(
            "not_found",
            "no agent harness found on this machine",
            hint="name one with --harness NAME (see `tabpilot install-skill --list`)",
        )
    if args.yes:
        return detected
    if not sys.stdin.isatty():
        raise RpcError(
            "invalid_params",
            "not a terminal, so nothing was chosen",
            hint="pass --yes to install into every detected harness, or --harness NAME",
        )
    for number, target in enumerate(detected, 1):
        print(f"  {number}. {target.harness.title:<12} {target.skills_dir}")
    answer = input("Install into which? (numbers like 1,3; Enter for all; 'none' to stop) ").strip().lower()
    if answer in ("none", "n", "q"):
        return []
    if not answer:
        return detected
    try:
        picked = [detected[int(part) - 1] for part in answer.replace(" ", ",").split(",") if part]
    except (ValueError, IndexError):
        raise RpcError(
            "invalid_params", f"not a choice: {answer}", hint="answer with numbers from the list"
        ) from None
    return picked


def cmd_install_skill(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot import __version__
    from tabpilot.skill import install

    packaged = install.packaged_skill().read_bytes()
    targets = _targets(args)
    home = _home()
    if args.list:
        rows = [
            {
                "harness": t.harness.name,
                "title": t.harness.title,
                "folder": str(t.skills_dir),
                "detected": t.harness.detected(home) if not args.project else t.skills_dir.parent.exists(),
                "installed": t.state(packaged),
            }
            for t in targets
        ]
        # The short name first: it is what --harness takes.
        lines = [f"{'NAME':<10} {'HARNESS':<12} {'ON THIS MACHINE':<15}  {'SKILL':<8}  FOLDER"] + [
            f"{r['harness']:<10} {r['title']:<12} {'detected' if r['detected'] else 'not found':<15}  "
            f"{r['installed']:<8}  {r['folder']}"
            for r in rows
        ]
        return ctx.emit({"harnesses": rows}, "\n".join(lines))
    done = []
    for target in _choose(targets, args):
        try:
            outcome = ("removed" if target.uninstall() else "absent") if args.uninstall else None
            if outcome is None:
                outcome = target.install(packaged, __version__)
        except FileExistsError as exc:
            raise RpcError(
                "invalid_params", str(exc), hint="move that file away, then run install-skill again"
            ) from None
        except OSError as exc:
            raise RpcError(
                "invalid_params",
                f"cannot write {target.folder}: {exc.strerror}",
                hint="check the folder's permissions",
            ) from None
        done.append({"harness": target.harness.name, "path": str(target.skill_file), "outcome": outcome})
    lines = [
        f"{d['outcome']:<9} {install.BY_NAME[d['harness']].title}: {d['path']}"
        for d in done
        if d["outcome"] != "absent"
    ]
    if not done and args.yes and not args.uninstall:
        # Not an error: a machine without a harness is normal (a server, CI); say where it can go.
        where = install.packaged_skill()
        line = (
            f"no agent harness found on this machine: nothing installed; put {where} in your harness's "
            "skills folder as tabpilot/SKILL.md, or name one with --harness NAME (see --list)"
        )
        return ctx.emit({"results": [], "skill": str(where)}, line)
    return ctx.emit({"results": done}, "\n".join(lines) if lines else "nothing to do")
