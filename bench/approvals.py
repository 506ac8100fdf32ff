"""Approvals as the person meets them: how soon a card is painted after the agent's call reaches the
browser (in the side panel, and in the page when no panel shows the conversation), that nothing gated
happens before the person's yes, and that a card nobody answers ends at the time set; and what holding a
panel action's effects costs: the time it adds to a click no rule asks about (timed by the service worker
itself), and how soon the card for a request the page sent behind a control's back is painted after the page
sent it. The `approvals` suite.

Its own world, like an e2e module: a private daemon and headless Chromium whose agent is the real Claude
Code CLI against the fake Messages API of tests/agents (loopback only), and the shop of tests/e2e that
records each order with when it arrived. Baseline from the same run, interleaved: the same agent's click
on a button no rule asks about, from the daemon sending it to its answer.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.cdp import CdpError, PageCdp, open_worker
from bench.stats import Record, measured, missing

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
from harness import wait_until  # noqa: E402
from panel_world import REAL_CLAUDE, FakeAnthropic, Say, Use, claude_browser, open_tab, popped_out  # noqa: E402
from shop_server import Shop  # noqa: E402
from test_consent import chrome, extension_page  # noqa: E402
from test_person import Person, person_at, prompt_targets  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

SUITE = "approvals"
TIMEOUT_S = 2
PLAIN = "the agent's plain click (no card), daemon → extension → answer"
HOLDING = "approvals: time holding effects adds to the plain click (in the worker)"
HELD_CARD = "approvals: card painted in the panel after the page sent the request it holds"
TIMINGS_ON = "globalThis.tabpilotTimings = []; 0"
TIMINGS_OFF = (
    "(() => { const t = globalThis.tabpilotTimings ?? []; delete globalThis.tabpilotTimings; return t; })()"
)
# Paint times of the approval cards a page has shown (elementtiming="approval-card"), wall clock in ms.
PAINTED = """new Promise((resolve) => {
  const seen = [];
  const observer = new PerformanceObserver((list) => seen.push(...list.getEntries()));
  observer.observe({type: 'element', buffered: true});
  setTimeout(() => { observer.disconnect(); resolve(seen.filter((e) => e.identifier === 'approval-card')
    .map((e) => performance.timeOrigin + e.renderTime)); }, 30);
})"""


def scripts() -> dict[str, Any]:
    return {
        "plain": [Use("mcp__tabpilot__click", {"target": "text=Show password"}), Say(["ok"])],
        "order": [Use("mcp__tabpilot__click", {"target": 'text="Place order"'}), Say(["ok"])],
        "basket": [Use("mcp__tabpilot__click", {"target": "#basket"}), Say(["ok"])],
    }


def run(rounds: int) -> list[Record]:
    if not REAL_CLAUDE.exists():
        note = "n/a (the Claude Code CLI is not installed: run scripts/bootstrap)"
        return [
            missing(
                SUITE,
                "approvals: card painted in the panel after the call reached the browser",
                "latency",
                "ms",
                note,
            )
        ]
    model = FakeAnthropic(scripts()).start()
    shop = Shop()
    try:
        with claude_browser(model) as tp, extension_page(tp, "options/options.html") as options:
            return _measure(tp, options, shop, rounds)
    finally:
        shop.close()
        model.close()


def _measure(tp: Any, options: Person, shop: Shop, rounds: int) -> list[Record]:
    tab = open_tab(options, shop.url())
    plain, in_panel, in_page, early, timeouts = [], [], [], 0, []
    with popped_out(tp, tab) as panel:
        for _ in range(rounds):
            plain.append(_plain_click(tp, panel, tab))
            painted, before_yes = _order_in_panel(tp, panel, tab, shop)
            in_panel.append(painted)
            early += before_yes
        _set_timeout(options, TIMEOUT_S)
        try:
            for _ in range(max(3, rounds // 2)):
                timeouts.append(_unanswered(tp, panel, tab))
        finally:
            _set_timeout(options, 120)
    for _ in range(rounds):
        painted, before_yes = _order_in_page(tp, options, tab, shop)
        in_page.append(painted)
        early += before_yes
    holding, held_card = _effects(tp, options, shop, rounds)
    base = (PLAIN, _median(plain))
    return [
        measured(SUITE, PLAIN, "latency", "ms", plain),
        holding,
        held_card,
        measured(
            SUITE,
            "approvals: card painted in the panel after the call reached the browser",
            "latency",
            "ms",
            in_panel,
            base,
        ),
        measured(
            SUITE,
            "approvals: card painted in the page (no panel) after the call reached the browser",
            "latency",
            "ms",
            in_page,
            base,
        ),
        measured(
            SUITE,
            f"approvals: a card nobody answers ends after the {TIMEOUT_S} s set",
            "wall_time",
            "ms",
            timeouts,
            note="from the card's asking to its end, both as the daemon recorded them",
        ),
        measured(
            SUITE,
            "approvals: gated actions that happened before the person's yes",
            "count",
            "",
            [float(early)],
            note=f"{2 * rounds} orders, each checked against when the shop's server got it",
        ),
    ]


def _effects(tp: Any, options: Person, shop: Shop, rounds: int) -> tuple[Record, Record]:
    """Plain clicks timed by the worker (the hold's own phases), then a page's held POST's card."""
    try:
        worker: PageCdp | None = open_worker(tp.devtools())
    except CdpError as error:
        worker, note = None, f"n/a (the service worker cannot be read: {error})"
    tab = open_tab(options, shop.url())
    added: list[float] = []
    with popped_out(tp, tab) as panel:
        if worker is not None:
            worker.evaluate(TIMINGS_ON)
            for _ in range(rounds):
                _plain_click(tp, panel, tab)
            timings = worker.evaluate(TIMINGS_OFF)
            worker.close()
            for t in timings:
                marks = t["marks"]
                if t["method"] == "tool.click" and {
                    "effects",
                    "effects_held",
                    "acted",
                    "effects_settled",
                } <= set(marks):
                    added.append(
                        marks["effects_held"] - marks["effects"] + marks["effects_settled"] - marks["acted"]
                    )
            note = "the hold's phases in the worker: opening it (the tab catches every request) and waiting for its answers after the click"
    holding = measured(SUITE, HOLDING, "latency", "ms", added, note=note)
    chrome(options, f"chrome.tabs.remove({tab})")
    tab = open_tab(options, shop.url(page="effects.html"))
    sent = len(shop.sent())
    with popped_out(tp, tab) as panel, person_at(tp, shop.url(page="effects.html")) as page:
        shown = [_held_card(tp, panel, page, tab) for _ in range(rounds)]
    chrome(options, f"chrome.tabs.remove({tab})")
    assert len(shop.sent()) == sent, "a held request left the browser after a no"
    note = "from the page's fetch() (window.sentAt) to the card's paint, both wall clock"
    return holding, measured(SUITE, HELD_CARD, "latency", "ms", shown, note=note)


def _held_card(tp: Any, panel: Person, page: Person, tab: int) -> float:
    """The agent clicks a div whose script POSTs; the card's paint after the page sent it; then a no."""
    seen = len(chrome(panel, PAINTED))
    ended = _say(tp, panel, tab, "Add it [[script:basket]]")
    painted = wait_until(
        lambda: (lambda p: p[seen:] or None)(chrome(panel, PAINTED)), timeout=30, interval=0.05
    )[0]
    shown = float(painted) - float(page.eval("window.sentAt"))
    button = ".card[data-state=open] button[data-answer=deny]"
    wait_until(
        lambda: panel.eval(
            f"!!document.querySelector('{button}') && !document.querySelector('{button}').disabled"
        ),
        timeout=10,
        interval=0.05,
    )
    box = panel.eval(
        f"(r => [r.left + r.width / 2, r.top + r.height / 2])(document.querySelector('{button}').getBoundingClientRect())"
    )
    panel.click(box[0], box[1])
    _turn_over(tp, tab, ended)
    return shown


def _median(samples: list[float]) -> float | None:
    return sorted(samples)[len(samples) // 2] if samples else None


def _events(tp: Any, tab: int) -> list[dict[str, Any]]:
    """The events of the tab's conversation ([] before it has one)."""
    metas = [json.loads(p.read_text()) for p in Path(tp.home, "chats").glob("c-*/meta.json")]
    cid = next((m["conversation_id"] for m in metas if m["tab_id"] == tab), None)
    if cid is None:
        return []
    path = Path(tp.home, "chats", cid, "events.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _ended(tp: Any, tab: int) -> int:
    return sum(1 for e in _events(tp, tab) if e["kind"] == "turn_end")


def _say(tp: Any, panel: Person, tab: int, text: str) -> int:
    """The person sends a message; how many turns the conversation had ended before it."""
    wait_until(
        lambda: panel.eval(
            "!document.querySelector('#input').disabled && document.querySelector('#send').textContent === 'Send'"
        ),
        timeout=60,
    )
    ended = _ended(tp, tab)
    panel.eval("document.querySelector('#input').focus()")
    panel.send("Input.insertText", {"text": text})
    for kind in ("keyDown", "keyUp"):
        params = {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}
        panel.send("Input.dispatchKeyEvent", {**params, **({"text": "\r"} if kind == "keyDown" else {})})
    return ended


def _turn_over(tp: Any, tab: int, ended: int) -> None:
    wait_until(lambda: _ended(tp, tab) > ended, timeout=60)


def _last_call_started(tp: Any, tab: int) -> float:
    """When the daemon sent the turn's latest tabpilot call on to the browser (its `tool` event), ms."""
    return float(next(e for e in reversed(_events(tp, tab)) if e["kind"] == "tool")["ts"]) * 1000


def _plain_click(tp: Any, panel: Person, tab: int) -> float:
    _turn_over(tp, tab, _say(tp, panel, tab, "Show it [[script:plain]]"))
    events = _events(tp, tab)
    call = next(e for e in reversed(events) if e["kind"] == "tool")
    done = next(e for e in events if e["kind"] == "tool_result" and e["call_id"] == call["call_id"])
    return float(done["ms"])


def _press_allow(page: Person, where: tuple[float, float]) -> float:
    """The person's click on Allow; when it was pressed (wall clock, s)."""
    pressed = time.time()
    page.click(*where)
    return pressed


def _order_in_panel(tp: Any, panel: Person, tab: int, shop: Shop) -> tuple[float, int]:
    orders = len(shop.order_times())
    shown = len(chrome(panel, PAINTED))
    ended = _say(tp, panel, tab, "Buy [[script:order]]")
    painted = wait_until(
        lambda: (lambda p: p[shown:] or None)(chrome(panel, PAINTED)), timeout=30, interval=0.05
    )[0]
    latency = painted - _last_call_started(tp, tab)
    button = ".card[data-state=open] button[data-answer=allow]"
    wait_until(
        lambda: panel.eval(
            f"!!document.querySelector('{button}') && !document.querySelector('{button}').disabled"
        ),
        timeout=10,
        interval=0.05,
    )
    box = panel.eval(
        f"(r => [r.left + r.width / 2, r.top + r.height / 2])(document.querySelector('{button}').getBoundingClientRect())"
    )
    pressed = _press_allow(panel, (box[0], box[1]))
    wait_until(lambda: len(shop.order_times()) > orders, timeout=30)
    _turn_over(tp, tab, ended)
    return latency, sum(1 for at in shop.order_times()[orders:] if at < pressed)


def _order_in_page(tp: Any, options: Person, tab: int, shop: Shop) -> tuple[float, int]:
    """The panel closes as soon as the person has sent: the card comes in the page."""
    orders = len(shop.order_times())
    chrome(options, f"chrome.tabs.update({tab}, {{active: true}})")
    with popped_out(tp, tab) as panel:
        ended = _say(tp, panel, tab, "Buy [[script:order]]")
        # Closed once the turn has started, before the agent's call comes.
        wait_until(
            lambda: _events(tp, tab)[-1]["kind"] in ("turn_start", "session"), timeout=30, interval=0.02
        )
    url = str(chrome(options, f"chrome.tabs.get({tab})")["url"])
    with person_at(tp, url) as page:
        target = wait_until(
            lambda: (prompt_targets(tp.devtools().port, "approve") or [None])[0], timeout=30, interval=0.02
        )
        with connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
            painted = wait_until(lambda: chrome(Person(ws), PAINTED), timeout=10, interval=0.02)[0]
        latency = painted - _last_call_started(tp, tab)
        where = wait_until(
            lambda: page.in_prompt("approve", "button[data-answer=allow]"), timeout=10, interval=0.05
        )
        pressed = _press_allow(page, where)
        wait_until(lambda: len(shop.order_times()) > orders, timeout=30)
    _turn_over(tp, tab, ended)
    return latency, sum(1 for at in shop.order_times()[orders:] if at < pressed)


def _unanswered(tp: Any, panel: Person, tab: int) -> float:
    _turn_over(tp, tab, _say(tp, panel, tab, "Buy [[script:order]]"))
    events = _events(tp, tab)
    asked = next(e for e in reversed(events) if e["kind"] == "approval")
    ended = next(
        e for e in events if e["kind"] == "approval_end" and e["approval_id"] == asked["approval_id"]
    )
    assert ended["decision"] == "timeout", ended
    return (float(ended["ts"]) - float(asked["ts"])) * 1000


def _set_timeout(options: Person, seconds: int) -> None:
    options.eval(
        f"document.querySelector('#approval-timeout').value = '{seconds}'; document.querySelector('#save-timeout').click()"
    )
    wait_until(
        lambda: (
            chrome(options, "chrome.storage.local.get('tp_approval_timeout_s')").get("tp_approval_timeout_s")
            == seconds
        )
    )
