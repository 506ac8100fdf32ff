"""Filling in pages, end to end: every input type, selects, checkboxes/radios/switches (native and
ARIA), contenteditable and a rich editor, typed keys and combos, and uploads — each checked against
what the page itself received."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from harness import PageServer, Result, Tabpilot


def page_value(tp: Tabpilot, expression: str) -> Any:
    return json.loads(tp.run("eval", expression).out)


def failed(result: Result, code: int) -> dict[str, Any]:
    assert result.code == code, (result.code, result.out, result.err)
    return json.loads(result.out)["error"]  # type: ignore[no-any-return]


TEXT_VALUES = {
    "text": "hello world",
    "email": "ada@example.com",
    "password": "s3cret!",
    "search": "tabpilot",
    "tel": "+44 20 7946 0000",
    "url": "https://example.com/x?y=1",
    "number": "42",
    "notes": "line one\nline two",
}
FORMAT_VALUES = {
    "date": "2024-02-29",
    "time": "13:45",
    "datetime": "2024-02-29T13:45",
    "month": "2024-02",
    "week": "2024-W09",
    "color": "#ff8800",
    "range": "30",
}


def test_fill_every_input_type(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/inputs.html"))
    for field, value in {**TEXT_VALUES, **FORMAT_VALUES}.items():
        result = tp.run("fill", f"#{field}", value, "--json").json
        assert result["value"] == value, field
    values = page_value(
        tp, "Object.fromEntries([...document.querySelectorAll('input, textarea')].map(e => [e.id, e.value]))"
    )
    for field, value in {**TEXT_VALUES, **FORMAT_VALUES}.items():
        assert values[field] == value, field
    # typed text arrives as a person's input (trusted insertText); fields with a format get input and change
    events = page_value(
        tp,
        "__events.filter(e => e.type === 'input' || e.type === 'change').map(e => [e.type, e.target, e.trusted, e.inputType || ''])",
    )
    assert ["input", "email", True, "insertText"] in events and ["change", "email", False, ""] in events
    assert ["input", "date", False, ""] in events and ["change", "date", False, ""] in events
    # a prefilled field is replaced, and "" empties it
    assert tp.run("fill", "text=Prefilled", "new").out.strip() == 'filled textbox "Prefilled" = "new"'
    tp.run("fill", "#notes", "")
    assert page_value(tp, "[prefilled.value, notes.value]") == ["new", ""]
    tp.run("click", "#submit")
    submitted = page_value(tp, "__events.find(e => e.type === 'submit').data")
    assert submitted["email"] == "ada@example.com" and submitted["prefilled"] == "new"


def test_fill_checks_what_the_field_holds(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/inputs.html"))
    cut = failed(tp.run("fill", "#short", "abcdefg", "--json", check=False), 1)
    assert (cut["reason"], cut["actual"]) == ("value_mismatch", "abcd")
    shouted = failed(tp.run("fill", "#upper", "quiet", "--json", check=False), 1)
    assert (shouted["reason"], shouted["actual"]) == ("value_mismatch", "QUIET")
    locked = failed(tp.run("fill", "#readonly", "x", "--timeout", "300ms", "--json", check=False), 4)
    assert locked["reason"] == "element_not_editable"
    box = failed(tp.run("fill", "#agree", "x", "--json", check=False), 1)
    assert box["reason"] == "element_not_editable" and "check" in box["hint"]
    off = failed(tp.run("fill", "#disabled", "x", "--timeout", "300ms", "--json", check=False), 4)
    assert off["reason"] == "element_disabled"
    assert page_value(tp, "[readonly.value, disabled.value]") == ["fixed", ""]


def test_fill_a_field_that_becomes_editable_later(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/delayed.html?delay=500"))
    assert (
        tp.run("fill", "[aria-label='Late field']", "finally").out.strip()
        == 'filled textbox "Late field" = "finally"'
    )
    assert page_value(tp, "document.getElementById('late-field').value") == "finally"


def test_select_by_value_or_label_single_and_multiple(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/select.html"))
    by_label = tp.run("select", "#size", "M").out.strip()
    assert by_label.startswith('selected "M" in combobox "Size') and by_label.endswith("(matched by label)")
    assert tp.run("select", "#size", "l", "--json").json["selected"] == [
        {"value": "l", "label": "Large", "matched_by": "value"}
    ]
    assert page_value(tp, "size.value") == "l"
    tp.run("select", "#colors", "Red", "blue")
    assert page_value(tp, "[...colors.selectedOptions].map(o => o.value)") == ["red", "blue"]
    assert page_value(tp, "document.getElementById('status').textContent") == "colors: red,blue"
    assert page_value(tp, "__events.filter(e => e.type === 'change').map(e => e.target)") == [
        "size",
        "size",
        "colors",
    ]
    sold_out = failed(tp.run("select", "#size", "xl", "--json", check=False), 1)
    assert sold_out["reason"] == "option_disabled" and "Extra large" in sold_out["message"]
    unknown = failed(tp.run("select", "#size", "Huge", "--json", check=False), 1)
    assert unknown["reason"] == "option_not_found" and '"Small" (s)' in unknown["hint"]
    several = failed(tp.run("select", "#size", "s", "m", "--json", check=False), 1)
    assert several["reason"] == "option_not_found"
    not_select = failed(tp.run("select", "h1", "x", "--json", check=False), 1)
    assert not_select["reason"] == "target_not_select"
    assert page_value(tp, "size.value") == "l"


def test_check_and_uncheck_native_and_aria_controls(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/checks.html"))
    assert tp.run("check", "#news").out.strip() == 'checked checkbox "Subscribe to the newsletter"'
    assert (
        tp.run("check", "#news").out.strip() == 'checkbox "Subscribe to the newsletter" was already checked'
    )
    tp.run("uncheck", "#terms")
    tp.run("check", "text=Wi-Fi")
    tp.run("check", "#courier")
    tp.run("check", "text=Styled checkbox")
    assert tp.run("check", "#aria-check").out.strip() == 'checked checkbox "Remember me"'
    assert tp.run("uncheck", "#aria-switch").out.strip() == 'unchecked switch "Dark mode"'
    tp.run("check", "text=Pro")
    state = page_value(
        tp,
        "[news.checked, terms.checked, wifi.checked, courier.checked, post.checked, fancy.checked]"
        ".concat(['aria-check', 'aria-switch', 'plan-pro', 'plan-free'].map(id => document.getElementById(id).getAttribute('aria-checked')))",
    )
    assert state == [True, False, True, True, False, True, "true", "false", "true", "false"]
    radio = failed(tp.run("uncheck", "#courier", "--json", check=False), 1)
    assert radio["reason"] == "element_not_checkable"
    heading = failed(tp.run("check", "h1", "--json", check=False), 1)
    assert heading["reason"] == "element_not_checkable"
    locked = failed(tp.run("check", "#locked", "--timeout", "300ms", "--json", check=False), 4)
    assert locked["reason"] == "element_disabled"
    assert all(
        trusted for trusted in page_value(tp, "__events.filter(e => e.type === 'click').map(e => e.trusted)")
    )


def test_contenteditable_and_a_rich_editor(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/editors.html"))
    assert tp.run("fill", "#plain", "plain words").out.strip() == 'filled textbox "Comment" = "plain words"'
    assert page_value(tp, "document.getElementById('plain').innerText") == "plain words"
    # The rich editor keeps its own model from beforeinput: the fill must go through it.
    tp.run("fill", "[aria-label=Story]", "hello rich")
    tp.run("type", " world", "--ref", "#rich")
    tp.run("press", "Enter")
    tp.run("type", "second line")
    assert page_value(tp, "editorModel()") == "hello rich world\nsecond line"
    tp.run("press", "Backspace", "Backspace")
    assert page_value(tp, "editorModel()") == "hello rich world\nsecond li"
    tp.run("fill", "#rich", "")
    assert page_value(tp, "editorModel()") == ""


def test_type_and_press_send_real_key_events(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/inputs.html"))
    typed = tp.run("type", "Hé 😀!", "--ref", "#text").out.strip()
    assert typed == 'typed "Hé 😀!" into textbox "Text"'
    assert page_value(tp, "text.value") == "Hé 😀!"
    keys = page_value(
        tp, "__events.filter(e => e.type === 'keydown').map(e => [e.key, e.code, e.shift, e.trusted])"
    )
    assert keys == [
        ["H", "KeyH", True, True],
        ["é", "", False, True],
        [" ", "Space", False, True],
        ["😀", "", False, True],
        ["!", "Digit1", True, True],
    ]
    tp.run("press", "control+a", "--ref", "#text")
    tp.run("press", "BACKSPACE")
    assert page_value(tp, "text.value") == ""
    tp.run("type", "abc", "--delay", "30")
    tp.run("press", "ArrowLeft", "shift+Home")
    tp.run("press", "Delete")
    assert page_value(tp, "text.value") == "c"
    tp.run("press", "Tab")
    assert page_value(tp, "document.activeElement.id") == "email"
    tp.run("press", "Shift+Tab")
    assert page_value(tp, "document.activeElement.id") == "text"
    assert tp.run("press", "Esc", "PgDn").out.strip() == "pressed Escape, PageDown"
    unknown = failed(tp.run("press", "Entr", "--json", check=False), 1)
    assert unknown["reason"] == "unknown_key" and unknown["hint"]
    # typing Enter in a form submits it, as a person's Enter would
    tp.run("press", "Enter", "--ref", "#email")
    assert page_value(tp, "__events.filter(e => e.type === 'submit').length") == 1


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 40)
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + hashlib.sha256(b"pixels").digest() * 100)
    return {"report": report, "photo": photo}


def received(tp: Tabpilot, where: str) -> list[dict[str, Any]]:
    return page_value(tp, f"__files[{json.dumps(where)}] || null")  # type: ignore[no-any-return]


def checksum(data: bytes) -> int:
    """The page's own running sum of the bytes it read back from the File (see upload.html)."""
    total = 0
    for b in data:
        total = (total * 31 + b) & 0xFFFFFFFF
    return total


