"""The agent CLI's environment as an allow-list: what it needs to run, its own settings, what the
person named for it, and tabpilot's run variables. Nothing else of the person's environment passes.

A deny-list by name shape let through what it could not recognise (``DB_URL`` with a password,
``HTTPS_PROXY`` with credentials, ``JWT``, webhook URLs); an allow-list cannot miss a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# What any program needs to run as the person, in their language and terminal.
BASE = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "COLORTERM",
        "TMPDIR",
        "TZ",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
    }
)
BASE_PREFIXES = ("LC_",)
# Never passed, even under an agent's own prefix: they make the child think it runs inside another
# agent, or change what code runs.
NEVER = frozenset({"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "LD_PRELOAD", "NODE_OPTIONS"})
# What tabpilot itself adds for the run: where its daemon is, and the turn's session and run token.
INJECTED = frozenset({"TABPILOT_HOME", "TABPILOT_PORT", "TABPILOT_SESSION", "TABPILOT_RUN", "TABPILOT_FILES"})
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


@dataclass(frozen=True)
class OwnEnv:
    """An agent CLI's own variables: its auth and settings, by prefix and by exact name."""

    prefixes: tuple[str, ...]
    names: frozenset[str] = frozenset()


def choosable(name: str) -> bool:
    """May the person name this variable for an agent (`tabpilot panel agent set NAME --env VAR`)?"""
    return bool(NAME.match(name)) and name not in NEVER and not name.startswith("TABPILOT_")


def allowed(name: str, own: OwnEnv, chosen: Iterable[str] = ()) -> bool:
    if name in NEVER:
        return False
    return (
        name in BASE
        or name.startswith(BASE_PREFIXES)
        or name.startswith(own.prefixes)
        or name in own.names
        or (name in set(chosen) and choosable(name))
    )


def seal(env: dict[str, str], own: OwnEnv, chosen: Iterable[str] = ()) -> dict[str, str]:
    """The variables of ``env`` an agent CLI may see."""
    chosen = frozenset(chosen)
    return {name: value for name, value in env.items() if allowed(name, own, chosen)}


def unsealed(env: dict[str, str], own: OwnEnv, chosen: Iterable[str] = ()) -> list[str]:
    """Names in ``env`` that sealing would have dropped (tabpilot's own additions excepted)."""
    chosen = frozenset(chosen)
    return sorted(name for name in env if name not in INJECTED and not allowed(name, own, chosen))
