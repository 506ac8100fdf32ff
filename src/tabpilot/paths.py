"""Where tabpilot keeps its state, and the environment knobs that move it.

On the CLI's hot path: ``os`` and ``stat`` only (no pathlib).
"""

from __future__ import annotations

import os
import stat

from tabpilot.protocol import DEFAULT_PORT, RpcError


def home() -> str:
    """``$TABPILOT_HOME``, default ``~/.tabpilot``."""
    configured = os.environ.get("TABPILOT_HOME")
    return os.path.abspath(configured) if configured else os.path.join(os.path.expanduser("~"), ".tabpilot")


def ensure_home(path: str | None = None, uid: int | None = None) -> str:
    """The state directory: created private to the user (0700), or an existing one checked.

    An existing folder is never chmodded: one that another user owns, or that others may write
    to, is refused (they could swap the socket or read the pairing secrets).
    """
    directory = path or home()
    parent = os.path.dirname(directory.rstrip(os.sep))
    if parent:
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        check_home(directory, os.geteuid() if uid is None else uid)
    else:
        os.chmod(directory, 0o700)  # ours: the umask may have taken bits we did not ask for
    return directory


def check_home(directory: str, uid: int) -> None:
    """Refuse a state folder that is not a directory of ``uid`` closed to group and world writes."""
    info = os.stat(directory)
    mode = stat.S_IMODE(info.st_mode)
    where = f"TABPILOT_HOME={directory}" if os.environ.get("TABPILOT_HOME") else directory
    elsewhere = (
        "point TABPILOT_HOME at a folder that does not exist yet (tabpilot creates it, private to you)"
    )
    if not stat.S_ISDIR(info.st_mode):
        problem, fix = "is not a folder", f"move that file away, or {elsewhere}"
    elif info.st_uid != uid:
        # chmod cannot help: only its owner (or root) can hand it over, and its owner may read it.
        problem = f"belongs to user {info.st_uid}, not to you ({uid})"
        fix = f"{elsewhere}, or run tabpilot as the user who owns it; `chown {uid} {directory}` (as root) only if you trust that user"
    elif mode & 0o022:
        problem = f"can be written by others (mode {mode:04o})"
        fix = f"{elsewhere}, or make this one yours alone: `chmod 700 {directory}`"
    else:
        return
    raise RpcError(
        "permission_denied",
        f"{where} {problem}: tabpilot keeps its socket and pairing secrets there",
        hint=fix,
    )


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
