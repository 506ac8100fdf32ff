"""Verbs that set things up: browser launch/stop/list, pair, extension path, daemon."""

from __future__ import annotations

import argparse
import os
import time

from tabpilot import paths
from tabpilot.cli import client
from tabpilot.cli.context import Context, parse_duration
from tabpilot.cli.render import quoted
from tabpilot.cli.values import WebOrigin
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LAUNCH_TIMEOUT_S = 30.0
# How long a running managed browser's extension has to show up before it counts as lost.
REJOIN_TIMEOUT_S = 10.0
PROXY_SCHEMES = ("http", "https", "socks4", "socks5")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    browser = sub.add_parser("browser", parents=[common], help="launch, stop and list browsers")
    verbs = browser.add_subparsers(dest="browser_verb", metavar="{launch,stop,list}")
    verbs.required = True
    p = verbs.add_parser(
        "launch",
        parents=[common],
        help="start a managed Chromium with the extension, paired automatically",
        description="Start a Chromium-family browser with the tabpilot extension on a managed profile "
        "under $TABPILOT_HOME/browser/, paired with this daemon; returns once the extension is connected. "
        "Headless when there is no display. A managed browser that runs but whose extension does not "
        "connect within 10 s is stopped and started again (it says so).",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--headed", action="store_true", help="show a window even without $DISPLAY detection")
    mode.add_argument("--headless", action="store_true", help="never show a window")
    p.add_argument("--executable", metavar="PATH", help="the browser binary (default: search PATH)")
    p.add_argument("--profile", metavar="DIR", help="profile folder (default $TABPILOT_HOME/browser/profile)")
    p.add_argument(
        "--timeout",
        type=parse_duration,
        help=f"wait this long for the extension (default {LAUNCH_TIMEOUT_S:g}s)",
    )
    p.add_argument(
        "--proxy",
        type=WebOrigin(PROXY_SCHEMES),
        metavar="URL",
        help="send the browser's traffic through this proxy, e.g. http://proxy.example:3128 or socks5://127.0.0.1:1080 "
        "(loopback addresses stay direct)",
    )
    p.add_argument(
        "--ignore-https-errors",
        action="store_true",
        help="accept any TLS certificate (self-signed test servers); only for a managed browser you test with",
    )
    p.set_defaults(handler=cmd_browser_launch)
    p = verbs.add_parser(
        "stop", parents=[common], help="stop the managed browser started by `browser launch`"
    )
    p.set_defaults(handler=cmd_browser_stop)
    p = verbs.add_parser("list", parents=[common], help="list connected browsers")
    p.set_defaults(handler=cmd_browser_list)

    p = sub.add_parser(
        "pair",
        parents=[common],
        help="print a one-time code to pair a browser's extension, and wait for it",
        description="Print a one-time pairing code (valid 5 minutes). Type it into the tabpilot "
        "extension's popup in your browser; this command returns when the browser has paired.",
    )
    p.add_argument("--no-wait", action="store_true", help="print the code and return at once")
    p.set_defaults(handler=cmd_pair)

    ext = sub.add_parser("extension", parents=[common], help="where the extension lives (for Load unpacked)")
    verbs = ext.add_subparsers(dest="extension_verb", metavar="{path}")
    verbs.required = True
    p = verbs.add_parser(
        "path", parents=[common], help="print the extension folder to load in chrome://extensions"
    )
    p.set_defaults(handler=cmd_extension_path)

    daemon = sub.add_parser("daemon", parents=[common], help="start, stop or inspect the background daemon")
    verbs = daemon.add_subparsers(dest="daemon_verb", metavar="{start,stop,status}")
    verbs.required = True
    for name, handler, text in (
        ("start", cmd_daemon_start, "start the daemon (commands start it on demand anyway)"),
        ("stop", cmd_daemon_stop, "stop the daemon"),
        ("status", cmd_daemon_status, "show the daemon, its browsers and sessions"),
    ):
        p = verbs.add_parser(name, parents=[common], help=text)
        p.set_defaults(handler=handler)


def describe_browser(b: dict[str, Any]) -> str:
    label = f" {quoted(b['label'])}" if b.get("label") else ""
    skew = "  (version skew)" if b.get("verdict") == "version_skew" else ""
    sessions = f"  sessions: {', '.join(b['sessions'])}" if b.get("sessions") else ""
    return f"{b['instance_id']}{label}  {b['browser']} {b['browser_version']}  extension {b['extension_version']}{skew}{sessions}"


def launch_managed_browser(ctx: Context, headless: bool | None = None) -> dict[str, Any]:
    """Start (or find) the managed browser and wait until its extension is connected."""
    import secrets

    from tabpilot import launcher

    args = ctx.args
    home = paths.ensure_home()
    started = time.monotonic()
    network = launcher.NetworkOptions(
        getattr(args, "proxy", None), bool(getattr(args, "ignore_https_errors", False))
    )
    previous = launcher.read_state(home)
    lost: int | None = None
    if previous is not None and launcher.is_alive(previous):
        running = launcher.NetworkOptions(previous.proxy, previous.ignore_https_errors)
        asked = network != launcher.NetworkOptions()
        try:
            record = client.call(
                "browser.wait",
                {"launch_token": previous.launch_token, "timeout_ms": int(REJOIN_TIMEOUT_S * 1000)},
                timeout_s=REJOIN_TIMEOUT_S,
            )
        except RpcError as err:
            if err.code != "timeout":
                raise
            # Alive without its extension (the daemon moved, the worker is gone): waiting again changes
            # nothing, a fresh start does, with the options asked for now or else the ones it had.
            lost = previous.pid
            network = network if asked else running
            if not getattr(args, "headed", False) and not getattr(args, "headless", False):
                headless = previous.headless if headless is None else headless
        else:
            if asked and running != network:
                raise RpcError(
                    "invalid_params",
                    f"the managed browser (pid {previous.pid}) is running with other network options",
                    hint="stop it first (`tabpilot browser stop`), then launch it with the options you need",
                )
            return {
                **record,
                "pid": previous.pid,
                "headless": previous.headless,
                "already_running": True,
                "seconds": round(time.monotonic() - started, 2),
            }
    launcher.stop(home)  # forget a stale record
    executable = launcher.find_browser(getattr(args, "executable", None))
    if launcher.is_branded_chrome(executable):
        raise RpcError(
            "unsupported",
            f"{executable} is Google Chrome, which ignores --load-extension since version 137",
            hint="use Chromium or Chrome for Testing for `browser launch` (--executable PATH), or load the "
            "extension into your Chrome by hand (`tabpilot extension path`) and pair it with `tabpilot pair`",
        )
    if headless is None:
        headless = bool(getattr(args, "headless", False)) or (
            not getattr(args, "headed", False) and not launcher.has_display()
        )
    status = client.call("daemon.status", timeout_s=10.0)
    # A launch code of its own: too long to guess, so no lockout from wrong codes applies to it.
    code = client.call("pair.create", {"ttl_s": 300, "launch": True}, timeout_s=10.0)["code"]
    token = secrets.token_hex(16)
    extension_dir = launcher.prepare_extension(
        home, {"port": status["port"], "pairing_code": code, "launch_token": token, "label": "managed"}
    )
    profile = os.path.abspath(
        getattr(args, "profile", None) or os.path.join(paths.browser_dir(home), "profile")
    )
    os.makedirs(profile, mode=0o700, exist_ok=True)
    launcher.forget_stale_service_worker(
        home, profile, launcher.extension_digest(launcher.extension_source())
    )
    launcher.set_download_folder(profile, paths.downloads_dir(home))
    log_path = os.path.join(paths.log_dir(home), "browser.log")
    argv = launcher.browser_argv(executable, extension_dir, profile, headless, network)
    process = launcher.spawn(argv, log_path)
    launcher.write_state(
        home,
        launcher.ManagedBrowser(
            process.pid,
            executable,
            profile,
            headless,
            token,
            time.time(),
            network.proxy,
            network.ignore_https_errors,
        ),
    )
    deadline = time.monotonic() + ctx.timeout_s(LAUNCH_TIMEOUT_S)
    while True:
        try:
            record = client.call("browser.wait", {"launch_token": token, "timeout_ms": 500}, timeout_s=0.5)
            break
        except RpcError as err:
            if err.code != "timeout":
                raise
        if process.poll() is not None:
            launcher.stop(home)
            raise RpcError(
                "cdp_failed",
                f"the browser exited during start-up (code {process.returncode}): {launcher.log_tail(log_path)}",
                hint=f"see {log_path}",
            )
        if time.monotonic() > deadline:
            launcher.stop(home)
            raise RpcError(
                "timeout",
                "the browser started but its tabpilot extension did not connect",
                "rpc_timeout",
                hint=f"see {log_path} and {os.path.join(paths.log_dir(home), 'daemon.log')}",
            )
    return {
        **record,
        "pid": process.pid,
        "headless": headless,
        "executable": executable,
        "profile": profile,
        "already_running": False,
        "restarted_lost_pid": lost,
        "proxy": network.proxy,
        "ignore_https_errors": network.ignore_https_errors,
        "seconds": round(time.monotonic() - started, 2),
    }


def cmd_browser_launch(args: argparse.Namespace, ctx: Context) -> int:
    result = launch_managed_browser(ctx)
    if result["already_running"]:
        text = f"managed browser already running (pid {result['pid']}): {describe_browser(result)}"
    else:
        mode = "headless" if result["headless"] else "headed"
        extras = f", proxy {result['proxy']}" if result.get("proxy") else ""
        if result.get("ignore_https_errors"):
            extras += ", any certificate accepted"
        text = (
            f"browser {result['instance_id']} connected in {result['seconds']} s ({result['browser']} "
            f"{result['browser_version']}, {mode}, pid {result['pid']}{extras})"
        )
        if result.get("restarted_lost_pid"):
            text = (
                f"the managed browser (pid {result['restarted_lost_pid']}) was running without its "
                f"extension connected: restarted it\n{text}"
            )
    return ctx.emit(result, text)


def cmd_browser_stop(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot import launcher

    pid = launcher.stop(paths.home())
    result = {"stopped": pid is not None, "pid": pid}
    return ctx.emit(
        result, f"stopped the managed browser (pid {pid})" if pid else "no managed browser is running"
    )


def cmd_browser_list(args: argparse.Namespace, ctx: Context) -> int:
    result = ctx.call("browser.list")
    lines = [describe_browser(b) for b in result["browsers"]]
    return ctx.emit(result, "\n".join(lines) if lines else "no browser connected")


def cmd_pair(args: argparse.Namespace, ctx: Context) -> int:
    created = ctx.call("pair.create", {"ttl_s": 300})
    if ctx.as_json:
        ctx.emit(created, "")
    else:
        print(f"pairing code: {created['code']}  (valid {created['expires_in_s'] // 60} minutes)")
        print("In your browser, open the tabpilot extension's popup, type this code and press Pair.")
        if created.get("port") != 52830:
            print(f"(this daemon listens on port {created['port']}: set the same port in the popup)")
        if created.get("throttled_for_s"):
            print(
                f"note: pairing is throttled after wrong codes; the browser can pair in "
                f"{created['throttled_for_s']:.0f} s (the popup keeps retrying by itself)"
            )
    if args.no_wait:
        return 0
    if not ctx.as_json:
        print("waiting for the browser…", flush=True)
    paired = ctx.call(
        "pair.wait",
        {"code": created["code"], "timeout_ms": created["expires_in_s"] * 1000},
        timeout_s=created["expires_in_s"],
    )
    label = f" {quoted(paired['label'])}" if paired.get("label") else ""
    return ctx.emit(paired, f"paired with browser {paired['instance_id']}{label} ({paired.get('browser')})")


def cmd_extension_path(args: argparse.Namespace, ctx: Context) -> int:
    from tabpilot.launcher import extension_source

    path = extension_source()
    return ctx.emit({"path": path}, path)


def cmd_daemon_start(args: argparse.Namespace, ctx: Context) -> int:
    status = client.call("daemon.status", timeout_s=10.0)
    return ctx.emit(status, f"daemon running (pid {status['pid']}, port {status['port']}, {status['home']})")


def cmd_daemon_stop(args: argparse.Namespace, ctx: Context) -> int:
    try:
        status = client.call("daemon.status", timeout_s=5.0, autostart=False)
        client.call("daemon.stop", timeout_s=5.0, autostart=False)
    except RpcError as err:
        if err.reason != "daemon_not_running":
            raise
        return ctx.emit({"stopped": False}, "the daemon is not running")
    deadline = time.monotonic() + 10.0
    while os.path.exists(paths.socket_path()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return ctx.emit({"stopped": True, "pid": status["pid"]}, f"stopped the daemon (pid {status['pid']})")


def cmd_daemon_status(args: argparse.Namespace, ctx: Context) -> int:
    status = client.call("daemon.status", timeout_s=5.0, autostart=False)
    lines = [
        f"daemon {status['version']} running (pid {status['pid']}, port {status['port']}, up {status['uptime_s']:.0f} s)",
        f"home: {status['home']}",
    ]
    lines += [f"browser: {describe_browser(b)}" for b in status["browsers"]] or ["browser: none connected"]
    lines += [f"session: {s['session_id']} (browser {s['browser']})" for s in status["sessions"]]
    return ctx.emit(status, "\n".join(lines))
