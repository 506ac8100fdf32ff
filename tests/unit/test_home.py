"""TABPILOT_HOME: a new folder is made private; an existing one is checked, never chmodded."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tabpilot import paths
from tabpilot.protocol import RpcError


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_home_is_created_private_with_its_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "home"
    old = os.umask(0)
    try:
        assert paths.ensure_home(str(target)) == str(target)
    finally:
        os.umask(old)
    assert mode_of(target) == 0o700


def test_an_existing_private_enough_home_is_used_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    os.chmod(target, 0o755)
    paths.ensure_home(str(target))
    assert mode_of(target) == 0o755  # not ours to chmod


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o770, 0o720, 0o702])
def test_a_home_others_can_write_to_is_refused_and_left_alone(tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)
    with pytest.raises(RpcError) as refused:
        paths.ensure_home(str(shared))
    assert refused.value.code == "permission_denied"
    assert f"can be written by others (mode {mode:04o})" in refused.value.message
    assert "chmod 700" in refused.value.data["hint"]
    assert mode_of(shared) == mode


def test_a_home_of_another_user_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    with pytest.raises(RpcError) as refused:
        paths.ensure_home(str(theirs), uid=os.geteuid() + 1)
    assert f"belongs to user {os.geteuid()}, not to you ({os.geteuid() + 1})" in refused.value.message
    # chmod is no fix for a folder that is not yours: the hint names what is
    hint = refused.value.data["hint"]
    assert "chmod" not in hint and "TABPILOT_HOME" in hint and "user who owns it" in hint
    paths.ensure_home(str(theirs))  # its owner may use it


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder away")
def test_a_home_chowned_to_someone_else_is_refused_even_for_root(tmp_path: Path) -> None:
    theirs = tmp_path / "nobody"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(RpcError, match="belongs to user 65534"):
        paths.ensure_home(str(theirs))


def test_the_cli_and_the_daemon_say_why_and_what_to_do(tmp_path: Path) -> None:
    shared = tmp_path / "tmpish"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env["TABPILOT_HOME"] = str(shared)
    cli = subprocess.run(
        [sys.executable, "-m", "tabpilot", "session", "list"], env=env, capture_output=True, text=True
    )
    assert cli.returncode == 1
    assert cli.stderr.startswith(f"error: TABPILOT_HOME={shared} can be written by others (mode 1777)")
    assert "\nhint: point TABPILOT_HOME at a folder that does not exist yet" in cli.stderr
    daemon = subprocess.run(
        [sys.executable, "-m", "tabpilot.daemon"], env=env, capture_output=True, text=True, timeout=20
    )
    assert daemon.returncode == 3 and "Traceback" not in daemon.stderr
    assert "can be written by others" in daemon.stderr and "hint:" in daemon.stderr
    assert mode_of(shared) == 0o1777 and not list(shared.iterdir())
