"""Nothing a web page does can grant consent, hide Stop, or reach a blocked site (issue 11), end to end.

A hostile page (tests/pages/hostile/) fights the overlay while the person clicks where the prompt is,
with real input events from outside tabpilot; the prompt must not take the click. Blocked sites are
tried in every spelling of their address and with every kind of request a page can make.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator

import pytest
from harness import PageServer, Tabpilot, wait_until
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
from test_person import Person, person_at

ATTACKS = ["restyle", "hide", "cover", "move", "remove", "reinsert"]


def still_asking(proc: subprocess.Popen[str]) -> bool:
    return proc.poll() is None


def clicks_refused(person: Person, proc: subprocess.Popen[str], place: tuple[float, float], n: int = 5) -> None:
    """The person clicks where the prompt's button was, again and again: none of it is an answer."""
    for _ in range(n):
        person.click(*place)
        time.sleep(0.25)
        assert still_asking(proc), proc.communicate()


@contextlib.contextmanager
def borrowing(tp: Tabpilot, tab_id: int) -> Iterator[subprocess.Popen[str]]:
    proc = tp.spawn("tab", "borrow", str(tab_id), "--reason", "read the prize page")
    try:
        yield proc
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_page_that_fights_the_borrow_prompt_never_gets_a_yes(
    tp: Tabpilot, pages: PageServer, browser_ui: Person, attack: str  # noqa: F811
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
            clicks_refused(person, proc, allow)
            assert tab(browser_ui, theirs)["windowId"] == home
            # the page gives up: the same click, on the prompt now in plain sight, is a yes
            person.eval("attacks.stop()")
            person.click(*person.wait_for(action="allow", timeout=15))
            out, err = proc.communicate(timeout=15)
            assert proc.returncode == 0, (out, err)
            assert tab(browser_ui, theirs)["windowId"] != home
        tp.run("tab", "return", str(theirs))
    finally:
        chrome(browser_ui, f"chrome.windows.remove({home}).catch(() => null)")


@pytest.mark.parametrize("attack", ["restyle", "cover", "reinsert"])
def test_a_page_that_fights_the_help_panel_never_gets_done(tp: Tabpilot, pages: PageServer, attack: str) -> None:
    url = pages.url(f"hostile/overlay.html?help-{attack}")
    tp.run("open", url)
    with person_at(tp, url) as person:
        proc = tp.spawn("request-help", "--prompt", "Claim the prize?", "--json")
        try:
            done = person.wait_for(action="help-done", timeout=15)
            person.eval(f"attacks.{attack}()")
            time.sleep(0.3)
            clicks_refused(person, proc, done)
            person.eval("attacks.stop()")
            person.click(*person.wait_for(action="help-done", timeout=15))
            out, _ = proc.communicate(timeout=15)
        finally:
            proc.kill()
    assert json.loads(out)["outcome"] == "continued"


def test_stop_is_reachable_while_the_page_hides_the_badge(tp: Tabpilot, pages: PageServer) -> None:
    url = pages.url("hostile/overlay.html?stop")
    tp.run("open", url)
    with extension_page(tp, "popup/popup.html") as popup:
        # the toolbar icon says an agent works
        wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") != "")
        with person_at(tp, url) as person:
            person.wait_for(action="stop")
            person.eval("attacks.hide(); attacks.cover()")
            time.sleep(0.3)
            # the host is put back as it was, whatever the page writes on it
            assert person.eval("getComputedStyle(document.querySelector('[data-tabpilot-overlay]')).display") == "block"
            assert person.eval("document.querySelector('[data-tabpilot-overlay]').hasAttribute('hidden')") is False
            # the popup's Stop works all the same
            popup.eval("document.querySelector('li[data-session=default] button.stop').click()")
            wait_until(lambda: tp.run("session", "list", "--json").json["sessions"][0]["paused"])
            assert error_of(tp.run("eval", "1", "--json", check=False))["reason"] == "session_paused"
            wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") == "❚❚")
            person.eval("attacks.stop()")
        tp.run("session", "resume")
        tp.run("eval", "1")  # the extension learns of a resume with the session's next call
        wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") == "1")
        tp.run("session", "stop")
        wait_until(lambda: chrome(popup, "chrome.action.getBadgeText({})") == "")


def test_browser_and_extension_pages_are_never_the_agents(
    tp: Tabpilot, pages: PageServer, browser_ui: Person  # noqa: F811
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
        for url in [*internal, "view-source:http://example.com/", "devtools://devtools/bundled/inspector.html"]:
            error = error_of(tp.run("open", url, "--json", check=False))
            assert error["reason"] == "url_scheme_refused", url
        for url in ["https://chromewebstore.google.com/", "https://chrome.google.com/webstore/category/extensions"]:
            error = error_of(tp.run("open", url, "--json", check=False))
            assert (error["code"], error["reason"]) == ("permission_denied", "browser_page"), url
        # nothing was attached to any of them
        targets = {t["url"]: t for t in tp.devtools().targets()}
        assert not any(t.get("attached") for u, t in targets.items() if u in internal)
    finally:
        chrome(browser_ui, f"chrome.windows.remove({win['id']})")
