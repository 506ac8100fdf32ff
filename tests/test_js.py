"""Runs the extension's JavaScript unit tests (every `tests/js/**/*.test.js`) as part of pytest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent / "js"


def test_extension_unit_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    files = sorted(str(p) for p in TESTS.rglob("*.test.js"))
    proc = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=300, check=False)
    summary = "\n".join(line for line in proc.stdout.splitlines() if line.startswith("# "))
    assert proc.returncode == 0, f"{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    assert "# fail 0" in summary, summary
