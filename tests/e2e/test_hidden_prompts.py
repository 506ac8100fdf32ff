"""A page cannot shrink, zoom or cover the person's consent and Stop (issue 23), end to end.

The hostile page (tests/pages/hostile/overlay.html) shrinks itself to a speck under a normal-size bait,
or the visual viewport is pinch-zoomed, while the person clicks where the prompt's Allow is drawn, with
real input events from outside tabpilot: the prompt takes none of it, and the toolbar popup says the page
hides the question and answers it. The page opens its own modal dialog and popover over the badge: the
badge is raised above them and its Stop is pressed like a person would. After the extension's worker
restarts, a card whose ask died is taken off the page at once, with a line that says why.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from harness import PageServer, Tabpilot, wait_until
from test_consent import (
    browser_ui,  # noqa: F401  (a fixture)
    chrome,
    persons_window,
    tab,
)
from test_guards import borrowing, clicks_refused, popup_window, still_asking
from test_person import Person, person_at, prompt_targets
from test_resilience import cdp, service_worker_ids
from websockets.sync.client import connect


@pytest.fixture()
def hostile(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
) -> Iterator[tuple[str, int, int]]:
    """The hostile page in a window of the person's (its url, tab id and window id), while a session works."""
    tp.run("open", pages.url("index.html"))
    url = pages.url("hostile/overlay.html?shrink")
    [theirs, _] = persons_window(browser_ui, [url, pages.url("second.html?stays")], active=0)
    home = tab(browser_ui, theirs)["windowId"]
    try:
        yield url, theirs, home
    finally:
        chrome(browser_ui, f"chrome.windows.remove({home}).catch(() => null)")


def inside(tp: Tabpilot, kind: str, expression: str) -> Any:
    """Evaluate in the prompt frame's own document (the extension's page)."""
    for target in prompt_targets(tp.devtools().port, kind):
        with connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
            return Person(ws).eval(expression)
    return None


def drawn_at(tp: Tabpilot, person: Person, kind: str, selector: str) -> tuple[float, float]:
    """Where an element of the prompt frame is drawn in the page, however the page scales the frame."""
    frame = person.prompt_frame(kind)
    assert frame is not None
    quad = person.send("DOM.getBoxModel", {"backendNodeId": frame["backendNodeId"]})["model"]["border"]
    inner = inside(
        tp,
        kind,
        f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
        " return [r.left + r.width / 2, r.top + r.height / 2, innerWidth, innerHeight]; })()",
    )
    scale_x, scale_y = (quad[2] - quad[0]) / inner[2], (quad[5] - quad[1]) / inner[3]
    return quad[0] + inner[0] * scale_x, quad[1] + inner[1] * scale_y


def hidden_asks(popup: Person) -> list[dict[str, str]]:
    return list(
        popup.eval(
            "[...document.querySelectorAll('#hidden-asks li')].map(li => ({kind: li.dataset.kind,"
            " text: li.textContent, shown: !document.querySelector('#hidden-asks-section').hidden}))"
        )
    )


def answer_in_popup(popup: Person, kind: str, answer: str) -> None:
    """The person reads in the popup that the page hides the question, and answers it there."""
    wait_until(lambda: [a["kind"] for a in hidden_asks(popup)] == [kind], timeout=10, interval=0.05)
    [shown] = hidden_asks(popup)
    assert shown["shown"] and "The page is hiding this question" in shown["text"], shown
    popup.click(*popup.element_center(f"#hidden-asks li[data-kind={kind}] button[data-answer={answer}]"))


