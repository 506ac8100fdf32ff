"""The person's tabs and blocked sites, end to end: read scope, borrowing with consent (answered in the
page like a person would), giving tabs back (also when the session stops or the person closes the Agent
Window), blocked sites set on the options page, and the popup's Stop.

The person acts through the browser's own debugging port: their clicks are real input events in the
page, and what they do in the browser's UI (open a window, close one, fill in the options page) runs in
an extension page, as the browser's UI would do it.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from harness import PageServer, Tabpilot, wait_until
from test_person import Person, person_at
from test_resilience import cdp

EXTENSION = "chrome-extension://abldppcldbamgeoepadjiaeommdfmihk"


def chrome(page: Person, expression: str) -> Any:
    """Run an extension API call in an extension page and return its (awaited) JSON value."""
    reply = page.send(
        "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}
    )
    assert "exceptionDetails" not in reply, reply
    return reply["result"].get("value")


@contextlib.contextmanager
def extension_page(tp: Tabpilot, path: str, new_window: bool = False) -> Iterator[Person]:
    url = f"{EXTENSION}/{path}"
    target = cdp(tp, "Target.createTarget", {"url": url, "newWindow": new_window})["targetId"]
    try:
        with person_at(tp, url) as page:
            # The new target reports its URL before its document commits: until then the page is the
            # initial about:blank, whose `chrome` has no extension APIs (a CI failure on chrome.windows).
            wait_until(lambda: page.eval("[location.href, document.readyState]") == [url, "complete"])
            yield page
    finally:
        cdp(tp, "Target.closeTarget", {"targetId": target})


@pytest.fixture(scope="module")
def browser_ui(tp: Tabpilot) -> Iterator[Person]:
    """The browser's own UI, as far as the tests need it: an extension page that can call chrome.*."""
    with extension_page(tp, "options/options.html") as page:
        yield page


def block(browser_ui: Person, *patterns: str) -> None:
    """The person types the patterns into the options page and presses Save."""
    browser_ui.eval(
        f"document.querySelector('#blocked').value = {json.dumps(chr(10).join(patterns))};"
        "document.querySelector('#save-blocked').click()"
    )
    expected = [p for p in patterns if not p.startswith("#")]
    wait_until(
        lambda: (
            chrome(browser_ui, "chrome.storage.local.get('tp_blocked_sites')").get("tp_blocked_sites")
            == expected
        )
    )


@pytest.fixture()
def unblocked(browser_ui: Person) -> Iterator[None]:
    yield
    block(browser_ui)


def persons_window(browser_ui: Person, urls: list[str], active: int) -> list[int]:
    """The person opens a window with these tabs and looks at one of them; returns the tab ids."""
    win = chrome(browser_ui, f"chrome.windows.create({{url: {json.dumps(urls)}, focused: true}})")
    ids = [t["id"] for t in win["tabs"]]
    chrome(browser_ui, f"chrome.tabs.update({ids[active]}, {{active: true}})")
    for url in urls:
        page_target_loaded(browser_ui, url)
    return ids


def page_target_loaded(browser_ui: Person, url: str) -> None:
    find = f"chrome.tabs.query({{}}).then(ts => ts.find(t => t.url === {json.dumps(url)})?.status)"
    wait_until(lambda: chrome(browser_ui, find) == "complete")


def tab(browser_ui: Person, tab_id: int) -> dict[str, Any]:
    return chrome(browser_ui, f"chrome.tabs.get({tab_id})")  # type: ignore[no-any-return]


def debugged(tp: Tabpilot, url: str) -> bool:
    """Whether anything (tabpilot's debugger) is attached to the page, seen from the browser's side."""
    targets = cdp(tp, "Target.getTargets")["targetInfos"]
    return any(t["attached"] for t in targets if t["type"] == "page" and t["url"] == url)


def answer_borrow(tp: Tabpilot, url: str, action: str) -> None:
    """The person answers the borrow prompt in the page, once its buttons are armed."""
    with person_at(tp, url) as person:
        person.answer(action)
        wait_until(lambda: person.prompt_frame("borrow") is None, timeout=5, interval=0.05)


