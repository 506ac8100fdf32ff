"""Action cues (issue 26), end to end: before an action fires the person sees a ring around its element
in whichever frame it is, or a frame around the page for a navigation, drawn as one host in the page's
top layer. What the page itself saw is the evidence (tests/pages/cues.html records each host added to its
document and, at each event an action fires, whether the host was there). The cue is not what the agent
reads or what a screenshot shows, never appears on a blocked site, and the options page turns it off."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import PageServer, Tabpilot, wait_until
from test_consent import block, chrome, extension_page
from test_person import Person, person_at, png_pixel

RING = (37, 135)
"""A pixel of the ring drawn around #go (at 40,120 in the page): 4 px out, 3 px wide."""


KEEP_THE_CUE = """window.__keeper = new MutationObserver((records) => {
  for (const r of records) for (const n of r.removedNodes) {
    if (n.nodeType === 1 && n.hasAttribute("data-tabpilot-cue")) { document.documentElement.append(n); n.showPopover(); }
  }
}); __keeper.observe(document.documentElement, { childList: true })"""


def cue_nodes(person: Person) -> list[dict[str, Any]]:
    """The nodes of the cue host's closed shadow root, as the debugging protocol sees them."""
    stack = [person.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]]
    host = None
    while stack and host is None:
        node = stack.pop()
        if "data-tabpilot-cue" in node.get("attributes", [])[::2]:
            host = node
        stack += node.get("children", []) + node.get("shadowRoots", [])
    assert host is not None, "no cue host in the page"
    out, stack = [], list(host.get("shadowRoots", []))
    while stack:
        node = stack.pop()
        out.append(node)
        stack += node.get("children", [])
    return out


def find_in_the_cue(person: Person, css_class: str) -> dict[str, Any]:
    for node in cue_nodes(person):
        attrs = dict(zip(node.get("attributes", [])[::2], node.get("attributes", [])[1::2], strict=True))
        if css_class in attrs.get("class", "").split():
            return node
    raise AssertionError(f"no .{css_class} in the cue")


def inside_the_cue(person: Person) -> dict[str, list[str]]:
    """Each class drawn in the cue, with the text inside it, and the outcome it settled on."""
    drawn: dict[str, list[str]] = {}
    for node in cue_nodes(person):
        attrs = dict(zip(node.get("attributes", [])[::2], node.get("attributes", [])[1::2], strict=True))
        text = "".join(c.get("nodeValue", "") for c in node.get("children", []) if c.get("nodeType") == 3)
        for cls in attrs.get("class", "").split():
            drawn.setdefault(cls, []).append(text)
        if "data-outcome" in attrs:
            drawn.setdefault("outcome", []).append(attrs["data-outcome"])
    return drawn


def page_value(tp: Tabpilot, expression: str) -> Any:
    return json.loads(tp.run("eval", expression).out)


def fresh(tp: Tabpilot, url: str) -> None:
    tp.run("open", url)
    tp.run("eval", "localStorage.removeItem('cueHosts'), __cueHosts.length = 0, __acts.length = 0")


def switch_cues(browser_ui: Person, on: bool) -> None:
    """The person ticks or unticks the box on the options page."""
    browser_ui.eval(
        f"(() => {{ const box = document.querySelector('#cues-on'); if (box.checked !== {json.dumps(on)}) box.click(); }})()"
    )
    wait_until(lambda: chrome(browser_ui, "chrome.storage.local.get('tp_cues')").get("tp_cues", True) is on)


@pytest.fixture(scope="module")
def browser_ui(tp: Tabpilot) -> Iterator[Person]:
    """The options page, in a window of the person's own (not the session's tab)."""
    with extension_page(tp, "options/options.html", new_window=True) as page:
        yield page


@pytest.fixture()
def cues_on(browser_ui: Person) -> Iterator[None]:
    yield
    switch_cues(browser_ui, True)
    block(browser_ui)


def test_the_cue_is_in_the_page_before_the_click_and_is_no_part_of_what_the_agent_reads(
    tp: Tabpilot, pages: PageServer
) -> None:
    url = pages.url("cues.html")
    fresh(tp, url)
    # The page fights back: it keeps the cue (caption and all) after tabpilot takes it away.
    tp.run("eval", KEEP_THE_CUE)
    assert tp.run("click", "#go", "--at", "5,5").code == 0
    hosts = page_value(tp, "__cueHosts")
    click = next(a for a in page_value(tp, "__acts") if a["type"] == "click")
    assert len(hosts) == 1 and hosts[0]["at"] < click["at"], (hosts, click)
    # One element on documentElement, its inside closed, out of focus and input, in the top layer while the
    # click lands; its caption is not in the page's text.
    assert hosts[0] == {**hosts[0], "parent": True, "closed": True, "inert": True, "tabindex": None}
    assert click == {**click, "target": "go", "cue": True, "open": True, "focused": False, "inText": False}
    assert (
        page_value(tp, "getComputedStyle(document.querySelector('[data-tabpilot-cue]')).pointerEvents")
        == "none"
    )
    wait_until(lambda: len(page_value(tp, "__cueHosts")) == 2)
    # What the person saw (through the closed shadow root, as the debugging protocol sees it): a ring, a
    # dot at the point clicked, the verb and the element's name, settled as done.
    with person_at(tp, url) as person:
        drawn = inside_the_cue(person)
    assert drawn["caption"] == ['click button "Go"'] and "ring" in drawn and "dot" in drawn, drawn
    assert drawn["outcome"] == ["ok"], drawn
    for verb in ("snapshot", "text"):
        assert "click" not in tp.run(verb).out, verb
    assert tp.run("find", "text=click").out.startswith("0 matches"), "find"
    tp.run("eval", "__keeper.disconnect(), document.querySelector('[data-tabpilot-cue]')?.remove()")
    fill = tp.run("fill", "#field", "hello")
    assert fill.code == 0
    typed = next(a for a in page_value(tp, "__acts") if a["type"] == "input")
    assert typed["cue"] and typed["open"] and not typed["focused"], typed


