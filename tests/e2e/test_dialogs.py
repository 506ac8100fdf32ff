"""JavaScript dialogs, end to end: alerts accepted and reported, confirm/prompt/beforeunload left open
and answered through `tabpilot dialog`, other commands refused while one is open, and dismissal when
the session ends — checked against the answers the page itself recorded."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from harness import PageServer, Result, Tabpilot, wait_until


def page_value(tp: Tabpilot, expression: str, *args: str) -> Any:
    return json.loads(tp.run("eval", expression, *args).out)


def failed(result: Result, code: int) -> dict[str, Any]:
    assert result.code == code, (result.code, result.out, result.err)
    return json.loads(result.out)["error"]  # type: ignore[no-any-return]


def test_alert_is_accepted_and_reported(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/dialogs.html"))
    line = tp.run("click", "#alert").out.strip()
    assert line == 'clicked button "Say hello" → alert "Hello there" (accepted)'
    assert page_value(tp, "__answers") == [["alert", "closed"]]


def test_confirm_stays_open_blocks_other_commands_and_is_answered(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/dialogs.html"))
    line = tp.run("click", "#confirm").out.strip()
    assert (
        line
        == 'clicked button "Delete files" → dialog: confirm "Delete 3 files?" — tabpilot dialog accept|dismiss'
    )
    for command in (["eval", "1"], ["click", "#alert"], ["snapshot"], ["open", pages.url("index.html")]):
        blocked = tp.run(*command, "--json", check=False)
        error = failed(blocked, 1)
        assert error["reason"] == "dialog_open" and "tabpilot dialog accept" in error["hint"], command
        assert blocked.seconds < 5
    assert (
        tp.run("dialog").out.strip() == 'dialog: confirm "Delete 3 files?" — tabpilot dialog accept|dismiss'
    )
    assert tp.run("tab", "list").code == 0
    assert tp.run("dialog", "dismiss").out.strip() == 'dismissed confirm "Delete 3 files?"'
    assert page_value(tp, "__answers") == [["confirm", False]]
    tp.run("click", "#confirm")
    tp.run("dialog", "accept")
    assert page_value(tp, "__answers.at(-1)") == ["confirm", True]
    assert tp.run("dialog").out.strip() == "no dialog is open"
    none = failed(tp.run("dialog", "accept", "--json", check=False), 1)
    assert none["reason"] == "no_dialog"


def test_prompt_is_answered_with_text(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/dialogs.html"))
    opened = tp.run("click", "#prompt", "--json").json
    assert opened["dialog"] == {
        "type": "prompt",
        "message": "New name?",
        "default_prompt": "draft.txt",
        "handled": "open",
    }
    answered = tp.run("dialog", "accept", "--text", "final.txt").out.strip()
    assert answered == 'accepted prompt "New name?" with "final.txt"'
    assert page_value(tp, "__answers") == [["prompt", "final.txt"]]
    tp.run("click", "#prompt")
    tp.run("dialog", "dismiss")
    assert page_value(tp, "__answers.at(-1)") == ["prompt", None]


def test_an_answer_that_leads_away_reports_the_navigation(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/dialogs.html"))
    tp.run("click", "#confirm-go")
    line = tp.run("dialog", "accept").out.strip()
    assert (
        line
        == f'accepted confirm "Delete and go to the second page?" → navigated to {pages.url("second.html")} (200)'
    )
    assert page_value(tp, "location.pathname") == "/second.html"


def test_beforeunload_asks_when_a_click_leaves_but_not_when_the_agent_navigates(
    tp: Tabpilot, pages: PageServer
) -> None:
    tp.run("open", pages.url("actions/dialogs.html"))
    tp.run("check", "#dirty")
    asked = tp.run("click", "#leave").out.strip()
    assert asked == 'clicked link "Leave this page" → dialog: beforeunload — tabpilot dialog accept|dismiss'
    tp.run("dialog", "dismiss")
    assert page_value(tp, "location.pathname") == "/actions/dialogs.html"
    tp.run("click", "#leave")
    left = tp.run("dialog", "accept").out.strip()
    assert left == f"accepted beforeunload → navigated to {pages.url('second.html')} (200)"
    # An `open` is the agent's own decision to leave: the prompt does not stop it.
    tp.run("open", pages.url("actions/dialogs.html"))
    tp.run("check", "#dirty")
    assert tp.run("open", pages.url("index.html")).code == 0
    assert page_value(tp, "location.pathname") == "/index.html"


def test_a_dialog_nobody_answered_is_dismissed_when_the_session_ends(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "forgetful")
    tp.run("open", pages.url("actions/dialogs.html"), "--session", "forgetful")
    tp.run("click", "#confirm", "--session", "forgetful")
    tp.run("session", "stop", "forgetful")
    answer = "/record?" + urllib.parse.urlencode({"kind": "confirm", "value": "false"})
    wait_until(lambda: answer in pages.requests)


def test_dialogs_of_a_cross_origin_frame(tp: Tabpilot, pages: PageServer, other_site: PageServer) -> None:
    tp.run("open", pages.url(f"actions/framed.html?other={other_site.origin}"))
    assert tp.run("click", "text=Say hello").out.strip().endswith('→ alert "Hello there" (accepted)')
    asked = tp.run("click", "text=Rename").out.strip()
    assert asked.endswith('→ dialog: prompt "New name?" — tabpilot dialog accept|dismiss')
    assert failed(tp.run("snapshot", "--json", check=False), 1)["reason"] == "dialog_open"
    tp.run("dialog", "accept", "--text", "framed")
    assert 'Answer: prompt: "framed"' in tp.run("find", "Answer").out


def test_a_dialog_from_eval_or_a_timer_is_reported_and_answered(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("actions/dialogs.html"))
    opened = tp.run("eval", "window.answer = confirm('Really?')", "--json", check=False)
    error = failed(opened, 1)
    assert error["reason"] == "dialog_open" and error["dialog"]["message"] == "Really?"
    assert opened.seconds < 5
    assert tp.run("dialog", "accept").out.strip() == 'accepted confirm "Really?"'
    assert page_value(tp, "window.answer") is True
    tp.run("eval", "setTimeout(() => { if (confirm('Go?')) location.href = '../second.html'; }, 50); 1")
    wait_until(lambda: "confirm" in tp.run("dialog").out)
    left = tp.run("dialog", "accept").out.strip()
    assert left == f'accepted confirm "Go?" → navigated to {pages.url("second.html")} (200)'
