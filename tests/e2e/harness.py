"""End-to-end harness: the real CLI, daemon, extension and Chromium, each test module in its own home.

Everything started here is stopped by PID (never by name), even when a test fails.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PAGES = REPO / "tests" / "pages"
TABPILOT = str(Path(sys.executable).with_name("tabpilot"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PageHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory (tests/pages by default), plus /slow?ms=N (a late response), /status/N,
    /redirect?to=URL (a 302 there), /no-framing (a page that refuses to be framed), /attachment/NAME?body=TEXT
    (a download), /login?user=NAME (an HttpOnly session cookie, then /whoami) and /whoami (who that
    cookie says is signed in)."""

    def __init__(self, *args: Any, directory: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, directory=directory or str(PAGES), **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        # Recorded on arrival, so a test can act while a slow response is still pending.
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        url = urllib.parse.urlparse(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/slow":
            time.sleep(int(query.get("ms", ["3000"])[0]) / 1000)
            self._html(200, "<title>Slow page</title><h1>finally</h1>")
        elif url.path == "/redirect":
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(302)
                self.send_header("Location", query["to"][0])
                self.send_header("Content-Length", "0")
                self.end_headers()
        elif url.path == "/no-framing":
            # A page that forbids being framed: the browser shows its error page in the frame instead.
            self._html(200, "<title>Partner</title><p>Partner content</p>", {"X-Frame-Options": "DENY"})
        elif url.path.startswith("/attachment/"):
            data = query.get("body", ["attached"])[0].encode()
            name = url.path.rsplit("/", 1)[1]
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Disposition", f'attachment; filename="{name}"')
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        elif url.path == "/login":
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(302)
                self.send_header("Set-Cookie", f"sid={query['user'][0]}-token; HttpOnly; Path=/")
                self.send_header("Location", "/whoami")
                self.send_header("Content-Length", "0")
                self.end_headers()
        elif url.path == "/whoami":
            jar = dict(
                p.strip().split("=", 1) for p in (self.headers.get("Cookie") or "").split(";") if "=" in p
            )
            who = jar.get("sid", "").removesuffix("-token")
            self._html(
                200, f"<title>Who</title><h1 id='who'>{'Signed in as ' + who if who else 'Signed out'}</h1>"
            )
        elif url.path.startswith("/status/"):
            code = int(url.path.rsplit("/", 1)[1])
            self._html(code, f"<title>Status {code}</title><h1>{code}</h1>")
        else:
            super().do_GET()

    def _html(self, code: int, body: str, headers: dict[str, str] | None = None) -> None:
        data = body.encode()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(code)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


@dataclass
class PageServer:
    server: http.server.ThreadingHTTPServer
    thread: threading.Thread
    host: str = "127.0.0.1"

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.lstrip('/')}"

    @property
    def requests(self) -> list[str]:
        return self.server.requests  # type: ignore[attr-defined,no-any-return]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start_page_server(directory: Path = PAGES, host: str = "127.0.0.1") -> PageServer:
    """A loopback server for `directory` (default tests/pages) on a free port, in a daemon thread.

    `host` is the name its URLs use: "localhost" makes it another site than 127.0.0.1, so the
    browser runs its pages in another process when they are framed by the other.
    """
    handler = functools.partial(PageHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return PageServer(server, thread, host)


@dataclass
class Result:
    code: int
    out: str
    err: str
    seconds: float

    @property
    def json(self) -> Any:
        return json.loads(self.out)


@dataclass
class Tabpilot:
    """A private TABPILOT_HOME and port, and a way to run the real `tabpilot` command in it."""

    home: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="tp-e2e-"))
    port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            TABPILOT_HOME=self.home,
            TABPILOT_PORT=str(self.port),
            # Tests observe the browser from outside through its own debugging port.
            TABPILOT_BROWSER_ARGS="--remote-debugging-port=0",
            # Tests parse page output; the ones about the fences turn them back on.
            TABPILOT_BOUNDARIES="off",
        )
        env.update(self.extra_env)
        return env

    def run(self, *args: str, timeout: float = 60, check: bool = True) -> Result:
        started = time.monotonic()
        proc = subprocess.run(
            [TABPILOT, *args], env=self.env, capture_output=True, text=True, timeout=timeout, check=False
        )
        result = Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"tabpilot {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return result

    def spawn(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [TABPILOT, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def state(self, name: str) -> dict[str, Any] | None:
        try:
            return json.loads(Path(self.home, name).read_text())  # type: ignore[no-any-return]
        except (FileNotFoundError, ValueError):
            return None

    @property
    def daemon_pid(self) -> int | None:
        state = self.state("daemon.json")
        return int(state["pid"]) if state else None

    @property
    def browser_pid(self) -> int | None:
        state = self.state("browser/browser.json")
        return int(state["pid"]) if state else None

    def devtools(self) -> DevTools:
        state = self.state("browser/browser.json")
        assert state is not None, "no managed browser"
        port_file = Path(state["profile"], "DevToolsActivePort")
        deadline = time.monotonic() + 10
        while not port_file.exists():
            assert time.monotonic() < deadline, "the browser wrote no DevToolsActivePort"
            time.sleep(0.05)
        return DevTools(int(port_file.read_text().splitlines()[0]))

    def cleanup(self) -> None:
        """Stop what this home started, by PID: the managed browser, then the daemon."""
        browser_pid, daemon_pid = self.browser_pid, self.daemon_pid
        with contextlib.suppress(Exception):
            self.run("browser", "stop", timeout=20, check=False)
        with contextlib.suppress(Exception):
            self.run("daemon", "stop", timeout=20, check=False)
        for pid in (browser_pid, daemon_pid):
            if pid is not None:
                kill_and_wait(pid)
        shutil.rmtree(self.home, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def kill_and_wait(pid: int, grace_s: float = 5.0) -> None:
    if not pid_alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@dataclass
class DevTools:
    """The browser seen from outside, over its debugging port (HTTP endpoints only)."""

    port: int

    def targets(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=5) as response:
            return json.load(response)  # type: ignore[no-any-return]

    def pages(self) -> list[dict[str, Any]]:
        return [t for t in self.targets() if t.get("type") == "page"]


def wait_until(predicate: Any, timeout: float = 10.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)
