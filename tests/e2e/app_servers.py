"""Real web applications for the end-to-end tests and the bench: a Django admin site, a Streamlit app and
a Gradio app (their sources in tests/apps/), each started on a free loopback port with its state in a
temporary folder, and stopped by PID.

They need the optional `apps` extra (`pip install -e '.[apps]'`, which scripts/bootstrap installs).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import REPO, free_port, kill_and_wait

APPS = REPO / "tests" / "apps"
PYTHON = sys.executable
ADMIN_USER = "editor"
ADMIN_PASSWORD = "correct-horse-battery"
# Everything that could phone home is told not to; the machine has no route out anyway.
QUIET_ENV = {
    "GRADIO_ANALYTICS_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    "STREAMLIT_SERVER_HEADLESS": "true",
    "DO_NOT_TRACK": "1",
}
FRAMEWORKS = {"django": "django", "streamlit": "streamlit", "gradio": "gradio"}


def missing(app: str) -> str | None:
    """Why `app` cannot run here (its framework is not installed), or None."""
    module = FRAMEWORKS[app]
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed: pip install -e '.[apps]' (scripts/bootstrap does)"
    return None


@dataclass
class App:
    """One running application: where it answers, where it keeps its state, its process."""

    name: str
    url: str
    state: Path
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        kill_and_wait(self.process.pid)
        self.process.wait(timeout=5)

    def json_state(self) -> Any:
        return json.loads(self.state.read_text()) if self.state.exists() else None

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows from the app's own SQLite database (the Django site)."""
        with contextlib.closing(sqlite3.connect(self.state)) as db:
            return db.execute(sql, params).fetchall()

    def execute(self, sql: str, *params: Any) -> None:
        with contextlib.closing(sqlite3.connect(self.state)) as db, db:
            db.execute(sql, params)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABPILOT_")}
    env.update(QUIET_ENV, **extra)
    return env


def _wait_ready(app: App, path: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if app.process.poll() is not None:
            raise RuntimeError(f"{app.name} exited {app.process.returncode}:\n{app.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(app.url.rstrip("/") + path, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            app.stop()
            raise RuntimeError(
                f"{app.name} did not answer within {timeout} s:\n{app.log.read_text()[-3000:]}"
            )
        time.sleep(0.2)


def _spawn(
    name: str, argv: list[str], cwd: Path, folder: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], Path]:
    log = folder / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    return process, log


def start_django(folder: Path) -> App:
    """The admin site over a fresh database with one staff user (ADMIN_USER / ADMIN_PASSWORD)."""
    site = APPS / "django_site"
    db = folder / "shelf.sqlite3"
    env = _env(
        TP_APP_DB=str(db),
        DJANGO_SUPERUSER_USERNAME=ADMIN_USER,
        DJANGO_SUPERUSER_PASSWORD=ADMIN_PASSWORD,
        DJANGO_SUPERUSER_EMAIL="editor@example.test",
        PYTHONDONTWRITEBYTECODE="1",
    )
    for command in (["migrate", "--noinput"], ["createsuperuser", "--noinput"]):
        subprocess.run(
            [PYTHON, "manage.py", *command], cwd=site, env=env, check=True, capture_output=True, timeout=120
        )
    port = free_port()
    process, log = _spawn(
        "django",
        [PYTHON, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--nothreading"],
        site,
        folder,
        env,
    )
    app = App("django", f"http://127.0.0.1:{port}/admin/", db, process, log)
    _wait_ready(app, "/login/", 60)
    return app


def start_streamlit(folder: Path) -> App:
    """The expense book; its state in expenses.json."""
    data = folder / "expenses.json"
    port = free_port()
    argv = [
        PYTHON, "-m", "streamlit", "run", str(APPS / "streamlit_app.py"),
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
        "--global.developmentMode", "false",
    ]  # fmt: skip
    process, log = _spawn("streamlit", argv, folder, folder, _env(TP_APP_DATA=str(data)))
    app = App("streamlit", f"http://127.0.0.1:{port}/", data, process, log)
    _wait_ready(app, "/_stcore/health", 60)
    return app


def start_gradio(folder: Path) -> App:
    """The help desk; its tickets in tickets.json."""
    data = folder / "tickets.json"
    port = free_port()
    # Gradio's uploads and caches stay in the app's folder, which goes when it stops.
    env = _env(
        TP_APP_DATA=str(data), GRADIO_TEMP_DIR=str(folder / "gradio"), MPLCONFIGDIR=str(folder / "mpl")
    )
    process, log = _spawn("gradio", [PYTHON, str(APPS / "gradio_app.py"), str(port)], folder, folder, env)
    app = App("gradio", f"http://127.0.0.1:{port}/", data, process, log)
    _wait_ready(app, "/", 90)
    return app


STARTERS = {"django": start_django, "streamlit": start_streamlit, "gradio": start_gradio}


@contextlib.contextmanager
def running(name: str) -> Iterator[App]:
    """`name` running in a temporary folder of its own, stopped by PID and its folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=f"tp-{name}-") as folder:
        app = STARTERS[name](Path(folder))
        try:
            yield app
        finally:
            app.stop()
