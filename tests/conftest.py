"""Every temporary folder the tests make (homes, sockets, files) lives in one per-run folder that is
removed when the run ends, so nothing is left in /tmp. It stays short: Unix socket paths are limited."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def one_temporary_folder() -> Iterator[None]:
    run_dir = tempfile.mkdtemp(prefix="tp-run-", dir="/tmp")
    previous = tempfile.tempdir
    tempfile.tempdir = run_dir
    try:
        yield
    finally:
        tempfile.tempdir = previous
        shutil.rmtree(run_dir, ignore_errors=True)
