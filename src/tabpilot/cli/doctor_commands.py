"""``doctor`` (is everything set up? one row per check) and ``status`` (what is running now)."""

from __future__ import annotations

import argparse
import os
import stat
import sys

from tabpilot import paths
from tabpilot.cli import client
from tabpilot.cli.context import Context
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "doctor",
        parents=[common],
        help="check the setup: one row per check (ok / fail / na), a hint on every fail",
        description="Check the CLI, the daemon (started if needed), the port, the state folder, paired and "
        "connected browsers, a browser for `browser launch`, and the skill in each detected harness. "
        "Exit code 1 when any check fails.",
    )
    p.set_defaults(handler=cmd_doctor)
    p = sub.add_parser("status", parents=[common], help="daemon, browsers and sessions, in a few lines")
    p.set_defaults(handler=cmd_status)


class Checks:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, name: str, status: str, detail: str, hint: str | None = None) -> None:
        self.rows.append(
            {"check": name, "status": status, "detail": detail, "hint": hint if status == "fail" else None}
        )

    @property
    def failed(self) -> bool:
        return any(r["status"] == "fail" for r in self.rows)


def _port_taken(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _check_daemon(checks: Checks) -> dict[str, Any] | None:
    """Daemon and port rows; returns the daemon's status when it runs (starting it if needed)."""
    port = paths.port()
    try:
        status = client.call("daemon.status", timeout_s=5.0, autostart=False)
        started = False
    except RpcError as err:
        if err.reason != "daemon_not_running":
            checks.add("daemon", "fail", err.message, "see the daemon log in $TABPILOT_HOME/logs/")
            return None
        if _port_taken(port):
            checks.add("daemon", "fail", "not running, and it cannot start: its port is taken")
            checks.add(
                "port",
                "fail",
                f"another program listens on 127.0.0.1:{port}",
                "stop that program, or pick another port with TABPILOT_PORT (and set it in the extension's popup)",
            )
            return None
        try:
            status = client.call("daemon.status", timeout_s=10.0)
        except RpcError as start_err:
            checks.add(
                "daemon", "fail", f"cannot start: {start_err.message}", "see $TABPILOT_HOME/logs/daemon.out"
            )
            return None
        started = True
    how = "started by doctor" if started else "running"
    checks.add("daemon", "ok", f"{how}: version {status['version']}, pid {status['pid']}")
    if status["port"] == port:
        checks.add("port", "ok", f"127.0.0.1:{port} is the daemon's")
    else:
        checks.add(
            "port",
            "fail",
            f"the daemon listens on {status['port']} but TABPILOT_PORT says {port}",
            "restart the daemon (`tabpilot daemon stop`) with the port you want",
        )
    return status


def _check_permissions(checks: Checks) -> None:
    home = paths.home()
    problems = []
    for path, want in ((home, 0o700), (paths.socket_path(home), 0o600), (paths.paired_path(home), 0o600)):
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            problems.append(f"{path} is {oct(mode)}, want {oct(want)}")
    if problems:
        checks.add(
            "state folder", "fail", "; ".join(problems), f"run `chmod 700 {home}` and restart the daemon"
        )
    else:
        checks.add("state folder", "ok", f"{home} is private to you")


def _check_browsers(checks: Checks, status: dict[str, Any] | None) -> None:
    if status is None:
        checks.add("paired browsers", "na", "daemon not running")
        checks.add("connected browsers", "na", "daemon not running")
        return
    paired = status.get("paired", 0)
    browsers = status.get("browsers", [])
    if paired:
        checks.add("paired browsers", "ok", f"{paired} paired")
    else:
        checks.add(
            "paired browsers",
            "fail",
            "no browser is paired with this daemon",
            "load the extension (`tabpilot extension path`) and run `tabpilot pair`, or `tabpilot browser launch`",
        )
    if not browsers:
        checks.add(
            "connected browsers",
            "fail",
            "0 browsers connected",
            "open the browser with the tabpilot extension (its popup should turn green), or `tabpilot browser launch`",
        )
    for b in browsers:
        label = f' "{b["label"]}"' if b.get("label") else ""
        detail = (
            f"{b['instance_id']}{label} {b['browser']} {b['browser_version']}, "
            f"extension {b['extension_version']}, protocol {b['protocol_version']} ({b['verdict']})"
        )
        if b.get("verdict") == "version_skew":
            checks.add(
                "connected browser",
                "fail",
                detail,
                "update tabpilot or the extension so both speak one protocol",
            )
        else:
            checks.add("connected browser", "ok", detail)


def _check_launchable(checks: Checks) -> None:
    from tabpilot import launcher

    try:
        executable = launcher.find_browser(None)
    except RpcError:
        checks.add(
            "browser for launch", "na", "no Chromium-family browser found (only needed for `browser launch`)"
        )
        return
    if launcher.is_branded_chrome(executable):
        checks.add(
            "browser for launch", "na", f"{executable} is Google Chrome, which ignores --load-extension"
        )
    else:
        checks.add("browser for launch", "ok", executable)


def _check_skills(checks: Checks) -> None:
    from pathlib import Path

    from tabpilot.skill import install

    home = Path(os.path.expanduser("~"))
    packaged = install.packaged_skill().read_bytes()
    detected = [t for t in install.user_targets(home) if t.harness.detected(home)]
    if not detected:
        checks.add("skill", "na", "no agent harness detected")
    for target in detected:
        state = target.state(packaged)
        name = f"skill in {target.harness.title}"
        if state == "current":
            checks.add(name, "ok", str(target.skill_file))
        else:
            checks.add(name, "fail", f"{state}: {target.skill_file}", "run `tabpilot install-skill --yes`")


def cmd_doctor(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot import __version__

    checks = Checks()
    checks.add("cli", "ok", f"tabpilot {__version__} ({sys.executable})")
    status = _check_daemon(checks)
    _check_permissions(checks)
    _check_browsers(checks, status)
    _check_launchable(checks)
    _check_skills(checks)
    if ctx.as_json:
        ctx.emit({"ok": not checks.failed, "checks": checks.rows}, "")
    else:
        width = max(len(r["check"]) for r in checks.rows)
        for r in checks.rows:
            print(f"{r['status']:<4}  {r['check']:<{width}}  {r['detail']}")
            if r["hint"]:
                print(f"{'':<4}  {'':<{width}}  hint: {r['hint']}")
    return 1 if checks.failed else 0


def cmd_status(args: argparse.Namespace, ctx: Context) -> int:
    try:
        status = client.call("daemon.status", timeout_s=5.0, autostart=False)
    except RpcError as err:
        if err.reason != "daemon_not_running":
            raise
        return ctx.emit({"running": False}, "daemon: not running (any command starts it)")
    lines = [f"daemon: {status['version']}, pid {status['pid']}, port {status['port']}"]
    browsers = status["browsers"]
    lines.append(
        f"browsers: {len(browsers)} connected"
        + "".join(f"\n  {b['instance_id']} {b['label'] or ''}".rstrip() for b in browsers)
    )
    sessions = status["sessions"]
    lines.append(
        f"sessions: {len(sessions)}"
        + "".join(f"\n  {s['session_id']}{' (paused)' if s.get('paused') else ''}" for s in sessions)
    )
    return ctx.emit({"running": True, **status}, "\n".join(lines))