def error_of(result: Any) -> dict[str, Any]:
    assert result.code == 1, (result.out, result.err)
    return json.loads(result.out)["error"]  # type: ignore[no-any-return]


def test_a_persons_tab_is_out_of_scope_until_borrowed_then_goes_back_where_it_was(
    tp: Tabpilot, pages: PageServer, browser_ui: Person
) -> None:
    tp.run("open", pages.url("index.html"))
    urls = [pages.url(f"second.html?tab={n}") for n in range(3)]
    ids = persons_window(browser_ui, urls, active=1)
    theirs, home = ids[1], tab(browser_ui, ids[1])["windowId"]
    listed = tp.run("tab", "list", "--scope", "user", "--json").json["tabs"]
    assert {"tab_id": theirs, "url": urls[1], "title": "Second page", "scope": "user"} in listed
    assert all(set(t) == {"tab_id", "url", "title", "scope"} for t in listed)
    # reads and actions on it are refused, and say how to ask for it; nothing attached to it
    for verb in (["snapshot"], ["screenshot"], ["text"], ["html"], ["console"], ["click", "a"]):
        error = error_of(tp.run("--tab", str(theirs), *verb, "--json", check=False))
        assert (error["code"], error["reason"]) == ("permission_denied", "agent_window_scope"), verb
        assert f"tabpilot tab borrow {theirs}" in error["hint"]
    assert not debugged(tp, urls[1])

    borrow = tp.spawn("tab", "borrow", str(theirs), "--reason", "read the second page")
    try:
        answer_borrow(tp, urls[1], "allow")
        out, err = borrow.communicate(timeout=15)
    finally:
        borrow.kill()
    assert borrow.returncode == 0, err
    assert out.strip() == (
        f'borrowed tab {theirs} "Second page" {urls[1]} (now current; give it back with `tabpilot tab return {theirs}`)'
    )
    # in the Agent Window, the session's current tab: reads and actions work
    agent_window = tab(browser_ui, theirs)["windowId"]
    assert agent_window != home
    assert "Back to the first page" in tp.run("snapshot").out
    with person_at(tp, urls[1]) as person:
        person.wait_for(action="stop")  # the badge shows at once
    assert tp.run("--tab", str(theirs), "eval", "location.search").out.strip() == '"?tab=1"'
    mine = tp.run("tab", "list", "--json").json["tabs"]
    assert [t["scope"] for t in mine if t["tab_id"] == theirs] == ["borrowed"]
    # its dialogs follow the agent's rules: an alert is accepted at once
    assert tp.run("eval", "alert('hello'); 2").out.strip() == "2"
    assert error_of(tp.run("tab", "close", str(theirs), "--json", check=False))["code"] == "invalid_params"

    returned = tp.run("tab", "return", str(theirs))
    assert returned.out.strip() == f"returned tab {theirs} to window {home} at index 1"
    back = tab(browser_ui, theirs)
    assert (back["windowId"], back["index"], back["active"]) == (home, 1, True)
    with person_at(tp, urls[1]) as person:
        wait_until(lambda: person.overlay_node(action="stop") is None, timeout=5, interval=0.05)
    wait_until(lambda: not debugged(tp, urls[1]), timeout=5)
    error = error_of(tp.run("--tab", str(theirs), "snapshot", "--json", check=False))
    assert error["reason"] == "agent_window_scope"
    error = error_of(tp.run("tab", "return", str(theirs), "--json", check=False))
    assert (error["code"], error["reason"]) == ("invalid_params", "not_borrowed")