def test_a_scroll_frames_the_page_before_it_moves(tp: Tabpilot, pages: PageServer) -> None:
    url = pages.url("cues.html")
    fresh(tp, url)
    tp.run("eval", KEEP_THE_CUE)
    assert tp.run("scroll", "--down", "400").code == 0
    scrolled = wait_until(lambda: next((a for a in page_value(tp, "__acts") if a["type"] == "scroll"), None))
    assert scrolled["cue"] and scrolled["open"], scrolled
    with person_at(tp, url) as person:
        drawn = inside_the_cue(person)
    assert "edge" in drawn and drawn["caption"] == ["scroll down"] and drawn["outcome"] == ["ok"], drawn
    tp.run("eval", "__keeper.disconnect(), document.querySelector('[data-tabpilot-cue]')?.remove()")


def test_the_ring_is_drawn_under_a_policy_that_allows_no_style(tp: Tabpilot, pages: PageServer) -> None:
    url = pages.url("cues-strict.html")
    tp.run("open", url)
    tp.run("eval", KEEP_THE_CUE)
    assert tp.run("click", "#go").code == 0
    with person_at(tp, url) as person:
        ring = find_in_the_cue(person, "ring")
        obj = person.send("DOM.resolveNode", {"backendNodeId": ring["backendNodeId"]})["object"]["objectId"]
        style = person.send(
            "Runtime.callFunctionOn",
            {
                "objectId": obj,
                "functionDeclaration": "function () { const s = getComputedStyle(this); return [s.position, s.borderTopWidth]; }",
                "returnByValue": True,
            },
        )["result"]["value"]
    assert style == ["fixed", "3px"], style


def test_a_screenshot_shows_the_page_not_the_cue(tp: Tabpilot, pages: PageServer, tmp_path: Path) -> None:
    fresh(tp, pages.url("cues.html"))
    before = tmp_path / "before.png"
    tp.run("screenshot", "--out", str(before))
    assert tp.run("click", "#go").code == 0
    after = tmp_path / "after.png"
    tp.run("screenshot", "--out", str(after))
    # The click's ring stays up a while after it (green): the capture taken meanwhile has the page's pixels.
    assert png_pixel(after, *RING) == png_pixel(before, *RING) == (250, 250, 250)


def test_the_cue_is_drawn_in_the_cross_origin_frame_of_its_target(
    tp: Tabpilot, pages: PageServer, other_site: PageServer
) -> None:
    fresh(tp, pages.url(f"cues.html?other={other_site.origin}"))
    wait_until(lambda: "Cues in a frame" in tp.run("snapshot").out)
    snap = tp.run("snapshot", "-i").out
    inner = snap.split("Cues in a frame", 1)[1]
    ref = re.search(r'\[button "Go"[^\]]*? (@e\d+)', inner)
    assert ref, snap
    assert tp.run("click", ref.group(1)).code == 0
    frame_click = wait_until(
        lambda: next((a for a in page_value(tp, "__frameActs") if a["type"] == "click"), None)
    )
    assert frame_click["cue"] and frame_click["open"] and not frame_click["inText"], frame_click
    # The top document got no cue: the ring is where the element is.
    assert page_value(tp, "__cueHosts") == []


def test_a_navigation_frames_the_page_but_never_a_blocked_one(
    tp: Tabpilot, pages: PageServer, other_site: PageServer, browser_ui: Person, cues_on: None
) -> None:
    top = pages.url(f"cues.html?other={other_site.origin}")
    fresh(tp, top)
    tp.run("open", pages.url("second.html"))
    tp.run("open", top)
    assert [h["page"] for h in page_value(tp, "JSON.parse(localStorage.getItem('cueHosts') || '[]')")] == [
        "/cues.html"
    ]
    # Its frame on a blocked site: the click is refused, the way out is not, and neither draws a cue.
    fresh(tp, top)
    block(browser_ui, other_site.origin.removeprefix("http://"))
    assert tp.run("click", "#go", check=False).code == 1
    tp.run("open", pages.url("second.html"))
    block(browser_ui)
    tp.run("open", top)
    assert page_value(tp, "JSON.parse(localStorage.getItem('cueHosts') || '[]')") == []


def test_the_options_switch_turns_cues_off(
    tp: Tabpilot, pages: PageServer, browser_ui: Person, cues_on: None
) -> None:
    switch_cues(browser_ui, False)
    fresh(tp, pages.url("cues.html"))
    assert tp.run("click", "#go").code == 0
    assert page_value(tp, "__cueHosts") == []
    assert next(a for a in page_value(tp, "__acts") if a["type"] == "click")["cue"] is False
    switch_cues(browser_ui, True)
    assert tp.run("click", "#go").code == 0
    assert len(page_value(tp, "__cueHosts")) == 1
