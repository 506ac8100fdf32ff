"""The bench's own world: a private tabpilot home with its daemon and headless Chromium, and loopback page servers.

Everything is stopped by PID when the bench ends, also when a suite fails or the bench is interrupted.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.harness import TABPILOT, DevTools, PageServer, Tabpilot, kill_and_wait, start_page_server

from bench.pages import Page
from bench.spawn import Run, Spawner
from tabpilot.protocol import EXIT_VERSION

NOT_AVAILABLE = "n/a (verb not available)"
# The CLI has the verb but the connected extension does not have its tool yet (unknown_method).
NOT_IMPLEMENTED = re.compile(r"(\S+) is not implemented")


@dataclass
class Rig:
    tp: Tabpilot
    pages: PageServer
    docs: PageServer | None
    spawner: Spawner
    devtools: DevTools
    help_texts: dict[str, str | None] = field(default_factory=dict)
    missing_tools: dict[str, str] = field(default_factory=dict)
    # What a suite left running (an MCP server, agent-browser's session): stopped when the bench ends.
    closers: list[Callable[[], None]] = field(default_factory=list)

    def command(self, *args: str, session: str | None = None) -> list[str]:
        """The command line; `--session` follows the verb, the shape the CLI's hot path takes (an agent
        following SKILL.md sets TABPILOT_SESSION instead, which it takes too)."""
        if not session or not args:
            return [TABPILOT, *args]
        return [TABPILOT, args[0], "--session", session, *args[1:]]

    def cli(self, *args: str, session: str | None = None, timeout: float = 90.0) -> Run:
        """One `tabpilot` command as the agent runs it: a whole process, timed."""
        return self.spawner.run(self.command(*args, session=session), timeout)

    def unavailable(self, verb: str, *options: str) -> str | None:
        """Why `tabpilot VERB [OPTIONS]` cannot be measured in this build, or None when it can."""
        if verb in self.missing_tools:
            return self.missing_tools[verb]
        if verb not in self.help_texts:
            run = self.spawner.run([TABPILOT, verb, "--help"])
            self.help_texts[verb] = run.out if run.ok else None
        text = self.help_texts[verb]
        if text is None:
            return NOT_AVAILABLE
        absent = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
        return f"n/a ({verb} {' '.join(absent)} not available)" if absent else None

    def missing_tool(self, verb: str, run: Run) -> str | None:
        """Whether a failed run says the extension lacks the verb's tool; remembered for later checks."""
        match = NOT_IMPLEMENTED.search(run.err) if run.code == EXIT_VERSION else None
        if match is None:
            return None
        self.missing_tools[verb] = f"n/a ({match.group(1)} not implemented by the extension)"
        return self.missing_tools[verb]

    def url(self, page: Page, tag: str) -> str:
        """The page's loopback URL, tagged so the bench can find its tab among the browser's targets."""
        server = self.docs if page.docs and self.docs else self.pages
        return f"{server.url(page.path)}?bench={tag}"

    def fixture_url(self, path: str, tag: str) -> str:
        return self.url(Page(path, docs=False), tag)

    def start_session(self, name: str, url: str) -> None:
        """A session of its own with its tab on `url` (raises when the foundation verbs fail)."""
        self.tp.run("session", "start", name, timeout=30)
        self.tp.run("--session", name, "open", url, timeout=60)

    def stop_session(self, name: str) -> None:
        self.tp.run("session", "stop", name, timeout=30, check=False)

    @property
    def daemon_pid(self) -> int | None:
        return self.tp.daemon_pid

    @property
    def browser_pid(self) -> int | None:
        return self.tp.browser_pid


@contextlib.contextmanager
def started(docs_root: Path | None) -> Iterator[Rig]:
    """A rig with a launched, paired, headless browser; everything it started is stopped afterwards."""
    tp = Tabpilot(home=tempfile.mkdtemp(prefix="tp-bench-"))
    servers: list[PageServer] = []
    spawner = Spawner(tp.env)
    rig: Rig | None = None
    try:
        servers.append(start_page_server())
        docs = start_page_server(docs_root) if docs_root else None
        if docs:
            servers.append(docs)
        tp.run("browser", "launch", "--headless", timeout=120)
        rig = Rig(tp, servers[0], docs, spawner, tp.devtools())
        yield rig
    finally:
        for close in rig.closers if rig else []:
            with contextlib.suppress(Exception):
                close()
        spawner.close()
        for server in servers:
            server.close()
        home = tp.home
        tp.cleanup()
        for pid in leftovers(home):
            kill_and_wait(pid)


def leftovers(home: str) -> list[int]:
    """Live processes started for this home: they carry its private TABPILOT_HOME in their environment."""
    needle = f"TABPILOT_HOME={home}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in Path(entry.path, "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found