def test_deny_no_answer_and_another_sessions_borrow_are_refusals(
    tp: Tabpilot, pages: PageServer, browser_ui: Person
) -> None:
    tp.run("open", pages.url("index.html"))
    urls = [pages.url("second.html?deny"), pages.url("second.html?later")]
    theirs, other = persons_window(browser_ui, urls, active=0)
    home = tab(browser_ui, theirs)["windowId"]

    borrow = tp.spawn("tab", "borrow", str(theirs), "--json")
    try:
        answer_borrow(tp, urls[0], "deny")
        out, _ = borrow.communicate(timeout=15)
    finally:
        borrow.kill()
    error = json.loads(out)["error"]
    assert (borrow.returncode, error["code"], error["reason"]) == (1, "permission_denied", "borrow_denied")
    assert tab(browser_ui, theirs)["windowId"] == home

    # nobody answers: a no, once the time is up, and the questions (in the page, and the system
    # notification for when the page cannot show one) go away
    started = time.monotonic()
    unanswered = tp.spawn("tab", "borrow", str(theirs), "--timeout", "2s", "--json")

    def notifications() -> list[str]:
        return list(chrome(browser_ui, "chrome.notifications.getAll()"))

    assert wait_until(notifications, interval=0.05)[0].startswith("tabpilot-borrow-")
    out, _ = unanswered.communicate(timeout=10)
    error = json.loads(out)["error"]
    assert (error["code"], error["reason"]) == ("permission_denied", "borrow_timeout")
    assert 2 <= time.monotonic() - started < 5
    assert notifications() == []
    with person_at(tp, urls[0]) as person:
        assert person.prompt_frame("borrow") is None
    assert tab(browser_ui, theirs)["windowId"] == home

    # a tab borrowed by one session is not another's to ask for
    tp.run("session", "start", "other")
    try:
        borrow = tp.spawn("--session", "other", "tab", "borrow", str(other))
        answer_borrow(tp, urls[1], "allow")
        assert borrow.wait(timeout=15) == 0
        error = error_of(tp.run("tab", "borrow", str(other), "--json", check=False))
        assert (error["code"], error["reason"]) == ("permission_denied", "borrow_conflict")
        # and another session's tabs do not exist for this one
        own_tab = tp.run("--session", "other", "tab", "list", "--json").json["tabs"][0]["tab_id"]
        error = error_of(tp.run("--tab", str(own_tab), "snapshot", "--json", check=False))
        assert (error["code"], error["reason"]) == ("not_found", "unknown_tab")
    finally:
        tp.run("session", "stop", "other")
    # stopping the session gave its borrowed tab back
    back = tab(browser_ui, other)
    assert (back["windowId"], back["index"], back["active"]) == (home, 1, False)


def test_closing_the_agent_window_gives_borrowed_tabs_back_with_their_history(
    tp: Tabpilot, pages: PageServer, browser_ui: Person
) -> None:
    url = pages.url("second.html?closing")
    _, theirs = persons_window(
        browser_ui, [pages.url("index.html?stays"), pages.url("index.html?closing")], active=1
    )
    chrome(browser_ui, f"chrome.tabs.update({theirs}, {{url: {json.dumps(url)}}})")
    page_target_loaded(browser_ui, url)
    home = tab(browser_ui, theirs)["windowId"]
    tp.run("session", "start", "closing")
    borrow = tp.spawn("--session", "closing", "tab", "borrow", str(theirs))
    answer_borrow(tp, url, "allow")
    assert borrow.wait(timeout=15) == 0
    agent_window = tab(browser_ui, theirs)["windowId"]

    chrome(browser_ui, f"chrome.windows.remove({agent_window})")
    reopened = wait_until(
        lambda: chrome(
            browser_ui,
            f"chrome.tabs.query({{windowId: {home}}}).then(ts => ts.find(t => t.url === {json.dumps(url)}))",
        ),
        timeout=10,
    )
    assert reopened["index"] == 1
    with person_at(tp, url) as person:
        assert person.eval("history.length") == 2
    assert "closing" not in tp.run("session", "list").out


def test_the_next_command_acts_on_the_tab_the_browser_shows_now(
    tp: Tabpilot, pages: PageServer, browser_ui: Person
) -> None:
    # The worker keeps the tab a command acted on (no round trip to the browser for the next one) only
    # while nothing changed it: the person or the agent showing another tab, or closing it, forgets it.
    tp.run("session", "start", "shown")
    s = ("--session", "shown")
    try:
        tp.run("open", pages.url("index.html"), *s)
        first = tp.run("tab", "list", "--json", *s).json["tabs"][0]["tab_id"]
        second = tp.run("tab", "new", pages.url("second.html"), "--json", *s).json["tab_id"]
        page_target_loaded(browser_ui, pages.url("second.html"))
        for _ in range(2):
            assert tp.run("eval", "location.pathname", *s).out.strip() == '"/second.html"'
        chrome(browser_ui, f"chrome.tabs.update({first}, {{active: true}})")
        assert tp.run("eval", "location.pathname", *s).out.strip() == '"/index.html"'
        tp.run("tab", "select", str(second), *s)
        assert tp.run("eval", "location.pathname", *s).out.strip() == '"/second.html"'
        chrome(browser_ui, f"chrome.tabs.remove({second})")
        assert tp.run("eval", "location.pathname", *s).out.strip() == '"/index.html"'
    finally:
        tp.run("session", "stop", "shown", check=False)


