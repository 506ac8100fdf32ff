"""Nothing a web page does can grant consent, hide Stop, or reach a blocked site (issue 11), end to end.

A hostile page (tests/pages/hostile/) fights the overlay while the person clicks where the prompt is,
with real input events from outside tabpilot; the prompt must not take the click. Blocked sites are
tried in every spelling of their address and with every kind of request a page can make.
"""

from __future__ import annotations

import contextlib
import json
import socketserver
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness import PageServer, Tabpilot, start_page_server, wait_until
from test_consent import (
    block,
    browser_ui,  # noqa: F401  (a fixture)
    chrome,
    error_of,
    extension_page,
    page_target_loaded,
    persons_window,
    tab,
    unblocked,  # noqa: F401  (a fixture)
)
from test_person import Person, page_target, person_at
from websockets.sync.client import connect

# A cover is no attack any more: the prompt is drawn above it (test_hidden_prompts.py shows that).
ATTACKS = ["restyle", "hide", "move", "remove", "reinsert"]
VECTORS = json.loads((Path(__file__).parent.parent / "vectors" / "site-addresses.json").read_text())


class Recorder(socketserver.ThreadingTCPServer):
    """A loopback server that records every connection and every request line it gets (a WebSocket
    upgrade, a beacon's POST, anything), and answers each with a small page."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), RecordingHandler)
        self.connections = 0
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class RecordingHandler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server: Recorder = self.server  # type: ignore[assignment]
        server.connections += 1
        self.request.settimeout(5)
        try:
            line = self.rfile.readline(65536).decode("latin-1").strip()
            while line and self.rfile.readline(65536).strip():
                pass
        except OSError:
            return
        if not line:
            return
        server.requests.append(line)
        body = b"<!doctype html><title>blocked site</title><p>reached</p>"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        self.wfile.write(head.encode() + body)


@pytest.fixture(scope="module")
def blocked_site() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.shutdown()
    server.server_close()


def forms_of(port: int) -> list[str]:
    """The table's spellings of the blocked server's address that a page can request over http."""
    return [f.replace("{PORT}", str(port)) for f in VECTORS["same_site"]["forms"] if f.startswith("http")]


def rules_in_force(ui: Person) -> None:
    wait_until(lambda: chrome(ui, "chrome.declarativeNetRequest.getSessionRules()"))


@contextlib.contextmanager
def popup_window(tp: Tabpilot) -> Iterator[Person]:
    """The toolbar popup, open in a window of its own (not the Agent Window, which Stop may close)."""
    with extension_page(tp, "popup/popup.html", new_window=True) as page:
        yield page


def still_asking(proc: subprocess.Popen[str]) -> Callable[[], bool]:
    """While the command that asked is still waiting for its answer."""

    def waiting() -> bool:
        return proc.poll() is None

    return waiting


def clicks_refused(
    tp: Tabpilot, url: str, waiting: Callable[[], bool], place: tuple[float, float], n: int = 4
) -> None:
    """The person clicks where the prompt's button was, again and again: none of it is an answer
    (`waiting` stays true).

    Each click comes over a connection of its own and is not waited for: the browser may never
    acknowledge input aimed at a frame the page tears down meanwhile."""
    for _ in range(n):
        with connect(page_target(tp, url)["webSocketDebuggerUrl"]) as ws:
            for n_, (kind, buttons) in enumerate(
                (("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0))
            ):
                params = {
                    "type": kind,
                    "x": place[0],
                    "y": place[1],
                    "button": "none" if buttons == 0 and kind == "mouseMoved" else "left",
                    "buttons": buttons,
                    "clickCount": 1,
                }
                ws.send(json.dumps({"id": n_ + 1, "method": "Input.dispatchMouseEvent", "params": params}))
            time.sleep(0.3)
        assert waiting(), "a click the person could not see answered the prompt"


@contextlib.contextmanager
def borrowing(tp: Tabpilot, tab_id: int) -> Iterator[subprocess.Popen[str]]:
    proc = tp.spawn("tab", "borrow", str(tab_id), "--reason", "read the prize page", "--timeout", "180s")
    try:
        yield proc
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_page_that_fights_the_borrow_prompt_never_gets_a_yes(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
    attack: str,
) -> None:
    tp.run("open", pages.url("index.html"))
    url = pages.url(f"hostile/overlay.html?{attack}")
    [theirs, _] = persons_window(browser_ui, [url, pages.url("second.html?stays")], active=0)
    home = tab(browser_ui, theirs)["windowId"]
    try:
        with person_at(tp, url) as person, borrowing(tp, theirs) as proc:
            allow = person.wait_for(action="allow", timeout=15)
            person.eval(f"attacks.{attack}()")
            time.sleep(0.3)
            clicks_refused(tp, url, still_asking(proc), allow)
            assert tab(browser_ui, theirs)["windowId"] == home
            # the page gives up: the same click, on the prompt now in plain sight, is a yes
            person.eval("attacks.stop()")
            person.answer("allow")
            out, err = proc.communicate(timeout=15)
            assert proc.returncode == 0, (out, err)
            assert tab(browser_ui, theirs)["windowId"] != home
        tp.run("tab", "return", str(theirs))
    finally:
        chrome(browser_ui, f"chrome.windows.remove({home}).catch(() => null)")


@pytest.mark.parametrize("attack", ["restyle", "reinsert"])
def test_a_page_that_fights_the_help_panel_never_gets_done(
    tp: Tabpilot, pages: PageServer, attack: str
) -> None:
    url = pages.url(f"hostile/overlay.html?help-{attack}")
    tp.run("open", url)
    with person_at(tp, url) as person:
        proc = tp.spawn("request-help", "--prompt", "Claim the prize?", "--json")
        try:
            done = person.wait_for(action="help-done", timeout=15)
            person.eval(f"attacks.{attack}()")
            time.sleep(0.3)
            clicks_refused(tp, url, still_asking(proc), done)
            person.eval("attacks.stop()")
            person.answer("help-done")
            out, _ = proc.communicate(timeout=15)
        finally:
            proc.kill()
    assert json.loads(out)["outcome"] == "continued"


def test_stop_is_reachable_while_the_page_hides_the_badge(tp: Tabpilot, pages: PageServer) -> None:
    url = pages.url("hostile/overlay.html?stop")
    tp.run("open", url)
    with popup_window(tp) as popup:
        # the toolbar icon says an agent works
        wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") != "")
        with person_at(tp, url) as person:
            person.wait_for(action="stop")
            person.eval("attacks.hide(); attacks.cover()")
            time.sleep(0.3)
            # the host is put back as it was, whatever the page writes on it
            assert (
                person.eval("getComputedStyle(document.querySelector('[data-tabpilot-overlay]')).display")
                == "block"
            )
            assert (
                person.eval("document.querySelector('[data-tabpilot-overlay]').hasAttribute('hidden')")
                is False
            )
            # the popup's Stop works all the same
            popup.eval("document.querySelector('li[data-session=default] button.stop').click()")
            wait_until(lambda: tp.run("session", "list", "--json").json["sessions"][0]["paused"])
            assert error_of(tp.run("eval", "1", "--json", check=False))["reason"] == "session_paused"
            wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") == "❚❚")
            person.eval("attacks.stop()")
        tp.run("session", "resume")
        tp.run("tab", "list")  # the extension learns of a resume with the session's next call
        wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") == "1")
        tp.run("session", "stop")
        wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") == "")


def test_browser_and_extension_pages_are_never_the_agents(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
) -> None:
    tp.run("open", pages.url("index.html"))
    options = "chrome-extension://abldppcldbamgeoepadjiaeommdfmihk/options/options.html"
    internal = [options, "chrome://version/", "chrome://newtab/"]
    urls = [pages.url("second.html?near"), *internal]
    win = chrome(browser_ui, f"chrome.windows.create({{url: {json.dumps(urls)}, focused: true}})")
    ids = [t["id"] for t in win["tabs"]]
    try:
        page_target_loaded(browser_ui, urls[0])
        page_target_loaded(browser_ui, options)
        listed = tp.run("tab", "list", "--scope", "all", "--json").json["tabs"]
        assert ids[0] in [t["tab_id"] for t in listed]
        for t in listed:
            assert t["url"].startswith(("http://", "https://", "about:blank")), t
        for tab_id in ids[1:]:
            error = error_of(tp.run("tab", "borrow", str(tab_id), "--json", check=False))
            assert (error["code"], error["reason"]) == ("permission_denied", "browser_page"), tab_id
        for url in [
            *internal,
            "view-source:http://example.com/",
            "devtools://devtools/bundled/inspector.html",
        ]:
            error = error_of(tp.run("open", url, "--json", check=False))
            assert error["reason"] == "url_scheme_refused", url
        for url in [
            "https://chromewebstore.google.com/",
            "https://chrome.google.com/webstore/category/extensions",
        ]:
            error = error_of(tp.run("open", url, "--json", check=False))
            assert (error["code"], error["reason"]) == ("permission_denied", "browser_page"), url
        # nothing was attached to any of them
        targets = {t["url"]: t for t in tp.devtools().targets()}
        assert not any(t.get("attached") for u, t in targets.items() if u in internal)
    finally:
        chrome(browser_ui, f"chrome.windows.remove({win['id']})")


def test_every_spelling_of_a_blocked_address_is_refused(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
    blocked_site: Recorder,
    unblocked: None,  # noqa: F811
) -> None:
    tp.run("open", pages.url("index.html"))
    block(browser_ui, f"localhost:{blocked_site.port}")
    for form in forms_of(blocked_site.port):
        error = error_of(tp.run("open", form, "--json", check=False))
        assert (error["code"], error["reason"]) == ("blocked_site", "site_blocked"), form
    assert blocked_site.requests == []


def test_no_request_leaves_an_agent_tab_for_a_blocked_site(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
    blocked_site: Recorder,
    unblocked: None,  # noqa: F811
) -> None:
    to = f"http://localhost:{blocked_site.port}"
    tp.run("open", pages.url(f"hostile/requests.html?to={to}"))
    block(browser_ui, f"localhost:{blocked_site.port}")
    rules_in_force(browser_ui)
    connections = blocked_site.connections
    extra = forms_of(blocked_site.port)
    # everything a script can send: subresources, fetch (keepalive), XHR, beacon, WebSocket, EventSource,
    # prefetch, preload, preconnect, a worker's and a service worker's fetches, every spelling of the address
    assert tp.run("eval", f"tryAll({json.dumps(extra)})").out.strip() == '"tried"'
    # popups need a click: window.open, a link with target=_blank, a form posted to a new tab
    for button in ("#popup", "#blank", "#submit"):
        tp.run("click", button, check=False)
    tp.run("eval", f"location.href = {json.dumps(to + '/navigate')}", check=False)
    time.sleep(2)
    assert blocked_site.requests == []
    print(f"connections opened without a request (preconnect): {blocked_site.connections - connections}")
    # the person's own tab is free to go there
    [mine, _] = persons_window(browser_ui, [f"{to}/mine", pages.url("second.html?mine")], active=0)
    # A new tab the rules caught before it was known to be the person's is reloaded: its request comes late.
    wait_until(lambda: "GET /mine HTTP/1.1" in blocked_site.requests)
    chrome(browser_ui, f"chrome.tabs.get({mine}).then(t => chrome.windows.remove(t.windowId))")
    tp.run("tab", "list")


def test_a_popup_onto_a_blocked_site_is_an_error_and_leaves_the_agent_where_it_was(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
    blocked_site: Recorder,
    unblocked: None,  # noqa: F811
) -> None:
    to = f"http://localhost:{blocked_site.port}"
    tp.run("open", pages.url(f"hostile/requests.html?to={to}"))
    here = tp.run("eval", "1", "--json").json["tab_id"]
    earlier = len(blocked_site.requests)
    block(browser_ui, f"localhost:{blocked_site.port}")
    rules_in_force(browser_ui)
    # window.open (a popup window), as target=_blank and a form to a new tab already were
    for button in ("#popup", "#blank", "#submit"):
        error = error_of(tp.run("click", button, "--json", check=False))
        assert (error["code"], error["reason"], error["tab_id"]) == ("blocked_site", "site_blocked", here), (
            button
        )
        assert tp.run("eval", "1", "--json").json["tab_id"] == here, button
    # a popup the page opens once the click has returned is not the agent's next tab, nor blamed on it
    tp.run("click", "#late-popup")
    time.sleep(1.5)
    assert tp.run("eval", "location.pathname", "--json").json["tab_id"] == here
    tabs = tp.run("tab", "list", "--json").json["tabs"]
    assert [t["tab_id"] for t in tabs if t.get("active")] == [here], tabs
    assert blocked_site.requests[earlier:] == []


def test_no_speculative_load_reaches_a_blocked_site_or_path(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
    blocked_site: Recorder,
    unblocked: None,  # noqa: F811
) -> None:
    # The person's cookie on this host: speculation would send it along.
    tp.run("open", pages.url("login?user=grace"))
    port = pages.origin.rsplit(":", 1)[1]
    block(browser_ui, f"127.0.0.1:{blocked_site.port}", f"127.0.0.1:{port}/private/*")
    rules_in_force(browser_ui)
    seen, earlier = len(pages.requests), len(blocked_site.requests)
    # speculation rules: prefetch and an eager prerender, of another port of this host and of a blocked path
    tp.run("open", pages.url(f"hostile/speculation.html?to=http://127.0.0.1:{blocked_site.port}"))
    tp.run("open", pages.url(f"hostile/speculation.html?to={pages.origin}/private"))
    # and a same-origin window onto the blocked path, read from the page
    read = tp.run("eval", "readBack('/private/secret.html')", check=False)
    time.sleep(2)
    assert "1234-5678" not in read.out + read.err
    assert blocked_site.requests[earlier:] == []
    assert [r for r in pages.requests[seen:] if r.startswith("/private/")] == []
    # off in the browser while a session is open
    assert chrome(browser_ui, "chrome.privacy.network.networkPredictionEnabled.get({})") == {
        "levelOfControl": "controlled_by_this_extension",
        "value": False,
    }


def test_a_sites_own_service_worker_cannot_read_its_blocked_path_for_an_agent_tab(
    tp: Tabpilot,
    browser_ui: Person,  # noqa: F811
    unblocked: None,  # noqa: F811
) -> None:
    # A named site (not loopback), whose own service worker is otherwise let through to its own host.
    site = start_page_server(host="app.localhost")
    try:
        port = site.origin.rsplit(":", 1)[1]
        tp.run("open", site.url("hostile/sw-read.html"))
        block(browser_ui, f"app.localhost:{port}/private/*")
        rules_in_force(browser_ui)
        read = tp.run("eval", "readViaWorker('/private/secret.html')", check=False)
        assert "1234-5678" not in read.out + read.err, read.out
        assert [r for r in site.requests if r.startswith("/private/")] == []
    finally:
        site.close()
