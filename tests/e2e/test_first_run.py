"""What a new user does first, as written in the README: bootstrap a fresh clone, build and install
the wheel, run `tabpilot --version`, `extension path` and `demo` from the installed package alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from harness import REPO, Tabpilot, free_port, kill_and_wait

# The base interpreter (not this venv's): a fresh venv must not see the clone's editable install.
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


def demo_checks(out: str) -> None:
    """The demo shows the snapshot with refs, fills the name and clicks Greet by them, and says the outcome."""
    box = re.search(r'\[textbox "Your name" (@e\d+)', out)
    button = re.search(r'\[button "Greet me" (@e\d+)', out)
    assert box and button, out
    assert f"tabpilot fill {box.group(1)} Ada" in out and f"tabpilot click {button.group(1)}" in out
    assert f'filled textbox "Your name" {box.group(1)} = "Ada"' in out
    assert f'clicked button "Greet me" {button.group(1)}' in out
    assert "the page now says: Hello, Ada!" in out
    shot = re.search(r"screenshot: (\S+\.png)", out)
    assert shot and Path(shot.group(1)).read_bytes()[:4] == b"\x89PNG"


def test_demo_shows_the_snapshot_with_refs_and_does_one_action() -> None:
    env = Tabpilot()
    try:
        result = env.run("demo", timeout=120)
        demo_checks(result.out)
        as_json = env.run("demo", "--json", timeout=120).json
        assert as_json["greeting"] == "Hello, Ada!" and as_json["filled"]["value"] == "Ada"
        assert "@e" in as_json["snapshot"]
        # the demo stopped what it started
        assert env.daemon_pid is None and env.browser_pid is None
    finally:
        env.cleanup()


def _clone_files(into: Path) -> None:
    """The files a fresh clone has (committed or about to be), without venvs or caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (raw.decode() for raw in listed)):
        source = REPO / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


@pytest.mark.timeout(900)
def test_a_fresh_clone_bootstraps_and_its_wheel_works_alone() -> None:
    work = Path(tempfile.mkdtemp(prefix="tp-wheel-"))
    clone = work / "clone"
    _clone_files(clone)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABPILOT_", "VIRTUAL_ENV", "PYTHON"))}
    boot = subprocess.run(
        ["bash", "scripts/bootstrap"], cwd=clone, env=env, capture_output=True, text=True, timeout=600
    )
    assert boot.returncode == 0, boot.stderr[-3000:]
    steps = [line for line in boot.stderr.splitlines() if line.startswith("bootstrap: ")]
    assert [s.split()[1] for s in steps[:4]] == ["1/4", "2/4", "3/4", "4/4"], boot.stderr
    assert steps[-1].startswith("bootstrap: done")

    build = subprocess.run(
        [
            str(clone / ".venv/bin/python"),
            "-m",
            "build",
            "--wheel",
            "--outdir",
            str(work / "dist"),
            str(clone),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    (wheel,) = (work / "dist").glob("tabpilot-*.whl")
    shutil.rmtree(clone)  # from here on, only the wheel

    venv = work / "venv"
    subprocess.run([BASE_PYTHON, "-m", "venv", str(venv)], check=True, env=env, timeout=120)
    install = subprocess.run(
        [str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    installed = str(venv / "bin/tabpilot")
    home = work / "home"
    # A port of its own: another daemon on this machine may hold the default one.
    run_env = {**env, "TABPILOT_HOME": str(home), "TABPILOT_PORT": str(free_port()), "HOME": str(work)}

    def tabpilot(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [installed, *args], env=run_env, capture_output=True, text=True, timeout=180, check=False
        )
        assert done.returncode == 0, f"tabpilot {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done

    try:
        assert tabpilot("--version").stdout.startswith("tabpilot ")
        extension = Path(tabpilot("extension", "path").stdout.strip())
        assert str(extension).startswith(str(venv)), extension
        assert json.loads((extension / "manifest.json").read_text())["manifest_version"] == 3
        demo_checks(tabpilot("demo").stdout)
    finally:
        for state in ("browser/browser.json", "daemon.json"):
            path = home / state
            if path.exists():
                kill_and_wait(int(json.loads(path.read_text())["pid"]))
        shutil.rmtree(work, ignore_errors=True)
