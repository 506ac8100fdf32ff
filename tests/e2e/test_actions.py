"""Acting on pages with the mouse, end to end: clicks and what they set off (navigations, new tabs),
the actionability waits (late, disabled, moving, covered elements), hover, drag and drop, scroll, wait,
and actions on refs inside both kinds of iframes and shadow DOM — each checked against what the page
itself recorded."""

from __future__ import annotations

import json
import re
from typing import Any

from harness import PageServer, Result, Tabpilot


def page_value(tp: Tabpilot, expression: str, *args: str) -> Any:
    """The page's own state, read back with eval."""
    return json.loads(tp.run("eval", expression, *args).out)


def ref_of(snapshot: str, bracket_start: str) -> str:
    match = re.search(re.escape(bracket_start) + r"[^\]]*? (@e\d+)", snapshot)
    assert match, f"no {bracket_start} in:\n{snapshot}"
    return match.group(1)


def failed(result: Result, code: int) -> dict[str, Any]:
    """The --json error of a command that must fail with exit `code`."""
    assert result.code == code, (result.code, result.out, result.err)
    return json.loads(result.out)["error"]  # type: ignore[no-any-return]


def trusted_events(tp: Tabpilot, kind: str, *args: str) -> list[Any]:
    return page_value(
        tp, f"__events.filter(e => e.type === {json.dumps(kind)}).map(e => [e.target, e.trusted])", *args
    )


