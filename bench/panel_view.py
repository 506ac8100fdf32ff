"""The side panel as the person sees it: how soon the agent's streamed text shows in the panel, and how fast
a reopened panel renders a long running backlog. Part of the `panel` suite.

Its own world (like an e2e module): a private daemon and headless Chromium whose agent is the real Claude
Code CLI against the fake Messages API of tests/agents (loopback only). Baseline from the same run,
interleaved with the streaming turns: a round trip panel → worker → daemon → panel (chat.list), halved,
i.e. what one daemon→panel hop costs with no agent at all.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.cdp import PageCdp
from bench.stats import Record, measured, median, missing

# The panel's e2e world (tests/e2e/panel_world.py) imports its neighbours by bare name, as pytest does.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from harness import Tabpilot, start_page_server, wait_until
from panel_world import REAL_CLAUDE, FakeAnthropic, Say, claude_browser

SUITE = "panel"
PANEL = "chrome-extension://abldppcldbamgeoepadjiaeommdfmihk/sidepanel/sidepanel.html"
CHUNK = "abcde"  # no spaces: the rendered text's length counts the deltas exactly
BACKLOG = 1000
ECHOES_PER_ROUND = 20
# Reopenings per streaming round (12 in a full run: a p95 that is not just the slowest one); all fit in
# the 40 s the backlog's turn runs on.
REOPENINGS_PER_ROUND = 4
PAGE_LOAD = "an extension page opened and loaded (popup.html)"

# Installed in the panel page before a turn: when the turn's own text (a new bubble) changed, and how
# long it then was. The observer of the previous turn is let go.
OBSERVE = """(() => { window.__observer?.disconnect(); window.__shown = [];
const before = document.querySelectorAll('.bubble.agent').length;
window.__observer = new MutationObserver(() => {
  const b = document.querySelectorAll('.bubble.agent');
  if (b.length > before) __shown.push([performance.timeOrigin + performance.now(), b[b.length - 1].textContent.length]);
});
__observer.observe(document.querySelector('#timeline'), {childList: true, subtree: true, characterData: true}); return true; })()"""

# A round trip through the worker's panel bridge to the daemon and back, timed in the page.
ECHO = """new Promise((resolve) => {
  const port = chrome.runtime.connect({name: 'tabpilot-panel'}); const times = []; let sent = 0; let at = 0;
  const next = () => { at = performance.now(); port.postMessage({id: ++sent, op: 'history'}); };
  port.onMessage.addListener((m) => { if (m.id !== sent) return; times.push(performance.now() - at);
    if (times.length < %d) next(); else { port.disconnect(); resolve(times); } });
  next(); })"""


class Paced:
    """Text chunks produced as the fake model sends them: `fast` at `fast_gap_s`, then the rest at `gap_s`."""

    def __init__(self, count: int, gap_s: float, fast: int = 0, fast_gap_s: float = 0.0) -> None:
        self.count, self.gap_s, self.fast, self.fast_gap_s = count, gap_s, fast, fast_gap_s

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[str]:
        for i in range(self.count):
            time.sleep(self.fast_gap_s if i < self.fast else self.gap_s)
            yield CHUNK


@contextlib.contextmanager
def world(deltas: int) -> Iterator[tuple[Tabpilot, Any, Any]]:
    folder = Path(tempfile.mkdtemp(prefix="tp-bench-panel-"))
    fake = FakeAnthropic(
        {
            "stream": [Say(Paced(deltas, 0.02))],  # type: ignore[arg-type]
            "backlog": [Say(Paced(BACKLOG + 800, 0.05, fast=BACKLOG, fast_gap_s=0.001))],  # type: ignore[arg-type]
        }
    ).start()
    pages = start_page_server()
    try:
        with claude_browser(fake, claude_home=str(folder), home=str(folder / "home")) as tp:
            yield tp, pages, fake
    finally:
        pages.close()
        fake.close()
        shutil.rmtree(folder, ignore_errors=True)


def browser(tp: Tabpilot) -> PageCdp:
    """The browser's own CDP endpoint (to open and close pages)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{tp.devtools().port}/json/version", timeout=5) as response:
        return PageCdp(json.load(response)["webSocketDebuggerUrl"], "browser")