def test_a_page_that_zooms_the_borrow_prompt_to_a_speck_gets_no_yes_and_the_popup_answers_it(
    tp: Tabpilot,
    browser_ui: Person,  # noqa: F811
    hostile: tuple[str, int, int],
) -> None:
    url, theirs, home = hostile
    with person_at(tp, url) as person, borrowing(tp, theirs) as proc:
        person.wait_for(action="allow", timeout=15)
        # A tenth of its size: the text is unreadable, the buttons still big enough to be hit for sure.
        person.eval("attacks.zoom(0.1)")
        speck = drawn_at(tp, person, "borrow", "button[data-answer=allow]")
        frame = person.prompt_frame("borrow")
        assert frame is not None
        quad = person.send("DOM.getBoxModel", {"backendNodeId": frame["backendNodeId"]})["model"]["border"]
        width = quad[2] - quad[0]
        assert width < 50, f"the page did not shrink the prompt ({width} px wide)"
        # The bait is drawn under the speck (over it, it would count as a cover); the person's clicks on it
        # land on the speck's Allow, for longer than a prompt takes to arm.
        assert person.eval(f"document.elementFromPoint({speck[0]}, {speck[1]}).localName") == (
            "tabpilot-overlay"
        )
        clicks_refused(tp, url, still_asking(proc), speck)
        assert tab(browser_ui, theirs)["windowId"] == home
        with popup_window(tp) as popup:
            answer_in_popup(popup, "borrow", "allow")
            out, err = proc.communicate(timeout=15)
            assert proc.returncode == 0, (out, err)
            assert tab(browser_ui, theirs)["windowId"] != home
            # Answered: the popup asks no more, and the speck is gone from the page.
            wait_until(lambda: hidden_asks(popup) == [], timeout=5, interval=0.05)
        wait_until(lambda: person.prompt_frame("borrow") is None, timeout=5, interval=0.05)
    tp.run("tab", "return", str(theirs))


def test_a_pinch_zoomed_prompt_is_not_armed_and_arms_again_at_its_size(
    tp: Tabpilot,
    browser_ui: Person,  # noqa: F811
    hostile: tuple[str, int, int],
) -> None:
    url, theirs, home = hostile
    with person_at(tp, url) as person, borrowing(tp, theirs) as proc:
        person.wait_for(action="allow", timeout=15)
        person.send("Emulation.setPageScaleFactor", {"pageScaleFactor": 1.04})
        wait_until(lambda: person.eval("visualViewport.scale") > 1.01, timeout=5, interval=0.05)
        x, y = drawn_at(tp, person, "borrow", "button[data-answer=allow]")
        left, top, scale = person.eval(
            "[visualViewport.offsetLeft, visualViewport.offsetTop, visualViewport.scale]"
        )
        on_screen = ((x - left) * scale, (y - top) * scale)
        clicks_refused(tp, url, still_asking(proc), on_screen)
        assert person.in_prompt("borrow", "button[data-answer=allow]") is None, "armed while zoomed"
        assert tab(browser_ui, theirs)["windowId"] == home
        with popup_window(tp) as popup:
            wait_until(
                lambda: [a["kind"] for a in hidden_asks(popup)] == ["borrow"], timeout=10, interval=0.05
            )
            assert "zoomed in" in hidden_asks(popup)[0]["text"]
            # Back at its size, the prompt in the page arms again and takes the person's click.
            person.send("Emulation.setPageScaleFactor", {"pageScaleFactor": 1})
            person.answer("allow")
            out, err = proc.communicate(timeout=15)
            assert proc.returncode == 0, (out, err)
            wait_until(lambda: hidden_asks(popup) == [], timeout=5, interval=0.05)
    tp.run("tab", "return", str(theirs))


def test_a_help_panel_the_page_shrinks_is_answered_in_the_popup(tp: Tabpilot, pages: PageServer) -> None:
    url = pages.url("hostile/overlay.html?help-shrink")
    tp.run("open", url)
    with person_at(tp, url) as person:
        proc = tp.spawn("request-help", "--prompt", "Claim the prize?", "--json")
        try:
            person.wait_for(action="help-done", timeout=15)
            person.eval("attacks.zoom(0.1)")
            clicks_refused(
                tp, url, still_asking(proc), drawn_at(tp, person, "help", "button[data-answer=done]")
            )
            with popup_window(tp) as popup:
                answer_in_popup(popup, "help", "done")
                out, _ = proc.communicate(timeout=15)
        finally:
            proc.kill()
        person.eval("attacks.stop()")
    assert json.loads(out)["outcome"] == "continued"


