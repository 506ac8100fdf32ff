"""Elements scrolled out of sight inside their own boxes (a message list, a box in a box, a sideways
toolbar, a list in an iframe, same-site and cross-site), while the boxes themselves are on screen: actions
scroll every box (and frame) around the element until its point is really visible, and `scroll T` moves
the box around T — each checked against what the page recorded."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from harness import PageServer, Tabpilot


def page_value(tp: Tabpilot, expression: str, *args: str) -> Any:
    return json.loads(tp.run("eval", expression, *args).out)


def ref_named(snapshot: str, role: str, name: str) -> str:
    """The ref of the line `[role "name" … @eN]`, found by role and accessible name as an agent would."""
    match = re.search(r"\[" + re.escape(role) + r' "' + re.escape(name) + r'"[^\]]*? (@e\d+)', snapshot)
    assert match, f'no {role} "{name}" in:\n{snapshot}'
    return match.group(1)


def clicks(tp: Tabpilot) -> list[Any]:
    return page_value(tp, "__clicks")


@pytest.fixture
def boxes(tp: Tabpilot, pages: PageServer) -> str:
    tp.run("open", pages.url("apps/scroll-boxes.html"))
    tp.run("wait", "--text", "Framed 15")
    return tp.run("snapshot").out


def test_a_click_scrolls_the_box_that_hides_the_element(tp: Tabpilot, boxes: str) -> None:
    assert page_value(tp, "document.getElementById('mail').scrollTop") == 0
    tp.run("click", ref_named(boxes, "button", "Message 12"))
    assert clicks(tp) == [["Message-12", True]]
    assert page_value(tp, "document.getElementById('mail').scrollTop") > 0
    # The page itself had no reason to move.
    assert page_value(tp, "scrollY") == 0


def test_a_click_scrolls_a_box_inside_a_box(tp: Tabpilot, boxes: str) -> None:
    tp.run("click", ref_named(boxes, "button", "Nested 7"))
    assert clicks(tp) == [["Nested-7", True]]
    scrolled = page_value(tp, "[outer.scrollTop > 0, inner.scrollTop > 0]")
    assert scrolled == [True, True]


def test_a_click_scrolls_a_box_sideways(tp: Tabpilot, boxes: str) -> None:
    tp.run("click", ref_named(boxes, "button", "Tool 11"))
    assert clicks(tp) == [["Tool-11", True]]
    assert page_value(tp, "document.getElementById('wide').scrollLeft") > 0


def test_a_click_scrolls_a_box_inside_a_frame(tp: Tabpilot, boxes: str) -> None:
    tp.run("click", ref_named(boxes, "button", "Framed 4"))
    assert clicks(tp) == [["framed-4", True]]


def test_a_click_scrolls_a_box_inside_a_cross_site_frame(
    tp: Tabpilot, pages: PageServer, other_site: PageServer
) -> None:
    tp.run("open", pages.url("apps/scroll-boxes.html?frame=" + other_site.url("apps/scroll-frame.html")))
    tp.run("wait", "--text", "Framed 15")
    snapshot = tp.run("snapshot").out
    tp.run("click", ref_named(snapshot, "button", "Framed 4"))
    assert clicks(tp) == [["framed-4", True]]


def test_hover_reaches_into_boxes_too(tp: Tabpilot, boxes: str) -> None:
    tp.run("hover", ref_named(boxes, "button", "Message 8"))
    hovered = page_value(tp, "document.querySelector('#mail button:hover')?.id ?? null")
    assert hovered == "Message-8"


def test_scroll_a_target_moves_its_box_and_chains_to_the_outer_one(tp: Tabpilot, boxes: str) -> None:
    first = ref_named(boxes, "button", "Nested 1")
    down = tp.run("scroll", first, "--down", "120").out.strip()
    assert re.fullmatch(r'scrolled button "Nested 1" @e\d+ down 120 px \(now at 120 of \d+\)', down), down
    assert page_value(tp, "inner.scrollTop") == 120
    tp.run("scroll", first, "--to", "bottom")
    at_end = page_value(tp, "[inner.scrollTop, inner.scrollHeight - inner.clientHeight]")
    assert at_end[0] == at_end[1]
    # The inner box is at its end: the wheel goes on to the box around it, as it would for a person.
    chained = tp.run("scroll", ref_named(boxes, "button", "Nested 20"), "--down", "50", "--json").json
    assert chained["moved"] == 50 and chained["page"] is False
    assert page_value(tp, "[outer.scrollTop, inner.scrollTop]") == [chained["y"], at_end[1]]
    sideways = tp.run("scroll", ref_named(boxes, "button", "Tool 3"), "--right", "100", "--json").json
    assert sideways["x"] == 100 and page_value(tp, "wide.scrollLeft") == 100
