"""Approvals judge what an action does, at the moment it does it: the real Claude Code CLI (against a fake
Messages API on loopback) acts on a hostile shop whose every control orders something behind its back
(a select, a checkbox, a div that POSTs from script, the Enter inside typed text, Space on a submit button,
a reload of an order's answer, a form re-pointed while its card is open, a link that redirects to another
site, a script that moves the tab later). The shop's own server says what left the browser: nothing before
the person's yes, nothing after a no.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from harness import Tabpilot, wait_until
from panel_world import REAL_CLAUDE, FakeAnthropic, Say, Use, claude_browser, open_tab, popped_out
from shop_server import Shop
from test_approvals import answer, cards, set_timeout
from test_consent import chrome, extension_page
from test_person import Person, person_at, prompt_targets
from test_sidepanel import running, say
from websockets.sync.client import connect

pytestmark = pytest.mark.skipif(
    not REAL_CLAUDE.exists(), reason="the Claude Code CLI is not installed (run scripts/bootstrap)"
)

SEND = "Let the page send data (a form, a script's request)"
OFF_SITE = "Go to a site outside this conversation's"


def tool(name: str, **params: Any) -> Use:
    return Use(f"mcp__tabpilot__{name}", params)


SCRIPTS: dict[str, list[Any]] = {
    "select": [tool("select", target="#size", values=["Large"]), Say(["Done."])],
    "check": [tool("check", target="#gift"), Say(["Done."])],
    "basket": [tool("click", target="#basket"), Say(["Done."])],
    "type": [tool("type", ref="input[name=qty]", text="5\n"), Say(["Done."])],
    "space": [tool("press", keys=["Space"], ref="#go"), Say(["Done."])],
    "here": [tool("click", target="text=Place order here"), Say(["Done."])],
    "reload": [tool("reload"), Say(["Done."])],
    "continue": [tool("click", target="#go"), Say(["Done."])],
    "delete": [tool("click", target="#delete"), Say(["Done."])],
    "partner": [tool("click", target="text=Our partner"), Say(["Done."])],
    "help": [
        tool(
            "request_help",
            title="tabpilot security check",
            prompt="tabpilot needs your bank password and the code we texted you: type them into the note.",
            timeout="20s",
        ),
        Say(["Done."]),
    ],
    "later": [
        tool("click", target="#later"),
        tool("wait", url="*landed*", timeout="15s"),
        tool("click", target="#go"),
        Say(["Done."]),
    ],
}


@pytest.fixture(scope="module")
def shop() -> Iterator[Shop]:
    server = Shop()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def nothing_sent_yet(shop: Shop) -> None:
    shop.posts.clear()
    shop.gets.clear()


@pytest.fixture(scope="module")
def tp() -> Iterator[Tabpilot]:
    model = FakeAnthropic(SCRIPTS).start()
    try:
        with claude_browser(model) as env:
            yield env
    finally:
        model.close()


@pytest.fixture(scope="module")
def options(tp: Tabpilot) -> Iterator[Person]:
    with extension_page(tp, "options/options.html") as page:
        set_timeout(page, 30)
        yield page


@pytest.fixture()
def tab(options: Person, shop: Shop) -> Iterator[int]:
    opened = open_tab(options, shop.url(page="effects.html"))
    yield opened
    chrome(options, "chrome.storage.local.set({tp_approval_grants: []})")
    chrome(options, f"chrome.tabs.remove({opened})")


def turn(panel: Person, script: str) -> None:
    say(panel, f"Go on [[script:{script}]]")


def turn_over(panel: Person) -> None:
    wait_until(lambda: not running(panel), timeout=60)


def held_card(panel: Person, count: int) -> dict[str, Any]:
    return wait_until(  # type: ignore[no-any-return]
        lambda: (lambda c: c[-1] if len(c) == count and c[-1]["state"] == "open" else None)(cards(panel)),
        timeout=30,
        interval=0.05,
    )


@pytest.mark.parametrize(
    ("script", "caused_by", "body"),
    [
        ("select", "select #size", "qty=9"),
        ("check", "check #gift", "qty=4"),
        ("basket", "click #basket", "qty=7"),
    ],
)
def test_what_a_control_sends_behind_its_back_waits_for_the_persons_yes(
    tp: Tabpilot, shop: Shop, tab: int, script: str, caused_by: str, body: str
) -> None:
    order = f"http://shop.localhost:{shop.port}/order"
    with popped_out(tp, tab) as panel:
        turn(panel, script)
        card = held_card(panel, 1)
        assert (card["rule"], card["site"]) == (SEND, "on shop.localhost"), card
        assert card["target"] == f"POST {order} (after {caused_by})", card
        assert shop.sent() == [], "held in the browser while the person decides"
        answer(panel, "deny")
        turn_over(panel)
        assert shop.sent() == []
        # The control changed in the page though its effect did not leave: the page starts again.
        chrome(panel, f"chrome.tabs.reload({tab})")
        wait_until(lambda: chrome(panel, f"chrome.tabs.get({tab})")["status"] == "complete")
        turn(panel, script)
        held_card(panel, 2)
        answer(panel, "allow")
        wait_until(lambda: shop.sent() == [("shop.localhost", "/order", body)], timeout=15)
        turn_over(panel)


@pytest.mark.parametrize(("script", "target"), [("type", "(text [redacted])"), ("space", "Space in")])
def test_keys_that_send_a_form_ask_first(
    tp: Tabpilot, shop: Shop, tab: int, script: str, target: str
) -> None:
    with popped_out(tp, tab) as panel:
        turn(panel, script)
        card = held_card(panel, 1)
        assert card["rule"] == "Submit a form" and target in card["target"], card
        assert card["target"].endswith(f"→ http://shop.localhost:{shop.port}/order"), card
        answer(panel, "deny")
        turn_over(panel)
    assert shop.sent() == []


def test_a_reload_that_would_send_an_allowed_order_again_asks(tp: Tabpilot, shop: Shop, tab: int) -> None:
    with popped_out(tp, tab) as panel:
        turn(panel, "here")
        assert held_card(panel, 1)["rule"] == "Submit a form"
        answer(panel, "allow")
        wait_until(lambda: len(shop.sent()) == 1, timeout=15)
        turn_over(panel)
        turn(panel, "reload")
        card = held_card(panel, 2)
        assert card["rule"] == SEND and card["target"].startswith("POST "), card
        assert "/order-here (after reload)" in card["target"], card
        answer(panel, "deny")
        turn_over(panel)
    assert shop.sent() == [("shop.localhost", "/order-here", "qty=2")], "one order, not two"


def test_a_form_re_pointed_while_its_card_is_open_asks_again_with_the_new_destination(
    tp: Tabpilot, shop: Shop, tab: int
) -> None:
    with popped_out(tp, tab) as panel:
        turn(panel, "continue")
        assert held_card(panel, 1)["target"].endswith(f"http://shop.localhost:{shop.port}/order")
        with person_at(tp, shop.url(page="effects.html")) as page:
            page.eval("document.querySelector('#order').action = '/steal'")
        answer(panel, "allow")
        card = held_card(panel, 2)
        assert card["target"] == f'button "Continue" → http://shop.localhost:{shop.port}/steal', card
        answer(panel, "deny")
        turn_over(panel)
    assert shop.sent() == [], "neither the destination the person saw nor the new one got anything"


def test_always_grants_only_the_rule_its_card_named(
    tp: Tabpilot, options: Person, shop: Shop, tab: int
) -> None:
    with popped_out(tp, tab) as panel:
        turn(panel, "here")
        held_card(panel, 1)
        answer(panel, "always")
        wait_until(lambda: len(shop.sent()) == 1, timeout=15)
        turn_over(panel)
        grants = chrome(options, "chrome.storage.local.get('tp_approval_grants')")["tp_approval_grants"]
        assert [(g["rule"], g["target"]) for g in grants] == [("form-submit", "shop.localhost")]
        chrome(options, f"chrome.tabs.update({tab}, {{url: {shop.url(page='effects.html')!r}}})")
        wait_until(lambda: chrome(options, f"chrome.tabs.get({tab})")["status"] == "complete")
        turn(panel, "delete")
        card = held_card(panel, 2)
        assert card["rule"].startswith("An action that commits"), card
        answer(panel, "deny")
        turn_over(panel)
    assert [path for _, path, _ in shop.sent()] == ["/order-here"]


def test_a_tab_sent_to_another_site_is_stopped_and_asked_about(tp: Tabpilot, shop: Shop, tab: int) -> None:
    with popped_out(tp, tab) as panel:
        # A link of the shop's own that redirects away.
        turn(panel, "partner")
        card = held_card(panel, 1)
        assert (card["rule"], card["site"]) == (OFF_SITE, "on other.localhost (started on shop.localhost)"), (
            card
        )
        assert card["target"].startswith(
            f"GET http://other.localhost:{shop.port}/approvals/effects.html?away"
        )
        answer(panel, "deny")
        turn_over(panel)
        assert [host for host, _ in shop.gets if host == "other.localhost"] == []
        assert "shop.localhost" in chrome(panel, f"chrome.tabs.get({tab})")["url"]
        # A script that moves the tab long after the action: the next action there asks first.
        turn(panel, "later")
        card = held_card(panel, 2)
        assert card["rule"] == OFF_SITE and card["target"].startswith(
            "click #go on http://other.localhost"
        ), card
        answer(panel, "deny")
        turn_over(panel)
    assert shop.sent() == [], "nothing was done on the other site"


HELP_TEXT = """(card => card && {heading: card.querySelector('h1').textContent,
  author: card.querySelector('.author')?.textContent ?? null, agent: card.querySelector('.agent-words')?.textContent ?? null,
  never: card.querySelector('.never')?.textContent ?? null})(document.querySelector('.card.help'))"""


def test_a_panel_agents_help_request_is_framed_as_the_agents_words_and_asks_for_no_secret(
    tp: Tabpilot, shop: Shop, tab: int
) -> None:
    with popped_out(tp, tab) as panel:
        turn(panel, "help")
        target = wait_until(lambda: (prompt_targets(tp.devtools().port, "help") or [None])[0], timeout=30)
        with connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
            shown = wait_until(lambda: Person(ws).eval(HELP_TEXT), timeout=10, interval=0.05)
        assert shown["heading"] == "Your agent asks for your help", (
            "tabpilot's heading, not the agent's title"
        )
        assert shown["author"] and shown["author"].startswith("Written by the agent of session p-"), shown
        assert shown["author"].endswith("not by tabpilot:"), shown
        assert "tabpilot security check" in shown["agent"] and "bank password" in shown["agent"], shown
        assert shown["never"] == (
            "tabpilot never asks for a password or a code. Type those only into the site itself, never into the note."
        )
        with person_at(tp, shop.url(page="effects.html")) as page:
            page.click(
                *wait_until(
                    lambda: page.in_prompt("help", "button[data-answer=cancel]"), timeout=10, interval=0.05
                )
            )
        turn_over(panel)
