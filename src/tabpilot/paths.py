"""Where tabpilot keeps its state, and the environment knobs that move it.

On the CLI's hot path: ``os`` only (no pathlib).
"""

from __future__ import annotations

import os

from tabpilot.protocol import DEFAULT_PORT


def home() -> str:
    """``$TABPILOT_HOME``, default ``~/.tabpilot``."""
    configured = os.environ.get("TABPILOT_HOME")
    return os.path.abspath(configured) if configured else os.path.join(os.path.expanduser("~"), ".tabpilot")


def ensure_home(path: str | None = None) -> str:
    """Create the state directory private to the user (0700) and return it."""
    directory = path or home()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    os.chmod(directory, 0o700)
    return directory


def port() -> int:
    """``$TABPILOT_PORT`` (the loopback port the extension dials), default 52830."""
    raw = os.environ.get("TABPILOT_PORT", "")
    if not raw:
        return DEFAULT_PORT
    value = int(raw)
    if not 1 <= value <= 65535:
        raise ValueError(f"TABPILOT_PORT={raw} is not a TCP port")
    return value


def env_seconds(name: str, default: float) -> float:
    """A duration knob in seconds from the environment; bad values fall back to the default."""
    raw = os.environ.get(name, "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    # `inf` and `nan` are not durations either.
    return value if 0 < value < float("inf") else default


def socket_path(base: str | None = None) -> str:
    return os.path.join(base or home(), "daemon.sock")


def lock_path(base: str | None = None) -> str:
    return os.path.join(base or home(), "daemon.lock")


def pid_path(base: str | None = None) -> str:
    return os.path.join(base or home(), "daemon.pid")


def state_path(base: str | None = None) -> str:
    """JSON written by the running daemon: pid, port, version, started_at."""
    return os.path.join(base or home(), "daemon.json")


def paired_path(base: str | None = None) -> str:
    """Secrets of paired browsers (0600)."""
    return os.path.join(base or home(), "paired.json")


def log_dir(base: str | None = None) -> str:
    return os.path.join(base or home(), "logs")


def browser_dir(base: str | None = None) -> str:
    """The managed browser: its profile, its copy of the extension and its pid record."""
    return os.path.join(base or home(), "browser")


def screenshot_dir(base: str | None = None) -> str:
    return os.path.join(base or home(), "screenshots")


def downloads_dir(base: str | None = None) -> str:
    """Where the managed browser saves downloads, one subfolder per session."""
    return os.path.join(base or home(), "downloads")
