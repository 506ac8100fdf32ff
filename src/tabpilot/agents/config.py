"""``$TABPILOT_HOME/panel.json``: which agent binaries and working folders the panel may use.

Written only by the CLI (`tabpilot panel agent set`, `tabpilot panel workspace add`): the browser
side names agents and folders by key, never by path, so a page can never choose what runs where.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

from tabpilot.agents.envseal import choosable
from tabpilot.protocol import RpcError

PANEL_FILE = "panel.json"
WORKSPACE_ID = re.compile(r"^ws-[a-z0-9-]{1,40}$")


@dataclass
class AgentSetting:
    bin: str | None = None
    model: str | None = None
    # Names of the person's environment variables this agent also gets (its env is an allow-list).
    env: tuple[str, ...] = ()


@dataclass
class Workspace:
    id: str
    label: str
    path: str


@dataclass
class PanelConfig:
    agents: dict[str, AgentSetting] = field(default_factory=dict)
    workspaces: list[Workspace] = field(default_factory=list)

    def agent(self, name: str) -> AgentSetting:
        return self.agents.get(name) or AgentSetting()

    def workspace(self, workspace_id: str) -> Workspace:
        for workspace in self.workspaces:
            if workspace.id == workspace_id:
                return workspace
        raise RpcError(
            "invalid_params",
            f"unknown workspace {workspace_id!r}",
            "unknown_workspace",
            hint="`tabpilot panel workspace list` shows the folders the person registered",
        )

    def add_workspace(self, path: str, label: str | None = None) -> Workspace:
        real = checked_folder(path)
        for workspace in self.workspaces:
            if workspace.path == real:
                return workspace
        slug = re.sub(r"[^a-z0-9]+", "-", os.path.basename(real).lower()).strip("-")[:24] or "folder"
        workspace = Workspace(f"ws-{slug}-{secrets.token_hex(2)}", label or os.path.basename(real), real)
        self.workspaces.append(workspace)
        return workspace

    def remove_workspace(self, key: str) -> Workspace:
        """Remove by id or by path."""
        real = os.path.realpath(os.path.expanduser(key))
        for workspace in self.workspaces:
            if key == workspace.id or real == workspace.path:
                self.workspaces.remove(workspace)
                return workspace
        raise RpcError(
            "not_found",
            f"no workspace {key!r}",
            "unknown_workspace",
            hint="`tabpilot panel workspace list` shows them",
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": {
                name: {**asdict(setting), "env": list(setting.env)}
                for name, setting in sorted(self.agents.items())
            },
            "workspaces": [asdict(w) for w in self.workspaces],
        }


def checked_folder(path: str) -> str:
    """The real path of an existing folder owned by this user; else a clear error."""
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.isdir(real):
        raise RpcError("invalid_params", f"{path!r} is not a folder", hint="give an existing folder")
    if os.stat(real).st_uid != os.getuid():
        raise RpcError("invalid_params", f"{real} is not yours", hint="register a folder you own")
    return real


def panel_path(home: str) -> str:
    return os.path.join(home, PANEL_FILE)


def load(home: str) -> PanelConfig:
    try:
        with open(panel_path(home), encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        return PanelConfig()
    except (OSError, ValueError) as exc:
        raise RpcError(
            "invalid_params",
            f"{panel_path(home)} is unreadable: {exc}",
            hint="fix or remove it, then set agents again with `tabpilot panel agent set`",
        ) from None
    agents = {
        str(name): AgentSetting(bin=value.get("bin"), model=value.get("model"), env=_names(value.get("env")))
        for name, value in (raw.get("agents") or {}).items()
        if isinstance(value, dict)
    }
    workspaces = [
        Workspace(str(w["id"]), str(w.get("label") or w["id"]), str(w["path"]))
        for w in raw.get("workspaces") or []
        if isinstance(w, dict) and WORKSPACE_ID.match(str(w.get("id", ""))) and w.get("path")
    ]
    return PanelConfig(agents, workspaces)


def _names(raw: Any) -> tuple[str, ...]:
    return tuple(n for n in raw if isinstance(n, str) and choosable(n)) if isinstance(raw, list) else ()


def save(home: str, config: PanelConfig) -> None:
    os.makedirs(home, mode=0o700, exist_ok=True)
    target = panel_path(home)
    fd = os.open(f"{target}.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(config.to_json(), handle, indent=2)
    os.replace(f"{target}.tmp", target)
