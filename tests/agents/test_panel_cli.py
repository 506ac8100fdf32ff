"""`tabpilot panel agent|workspace`: the only way to name an agent binary or a folder for the panel."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from rig import stand_in

TABPILOT = str(Path(sys.executable).with_name("tabpilot"))


def run(home: str, *args: str, path: str = "/nonexistent") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TABPILOT_HOME": home, "PATH": path}
    return subprocess.run(
        [TABPILOT, "panel", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_agent_list_says_what_is_missing_and_set_makes_it_ready() -> None:
    home = tempfile.mkdtemp()
    listed = run(home, "agent", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    agents = {a["id"]: a for a in json.loads(listed.stdout)["agents"]}
    assert agents["claude"]["state"] == "not_installed" and agents["codex"]["state"] == "not_installed"
    assert "tabpilot panel agent set claude --bin PATH" in agents["claude"]["hint"]
    text = run(home, "agent", "list").stdout
    assert "not installed" in text and "fix:" in text

    binary = stand_in(home)
    done = run(home, "agent", "set", "claude", "--bin", binary, "--model", "claude-sonnet-4-5", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (
        result["state"] == "ready"
        and result["version"] == "2.1.328 (Claude Code)"
        and result["bin"] == binary
    )
    config = Path(home, "panel.json")
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text())["agents"]["claude"] == {
        "bin": binary,
        "model": "claude-sonnet-4-5",
        "env": [],
    }
    # The agent's environment is an allow-list: the person names what else it gets.
    chosen = json.loads(
        run(home, "agent", "set", "claude", "--env", "CORP_CA", "--env", "HTTPS_PROXY", "--json").stdout
    )
    assert chosen["env"] == ["CORP_CA", "HTTPS_PROXY"] and chosen["bin"] == binary
    assert "env: CORP_CA, HTTPS_PROXY" in run(home, "agent", "list").stdout

    broken = Path(home, "broken")
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o700)
    needs = json.loads(run(home, "agent", "set", "codex", "--bin", str(broken), "--json").stdout)
    assert needs["state"] == "needs_setup" and "exited 3" in needs["reason"]
    reset = json.loads(run(home, "agent", "set", "codex", "--reset", "--json").stdout)
    assert reset["state"] == "not_installed" and reset["bin"] is None


def test_bad_agent_input_is_one_error_line_and_a_hint() -> None:
    home = tempfile.mkdtemp()
    for args, words in (
        (("agent", "set", "sh"), "unknown agent 'sh'"),
        (("agent", "set", "claude", "--bin", "/nonexistent/claude"), "not an executable file"),
        (("agent", "set", "claude", "--model", "--yolo x"), "not a model name"),
        (("agent", "set", "claude", "--env", "LD_PRELOAD"), "cannot be handed to the agent"),
        (("agent", "set", "claude", "--env", "TABPILOT_RUN"), "cannot be handed to the agent"),
    ):
        result = run(home, *args)
        assert result.returncode == 1, result
        assert result.stderr.startswith("error: ") and words in result.stderr and "hint:" in result.stderr
        assert "Traceback" not in result.stderr
    assert not Path(home, "panel.json").exists()


def test_workspaces_are_added_listed_and_removed_by_id_or_path() -> None:
    home = tempfile.mkdtemp()
    folder = tempfile.mkdtemp(prefix="shop-")
    added = json.loads(run(home, "workspace", "add", folder, "--label", "Shop", "--json").stdout)
    assert (
        added["path"] == os.path.realpath(folder)
        and added["label"] == "Shop"
        and added["id"].startswith("ws-shop-")
    )
    again = json.loads(run(home, "workspace", "add", folder, "--json").stdout)
    assert again["id"] == added["id"]
    listed = json.loads(run(home, "workspace", "list", "--json").stdout)["workspaces"]
    assert listed == [added]
    assert run(home, "workspace", "add", "/nonexistent/folder").returncode == 1
    removed = json.loads(run(home, "workspace", "remove", added["id"], "--json").stdout)
    assert removed["removed"]["id"] == added["id"]
    assert run(home, "workspace", "list").stdout.strip() == "no workspaces"
    assert run(home, "workspace", "remove", folder).returncode == 1
