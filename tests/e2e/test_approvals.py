"""Approvals end to end: the real Claude Code CLI (against a fake Messages API on loopback) acts on the
person's tab through the real daemon and extension; every consequential action waits for the person's
answer on a card (in the side panel, else in the page and as a notification), and only a yes lets it
happen. The shop's server records every order it gets, so "nothing was sent" is seen where it counts.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import PAGES, TABPILOT, Tabpilot, wait_until
from panel_world import REAL_CLAUDE, FakeAnthropic, Say, Use, claude_browser, open_tab, popped_out
from shop_server import Shop
from test_consent import EXTENSION, chrome, extension_page
from test_guards import ATTACKS, clicks_refused, popup_window
from test_hidden_prompts import answer_in_popup, drawn_at
from test_person import Person, person_at, prompt_targets
from test_sidepanel import agent_text, click_on, conversation_of, events_of, running, say, tool_rows
from websockets.sync.client import connect

pytestmark = pytest.mark.skipif(
    not REAL_CLAUDE.exists(), reason="the Claude Code CLI is not installed (run scripts/bootstrap)"
)

CODE = "document.title = 'changed by the agent';\n" + "\n".join(
    f"// line {i} of the agent's code" for i in range(40)
)


@pytest.fixture(scope="module")
def shop() -> Iterator[Shop]:
    server = Shop()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def no_orders_yet(shop: Shop) -> None:
    shop.posts.clear()


@pytest.fixture(scope="module")
def receipt() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tp-receipt-"))
    path = folder / "receipt.pdf"
    path.write_bytes(b"%PDF-1.4 a receipt")
    yield path
    path.unlink()
    folder.rmdir()


@pytest.fixture(scope="module")
def model(shop: Shop, receipt: Path) -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(
        {
            "order": [Use("mcp__tabpilot__click", {"target": 'text="Place order"'}), Say(["Ordered."])],
            "rules": [
                Use("mcp__tabpilot__fill", {"target": "input[name=password]", "text": "hunter2"}),
                Use("mcp__tabpilot__upload", {"target": "#receipt", "files": [str(receipt)]}),
                Use("mcp__tabpilot__press", {"keys": ["Enter"], "ref": "input[name=qty]"}),
                Use("mcp__tabpilot__click", {"target": "text=Download receipt"}),
                Use("mcp__tabpilot__open", {"url": shop.url("other")}),
                Use("mcp__tabpilot__eval", {"expression": CODE}),
                Use("mcp__tabpilot__click", {"target": "text=Leave the shop"}),
                Use("mcp__tabpilot__dialog", {"action": "accept"}),
                # Not a yes to leaving: the page stays, and its question is answered no.
                Use("mcp__tabpilot__dialog", {"action": "dismiss"}),
                Say(["All asked."]),
            ],
            "download": [Use("mcp__tabpilot__click", {"target": "text=Download receipt"}), Say(["Saved."])],
            "touch": [Use("Bash", {"command": "touch made-by-agent.txt"}), Say(["Tried."])],
            "cli": [
                Use("Bash", {"command": f"{TABPILOT} click 'text=Place order' --json; echo EXIT=$?"}),
                Say(["Ran it."]),
            ],
        }
    ).start()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tp-workspace-"))
    yield folder
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()


@pytest.fixture(scope="module")
def tp(model: FakeAnthropic, workspace: Path) -> Iterator[Tabpilot]:
    with claude_browser(model) as env:
        env.run("panel", "workspace", "add", str(workspace), "--label", "shop")
        yield env


@pytest.fixture(scope="module")
def options(tp: Tabpilot) -> Iterator[Person]:
    """The options page, where the person sets the time to answer and sees their grants."""
    with extension_page(tp, "options/options.html") as page:
        set_timeout(page, 30)
        yield page


# ----- what the person sees and does ---------------------------------------------------------------


def set_timeout(options: Person, seconds: int) -> None:
    # The page shows the stored value once it has read it: the person types over that.
    wait_until(lambda: options.eval("document.querySelector('#approval-timeout').value !== ''"))
    options.eval(
        f"document.querySelector('#approval-timeout').value = '{seconds}';"
        "document.querySelector('#save-timeout').click()"
    )
    wait_until(
        lambda: (
            chrome(options, "chrome.storage.local.get('tp_approval_timeout_s')").get("tp_approval_timeout_s")
            == seconds
        )
    )


def cards(panel: Person) -> list[dict[str, Any]]:
    return list(
        panel.eval(
            "[...document.querySelectorAll('.card')].map(c => ({state: c.dataset.state, kind: c.dataset.kind,"
            " rule: c.querySelector('.card-rule')?.textContent ?? '', target: c.querySelector('.card-target')?.textContent ?? '',"
            " code: c.querySelector('.card-code')?.textContent ?? null, site: c.querySelector('.card-site')?.textContent ?? '',"
            " answers: [...c.querySelectorAll('button[data-answer]')].map(b => b.dataset.answer),"
            " armed: [...c.querySelectorAll('button[data-answer]')].some(b => !b.disabled),"
            " outcome: c.querySelector('.card-state')?.textContent ?? ''}))"
        )
    )


def open_card(panel: Person, timeout: float = 30) -> dict[str, Any]:
    return wait_until(
        lambda: next((c for c in cards(panel) if c["state"] == "open"), None), timeout=timeout, interval=0.05
    )  # type: ignore[no-any-return]


def answer(panel: Person, choice: str) -> dict[str, Any]:
    """The person reads the open card and, once its buttons take clicks, presses one."""
    card = open_card(panel)
    wait_until(lambda: cards(panel)[-1]["armed"], timeout=5, interval=0.05)
    click_on(panel, f".card[data-state=open] button[data-answer={choice}]")
    return card


def shop_tab(options: Person, shop: Shop, site: str = "shop") -> int:
    return open_tab(options, shop.url(site))


def turn_end(tp: Tabpilot, cid: str) -> dict[str, Any]:
    return wait_until(
        lambda: next((e for e in events_of(tp, cid) if e["kind"] == "turn_end"), None), timeout=60
    )  # type: ignore[no-any-return]


def tool_results_sent(model: FakeAnthropic, since: int) -> list[str]:
    """The tool results Claude sent back to the model (what the agent was told), in order."""
    out = []
    for request in model.main_requests()[since:]:
        for message in request["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    text = (
                        content
                        if isinstance(content, str)
                        else " ".join(c.get("text", "") for c in content or [])
                    )
                    if text not in out:
                        out.append(text)
    return out


# ----- the tests ----------------------------------------------------------------------------------


def test_an_order_waits_for_the_persons_yes_in_the_panel(tp: Tabpilot, options: Person, shop: Shop) -> None:
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        say(panel, "Buy the bread [[script:order]]")
        card = open_card(panel)
        assert card["rule"] == "Submit a form"
        assert card["target"].startswith('button "Place order"'), card
        assert card["site"] == "on shop.localhost"
        assert card["answers"] == ["deny", "always", "allow"]
        # A script's click is no answer, nor a click while the card is not wholly in view: here the
        # panel is so short that only the card's buttons show.
        panel.eval("document.querySelector('.card button[data-answer=allow]').click()")
        panel.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 360, "height": 270, "deviceScaleFactor": 1, "mobile": False},
        )
        panel.eval("(t => t.scrollTop = t.scrollHeight)(document.querySelector('#timeline'))")
        time.sleep(1.0)
        assert not cards(panel)[0]["armed"]
        click_on(panel, ".card button[data-answer=allow]")
        time.sleep(0.3)
        assert cards(panel)[0]["state"] == "open" and shop.orders() == [], (
            "nothing is sent while the person decides"
        )
        panel.send("Emulation.clearDeviceMetricsOverride")
        answer(panel, "allow")
        wait_until(lambda: shop.orders() == [("shop.localhost", "1")], timeout=10)
        wait_until(lambda: agent_text(panel) == "Ordered." and not running(panel), timeout=60)
        assert cards(panel)[0]["outcome"] == "Allowed (panel)"
        rows = tool_rows(panel)
        assert [(r["verb"], r["status"]) for r in rows] == [("click", "ok")], rows
    cid = conversation_of(tp, tab)["conversation_id"]
    kinds = [e["kind"] for e in events_of(tp, cid)]
    assert kinds.index("approval") < kinds.index("approval_end") < kinds.index("tool_result")
    chrome(options, f"chrome.tabs.remove({tab})")


def test_deny_is_final_and_no_answer_is_a_no_at_the_time_set(
    tp: Tabpilot, options: Person, shop: Shop, model: FakeAnthropic
) -> None:
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        asked = len(model.main_requests())
        say(panel, "Buy the bread [[script:order]]")
        answer(panel, "deny")
        wait_until(lambda: agent_text(panel) == "Ordered." and not running(panel), timeout=60)
        assert cards(panel)[0]["outcome"] == "Denied (panel)"
        assert tool_rows(panel)[0]["status"] == "failed"
        told = " ".join(tool_results_sent(model, asked))
        assert "user_declined" in told and "do not retry or find another way" in told, told
        assert shop.orders() == []

        set_timeout(options, 2)
        try:
            say(panel, "Buy it after all [[script:order]]")
            open_card(panel)
            asked_at = time.monotonic()
            card_gone = wait_until(lambda: cards(panel)[-1]["state"] != "open", timeout=10, interval=0.05)
            took = time.monotonic() - asked_at
            assert card_gone and abs(took - 2) <= 1, took
            assert cards(panel)[-1]["outcome"].startswith("Not answered in time")
            wait_until(lambda: not running(panel), timeout=60)
        finally:
            set_timeout(options, 30)
        assert shop.orders() == []
    cid = conversation_of(tp, tab)["conversation_id"]
    results = [e for e in events_of(tp, cid) if e["kind"] == "tool_result"]
    assert [r.get("reason") for r in results] == ["user_declined", "approval_timeout"]
    chrome(options, f"chrome.tabs.remove({tab})")


def test_with_no_panel_the_card_is_in_the_page_and_a_notification_and_a_script_cannot_answer_it(
    tp: Tabpilot, options: Person, shop: Shop
) -> None:
    tab = shop_tab(options, shop)
    url = shop.url()
    notifications = "chrome.notifications.getAll().then((all) => Object.keys(all))"
    with popped_out(tp, tab) as panel:
        say(panel, "Buy the bread [[script:order]]")
        open_card(panel)
    # The panel is closed: the card moves to the page the person looks at, and a notification.
    chrome(options, f"chrome.tabs.update({tab}, {{active: true}})")
    with person_at(tp, url) as page:
        wait_until(lambda: page.prompt_frame("approve") is not None, timeout=10, interval=0.05)
        assert wait_until(lambda: chrome(options, notifications), interval=0.05)[0].startswith("tabpilot-ap-")
        # The page's scripts cannot reach the card; even a script inside it cannot answer it.
        target = wait_until(lambda: prompt_target(tp, "approve"), interval=0.05)
        with connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
            inner = Person(ws)
            wait_until(lambda: inner.eval("!!document.querySelector('button[data-answer=allow]')"))
            inner.eval("document.querySelector('button[data-answer=allow]').click()")
        time.sleep(1.0)
        assert page.prompt_frame("approve") is not None and shop.orders() == []
        page.click(
            *wait_until(
                lambda: page.in_prompt("approve", "button[data-answer=allow]"), timeout=10, interval=0.05
            )
        )
        wait_until(lambda: shop.orders() == [("shop.localhost", "1")], timeout=10)
        wait_until(lambda: "ordered=" in str(page.eval("location.search")))
    assert wait_until(lambda: chrome(options, notifications) == [], interval=0.05)
    cid = conversation_of(tp, tab)["conversation_id"]
    ends = [e for e in events_of(tp, cid) if e["kind"] == "approval_end"]
    assert [(e["decision"], e["via"]) for e in ends] == [("allow", "page")]
    turn_end(tp, cid)
    chrome(options, f"chrome.tabs.remove({tab})")


def page_fights(page: Person) -> None:
    """The shop turns hostile: it runs the attacks on tabpilot's overlay of tests/pages/hostile/overlay.html."""
    source = (PAGES / "hostile" / "overlay.html").read_text()
    page.eval(source[source.index("<script>") + len("<script>") : source.index("</script>")])


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_page_that_fights_the_approval_card_never_gets_its_order_through(
    tp: Tabpilot, options: Person, shop: Shop, attack: str
) -> None:
    tab = shop_tab(options, shop)
    url = shop.url()
    with popped_out(tp, tab) as panel:
        say(panel, "Buy the bread [[script:order]]")
        open_card(panel)
    # No panel shows the conversation now: the card is in the page, which fights it.
    chrome(options, f"chrome.tabs.update({tab}, {{active: true}})")
    cid = conversation_of(tp, tab)["conversation_id"]

    def undecided() -> bool:
        return not shop.orders() and not any(e["kind"] == "approval_end" for e in events_of(tp, cid))

    with person_at(tp, url) as page:
        allow = wait_until(
            lambda: page.in_prompt("approve", "button[data-answer=allow]"), timeout=15, interval=0.05
        )
        page_fights(page)
        page.eval(f"attacks.{attack}()")
        time.sleep(0.3)
        clicks_refused(tp, url, undecided, allow)
        # The page gives up: the same click, on the card now in plain sight, places the order.
        page.eval("attacks.stop()")
        page.click(
            *wait_until(
                lambda: page.in_prompt("approve", "button[data-answer=allow]"), timeout=15, interval=0.05
            )
        )
        wait_until(lambda: shop.orders() == [("shop.localhost", "1")], timeout=15)
    turn_end(tp, cid)
    chrome(options, f"chrome.tabs.remove({tab})")