def test_upload_to_inputs_hidden_inputs_and_a_drop_zone(
    tp: Tabpilot, pages: PageServer, files: dict[str, Path]
) -> None:
    report, photo = files["report"], files["photo"]
    tp.run("open", pages.url("actions/upload.html"))
    line = tp.run("upload", "#visible", str(report)).out.strip()
    assert line == 'uploaded 1 file to file "Report" (report.pdf 10 kB)'
    [got] = received(tp, "visible")
    data = report.read_bytes()
    assert (got["name"], got["size"], got["type"]) == ("report.pdf", len(data), "application/pdf")
    assert got["head"] == data[:16].hex() and got["sum"] == checksum(data)
    tp.run("upload", "text=Photos", str(report), str(photo))
    assert [f["name"] for f in received(tp, "multi")] == ["report.pdf", "photo.png"]
    assert received(tp, "multi")[1]["sum"] == checksum(photo.read_bytes())
    via_button = tp.run("upload", "text=Choose a file…", str(photo), "--json").json
    assert via_button["via"] == "chooser"
    assert received(tp, "hidden")[0]["sum"] == checksum(photo.read_bytes())
    dropped = tp.run("upload", "text=Drop files here", str(photo), str(report), "--json").json
    assert dropped["via"] == "drop"
    assert [(f["name"], f["how"]) for f in received(tp, "drop")] == [
        ("photo.png", "drop"),
        ("report.pdf", "drop"),
    ]
    assert page_value(tp, "__events.filter(e => e.type === 'file-input').map(e => e.target)") == [
        "visible",
        "multi",
        "hidden",
    ]


def test_upload_refuses_bad_files_before_the_page_sees_anything(
    tp: Tabpilot, pages: PageServer, files: dict[str, Path], tmp_path: Path
) -> None:
    tp.run("open", pages.url("actions/upload.html"))
    missing = failed(tp.run("upload", "#visible", str(tmp_path / "nope.txt"), "--json", check=False), 1)
    assert missing["reason"] == "file_not_found" and missing["hint"]
    folder = failed(tp.run("upload", "#visible", str(tmp_path), "--json", check=False), 1)
    assert folder["reason"] == "file_unreadable"
    several = failed(
        tp.run("upload", "#visible", str(files["report"]), str(files["photo"]), "--json", check=False), 1
    )
    assert several["reason"] == "too_many_files" and "one file" in several["message"]
    nothing = failed(
        tp.run("upload", "h1", str(files["report"]), "--timeout", "3s", "--json", check=False), 1
    )
    assert nothing["reason"] == "not_a_file_input"
    assert page_value(tp, "Object.keys(__files)") == []