@contextlib.contextmanager
def page(tp: Tabpilot, ui: PageCdp, url: str) -> Iterator[PageCdp]:
    target = ui.call("Target.createTarget", {"url": url})["targetId"]
    try:
        found = wait_until(lambda: next((t for t in tp.devtools().pages() if t["id"] == target), None))
        cdp = PageCdp(found["webSocketDebuggerUrl"], target)
        try:
            yield cdp
        finally:
            cdp.close()
    finally:
        ui.call("Target.closeTarget", {"targetId": target})


def person_tab(tp: Tabpilot, ui: PageCdp, url: str) -> int:
    """The person's tab on `url`, by its extension tab id (asked from an extension page)."""
    with page(tp, ui, PANEL.replace("sidepanel/sidepanel.html", "options/options.html")) as options:
        wait_until(lambda: _loaded_at(options))
        tab = options.evaluate(f"chrome.tabs.create({{url: {json.dumps(url)}}})")
        wait_until(
            lambda: options.evaluate(f"chrome.tabs.get({tab['id']}).then(t => t.status)") == "complete"
        )
        return int(tab["id"])


def send(panel: PageCdp, text: str) -> None:
    """Typed into the composer and sent with Enter, as the person does."""
    wait_until(
        lambda: panel.evaluate(
            "!!document.querySelector('#agent option') && !document.querySelector('#input').disabled"
        ),
        timeout=30,
    )
    panel.evaluate("document.querySelector('#input').focus()")
    panel.call("Input.insertText", {"text": text})
    for kind in ("keyDown", "keyUp"):
        panel.call(
            "Input.dispatchKeyEvent",
            {
                "type": kind,
                "key": "Enter",
                "code": "Enter",
                "windowsVirtualKeyCode": 13,
                **({"text": "\r"} if kind == "keyDown" else {}),
            },
        )


def newest_conversation(tp: Tabpilot) -> str:
    metas = [json.loads(p.read_text()) for p in Path(tp.home, "chats").glob("c-*/meta.json")]
    return str(max(metas, key=lambda m: m["created_at"])["conversation_id"])


def text_events(tp: Tabpilot, cid: str, since_seq: int = 0) -> list[dict[str, Any]]:
    path = Path(tp.home, "chats", cid, "events.jsonl")
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in events if e["kind"] == "text" and e["seq"] > since_seq]


def last_seq(tp: Tabpilot, cid: str) -> int:
    path = Path(tp.home, "chats", cid, "events.jsonl")
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return int(json.loads(lines[-1])["seq"]) if lines else 0


def shown_after_emit(events: list[dict[str, Any]], shown: list[list[float]]) -> list[float]:
    """For each text event: when the panel first showed text that long, minus when the daemon read it from the agent (ms)."""
    out: list[float] = []
    length, i = 0, 0
    for event in sorted(events, key=lambda e: e["seq"]):
        length += len(event["delta"])
        while i < len(shown) and shown[i][1] < length:
            i += 1
        if i == len(shown):
            break
        out.append(shown[i][0] - event["ts"] * 1000)
    return out


def _shown_at(panel: PageCdp, length: int) -> list[float] | None:
    """[length, when] once the panel's agent text is at least `length` long."""
    now = panel.evaluate(
        "[document.querySelector('.bubble.agent')?.textContent.length ?? 0, performance.timeOrigin + performance.now()]"
    )
    return now if now and now[0] >= length else None


def _loaded_at(page: PageCdp) -> float | None:
    """When the extension page's DOMContentLoaded ended (wall clock, ms), once it has (a new target is
    about:blank, loaded, before it commits to its URL)."""
    return page.evaluate(  # type: ignore[no-any-return]
        "(n => location.protocol === 'chrome-extension:' && n && n.domContentLoadedEventEnd > 0"
        " ? performance.timeOrigin + n.domContentLoadedEventEnd : null)(performance.getEntriesByType('navigation')[0])"
    )


def run(rounds: int, deltas: int = 100) -> list[Record]:
    if not REAL_CLAUDE.exists():
        note = "n/a (the Claude Code CLI is not installed: run scripts/bootstrap)"
        return [
            missing(SUITE, "panel: streamed text shown after the agent emitted it", "latency", "ms", note)
        ]
    with world(deltas) as (tp, pages, _fake):
        ui = browser(tp)
        try:
            return _measure(tp, ui, pages, rounds)
        finally:
            ui.close()