def test_a_page_that_zooms_the_approval_card_to_a_speck_gets_no_order_and_the_popup_answers_it(
    tp: Tabpilot, options: Person, shop: Shop
) -> None:
    tab = shop_tab(options, shop)
    url = shop.url()
    with popped_out(tp, tab) as panel:
        say(panel, "Buy the bread [[script:order]]")
        open_card(panel)
    chrome(options, f"chrome.tabs.update({tab}, {{active: true}})")
    cid = conversation_of(tp, tab)["conversation_id"]

    def undecided() -> bool:
        return not shop.orders() and not any(e["kind"] == "approval_end" for e in events_of(tp, cid))

    with person_at(tp, url) as page:
        wait_until(lambda: page.in_prompt("approve", "button[data-answer=allow]"), timeout=15, interval=0.05)
        page_fights(page)
        page.eval("attacks.zoom(0.1)")
        clicks_refused(tp, url, undecided, drawn_at(tp, page, "approve", "button[data-answer=allow]"))
        # The side panel, opened on the conversation, says so on its card too.
        with popped_out(tp, tab) as panel:
            wait_until(
                lambda: panel.eval(
                    "document.querySelector('.card[data-state=open] .card-hidden')?.textContent ?? ''"
                ).startswith("The page is hiding this card"),
                timeout=10,
                interval=0.05,
            )
        with popup_window(tp) as popup:
            answer_in_popup(popup, "approve", "allow")
            wait_until(lambda: shop.orders() == [("shop.localhost", "1")], timeout=15)
        page.eval("attacks.stop()")
    ends = [e for e in events_of(tp, cid) if e["kind"] == "approval_end"]
    assert [(e["decision"], e["via"]) for e in ends] == [("allow", "popup")]
    turn_end(tp, cid)
    chrome(options, f"chrome.tabs.remove({tab})")


