"""The side panel's world in a real browser, shared by its e2e tests and its bench: a managed headless
Chromium whose daemon runs the real Claude Code CLI against the fake Messages API of tests/agents
(loopback only), the person's tabs, and the panel popped out for one of them."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from harness import REPO, Tabpilot, wait_until
from test_consent import chrome, extension_page
from test_person import Person

# The fake model lives with the other agent-run tests; the panel's tests take it from here.
if str(REPO / "tests" / "agents") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "agents"))
from fake_anthropic import FakeAnthropic, Say, Use

__all__ = [
    "REAL_CLAUDE",
    "FakeAnthropic",
    "Say",
    "Use",
    "agent_runs",
    "claude_browser",
    "open_tab",
    "popped_out",
]

REAL_CLAUDE = REPO / ".venv" / "node" / "node_modules" / ".bin" / "claude"
PANEL_PAGE = "sidepanel/sidepanel.html"


@contextlib.contextmanager
def claude_browser(
    model: FakeAnthropic,
    agent: Path = REAL_CLAUDE,
    claude_home: str | None = None,
    home: str | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[Tabpilot]:
    """A managed browser and its daemon, whose `claude` is `agent` (the real CLI, or a wrapper of it)
    talking to `model`, with `claude_home` (else a temporary folder) as its HOME and `env` added to
    the daemon's. Everything started is stopped by PID after."""
    own_home = claude_home is None
    claude_home = claude_home or tempfile.mkdtemp(prefix="claude-home-")
    extra_env = {**model.claude_env(claude_home), **(env or {})}
    tp = Tabpilot(extra_env=extra_env) if home is None else Tabpilot(home=home, extra_env=extra_env)
    try:
        tp.run("panel", "agent", "set", "claude", "--bin", str(agent))
        tp.run("browser", "launch", "--headless", timeout=120)
        yield tp
    finally:
        tp.cleanup()
        if own_home:
            shutil.rmtree(claude_home, ignore_errors=True)


def open_tab(browser_ui: Person, url: str) -> int:
    """The person opens `url` in a new tab and looks at it; its tab id once it has loaded."""
    tab = chrome(browser_ui, f"chrome.tabs.create({{url: {json.dumps(url)}, active: true}})")
    wait_until(lambda: chrome(browser_ui, f"chrome.tabs.get({tab['id']})")["status"] == "complete")
    return int(tab["id"])


@contextlib.contextmanager
def popped_out(tp: Tabpilot, tab_id: int) -> Iterator[Person]:
    """The panel in a tab of its own, pinned to the person's tab (its Pop out), once it knows the agents."""
    with extension_page(tp, f"{PANEL_PAGE}?tab={tab_id}") as panel:
        wait_until(lambda: panel.eval("!!document.querySelector('#agent option')"), timeout=20)
        yield panel


def agent_runs(home: str) -> list[int]:
    """Pids of processes that carry a run token of this home's daemon (the agent and its MCP server)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"TABPILOT_HOME={home}".encode() in environ and any(
            v.startswith(b"TABPILOT_RUN=") for v in environ
        ):
            found.append(int(entry))
    return found
