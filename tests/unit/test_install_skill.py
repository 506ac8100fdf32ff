"""install-skill against a temporary HOME: every harness, idempotence, --list, --uninstall, --project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tabpilot.skill import install

PACKAGED = install.packaged_skill().read_bytes()


def run(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABPILOT_", "HERMES_", "KIMI_"))}
    env["HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-m", "tabpilot.cli.main", "install-skill", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("harness", [h.name for h in install.HARNESSES])
def test_each_harness_gets_the_skill_where_it_looks(tmp_path: Path, harness: str) -> None:
    expected = {
        "claude": ".claude/skills",
        "codex": ".agents/skills",
        "cursor": ".cursor/skills",
        "gemini": ".gemini/skills",
        "opencode": ".config/opencode/skills",
        "openclaw": ".openclaw/skills",
        "codebuddy": ".codebuddy/skills",
        "workbuddy": ".workbuddy/skills",
        "pi": ".pi/agent/skills",
        "hermes": ".hermes/skills",
        "kimi": ".kimi-code/skills",
    }[harness]
    out = run(tmp_path, "--harness", harness).stdout
    skill = tmp_path / expected / "tabpilot" / "SKILL.md"
    assert skill.read_bytes() == PACKAGED
    assert out.startswith("installed") and str(skill) in out
    assert run(tmp_path, "--harness", harness).stdout.startswith("unchanged")
    listed = json.loads(run(tmp_path, "--list", "--json").stdout)["harnesses"]
    assert {r["harness"]: r["installed"] for r in listed}[harness] == "current"


def test_yes_installs_into_detected_harnesses_only(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".codex").mkdir()
    run(tmp_path, "--yes")
    assert (tmp_path / ".claude/skills/tabpilot/SKILL.md").exists()
    assert (tmp_path / ".agents/skills/tabpilot/SKILL.md").exists()
    assert not (tmp_path / ".cursor").exists()
    rows = {r["harness"]: r for r in json.loads(run(tmp_path, "--list", "--json").stdout)["harnesses"]}
    assert rows["claude"]["detected"] and rows["claude"]["installed"] == "current"
    assert not rows["cursor"]["detected"] and rows["cursor"]["installed"] == "absent"


def test_outdated_copy_is_reported_and_updated(tmp_path: Path) -> None:
    run(tmp_path, "--harness", "claude")
    skill = tmp_path / ".claude/skills/tabpilot/SKILL.md"
    skill.write_text("an older skill\n")
    rows = {r["harness"]: r for r in json.loads(run(tmp_path, "--list", "--json").stdout)["harnesses"]}
    assert rows["claude"]["installed"] == "outdated"
    assert run(tmp_path, "--harness", "claude").stdout.startswith("updated")
    assert skill.read_bytes() == PACKAGED


def test_uninstall_removes_only_what_it_wrote(tmp_path: Path) -> None:
    run(tmp_path, "--harness", "claude", "--harness", "cursor")
    extra = tmp_path / ".claude/skills/tabpilot/notes.md"
    extra.write_text("mine\n")
    other = tmp_path / ".claude/skills/other-skill/SKILL.md"
    other.parent.mkdir(parents=True)
    other.write_text("someone else's\n")
    out = run(tmp_path, "--uninstall").stdout
    assert "removed" in out and "Claude Code" in out and "Cursor" in out
    assert not (tmp_path / ".claude/skills/tabpilot/SKILL.md").exists()
    assert extra.read_text() == "mine\n" and other.exists()
    assert not (tmp_path / ".cursor/skills/tabpilot").exists()
    assert run(tmp_path, "--uninstall").stdout.strip() == "nothing to do"


def test_a_skill_not_written_by_tabpilot_is_never_overwritten(tmp_path: Path) -> None:
    foreign = tmp_path / ".claude/skills/tabpilot/SKILL.md"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("hand made\n")
    proc = run(tmp_path, "--harness", "claude", check=False)
    assert proc.returncode == 1 and "was not installed by tabpilot" in proc.stderr
    assert foreign.read_text() == "hand made\n"
    assert not run(tmp_path, "--uninstall").stdout.count("removed")


def test_project_install(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    run(tmp_path, "--project", str(project), "--harness", "claude", "--harness", "codex")
    assert (project / ".claude/skills/tabpilot/SKILL.md").read_bytes() == PACKAGED
    assert (project / ".agents/skills/tabpilot/SKILL.md").exists()


def test_bad_choices_are_clear_errors(tmp_path: Path) -> None:
    unknown = run(tmp_path, "--harness", "notepad", check=False)
    assert (
        unknown.returncode == 1 and "unknown harness notepad" in unknown.stderr and "claude" in unknown.stderr
    )
    (tmp_path / ".claude").mkdir()
    not_tty = run(tmp_path, check=False)
    assert not_tty.returncode == 1 and "--yes" in not_tty.stderr


def test_yes_without_any_harness_is_one_line_and_exit_0(tmp_path: Path) -> None:
    nothing = run(tmp_path, "--yes")
    lines = nothing.stdout.strip().splitlines()
    assert len(lines) == 1 and "no agent harness found" in lines[0]
    assert str(install.packaged_skill()) in lines[0] and "--harness" in lines[0]
    assert not list(tmp_path.iterdir())
    as_json = json.loads(run(tmp_path, "--yes", "--json").stdout)
    assert as_json["results"] == [] and as_json["skill"] == str(install.packaged_skill())


def test_list_shows_every_short_name_detected_or_not(tmp_path: Path) -> None:
    (tmp_path / ".cursor").mkdir()
    rows = run(tmp_path, "--list").stdout.splitlines()[1:]
    assert [row.split()[0] for row in rows] == [h.name for h in install.HARNESSES]
    cursor = next(row for row in rows if row.startswith("cursor "))
    assert "detected" in cursor and all("not found" in row for row in rows if row is not cursor)