def test_stop_while_a_card_is_open_denies_it_and_the_order_never_leaves(
    tp: Tabpilot, options: Person, shop: Shop
) -> None:
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        say(panel, "Buy the bread [[script:order]]")
        open_card(panel)
        click_on(panel, "#send")
        wait_until(lambda: cards(panel)[0]["state"] == "stopped", timeout=5, interval=0.05)
        wait_until(lambda: panel.eval("!!document.querySelector('.notice.stopped')"), timeout=5)
        assert not running(panel)
    time.sleep(1.0)
    assert shop.orders() == []
    chrome(options, f"chrome.tabs.remove({tab})")


def test_always_covers_one_site_only_and_revoking_it_asks_again(
    tp: Tabpilot, options: Person, shop: Shop
) -> None:
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        say(panel, "Buy the bread [[script:order]]")
        answer(panel, "always")
        wait_until(lambda: len(shop.orders()) == 1 and not running(panel), timeout=60)
        grants = chrome(options, "chrome.storage.local.get('tp_approval_grants')")["tp_approval_grants"]
        # Only the rule the card named ("Submit a form"), not every rule that matched the button.
        assert {(g["rule"], g["start"], g["target"]) for g in grants} == {
            ("form-submit", "shop.localhost", "shop.localhost"),
        }
        wait_until(lambda: options.eval("document.querySelectorAll('#grants tbody tr').length") == 1)
        # Granted: the next order goes without a card.
        say(panel, "One more [[script:order]]")
        wait_until(lambda: len(shop.orders()) == 2 and not running(panel), timeout=60)
        assert len(cards(panel)) == 1
    chrome(options, f"chrome.tabs.remove({tab})")
    # The same order on another site asks.
    other = shop_tab(options, shop, "other")
    with popped_out(tp, other) as panel:
        say(panel, "Buy there too [[script:order]]")
        assert open_card(panel)["site"] == "on other.localhost"
        answer(panel, "deny")
        wait_until(lambda: not running(panel), timeout=60)
    chrome(options, f"chrome.tabs.remove({other})")
    # Revoked on the options page: the shop asks again, at once.
    click = options.element_center("#revoke-all")
    options.click(*click)
    wait_until(
        lambda: (
            chrome(options, "chrome.storage.local.get('tp_approval_grants')").get("tp_approval_grants") == []
        )
    )
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        say(panel, "And again [[script:order]]")
        open_card(panel)
        answer(panel, "deny")
        wait_until(lambda: not running(panel), timeout=60)
    assert shop.orders() == [("shop.localhost", "1")] * 2
    chrome(options, f"chrome.tabs.remove({tab})")