def test_blocked_sites_are_never_reached(
    tp: Tabpilot, pages: PageServer, other_site: PageServer, browser_ui: Person, unblocked: None
) -> None:
    page = pages.url("actions/popups.html")
    tp.run("open", page)
    # every name of this machine is one site: the pattern names the blocked server by its port
    block(browser_ui, f"localhost:{other_site.server.server_address[1]}", "# a comment", "bank.example.com")
    seen = len(other_site.requests)

    error = error_of(tp.run("open", other_site.url("index.html"), "--json", check=False))
    assert (error["code"], error["reason"]) == ("blocked_site", "site_blocked")
    assert "person blocked" in error["hint"]
    # a redirect there, and a link there: stopped before the request leaves the browser
    error = error_of(
        tp.run("open", pages.url(f"redirect?to={other_site.url('second.html')}"), "--json", check=False)
    )
    assert error["code"] == "blocked_site"
    tp.run(
        "eval",
        f"document.body.insertAdjacentHTML('beforeend', '<a id=away href={other_site.url('second.html')}>away</a>')",
    )
    error = error_of(tp.run("click", "#away", "--json", check=False))
    assert error["code"] == "blocked_site"
    assert tp.run("eval", "location.href").out.strip() == json.dumps(page)
    # nor do the page's own requests to it (a fetch, an image)
    fetched = tp.run(
        "eval",
        f"fetch({json.dumps(other_site.url('index.html'))}).then(() => 'reached', () => 'failed')",
    )
    assert fetched.out.strip() == '"failed"'
    tp.run("eval", f"new Image().src = {json.dumps(other_site.url('image.png'))}; 1")
    time.sleep(0.3)
    assert other_site.requests[seen:] == []

    # a tab of the person's on a blocked site: not listed, and not asked for
    [theirs] = persons_window(browser_ui, [pages.url("index.html?near")], active=0)
    chrome(
        browser_ui,
        f"chrome.tabs.update({theirs}, {{url: {json.dumps(other_site.url('second.html?theirs'))}}})",
    )
    page_target_loaded(browser_ui, other_site.url("second.html?theirs"))
    listed = [t["tab_id"] for t in tp.run("tab", "list", "--scope", "all", "--json").json["tabs"]]
    assert theirs not in listed
    error = error_of(tp.run("tab", "borrow", str(theirs), "--json", check=False))
    assert error["code"] == "blocked_site"
    with person_at(tp, other_site.url("second.html?theirs")) as person:
        assert person.prompt_frame("borrow") is None
    assert chrome(browser_ui, "chrome.notifications.getAll()") == {}


def test_a_page_whose_frame_is_blocked_takes_no_command(
    tp: Tabpilot, pages: PageServer, other_site: PageServer, browser_ui: Person, unblocked: None
) -> None:
    page = pages.url(f"frames.html?other={other_site.origin}")
    tp.run("open", page)
    assert "Inside the cross frame" in tp.run("snapshot").out
    block(browser_ui, f"localhost:{other_site.server.server_address[1]}")
    with person_at(tp, page) as person:
        for verb in (["click", "#top-button"], ["snapshot"], ["text"], ["eval", "1"]):
            error = error_of(tp.run(*verb, "--json", check=False))
            assert (error["code"], error["reason"]) == ("blocked_site", "site_blocked"), verb
        assert person.eval("__events.length + __frameEvents.length") == 0


