"""The `tabpilot` command's launcher (scripts/launcher/): it runs without `site` in a venv, also reached
through a link as pipx makes one, and puts on sys.path what `site` would have put there."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _tabpilot_launcher
import pytest

TABPILOT = Path(sys.executable).with_name("tabpilot")


def imports(command: list[str]) -> tuple[str, set[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env["PYTHONPROFILEIMPORTTIME"] = "1"
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    return proc.stdout, {line.rsplit("|", 1)[-1].strip() for line in lines[1:]}


def test_the_command_skips_site_in_a_venv_also_through_a_pipx_style_link() -> None:
    link_dir = Path(tempfile.mkdtemp(prefix="tp-bin-"))
    (link_dir / "tabpilot").symlink_to(TABPILOT)
    for command in ([str(TABPILOT), "--version"], [str(link_dir / "tabpilot"), "--version"]):
        out, modules = imports(command)
        assert out.startswith("tabpilot ")
        assert "site" not in modules and "re" not in modules and "_tabpilot_launcher" in modules


def test_the_full_cli_gets_site_back() -> None:
    out, modules = imports([str(TABPILOT), "click", "--help"])
    assert out.startswith("usage: tabpilot click")
    assert {"site", "argparse"} <= modules


def test_venv_paths_are_what_site_added_here() -> None:
    paths = _tabpilot_launcher.venv_paths()
    assert paths, "this interpreter is a plain venv's"
    assert paths == [p for p in sys.path if p in paths]
    assert any(Path(p, "tabpilot", "__init__.py").exists() for p in paths)


def fake_venv(config: str, pth: dict[str, str]) -> Path:
    root = Path(tempfile.mkdtemp(prefix="tp-venv-"))
    (root / "pyvenv.cfg").write_text(config)
    site_packages = root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site_packages.mkdir(parents=True)
    for name, text in pth.items():
        (site_packages / name).write_text(text)
    return root


def test_pth_path_lines_in_order_and_import_lines_left_to_site(monkeypatch: pytest.MonkeyPatch) -> None:
    present = tempfile.mkdtemp(prefix="tp-src-")
    root = fake_venv(
        "home = /usr/bin\ninclude-system-site-packages = false\n",
        {"b.pth": f"# a comment\n\nimport os\n{present}\n", "a.pth": "/no/such/dir\n", "c.txt": "/x\n"},
    )
    monkeypatch.setattr(sys, "executable", str(root / "bin" / "python"))
    site_packages = str(root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages")
    assert _tabpilot_launcher.venv_paths() == [site_packages, present]


@pytest.mark.parametrize(
    ("config", "pth"),
    [
        ("include-system-site-packages = true\n", {}),
        ("include-system-site-packages = false\n", {"x.pth": "relative/dir\n"}),
        ("include-system-site-packages = false\n", {"x.pth": "/a/../b\n"}),
    ],
)
def test_site_decides_when_the_venv_is_not_plain(
    monkeypatch: pytest.MonkeyPatch, config: str, pth: dict[str, str]
) -> None:
    monkeypatch.setattr(sys, "executable", str(fake_venv(config, pth) / "bin" / "python"))
    assert _tabpilot_launcher.venv_paths() is None


def test_no_venv_no_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(Path(tempfile.mkdtemp()) / "bin" / "python"))
    assert _tabpilot_launcher.venv_paths() is None