def _measure(tp: Tabpilot, ui: PageCdp, pages: Any, rounds: int) -> list[Record]:
    tab = person_tab(tp, ui, pages.url("panel-signin.html"))
    first, every, echo = [], [], []
    with page(tp, ui, f"{PANEL}?tab={tab}") as panel:
        wait_until(lambda: _loaded_at(panel), timeout=30)
        cid = None
        for _ in range(rounds):
            echo += [t / 2 for t in panel.evaluate(ECHO % ECHOES_PER_ROUND)]
            panel.evaluate(OBSERVE)
            since = last_seq(tp, cid) if cid else 0
            send(panel, "stream [[script:stream]]")
            wait_until(
                lambda: panel.evaluate("document.querySelector('#send').textContent") == "Stop", timeout=30
            )
            wait_until(
                lambda: panel.evaluate("document.querySelector('#send').textContent") == "Send", timeout=120
            )
            cid = cid or newest_conversation(tp)
            latencies = shown_after_emit(text_events(tp, cid, since), panel.evaluate("__shown"))
            if latencies:
                first.append(latencies[0])
                every += latencies
        # A new chat for the backlog: the panel is closed while 1,000 deltas stream in, then reopened.
        panel.evaluate("document.querySelector('#new-chat').click()")
        send(panel, "backlog [[script:backlog]]")
        wait_until(
            lambda: panel.evaluate("document.querySelector('#send').textContent") == "Stop", timeout=30
        )
    backlog_cid = wait_until(lambda: (lambda c: c if c != cid else None)(newest_conversation(tp)), timeout=30)
    wait_until(lambda: len(text_events(tp, backlog_cid)) >= BACKLOG, timeout=120)
    reopen, after_load, blank, sizes = [], [], [], []
    for _ in range(REOPENINGS_PER_ROUND * rounds):
        # Baseline, interleaved: another extension page (the popup) opened until it has loaded.
        began = time.time() * 1000
        with page(tp, ui, PANEL.replace("sidepanel/sidepanel.html", "popup/popup.html")) as popup:
            loaded = wait_until(lambda p=popup: _loaded_at(p), timeout=30, interval=0.002)
            blank.append(loaded - began)
        backlog = len(text_events(tp, backlog_cid))
        began = time.time() * 1000
        with page(tp, ui, f"{PANEL}?tab={tab}") as panel:
            want = backlog * len(CHUNK)
            seen = wait_until(lambda p=panel, w=want: _shown_at(p, w), timeout=30, interval=0.002)
            reopen.append(seen[1] - began)
            after_load.append(seen[1] - _loaded_at(panel))
            sizes.append(backlog)
            # The turn runs on: live text follows the backlog in the reopened page (not timed).
            wait_until(lambda p=panel, n=seen[0]: _shown_at(p, n + 1), timeout=10, interval=0.01)
    base = ("panel → daemon hop (chat.list round trip / 2)", median(echo) if echo else None)
    case = "panel: streamed text shown after the agent emitted it"
    return [
        measured(SUITE, base[0], "latency", "ms", echo),
        measured(
            SUITE,
            "panel: first delta of a turn shown after the agent emitted it",
            "latency",
            "ms",
            first,
            base,
        ),
        measured(
            SUITE,
            case,
            "latency",
            "ms",
            every,
            base,
            note=f"{len(every)} deltas over {rounds} turns, 20 ms apart",
        ),
        measured(SUITE, PAGE_LOAD, "wall_time", "ms", blank),
        measured(
            SUITE,
            f"panel: reopen renders a running backlog of ≥ {BACKLOG} deltas",
            "wall_time",
            "ms",
            reopen,
            (PAGE_LOAD, median(blank)),
            note=f"backlogs of {min(sizes)}–{max(sizes)} deltas, live text following each; from opening the page to the whole backlog shown",
        ),
        measured(
            SUITE,
            "panel: reopen, backlog shown after the page loaded",
            "wall_time",
            "ms",
            after_load,
            note="from the panel page's DOMContentLoaded to the whole backlog shown",
        ),
    ]