def test_a_tab_with_a_blocked_frame_has_a_way_out_and_only_that(
    tp: Tabpilot, pages: PageServer, other_site: PageServer, browser_ui: Person, unblocked: None
) -> None:
    framed = pages.url(f"frames.html?other={other_site.origin}")
    blocked_site = f"localhost:{other_site.server.server_address[1]}"
    tp.run("open", pages.url("second.html"))
    tp.run("open", framed)
    assert "Inside the cross frame" in tp.run("snapshot").out
    block(browser_ui, blocked_site)
    refused = error_of(tp.run("snapshot", "--json", check=False))
    assert refused["code"] == "blocked_site"
    assert "tabpilot open URL" in refused["hint"] and "tabpilot tab close" in refused["hint"]
    # The way out is no way in: a redirect to the blocked site is stopped, with the no-way-in hint.
    sneaky = tp.run("open", pages.url(f"redirect?to={other_site.url('second.html')}"), "--json", check=False)
    assert error_of(sneaky)["code"] == "blocked_site" and "another way in" in error_of(sneaky)["hint"]
    assert (
        error_of(tp.run("open", other_site.url("index.html"), "--json", check=False))["code"]
        == "blocked_site"
    )
    # Back to the page before: allowed, so it works, and the tab is the agent's again.
    went = tp.run("back", "--json").json
    assert went["url"] == pages.url("second.html")
    assert tp.run("eval", "document.title").out.strip() == '"Second page"'
    # Open another URL from the blocked page works too.
    block(browser_ui)
    tp.run("open", framed)
    block(browser_ui, blocked_site)
    opened = tp.run("open", pages.url("index.html"), "--json").json
    assert opened["url"] == pages.url("index.html") and opened["status"] == 200
    assert tp.run("eval", "document.title").out.strip() == '"tabpilot test page"'


def test_a_damaged_list_blocks_every_site(
    tp: Tabpilot, pages: PageServer, browser_ui: Person, unblocked: None
) -> None:
    tp.run("open", pages.url("index.html"))
    chrome(browser_ui, "chrome.storage.local.set({tp_blocked_sites: 'not a list'})")
    seen = len(pages.requests)
    error = error_of(tp.run("open", pages.url("second.html"), "--json", check=False))
    assert error["code"] == "blocked_site" and "damaged" in error["message"]
    assert "fix it" in error["hint"]
    assert error_of(tp.run("snapshot", "--json", check=False))["code"] == "blocked_site"
    assert pages.requests[seen:] == []
    # the options page says so, and saving a list there repairs it
    assert "damaged" in browser_ui.eval("document.querySelector('#blocked-error').textContent")


def test_the_popup_lists_sessions_and_stops_them(tp: Tabpilot, pages: PageServer) -> None:
    def paused() -> dict[str, bool]:
        return {s["session_id"]: s["paused"] for s in tp.run("session", "list", "--json").json["sessions"]}

    tp.run("open", pages.url("index.html"))
    tp.run("session", "start", "second")
    try:
        with extension_page(tp, "popup/popup.html") as popup:

            def rows() -> Any:
                return popup.eval(
                    "[...document.querySelectorAll('#sessions li')].map(li => [li.dataset.session,"
                    " li.querySelector('.tab').textContent, [...li.querySelectorAll('button')].map(b => b.textContent)])"
                )

            wait_until(lambda: ["default", "tabpilot test page", ["Show", "Stop"]] in rows())
            assert ["second", "about:blank", ["Show", "Stop"]] in rows()
            popup.eval("document.querySelector('li[data-session=default] button.stop').click()")
            wait_until(lambda: ["default", "tabpilot test page", ["Show", "Resume"]] in rows())
            assert paused() == {"default": True, "second": False}
            assert error_of(tp.run("eval", "1", "--json", check=False))["reason"] == "session_paused"
            popup.eval("[...document.querySelectorAll('li[data-session=default] button')].at(-1).click()")
            wait_until(lambda: not paused()["default"])
            assert tp.run("eval", "1").out.strip() == "1"
            popup.eval("document.querySelector('#stop-all').click()")
            wait_until(lambda: paused() == {"default": True, "second": True})
    finally:
        tp.run("session", "stop", "--all")
