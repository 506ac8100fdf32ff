"""What web apps do to a snapshot, end to end: each page in tests/pages/apps/ has what real single-page
apps have (an app shell, clickable groups, controls without semantic tags, names, closed shadow roots,
states), and each test reads it as an agent would (snapshot, then act by ref) and checks what the page
itself recorded."""

from __future__ import annotations

import json
import re

from harness import PageServer, Tabpilot


def ref_of(snapshot: str, bracket_start: str) -> str:
    """The ref of the first bracket that starts with `bracket_start`, e.g. '[button "Save"'."""
    match = re.search(re.escape(bracket_start) + r" (@e\d+)", snapshot)
    assert match, f"no {bracket_start} in:\n{snapshot}"
    return match.group(1)


def clicks(tp: Tabpilot) -> list[str]:
    """What the page's own listeners recorded."""
    return json.loads(tp.run("eval", "window.clicks").out)  # type: ignore[no-any-return]


def test_an_app_shell_with_a_zero_height_body_is_read_and_used(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/app-shell.html"))
    snapshot = tp.run("snapshot").out
    for line in ("# Inbox", "3 new messages", '[button "Compose"', '[button "Export"'):
        assert line in snapshot, snapshot
    # what its clipping boxes really hide stays out
    assert "Clipped away" not in snapshot and "Clipped text" not in snapshot
    assert "3 new messages" in tp.run("text").out
    tp.run("click", ref_of(snapshot, '[button "Export"'))
    tp.run("click", ref_of(snapshot, '[button "Compose"'))
    assert clicks(tp) == ["Export", "Compose"]


def test_each_item_of_a_clickable_group_has_its_own_ref(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/clickables.html"))
    snapshot = tp.run("snapshot").out
    # no container named after the items it holds
    assert "North South" not in snapshot and "Berlin Bern" not in snapshot and "ReplyDelete" not in snapshot
    for bracket in (
        '[clickable "South"',
        '[clickable "Bern"',
        '[clickable "Reply"',
        '[clickable "Delete"',
        '[clickable "Message from Ada"',
    ):
        tp.run("click", ref_of(snapshot, bracket))
    assert clicks(tp) == ["go South", "pick Bern", "reply", "delete", "open row"]


def test_links_and_widgets_without_semantic_tags_have_refs(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/no-semantic.html"))
    snapshot = tp.run("snapshot").out
    for bracket in (
        "[Second",  # an <a> without href, its click handler on the document
        '[clickable "green"',  # a chip in a group whose pointer cursor is inherited
        '[tab "Board"',
        '[option "Pear"',
        '[menuitem "Paste"',
        '[treeitem "util.py"',
        '[gridcell "2"',
    ):
        tp.run("click", ref_of(snapshot, bracket))
    assert clicks(tp) == [
        "page 2",
        "tag green",
        "tab Board",
        "option Pear",
        "menuitem Paste",
        "treeitem util.py",
        "gridcell 2",
    ]


def test_the_viewport_snapshot_knows_what_a_scrolling_box_hides(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/scroll-panel.html"))
    shown = tp.run("snapshot", "--viewport").out
    assert "Shown button" in shown and "After the panel." in shown, shown
    # below the panel's visible area, though the panel itself is on screen
    assert "Hidden button" not in shown and "Row 10" not in shown, shown
    tp.run("eval", "document.getElementById('panel').scrollTop = 200")
    scrolled = tp.run("snapshot", "--viewport").out
    assert "Shown button" not in scrolled and "Row 10" in scrolled, scrolled
    tp.run("click", ref_of(scrolled, '[button "Hidden button"'))
    assert clicks(tp) == ["Hidden button"]


def test_accessible_names_follow_accname(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/names.html"))
    snapshot = tp.run("snapshot").out
    for bracket in (
        '[button "Delete draft"',  # aria-labelledby, two ids
        '[button "Close panel"',  # aria-label over the text
        '[textbox "Email address"',  # <label for>
        '[button "Settings"',  # title
        '--- region "Latest news"',
        '--- feed "Updates"',
        '--- region "Statistics"',
    ):
        assert bracket in snapshot, snapshot
    # an avatar whose alt text is the name beside it is said once
    assert "[Ada Lovelace @e" in snapshot and 'img "Ada Lovelace"' not in snapshot
    card = ref_of(snapshot, "[Alpha Beta Gamma")
    assert tp.run("click", card).out.startswith(f'clicked link "Alpha Beta Gamma" {card}')
    assert clicks(tp) == ["card"]


def test_closed_shadow_roots_are_read_and_used(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/closed-shadow.html"))
    snapshot = tp.run("snapshot").out
    assert "Total: 12 EUR" in snapshot, snapshot
    assert tp.run("snapshot").out == snapshot, "the same elements keep their refs"
    tp.run("fill", ref_of(snapshot, '[textbox "Card number"'), "4242")
    tp.run("click", ref_of(snapshot, '[button "Pay now"'))
    # a closed root inside a closed root
    tp.run("click", ref_of(snapshot, '[button "Help"'))
    assert clicks(tp) == ["pay 4242", "help"]


def test_disabled_options_and_frames_that_could_not_load_are_marked(
    tp: Tabpilot, pages: PageServer, other_site: PageServer
) -> None:
    for frame in ("/no-framing", f"{other_site.origin}/no-framing"):
        tp.run("open", pages.url(f"apps/states.html?frame={frame}"))
        snapshot = tp.run("snapshot").out
        assert 'options="S|M|L|XL" disabled="M|XL"]' in snapshot, snapshot
        assert re.search(r'\[iframe "Partner" @e\d+ blocked\]', snapshot), snapshot
    # a frame that loads is read as before
    tp.run("open", pages.url("apps/states.html?frame=/apps/names.html"))
    assert '--- feed "Updates"' in tp.run("snapshot").out


def test_click_listeners_added_after_a_snapshot_are_read(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/late-listeners.html"))
    snapshot = tp.run("snapshot").out
    # listeners inside an open shadow root count too
    tp.run("click", ref_of(snapshot, '[clickable "Work"'))
    tp.run("click", ref_of(snapshot, '[button "Load more"'))
    # the rows that came after the first read have listeners of their own
    later = tp.run("snapshot").out
    tp.run("click", ref_of(later, '[clickable "Meeting notes"'))
    tp.run("click", ref_of(later, '[clickable "Welcome"'))
    assert clicks(tp) == ["chip Work", "open Meeting notes", "open Welcome"]


def test_labels_name_the_control_a_person_uses(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/labels.html"))
    snapshot = tp.run("snapshot").out
    # select2's way: the <select> the label is for is hidden, the combobox after it takes the label's
    # name, and the choice it shows (its aria-labelledby) is its value, not a control of its own
    author = ref_of(snapshot, '[combobox "Author:"')
    assert f'[combobox "Author:" {author} collapsed value="Octavia Butler"]' in snapshot, snapshot
    assert snapshot.count("Author:") == 1 and "readonly" not in snapshot, snapshot
    # a hidden select that nothing stands in for keeps its label as text
    assert "Shelf: top" in snapshot, snapshot
    # a label holding an image is named by its alt text, said once
    search = ref_of(snapshot, '[textbox "Search"')
    assert '[img "Search"]' not in snapshot, snapshot
    # label words the control also carries as its aria-label are not said twice
    assert snapshot.count("Team") == 1, snapshot
    tp.run("click", author)
    tp.run("fill", search, "Kindred")
    assert clicks(tp) == ["author", "search Kindred"]


def test_a_listener_around_content_is_no_target_of_its_own(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("apps/delegating.html"))
    snapshot = tp.run("snapshot").out
    # a framework's root and rendered Markdown listen for what they hold: they are no targets, and
    # their headings and prose read as such
    assert "[clickable" not in snapshot, snapshot
    for line in ("# Help desk", "## Release notes", "Version 2 is out.", "Welcome back."):
        assert line in snapshot.splitlines(), snapshot
    # a button whose image repeats its text is named once
    settings = ref_of(snapshot, '[button "Settings"')
    tp.run("click", ref_of(snapshot, '[button "Copy"'))
    tp.run("click", settings)
    assert clicks(tp) == ["copy", "settings"]