def test_every_consequential_kind_of_action_asks_first_and_a_no_leaves_the_page_as_it_was(
    tp: Tabpilot, options: Person, shop: Shop
) -> None:
    tab = shop_tab(options, shop)
    url = shop.url()
    expected = [
        (
            "Type into a secret field (password, card, one-time code)",
            'password "Password" (value [redacted])',
        ),
        ("Upload files to the page", "receipt.pdf into"),
        ("Submit a form", "Enter in"),
        ("Download a file", "the file receipt.txt"),
        ("Go to a site outside this conversation's", shop.url("other")),
        ("Run the agent's code in this page", "the code below"),
        ("Leave the page (answer its leave-page dialog)", 'confirm dialog "Leave the shop?"'),
    ]
    with popped_out(tp, tab) as panel:
        say(panel, "Try everything [[script:rules]]")
        for n, (rule, target) in enumerate(expected):
            wait_until(
                lambda n=n: len(cards(panel)) > n and cards(panel)[n]["state"] == "open",
                timeout=30,
                interval=0.05,
            )
            card = cards(panel)[n]
            assert (card["rule"], target in card["target"]) == (rule, True), card
            assert "hunter2" not in json.dumps(card)
            if rule.startswith("Run"):
                assert card["code"] == CODE, "the code is shown whole"
                assert "always" not in card["answers"]
            answer(panel, "deny")
            wait_until(lambda n=n: cards(panel)[n]["state"] == "deny", timeout=10, interval=0.05)
        wait_until(lambda: agent_text(panel) == "All asked." and not running(panel), timeout=60)
        assert "hunter2" not in panel.eval("document.body.innerText")
    with person_at(tp, url) as page:
        assert page.eval("document.querySelector('input[name=password]').value") == ""
        assert page.eval("document.title") == "Corner shop"
        assert page.eval("document.querySelector('#status').textContent") == "stayed"
        assert page.eval("location.href") == url
    assert shop.orders() == []
    downloads = Path(tp.home, "downloads")
    assert not [p for p in downloads.rglob("receipt*")] if downloads.exists() else True
    cid = conversation_of(tp, tab)["conversation_id"]
    assert "hunter2" not in Path(tp.home, "chats", cid, "events.jsonl").read_text()
    chrome(options, f"chrome.tabs.remove({tab})")


