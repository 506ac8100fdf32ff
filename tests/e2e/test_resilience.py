"""Things that go wrong: the daemon dies, the service worker stops, the agent presses Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import time

from harness import PageServer, Tabpilot, pid_alive, wait_until
from websockets.sync.client import connect

EXTENSION_SW = "chrome-extension://abldppcldbamgeoepadjiaeommdfmihk/background.js"


def cdp(tp: Tabpilot, method: str, params: dict | None = None) -> dict:
    """One command on the browser's own DevTools endpoint (outside tabpilot)."""
    version = tp.devtools()
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{version.port}/json/version", timeout=5) as response:
        endpoint = json.load(response)["webSocketDebuggerUrl"]
    with connect(endpoint, max_size=2**24) as ws:
        ws.send(json.dumps({"id": 1, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(ws.recv(timeout=10))
            if reply.get("id") == 1:
                assert "error" not in reply, reply
                return reply["result"]


def service_worker_ids(tp: Tabpilot) -> list[str]:
    targets = cdp(tp, "Target.getTargets")["targetInfos"]
    return [t["targetId"] for t in targets if t["type"] == "service_worker" and t["url"] == EXTENSION_SW]


def test_killed_daemon_is_restarted_by_the_next_command(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("index.html"))
    old_pid = tp.daemon_pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(old_pid))
    result = tp.run("eval", "document.title")
    # the same session (and tab) continues: the new daemon adopted it from the extension
    assert result.out.strip() == '"tabpilot test page"'
    assert result.seconds < 8, f"took {result.seconds:.1f} s"
    assert tp.daemon_pid not in (None, old_pid)
    assert len(tp.run("browser", "list", "--json").json["browsers"]) == 1


def test_a_named_session_answers_at_once_after_the_daemon_is_killed(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "p1")
    tp.run("--session", "p1", "open", pages.url("second.html"))
    old_pid = tp.daemon_pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    wait_until(lambda: not pid_alive(old_pid))
    # The very next command: the new daemon waits for the extension to bring p1 back.
    result = tp.run("--session", "p1", "eval", "document.title", check=False)
    assert (result.code, result.out.strip()) == (0, '"Second page"'), result.err
    unknown = tp.run("--session", "p9", "eval", "1", "--json", check=False).json["error"]
    assert unknown["reason"] == "unknown_session" and "session list" in unknown["hint"]
    # Following the hint works: p9 really was not there, p1 really is.
    tp.run("session", "start", "p9")
    assert "p1" in tp.run("session", "list").out
    tp.run("session", "stop", "p1")
    tp.run("session", "stop", "p9")


def test_restarted_service_worker_readopts_its_agent_window(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "survivor")
    tp.run("--session", "survivor", "open", pages.url("second.html"))
    tab_ids = [t["tab_id"] for t in tp.run("--session", "survivor", "tab", "list", "--json").json["tabs"]]
    page_count = len(tp.devtools().pages())
    workers = service_worker_ids(tp)
    assert len(workers) == 1
    [before] = tp.run("browser", "list", "--json").json["browsers"]
    cdp(tp, "Target.closeTarget", {"targetId": workers[0]})
    # the daemon sees the extension go and come back on a new connection (the alarm revives the
    # worker; a loaded machine revives it before a look at an empty list)
    wait_until(lambda: service_worker_ids(tp) != workers, timeout=45, interval=0.5)

    def reconnected() -> bool:
        browsers = tp.run("browser", "list", "--json").json["browsers"]
        return len(browsers) == 1 and browsers[0]["connected_at"] > before["connected_at"]

    wait_until(reconnected, timeout=45, interval=0.5)
    assert tp.run("--session", "survivor", "eval", "document.title").out.strip() == '"Second page"'
    after = [t["tab_id"] for t in tp.run("--session", "survivor", "tab", "list", "--json").json["tabs"]]
    assert after == tab_ids
    assert len(tp.devtools().pages()) == page_count  # no orphaned or duplicate window
    tp.run("session", "stop", "survivor")


def test_ctrl_c_cancels_a_slow_navigation_in_the_extension(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("index.html"))
    slow = pages.url("slow?ms=4000")
    served = len(pages.requests)
    proc = tp.spawn("open", slow)
    # This command's request (the page server is the whole run's: other tests ask for /slow too).
    wait_until(lambda: "/slow?ms=4000" in pages.requests[served:], timeout=10, interval=0.05)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130 and "interrupted" in err
    # the session is free at once, and the page did not move on
    after = tp.run("eval", "location.href")
    assert after.out.strip() == f'"{pages.url("index.html")}"'
    assert time.monotonic() - started < 3
    time.sleep(4.5 - (time.monotonic() - started))
    assert tp.run("eval", "location.href").out.strip() == f'"{pages.url("index.html")}"'
