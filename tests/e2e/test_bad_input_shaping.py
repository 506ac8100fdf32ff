"""The bad-input table for emulation and request shaping (kept apart from test_bad_input.py's, which
counts these cases in its every-verb check): each answers with `error:` and `hint:`, its exit code, and
no traceback."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import PageServer, Tabpilot
from test_bad_input import check

NOWHERE = "/nonexistent-tabpilot-folder"
EMPTY = os.path.join(tempfile.gettempdir(), f"tabpilot-empty-init-script-{os.getpid()}.js")
PARSING = [
    (["emulate", "--device", "iPhone 99"], 1),
    (["emulate", "--device", ""], 1),
    (["emulate", "--device", "pixel-7", "--viewport", "390x844"], 1),
    (["emulate", "--user-agent", ""], 1),
    (["emulate", "--user-agent", "two\nlines"], 1),
    (["emulate", "--user-agent", "x" * 600], 1),
    (["emulate", "--locale", "fr_FR!"], 1),
    (["emulate", "--locale", ""], 1),
    (["network", "headers", "https://api.example", "NoColon"], 1),
    (["network", "headers", "https://api.example", "Host: evil.example"], 1),
    (["network", "headers", "https://api.example", "Bad Name: 1"], 1),
    (["network", "headers", "https://api.example", "X-A: two\nlines"], 1),
    (["network", "headers", "ftp://api.example", "X-A: 1"], 1),
    (["network", "headers", "not an origin", "X-A: 1"], 1),
    (["network", "headers", "https://api.example"], 1),
    (["network", "headers", "https://api.example", "X-A: 1", "--clear"], 1),
    (["network", "credentials", "https://api.example"], 1),
    (["network", "credentials", "https://api.example", "nocolon"], 1),
    (["network", "credentials", "https://api.example", ":password"], 1),
    (["network", "credentials", "javascript:alert(1)", "a:b"], 1),
    (["init-script"], 1),
    (["init-script", "add"], 1),
    (["init-script", "add", f"{NOWHERE}/x.js"], 1),
    (["init-script", "add", EMPTY], 1),
    (["init-script", "remove", ""], 1),
    (["browser", "launch", "--proxy", "ftp://proxy.example:21"], 1),
    (["browser", "launch", "--proxy", "http://"], 1),
    (["browser", "launch", "--proxy", "http://proxy.example:99999"], 1),
    (["browser", "launch", "--proxy", "http://user:pw@proxy.example:3128"], 1),
]
REFUSED = [
    (["init-script", "remove", "s999999"], 1),
]
CASES = PARSING + REFUSED


@pytest.fixture(scope="module", autouse=True)
def empty_script() -> Iterator[None]:
    Path(EMPTY).write_text("  \n")
    yield
    Path(EMPTY).unlink()


@pytest.mark.parametrize(
    ("argv", "code"), PARSING, ids=lambda v: " ".join(v) if isinstance(v, list) else None
)
def test_bad_arguments(tp: Tabpilot, argv: list[str], code: int) -> None:
    check(tp, argv, code)


@pytest.mark.parametrize(
    ("argv", "code"), REFUSED, ids=lambda v: " ".join(v) if isinstance(v, list) else None
)
def test_refusals(tp: Tabpilot, pages: PageServer, argv: list[str], code: int) -> None:
    tp.run("open", pages.url("index.html"))
    check(tp, argv, code)