def test_a_cover_the_page_draws_goes_under_the_prompt_and_the_persons_click_answers_it(
    tp: Tabpilot,
    browser_ui: Person,  # noqa: F811
    hostile: tuple[str, int, int],
) -> None:
    url, theirs, home = hostile
    with person_at(tp, url) as person, borrowing(tp, theirs) as proc:
        person.wait_for(action="allow", timeout=15)
        # A "Continue" cover at the highest z-index, then a popover over everything, opened after the prompt.
        person.eval("attacks.cover(); attacks.popover()")
        x, y = drawn_at(tp, person, "borrow", "button[data-answer=allow]")
        wait_until(
            lambda: person.eval(f"document.elementFromPoint({x}, {y}).localName") == "tabpilot-overlay",
            timeout=5,
            interval=0.05,
        )
        # The person sees the prompt, not the page's cover: their click on its Allow is their answer.
        person.answer("allow")
        out, err = proc.communicate(timeout=15)
        assert proc.returncode == 0, (out, err)
        assert tab(browser_ui, theirs)["windowId"] != home
        person.eval("attacks.stop()")
    tp.run("tab", "return", str(theirs))


def session_paused(tp: Tabpilot) -> bool:
    return bool(tp.run("session", "list", "--json").json["sessions"][0]["paused"])


@pytest.mark.parametrize("attack", ["dialog", "popover", "fullscreen"])
def test_the_badge_stays_above_the_pages_own_top_layer_and_its_stop_works(
    tp: Tabpilot, pages: PageServer, attack: str
) -> None:
    url = pages.url(f"hostile/overlay.html?{attack}")
    tp.run("open", url)
    with person_at(tp, url) as person:
        person.wait_for(action="stop")
        # A user gesture, as the person's click on the page would give it (fullscreen needs one).
        person.send(
            "Runtime.evaluate",
            {"expression": f"attacks.{attack}()", "userGesture": True, "awaitPromise": True},
        )
        assert person.eval(
            f"document.querySelector('.bait').matches({json.dumps(':modal, :popover-open, :fullscreen')})"
        )
        # What the person sees at the badge's place (fullscreen resizes the viewport) is the badge, and
        # their click there presses its Stop.
        x, y = person.wait_for(action="stop")
        wait_until(
            lambda: person.eval(f"document.elementFromPoint({x}, {y})?.localName") == "tabpilot-overlay",
            timeout=5,
            interval=0.05,
        )
        person.click(x, y)
        wait_until(lambda: session_paused(tp), timeout=5, interval=0.05)
        person.eval("attacks.stop()")
    tp.run("session", "resume")


def test_after_a_worker_restart_a_card_whose_ask_died_leaves_the_page_with_a_line_saying_why(
    tp: Tabpilot,
    browser_ui: Person,  # noqa: F811
    hostile: tuple[str, int, int],
) -> None:
    url, theirs, home = hostile
    [before] = tp.run("browser", "list", "--json").json["browsers"]
    with person_at(tp, url) as person, borrowing(tp, theirs) as proc:
        allow = person.wait_for(action="allow", timeout=15)
        workers = service_worker_ids(tp)
        cdp(tp, "Target.closeTarget", {"targetId": workers[0]})
        # The ask died with the worker: its card goes at once, and the page says why.
        wait_until(lambda: person.prompt_frame("borrow") is None, timeout=10, interval=0.05)
        assert "the extension restarted" in person.overlay_text("notice")
        clicks_refused(tp, url, lambda: tab(browser_ui, theirs)["windowId"] == home, allow, n=2)
        proc.communicate(timeout=60)
        assert proc.returncode != 0
    assert tab(browser_ui, theirs)["windowId"] == home

    def reconnected() -> bool:
        browsers = tp.run("browser", "list", "--json").json["browsers"]
        return len(browsers) == 1 and browsers[0]["connected_at"] > before["connected_at"]

    wait_until(reconnected, timeout=45, interval=0.5)
