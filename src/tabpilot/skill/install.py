"""Put SKILL.md where each agent harness looks for skills, and take it away again.

Every install writes ``<skills dir>/tabpilot/SKILL.md`` plus a small record of what was written, so
an uninstall removes exactly that and nothing a person added beside it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

SKILL_NAME = "tabpilot"
RECORD = ".tabpilot-install.json"


def packaged_skill() -> Path:
    return Path(__file__).resolve().parent / "SKILL.md"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Harness:
    """An agent harness: where its user-level skills live, and how to tell it is installed."""

    name: str
    title: str
    user_dir: Callable[[Path], Path]
    markers: Callable[[Path], Iterable[Path]]
    project_dir: str | None = None  # relative to a project folder, for --project

    def detected(self, home: Path) -> bool:
        return any(marker.exists() for marker in self.markers(home))


def _env_dir(variable: str, default: str) -> Callable[[Path], Path]:
    def resolve(home: Path) -> Path:
        value = os.environ.get(variable)
        return Path(value).expanduser() if value else home / default

    return resolve


HARNESSES: tuple[Harness, ...] = (
    Harness(
        "claude", "Claude Code", lambda h: h / ".claude/skills", lambda h: [h / ".claude"], ".claude/skills"
    ),
    Harness(
        "codex",
        "Codex",
        lambda h: h / ".agents/skills",
        lambda h: [h / ".codex", h / ".agents"],
        ".agents/skills",
    ),
    Harness("cursor", "Cursor", lambda h: h / ".cursor/skills", lambda h: [h / ".cursor"], ".cursor/skills"),
    Harness(
        "gemini", "Gemini CLI", lambda h: h / ".gemini/skills", lambda h: [h / ".gemini"], ".gemini/skills"
    ),
    Harness(
        "opencode",
        "OpenCode",
        lambda h: h / ".config/opencode/skills",
        lambda h: [h / ".config/opencode"],
        ".opencode/skills",
    ),
    Harness("openclaw", "OpenClaw", lambda h: h / ".openclaw/skills", lambda h: [h / ".openclaw"]),
    Harness("codebuddy", "CodeBuddy", lambda h: h / ".codebuddy/skills", lambda h: [h / ".codebuddy"]),
    Harness("workbuddy", "WorkBuddy", lambda h: h / ".workbuddy/skills", lambda h: [h / ".workbuddy"]),
    Harness("pi", "Pi", lambda h: h / ".pi/agent/skills", lambda h: [h / ".pi"]),
    Harness(
        "hermes",
        "Hermes",
        lambda h: _env_dir("HERMES_HOME", ".hermes")(h) / "skills",
        lambda h: [_env_dir("HERMES_HOME", ".hermes")(h)],
    ),
    Harness(
        "kimi",
        "Kimi Code",
        lambda h: _env_dir("KIMI_CODE_HOME", ".kimi-code")(h) / "skills",
        lambda h: [_env_dir("KIMI_CODE_HOME", ".kimi-code")(h)],
    ),
)
BY_NAME = {h.name: h for h in HARNESSES}


@dataclass
class Target:
    """One place a skill can be installed: a harness's skills folder (user or project level)."""

    harness: Harness
    skills_dir: Path

    @property
    def folder(self) -> Path:
        return self.skills_dir / SKILL_NAME

    @property
    def skill_file(self) -> Path:
        return self.folder / "SKILL.md"

    def state(self, packaged: bytes) -> str:
        """ "absent", "current", "outdated" (ours, older), or "foreign" (a SKILL.md we did not write)."""
        if not self.skill_file.exists():
            return "absent"
        record = self._record()
        if record is None:
            return "foreign"
        return "current" if _digest(self.skill_file.read_bytes()) == _digest(packaged) else "outdated"

    def _record(self) -> dict[str, str] | None:
        try:
            data = json.loads((self.folder / RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def install(self, packaged: bytes, version: str) -> str:
        """Write SKILL.md atomically; "installed", "updated" or "unchanged"."""
        before = self.state(packaged)
        if before == "current":
            return "unchanged"
        if before == "foreign":
            raise FileExistsError(
                f"{self.skill_file} exists and was not installed by tabpilot; remove it first"
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.skill_file, packaged)
        record = {"version": version, "sha256": _digest(packaged), "files": ["SKILL.md"]}
        _write_atomic(self.folder / RECORD, json.dumps(record, indent=1).encode())
        return "installed" if before == "absent" else "updated"

    def uninstall(self) -> bool:
        """Remove what an install wrote (only if tabpilot wrote it); True when something went."""
        record = self._record()
        if record is None:
            return False
        for name in [*record.get("files", []), RECORD]:
            path = self.folder / name
            if path.is_file():
                path.unlink()
        if self.folder.is_dir() and not any(self.folder.iterdir()):
            self.folder.rmdir()
        return True


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def user_targets(home: Path, names: Iterable[str] | None = None) -> list[Target]:
    chosen = [BY_NAME[n] for n in names] if names is not None else list(HARNESSES)
    return [Target(h, h.user_dir(home)) for h in chosen]


def project_targets(project: Path, names: Iterable[str] | None = None) -> list[Target]:
    chosen = [BY_NAME[n] for n in names] if names is not None else list(HARNESSES)
    return [Target(h, project / h.project_dir) for h in chosen if h.project_dir is not None]
