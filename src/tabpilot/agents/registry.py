"""The agent CLIs the panel knows, where their binaries are, and whether each is ready to run."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tabpilot.agents import claude, codex
from tabpilot.agents.config import PanelConfig

ADAPTERS: dict[str, ModuleType] = {claude.NAME: claude, codex.NAME: codex}
VERSION_TIMEOUT_S = 8.0
CACHE_S = 30.0


@dataclass
class Readiness:
    id: str
    label: str
    state: str  # ready | not_installed | needs_setup
    bin: str | None
    version: str | None = None
    reason: str | None = None
    hint: str | None = None

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "label": self.label,
            "state": self.state,
            "ready": self.ready,
            "version": self.version,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.hint:
            out["hint"] = self.hint
        return out


def resolve_bin(name: str, config: PanelConfig) -> str | None:
    """The configured binary, or the adapter's default name looked up on PATH; an absolute path."""
    configured = config.agent(name).bin
    if configured:
        path = os.path.abspath(os.path.expanduser(configured))
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    found = shutil.which(ADAPTERS[name].DEFAULT_BIN)
    return os.path.abspath(found) if found else None


def probe(name: str, config: PanelConfig) -> Readiness:
    """Run ``BIN --version`` (8 s at most) and say what the person has to do, if anything."""
    adapter = ADAPTERS[name]
    set_hint = f"`tabpilot panel agent set {name} --bin PATH`"
    binary = resolve_bin(name, config)
    if binary is None:
        configured = config.agent(name).bin
        reason = (
            f"{configured} is not an executable file"
            if configured
            else f"`{adapter.DEFAULT_BIN}` is not on PATH"
        )
        return Readiness(
            name, adapter.LABEL, "not_installed", None, reason=reason, hint=f"install it, or run {set_hint}"
        )
    try:
        proc = subprocess.run(
            [binary, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Readiness(
            name,
            adapter.LABEL,
            "needs_setup",
            binary,
            reason="`--version` did not answer within 8 s",
            hint=set_hint,
        )
    except OSError as exc:
        return Readiness(name, adapter.LABEL, "needs_setup", binary, reason=str(exc), hint=set_hint)
    words = (proc.stdout or proc.stderr).strip().splitlines()
    if proc.returncode != 0 or not words:
        return Readiness(
            name,
            adapter.LABEL,
            "needs_setup",
            binary,
            reason=f"`{os.path.basename(binary)} --version` exited {proc.returncode}",
            hint=f"run `{binary}` once in a terminal to finish its setup, or {set_hint}",
        )
    return Readiness(name, adapter.LABEL, "ready", binary, version=words[0].strip())


class ReadinessCache:
    """Probes are cached 30 s: the panel asks on every open."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str | None], tuple[float, Readiness]] = {}

    def get(self, name: str, config: PanelConfig) -> Readiness:
        key = (name, config.agent(name).bin)
        cached = self._seen.get(key)
        if cached is not None and time.monotonic() - cached[0] < CACHE_S:
            return cached[1]
        readiness = probe(name, config)
        self._seen[key] = (time.monotonic(), readiness)
        return readiness
