"""``tabpilot demo``: the whole path on the embedded default, against a page the project ships.

Starts (if needed) the daemon and a managed headless Chromium, opens the shipped page in a
session's Agent Window, prints what the agent sees (the snapshot, with refs), fills in a name and
clicks Greet by those refs, prints what that did, takes a screenshot, then stops what it started.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import threading
from collections.abc import Iterator

from tabpilot import paths
from tabpilot.cli import client
from tabpilot.cli.action_commands import target_text
from tabpilot.cli.browser_commands import launch_managed_browser
from tabpilot.cli.context import Context
from tabpilot.protocol import RpcError

# typing is for checkers only (see tabpilot/protocol.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEMO_SESSION = "demo"
DEMO_NAME = "Ada"
DEMO_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "demo")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "demo",
        parents=[common],
        help="run the whole path once: managed Chromium → shipped page → snapshot → fill and click",
        description=__doc__,
    )
    p.add_argument("--keep", action="store_true", help="leave the browser and daemon running afterwards")
    p.set_defaults(handler=cmd_demo)


@contextlib.contextmanager
def serve_demo_pages() -> Iterator[str]:
    """Serve the shipped pages on a free loopback port for the demo's lifetime."""
    import functools
    import http.server

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

    handler = functools.partial(QuietHandler, directory=DEMO_DIR)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/welcome.html"
    finally:
        server.shutdown()
        server.server_close()


def _ref_of(snapshot: str, role: str, name: str) -> str:
    """The ref of ``[role "name" @eN]`` in a snapshot."""
    found = re.search(rf'\[{role} "{re.escape(name)}" (@e\d+)', snapshot)
    if found is None:
        raise RpcError("not_found", f"the demo page has no {role} {name!r} in its snapshot")
    return found.group(1)


def _daemon_running() -> bool:
    try:
        client.connect(autostart=False).close()
    except RpcError:
        return False
    return True


def cmd_demo(args: argparse.Namespace, ctx: Context) -> int:
    started_daemon = not _daemon_running()
    ctx.session = DEMO_SESSION
    browser = launch_managed_browser(ctx, headless=True if not os.environ.get("DISPLAY") else None)
    mode = "headless" if browser["headless"] else "headed"
    lines = [
        f"browser: {browser['browser']} {browser['browser_version']} ({mode}, pid {browser['pid']}), "
        f"extension {browser['extension_version']} connected in {browser['seconds']} s"
    ]
    try:
        with contextlib.suppress(RpcError):
            client.call("session.stop", {"session_id": DEMO_SESSION}, timeout_s=10.0)
        client.call("session.start", {"name": DEMO_SESSION}, browser=browser["instance_id"], timeout_s=20.0)
        with serve_demo_pages() as url:
            opened = ctx.call("tool.navigate", {"url": url, "timeout_ms": 30000})
            snapshot = ctx.call("tool.snapshot", {"mode": "full", "timeout_ms": 10000})
            name_ref = _ref_of(snapshot["text"], "textbox", "Your name")
            greet_ref = _ref_of(snapshot["text"], "button", "Greet me")
            filled = ctx.call("tool.fill", {"target": name_ref, "value": DEMO_NAME, "timeout_ms": 10000})
            clicked = ctx.call("tool.click", {"target": greet_ref, "timeout_ms": 10000})
            said = "document.getElementById('greeting').textContent"
            greeting = ctx.call("tool.evaluate", {"expression": said, "timeout_ms": 10000})
            shot_path = os.path.join(paths.screenshot_dir(), "demo.png")
            os.makedirs(os.path.dirname(shot_path), mode=0o700, exist_ok=True)
            shot = ctx.call("tool.screenshot", {"format": "png", "timeout_ms": 30000})
        import base64

        with open(shot_path, "wb") as handle:
            handle.write(base64.b64decode(shot["data"]))
        lines.append(f'opened: {opened["url"]} ({opened.get("status")}) "{opened.get("title")}"')
        lines.append(
            f"the agent sees (`tabpilot snapshot`; @eN are the refs it acts on, {snapshot['refs']} here):"
        )
        lines += [f"  {line}" for line in str(snapshot["text"]).splitlines() if line.strip()]
        lines.append(f"tabpilot fill {name_ref} {DEMO_NAME}:")
        lines.append(f'  filled {target_text(filled.get("target"))} = "{filled.get("value")}"')
        lines.append(f"tabpilot click {greet_ref}:")
        lines.append(f"  clicked {target_text(clicked.get('target'))}")
        lines.append(f"the page now says: {str(greeting.get('value', '')).strip()}")
        lines.append(f"screenshot: {shot_path} ({shot['width']}x{shot['height']} PNG)")
    finally:
        with contextlib.suppress(RpcError):
            client.call("session.stop", {"session_id": DEMO_SESSION}, timeout_s=10.0)
        if not args.keep and not browser["already_running"]:
            from tabpilot import launcher

            launcher.stop(paths.home())
        if not args.keep and started_daemon:
            with contextlib.suppress(RpcError):
                client.call("daemon.stop", timeout_s=5.0, autostart=False)
    result = {
        "browser": browser,
        "title": opened.get("title"),
        "url": opened["url"],
        "snapshot": snapshot["text"],
        "filled": filled,
        "clicked": clicked,
        "greeting": str(greeting.get("value", "")).strip(),
        "screenshot": shot_path,
    }
    return ctx.emit(result, "\n".join(lines))