def test_a_download_is_held_until_the_person_allows_it(tp: Tabpilot, options: Person, shop: Shop) -> None:
    tab = shop_tab(options, shop)
    downloads = (
        "chrome.downloads.search({urlRegex: 'receipt'}).then(all => all.map(d => [d.state, d.filename]))"
    )
    with popped_out(tp, tab) as panel:
        say(panel, "Keep the receipt [[script:download]]")
        card = open_card(panel)
        assert card["rule"] == "Download a file"
        assert card["target"] == f"the file receipt.txt → http://shop.localhost:{shop.port}/receipt.txt"
        # Chrome has begun fetching it, but the file gets no name and never completes while the card is open.
        time.sleep(1.0)
        held = chrome(options, downloads)
        assert held and all(state == "in_progress" for state, _ in held), held
        assert not list(Path(tp.home, "downloads").rglob("receipt.txt"))
        answer(panel, "allow")
        saved = wait_until(lambda: list(Path(tp.home, "downloads").rglob("receipt.txt")), timeout=10)
        assert saved[0].read_text() == "receipt: one loaf"
        assert saved[0].parent.name.startswith("p-"), "in the panel session's own folder"
        wait_until(lambda: not running(panel), timeout=60)
    chrome(options, f"chrome.tabs.remove({tab})")


