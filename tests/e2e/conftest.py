"""Fixtures for end-to-end tests: a page server, and a real browser per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from harness import PageServer, Tabpilot, start_page_server


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    server = start_page_server()
    yield server
    server.close()


@pytest.fixture(scope="session")
def other_site() -> Iterator[PageServer]:
    """tests/pages again, as http://localhost:PORT: another site than `pages`, so its frames are out of process."""
    server = start_page_server(host="localhost")
    yield server
    server.close()


@pytest.fixture(scope="module")
def tp() -> Iterator[Tabpilot]:
    """A managed headless Chromium with the extension, connected to this module's own daemon."""
    env = Tabpilot()
    try:
        env.run("browser", "launch", "--headless", timeout=90)
        yield env
    finally:
        env.cleanup()
