"""What the agent is told is what happened, end to end: a click is reported only where its press
really landed, and what a person sees on a page reaches the agent, each checked against what the page
or its server recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness import PageServer, Tabpilot


def page_value(tp: Tabpilot, expression: str) -> Any:
    return json.loads(tp.run("eval", expression).out)


def ref_of(snapshot: str, bracket_start: str) -> str:
    match = re.search(re.escape(bracket_start) + r"[^\]]*? (@e\d+)", snapshot)
    assert match, f"no {bracket_start} in:\n{snapshot}"
    return match.group(1)


def test_a_click_whose_target_moves_under_the_pointer_lands_on_it(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("truth/shifting-tree.html"))
    projects = ref_of(tp.run("snapshot").out, '[treeitem "Projects"')
    # The open menu pushes the tree down; the pointer leaving it for the tree closes it again.
    tp.run("hover", "#menu")
    assert page_value(tp, "document.getElementById('menu').className") == "open"
    line = tp.run("click", projects).out.strip()
    assert line.startswith('clicked treeitem "Projects"'), line
    assert page_value(tp, "__clicks") == ["projects"]


def test_a_press_that_keeps_landing_elsewhere_is_no_click(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("truth/shifting-tree.html"))
    result = tp.run("click", "#dodge", "--timeout", "1.5s", "--json", check=False)
    assert result.code != 0, result.out
    error = json.loads(result.out)["error"]
    assert error["reason"] == "element_not_ready" and "press would land on" in error["message"], error
    # The missed presses never reached the page: nothing there was clicked.
    assert page_value(tp, "__clicks") == []


def test_a_control_has_one_name_in_the_snapshot_its_outcomes_and_its_errors(
    tp: Tabpilot, pages: PageServer
) -> None:
    tp.run("open", pages.url("truth/names.html"))
    snapshot = tp.run("snapshot").out
    status = ref_of(snapshot, '[combobox "Status"')
    # The card's logo says what its text says: its name does not say it twice.
    python = ref_of(snapshot, '[clickable "Python 3"')
    assert "Python 3 Python 3" not in snapshot, snapshot
    selected = tp.run("select", status, "Shipped").out
    assert 'combobox "Status"' in selected and "Open orders" not in selected, selected
    refused = tp.run("fill", status, "x", "--json", check=False)
    assert 'combobox "Status"' in json.loads(refused.out)["error"]["message"], refused.out
    clicked = tp.run("click", python).out
    assert 'clickable "Python 3"' in clicked and "Python 3 Python 3" not in clicked, clicked
    assert page_value(tp, "__log") == ["status=Shipped", "python"]


def test_closed_shadow_roots_on_plain_elements_are_read_and_acted_on(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("truth/closed-hosts.html"))
    snapshot = tp.run("snapshot").out
    for label in ("Div button", "Section button", "Span button"):
        tp.run("click", ref_of(snapshot, f'[button "{label}"'))
    assert page_value(tp, "__clicks") == ["Div button", "Section button", "Span button"]
    assert tp.run("find", "Span button").out.count("@e") >= 1


def test_every_frame_that_could_not_load_is_marked_blocked(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", "about:blank")
    # An aborted navigation leaves the frame on its empty about:blank, with no error page.
    tp.run("network", "route", "partner-ad", "--abort")
    try:
        tp.run("open", pages.url("truth/frames-down.html"))
        snapshot = tp.run("snapshot").out
    finally:
        tp.run("network", "unroute")
    for title in ("Refused", "Forbidden by policy", "No framing", "Aborted"):
        assert re.search(rf'\[iframe "{title}" @e\d+ blocked\]', snapshot), snapshot
    assert '--- iframe "Aborted"' not in snapshot, snapshot
    # a frame that loads is read as before, even an error page the server sent
    assert "Inline partner" in snapshot and "Error code: 404" in snapshot, snapshot


def test_a_wrapper_around_one_control_is_that_control_once(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("truth/wrapped-controls.html"))
    snapshot = tp.run("snapshot").out
    assert "[clickable" not in snapshot, snapshot
    assert snapshot.count("Save") == 1 and snapshot.count("Publish") == 1, snapshot
    tp.run("click", ref_of(snapshot, '[button "Save"'))
    tp.run("click", ref_of(snapshot, "[Help"))
    assert page_value(tp, "__log") == ["save", "help"]


def test_every_download_is_reported_and_listed_as_one(tp: Tabpilot, pages: PageServer) -> None:
    folder = Path(tp.home, "downloads", "default")
    tp.run("open", pages.url("truth/downloads.html"))
    # Clicked again and again: every file that arrives was reported, and only those. (Chromium starts
    # at most 10 downloads a second from a frame: an 11th click within the second saves nothing, and
    # is reported so.)
    reported = sum("→ downloaded notes" in tp.run("click", "#notes").out for _ in range(12))
    assert reported >= 9 and len(list(folder.glob("notes*.txt"))) == reported, reported
    late = tp.run("click", "#late", "--json").json
    assert late["download"]["name"] == "late.html" and (folder / "late.html").exists(), late
    # A page that takes the click for itself downloads nothing, and says so soon.
    handled = tp.run("click", "#handled", "--json")
    assert "download" not in handled.json and handled.seconds < 3, handled.out
    tp.run("click", "#attachment")
    listed = tp.run("network", "requests").out
    invoice = next(line for line in listed.splitlines() if "invoice.txt" in line)
    assert "failed" not in invoice and " download " in invoice, listed


def test_an_icon_only_control_says_which_icon(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("truth/icons.html"))
    snapshot = tp.run("snapshot").out
    for icon in ("play", "save", "plus", "trash-2"):
        assert re.search(rf"\[button @e\d+ icon={icon}\]", snapshot), snapshot
    # a named control is named, whatever its icon
    assert '[button "Shuffle" @e' in snapshot and "icon=shuffle" not in snapshot, snapshot
    save = re.search(r"\[button (@e\d+) icon=save\]", snapshot)
    assert save
    assert "button icon=save" in tp.run("click", save.group(1)).out
    assert page_value(tp, "__log") == ["save"]


def test_inside_inline_svg_charts_are_read_and_a_node_editor_is_worked(
    tp: Tabpilot, pages: PageServer
) -> None:
    tp.run("open", pages.url("truth/drawings.html"))
    snapshot = tp.run("snapshot").out
    # a chart's title, values, ticks and legend are words; its link is a link
    assert "Quarterly sales 2024 120 80 Q1 Q2 Revenue [Details @e" in snapshot, snapshot
    assert "Revenue" in tp.run("text").out and "Q2" in tp.run("find", "Q2").out
    tp.run("click", ref_of(snapshot, '[clickable "Load CSV"'))
    assert page_value(tp, "__editor.selected") == "load"
    assert "Plot" in tp.run("click", "text=Plot").out
    assert page_value(tp, "__editor.selected") == "plot"
    out, into = ref_of(snapshot, '[clickable "Load CSV output"'), ref_of(snapshot, '[clickable "Plot input"')
    dragged = tp.run("drag", out, into).out
    assert '"Load CSV output"' in dragged and '"Plot input"' in dragged, dragged
    assert page_value(tp, "__editor.edges") == [["load", "plot"]]