def test_click_is_trusted_and_reports_navigation_status(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/popups.html"))
    clicked = tp.run("click", "#same")
    assert (
        clicked.out.strip() == f'clicked link "Same tab link" → navigated to {pages.url("second.html")} (200)'
    )
    assert page_value(tp, "location.pathname") == "/second.html"
    tp.run("open", pages.url("actions/popups.html"))
    submitted = tp.run("click", "text=Submit the form", "--json").json
    assert submitted["navigated"]["status"] == 201 and "/status/201" in submitted["navigated"]["url"]
    tp.run("open", pages.url("actions/popups.html"))
    jumped = tp.run("click", "#anchor").out.strip()
    assert jumped.endswith("#bottom (same document)"), jumped
    assert page_value(tp, "scrollY > 0") is True


def test_new_tabs_stay_in_the_session_and_become_current(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "tabs")
    s = ("--session", "tabs")
    tp.run("open", pages.url("actions/popups.html"), *s)
    opener = tp.run("tab", "list", "--json", *s).json["tabs"][0]["tab_id"]
    blank = tp.run("click", "#blank", "--json", *s).json["opened_tab"]
    assert blank["kept"] and blank["current"] and blank["url"].endswith("second.html?from=blank")
    assert page_value(tp, "location.search", *s) == "?from=blank"
    tp.run("tab", "select", str(opener), *s)
    line = tp.run("click", "#popup", *s).out.strip()
    assert re.fullmatch(
        r'clicked button "Open a popup window" → opened tab \d+ \S+from=popup \(kept in this session, now current\)',
        line,
    ), line
    tabs = tp.run("tab", "list", "--json", *s).json["tabs"]
    assert len(tabs) == 3 and opener in [t["tab_id"] for t in tabs]
    assert page_value(tp, "location.search", *s) == "?from=popup"
    # A new tab whose server is slow to answer: the next command reads the page, not about:blank.
    tp.run("tab", "select", str(opener), *s)
    slow = tp.run("click", "#slow", "--json", *s).json["opened_tab"]
    assert slow["current"] and slow["url"].endswith("/slow?ms=800"), slow
    assert page_value(tp, "document.title", *s) == "Slow page"
    tp.run("session", "stop", "tabs")


def test_late_disabled_and_moving_elements_are_waited_for(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/delayed.html"))
    late = tp.run("click", "#late")
    assert late.out.strip() == 'clicked button "Late button"' and late.seconds >= 0.8
    assert page_value(tp, "document.getElementById('late').textContent") == "Late button clicked"
    tp.run("open", pages.url("actions/delayed.html"))
    tp.run("click", "text=Please wait")
    tp.run("click", "#moving")
    assert page_value(tp, "[wait.textContent, moving.textContent]") == ["Enabled and clicked", "Caught"]
    disabled = failed(tp.run("click", "#never", "--timeout", "0.5s", "--json", check=False), 4)
    assert (disabled["reason"], disabled["code"]) == ("element_disabled", "timeout")
    assert "Never enabled" in disabled["message"] and disabled["hint"]
    missing = failed(tp.run("click", "#nothing-like-this", "--timeout", "300ms", "--json", check=False), 4)
    assert missing["reason"] == "selector_not_found" and "#nothing-like-this" in missing["message"]
    bad = failed(tp.run("click", "div[", "--json", check=False), 1)
    assert bad["reason"] == "invalid_selector"


def test_a_cover_that_stays_put_is_reported_at_once(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/covered.html"))
    # The default timeout is 5 s; a banner that waits for a person is known to stay after half a second.
    covered = tp.run("click", "#buy", "--json", check=False)
    error = covered.json["error"]
    assert error["reason"] == "element_covered" and error["cover"]["role"] == "dialog"
    assert covered.seconds < 3, f"took {covered.seconds:.1f} s"
    assert 500 <= error["waited_ms"] < 2500
    assert tp.run("eval", "document.querySelector('#buy').textContent").out.strip() == '"Buy now"'


def test_a_cover_that_goes_away_lets_the_action_through(tp: Tabpilot, pages: PageServer) -> None:
    for kind in ("spinner", "toast", "script"):
        tp.run("open", pages.url(f"actions/covers.html?cover={kind}"))
        clicked = tp.run("click", "#go", check=False)
        assert clicked.code == 0, (kind, clicked.err)
        assert clicked.seconds > 1.0, kind  # it did wait for the cover to go
        assert tp.run("eval", "document.querySelector('#go').textContent").out.strip() == '"Went"', kind


def test_a_covered_element_names_the_banner_that_covers_it(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/covered.html"))
    covered = tp.run("click", "#buy", "--timeout", "1s", check=False)
    assert covered.code == 4
    assert 'button "Buy now" is covered by dialog "Cookie consent"' in covered.err
    assert "We use cookies to improve your experience." in covered.err
    assert covered.err.strip().splitlines()[-1].startswith("hint: ")
    assert page_value(tp, "document.getElementById('buy').textContent") == "Buy now"
    tp.run("click", "text=Accept all")
    tp.run("click", "#buy")
    assert page_value(tp, "document.getElementById('buy').textContent") == "Bought"
    assert trusted_events(tp, "click")[-1] == ["buy", True]


def test_a_ref_survives_a_snapshot_and_goes_stale_with_its_element(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/delayed.html?delay=0"))
    first = tp.run("snapshot", "-i").out
    ref = ref_of(first, '[button "Remove me"')
    assert ref_of(tp.run("snapshot", "-i").out, '[button "Remove me"') == ref
    assert tp.run("click", ref).out.strip() == f'clicked button "Remove me" {ref}'
    assert page_value(tp, "!!document.getElementById('remove-me')") is False
    stale = failed(tp.run("click", ref, "--json", check=False), 1)
    assert stale["reason"] == "ref_stale" and stale["hint"]
    assert tp.run("wait", "--gone", ref).code == 0
    never = tp.run("wait", "--selector", ref, "--json", check=False)
    assert failed(never, 1)["reason"] == "ref_stale" and never.seconds < 5


def test_click_options_reach_the_page(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/inputs.html"))
    tp.run("click", "#submit", "--double")
    tp.run("click", "#submit", "--button", "right")
    tp.run("click", "#text", "--modifiers", "Shift,Control")
    tp.run("click", "#submit", "--at", "2,2")
    clicks = page_value(
        tp,
        "__events.filter(e => ['click','dblclick','contextmenu'].includes(e.type) && e.trusted)"
        ".map(e => [e.type, e.target, e.button, e.detail, e.shift, e.ctrl])",
    )
    assert clicks == [
        ["click", "submit", 0, 1, False, False],
        ["click", "submit", 0, 2, False, False],
        ["dblclick", "submit", 0, 2, False, False],
        ["contextmenu", "submit", 2, 0, False, False],
        ["click", "text", 0, 1, True, True],
        ["click", "submit", 0, 1, False, False],
    ]
    held = page_value(tp, "__events.filter(e => e.type === 'keydown').map(e => e.key)")
    assert held == ["Shift", "Control"]


def test_hover_opens_a_menu_whose_item_is_then_clicked(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/hover.html"))
    hidden = failed(tp.run("click", "#laptops", "--timeout", "300ms", "--json", check=False), 4)
    assert hidden["reason"] == "element_not_visible"
    assert tp.run("hover", "#products").out.startswith('hovered li "Products')
    assert page_value(tp, "document.getElementById('hovered-state').textContent") == "hovered"
    # Hovering moves the pointer and nothing else: no button goes up or down, nothing is clicked.
    assert page_value(tp, "__events.filter(e => /mouse(up|down)|click/.test(e.type)).length") == 0
    tp.run("click", "text=Laptops")
    assert page_value(tp, "document.getElementById('picked').textContent") == "Laptops"


def test_drag_sorts_a_list_and_moves_a_box_and_a_slider(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/drag.html"))
    sorted_ = tp.run("drag", "#apple", "#cherry").out.strip()
    assert sorted_ == 'dragged li "Apple" to li "Cherry" (HTML5 drag and drop)'
    assert page_value(tp, "document.getElementById('order').textContent") == "banana,apple,cherry,date"
    assert page_value(
        tp, "__events.filter(e => e.type === 'drop').map(e => [e.target, e.data, e.trusted])"
    ) == [["cherry", "apple", True]]
    before = page_value(tp, "document.getElementById('box').getBoundingClientRect().x")
    moved = tp.run("drag", "#box", "text=Brightness", "--json").json
    assert moved["html5"] is False
    box = page_value(
        tp,
        "[document.getElementById('box').getBoundingClientRect().x, Number(document.getElementById('box-moves').textContent)]",
    )
    assert box[0] != before and box[1] >= 5, box
    tp.run("drag", "#thumb", "#brightness")
    assert 0 < int(page_value(tp, "document.getElementById('brightness').textContent")) <= 100


def test_scroll_the_page_an_element_and_an_infinite_feed(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/infinite.html"))
    down = tp.run("scroll", "--down", "300").out.strip()
    assert re.fullmatch(r"scrolled down 300 px \(now at 300 of \d+\)", down), down
    assert page_value(tp, "scrollY") == 300
    inner = tp.run("scroll", "#inner", "--down", "100").out.strip()
    assert inner == 'scrolled list "Inner list" down 100 px (now at 100 of 200)'
    assert page_value(tp, "document.getElementById('inner').scrollTop") == 100
    heights = []
    for _ in range(3):
        result = tp.run("scroll", "--to", "bottom", "--json").json
        heights.append(result["max_y"])
        tp.run("wait", "--text", f"Item {20 * (len(heights) + 1)}")
    assert heights[0] < heights[1] < heights[2]
    assert page_value(tp, "__batches()") >= 4
    assert page_value(tp, "__events.some(e => e.type === 'scroll')") is True
    assert tp.run("scroll", "--to", "top").out.startswith("scrolled to top (now at 0 of ")


def test_wait_for_elements_text_urls_and_load(tp: Tabpilot, pages: PageServer) -> None:
    # The button comes 2 s after load: long enough that a loaded machine still starts waiting before it.
    tp.run("open", pages.url("actions/delayed.html?delay=2000"))
    appeared = tp.run("wait", "--selector", "#late", "--json").json
    assert appeared["waited_ms"] >= 300 and appeared["target"]["label"] == 'button "Late button"'
    tp.run("open", pages.url("actions/delayed.html?delay=2000"))
    text = tp.run("wait", "--text", "late BUTTON").out.strip()
    assert re.fullmatch(r'waited [0-2]\.\d s for text "late BUTTON"', text), text
    tp.run("click", "#remove-me")
    assert re.match(r"waited \d+\.\d s for", tp.run("wait", "--gone", "#remove-me").out)
    assert "delayed.html" in tp.run("wait", "--url", "*/actions/*.html*").out
    assert tp.run("wait", "--load", "networkidle").code == 0
    timed_out = failed(
        tp.run("wait", "--text", "Never shown", "--timeout", "300ms", "--json", check=False), 4
    )
    assert timed_out["reason"] == "wait_timeout" and "nothing matches" in timed_out["message"]
    assert tp.run("wait", "200ms").out.strip() == "waited 0.2 s"


def test_actions_on_refs_inside_both_iframes(tp: Tabpilot, pages: PageServer, other_site: PageServer) -> None:
    tp.run("open", pages.url(f"frames.html?other={other_site.origin}"))
    snap = tp.run("snapshot", "-i").out
    for name in ("same", "cross"):
        field = ref_of(snap.split(f"Inside the {name} frame", 1)[1], '[textbox "Code"')
        assert tp.run("click", ref_of(snap, f'[button "Go {name}"')).out.startswith(
            f'clicked button "Go {name}"'
        )
        assert (
            tp.run("fill", field, f"{name} text").out.strip()
            == f'filled textbox "Code" {field} = "{name} text"'
        )
        tp.run("type", "!", "--ref", field)
    events = page_value(
        tp,
        "__frameEvents.filter(e => ['click', 'input'].includes(e.type)).map(e => [e.frame, e.type, e.target, e.trusted])",
    )
    for name in ("same", "cross"):
        assert [name, "click", "go", True] in events
        assert [name, "input", "code", True] in events
    assert (
        page_value(tp, "document.getElementById('same').contentDocument.getElementById('code').value")
        == "same text!"
    )
    # The cross-origin frame cannot be read from the page: its own report says what it got.
    assert tp.run("click", "text=Go cross").code == 0
    # fill types its text in one go (one input event), type "!" is one more key
    assert len([e for e in events if e[0] == "cross" and e[1] == "input"]) == 2


def test_actions_inside_shadow_dom(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("shadow.html"))
    snap = tp.run("snapshot", "-i").out
    tp.run("click", ref_of(snap, '[button "Follow Ada"'))
    tp.run("fill", ref_of(snap, '[textbox "Message"'), "hi Ada")
    tp.run("click", ref_of(snap, '[button "Badge of Grace"'))
    tp.run("click", "text=Follow Grace")
    state = page_value(
        tp,
        "[ada.getAttribute('followed'), grace.getAttribute('followed'), ada.shadowRoot.querySelector('.message').value]",
    )
    assert state == ["yes", "yes", "hi Ada"]
    assert tp.run("fill", "#grace .message", "piercing").code == 0
    assert page_value(tp, "grace.shadowRoot.querySelector('.message').value") == "piercing"
    assert all(trusted for _, trusted in trusted_events(tp, "click"))


def test_snapshot_and_diff_after_an_action(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("bench-form.html"))
    tp.run("snapshot")
    after = tp.run("click", "#count", "--snapshot").out
    first, rest = after.split("\n", 1)
    assert re.fullmatch(r'clicked button "Count" @e\d+', first), first
    assert "Clicks: 1" in rest
    diff = tp.run("click", "#count", "--diff").out
    assert diff.splitlines()[0] == first
    assert "+ Clicks: 2" in diff and "- Clicks: 1" in diff and "Used by the bench" not in diff