def stop_service_worker(page: Person) -> None:
    """The browser stops the extension's worker (as it does when the worker sleeps), seen from an extension page."""
    page.send("ServiceWorker.enable")
    try:
        versions: list[dict[str, Any]] = []
        while not any(v.get("runningStatus") == "running" for v in versions):
            message = json.loads(page.ws.recv(timeout=10))
            if message.get("method") == "ServiceWorker.workerVersionUpdated":
                versions = [v for v in message["params"]["versions"] if v["scriptURL"].startswith(EXTENSION)]
        version = next(v for v in versions if v.get("runningStatus") == "running")["versionId"]
        page.send("ServiceWorker.stopWorker", {"versionId": version})
        stopped = False
        while not stopped:
            message = json.loads(page.ws.recv(timeout=10))
            if message.get("method") == "ServiceWorker.workerVersionUpdated":
                updated = message["params"]["versions"]
                stopped = any(
                    v["versionId"] == version and v.get("runningStatus") == "stopped" for v in updated
                )
    finally:
        page.send("ServiceWorker.disable")


def test_a_worker_restart_while_the_person_is_asked_is_a_no(
    tp: Tabpilot, options: Person, shop: Shop, model: FakeAnthropic
) -> None:
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        asked = len(model.main_requests())
        say(panel, "Buy the bread [[script:order]]")
        open_card(panel)
        stop_service_worker(panel)
        wait_until(lambda: cards(panel)[0]["state"] == "stopped", timeout=30)
        wait_until(lambda: agent_text(panel) == "Ordered." and not running(panel), timeout=60)
        told = " ".join(tool_results_sent(model, asked))
        assert "the browser's extension restarted before the person answered" in told, told
    assert shop.orders() == []
    cid = conversation_of(tp, tab)["conversation_id"]
    results = [e for e in events_of(tp, cid) if e["kind"] == "tool_result"]
    assert [(r["code"], r["reason"]) for r in results] == [("permission_denied", "approval_timeout")]
    chrome(options, f"chrome.tabs.remove({tab})")


def choose_workspace(panel: Person) -> None:
    wait_until(lambda: panel.eval("document.querySelectorAll('#workspace option').length") == 2)
    panel.eval(
        "(s => { s.value = s.options[1].value; s.dispatchEvent(new Event('change')); })(document.querySelector('#workspace'))"
    )


def test_in_a_workspace_claude_asks_the_person_before_it_runs_a_command(
    tp: Tabpilot, options: Person, shop: Shop, workspace: Path
) -> None:
    made = workspace / "made-by-agent.txt"
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        choose_workspace(panel)
        say(panel, "Make a file [[script:touch]]")
        card = open_card(panel)
        assert (card["kind"], card["target"]) == ("permission", "touch made-by-agent.txt")
        answer(panel, "deny")
        wait_until(lambda: "Tried." in agent_text(panel) and not running(panel), timeout=60)
        assert not made.exists()
        say(panel, "Make it now [[script:touch]]")
        wait_until(lambda: len(cards(panel)) == 2 and cards(panel)[1]["state"] == "open", timeout=30)
        answer(panel, "allow")
        wait_until(lambda: made.exists(), timeout=30)
        wait_until(lambda: not running(panel), timeout=60)
        assert [c["outcome"] for c in cards(panel)] == ["Denied (person)", "Allowed (person)"]
    made.unlink()
    chrome(options, f"chrome.tabs.remove({tab})")


def test_the_cli_waits_for_the_person_past_its_own_timeout_and_exits_by_their_answer(
    tp: Tabpilot, options: Person, shop: Shop, model: FakeAnthropic
) -> None:
    tab = shop_tab(options, shop)
    with popped_out(tp, tab) as panel:
        choose_workspace(panel)
        for choice, code in (("allow", 0), ("deny", 1)):
            asked = len(model.main_requests())
            say(panel, f"Order from the shell [[script:cli]] {choice}")
            answer(panel, "allow")  # Claude's own question: may it run the command?
            wait_until(lambda: open_card(panel)["kind"] == "approval", timeout=30)
            # Longer than the click's own 5 s: the CLI keeps waiting because the extension says why.
            time.sleep(6)
            answer(panel, choice)
            wait_until(lambda: not running(panel), timeout=60)
            told = " ".join(tool_results_sent(model, asked))
            assert f"EXIT={code}" in told, told
            if code:
                assert "user_declined" in told, told
    assert shop.orders() == [("shop.localhost", "1")]
    chrome(options, f"chrome.tabs.remove({tab})")


def prompt_target(tp: Tabpilot, kind: str) -> dict[str, Any] | None:
    found = prompt_targets(tp.devtools().port, kind)
    return found[0] if found else None
