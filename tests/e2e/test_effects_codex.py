"""Approvals judge what an action does, with the real Codex CLI in the side panel (browser-only, against
the fake Responses API of tests/agents on loopback): the person picks Codex in the panel, and Codex acts
on the hostile shop of test_effects.py, whose div POSTs from script and whose quantity field sends its
form on the Enter inside typed text. The shop's own server says what left the browser, and the fake
model says what Codex was told back: nothing before the person's yes, nothing after a no, and a no
reaches Codex as the person's refusal.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import REPO, Tabpilot, wait_until
from panel_world import REAL_CLAUDE, Say, Use, popped_out
from shop_server import Shop
from test_approvals import answer
from test_consent import chrome
from test_effects import SEND, held_card, nothing_sent_yet, options, shop, tab, turn, turn_over
from test_person import Person

if str(REPO / "tests" / "agents") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "agents"))
from fake_openai import FakeOpenAI

__all__ = ["nothing_sent_yet", "options", "shop", "tab"]

REAL_CODEX = REPO / ".venv" / "node" / "node_modules" / ".bin" / "codex"
pytestmark = pytest.mark.skipif(
    not (REAL_CODEX.exists() and REAL_CLAUDE.exists()),
    reason="the agent CLIs are not installed (run scripts/bootstrap)",
)

SCRIPTS: dict[str, list[Say | Use]] = {
    "basket": [Use("mcp__tabpilot__click", {"target": "#basket"}), Say(["Done."])],
    "type": [Use("mcp__tabpilot__type", {"ref": "input[name=qty]", "text": "5\n"}), Say(["Done."])],
}


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(SCRIPTS).start()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def tp(model: FakeOpenAI) -> Iterator[Tabpilot]:
    """A managed browser whose daemon knows two ready agents, Claude Code first, and whose Codex finds
    the fake Responses API through the person's own ~/.codex/config.toml."""
    home = Path(tempfile.mkdtemp(prefix="codex-home-"))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'model = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{model.base_url}"\nwire_api = "responses"\n'
    )
    env = Tabpilot(extra_env={"HOME": str(home), "CODEX_HOME": str(home / ".codex")})
    try:
        env.run("panel", "agent", "set", "claude", "--bin", str(REAL_CLAUDE))
        env.run("panel", "agent", "set", "codex", "--bin", str(REAL_CODEX))
        env.run("browser", "launch", "--headless", timeout=120)
        yield env
    finally:
        env.cleanup()
        shutil.rmtree(home, ignore_errors=True)


def pick_codex(panel: Person) -> None:
    """The person chooses Codex in the panel's agent list (the panel then remembers it)."""
    panel.eval(
        "(s => { if (s.value !== 'codex') { s.value = 'codex'; s.dispatchEvent(new Event('change')); } })"
        "(document.querySelector('#agent'))"
    )
    assert panel.eval("document.querySelector('#agent').selectedOptions[0].textContent") == "Codex"


def last_tool_output(model: FakeOpenAI) -> str:
    """What Codex sent its model back for the turn's one tool call (a later turn resumes the thread, so
    earlier outputs come along before it)."""
    outputs = [i for i in model.requests[-1]["body"]["input"] if i.get("type") == "function_call_output"]
    return json.dumps(outputs[-1]["output"])


def test_a_div_whose_script_orders_waits_for_the_persons_yes_under_codex(
    tp: Tabpilot, model: FakeOpenAI, shop: Shop, tab: int
) -> None:
    order = f"http://shop.localhost:{shop.port}/order"
    with popped_out(tp, tab) as panel:
        pick_codex(panel)
        asked = len(model.requests)
        turn(panel, "basket")
        card = held_card(panel, 1)
        assert (card["rule"], card["site"]) == (SEND, "on shop.localhost"), card
        assert card["target"] == f"POST {order} (after click #basket)", card
        assert len(model.requests) > asked, "the turn ran on Codex, not on the panel's first agent"
        offered = {str(t.get("name")) for t in model.requests[asked]["body"].get("tools") or []}
        assert "exec_command" not in offered, f"browser-only Codex has no shell: {offered}"
        assert shop.sent() == [], "held in the browser while the person decides"
        answer(panel, "deny")
        turn_over(panel)
        assert shop.sent() == []
        refused = last_tool_output(model)
        assert "user_declined" in refused, refused
        # The div ran in the page though its request did not leave: the page starts again.
        chrome(panel, f"chrome.tabs.reload({tab})")
        wait_until(lambda: chrome(panel, f"chrome.tabs.get({tab})")["status"] == "complete")
        turn(panel, "basket")
        held_card(panel, 2)
        assert shop.sent() == []
        answer(panel, "allow")
        wait_until(lambda: shop.sent() == [("shop.localhost", "/order", "qty=7")], timeout=15)
        turn_over(panel)
        allowed = last_tool_output(model)
        assert "user_declined" not in allowed, allowed
    assert shop.sent() == [("shop.localhost", "/order", "qty=7")], "exactly one order"


def test_the_enter_inside_typed_text_asks_before_the_form_leaves_under_codex(
    tp: Tabpilot, model: FakeOpenAI, shop: Shop, tab: int
) -> None:
    with popped_out(tp, tab) as panel:
        pick_codex(panel)
        asked = len(model.requests)
        turn(panel, "type")
        card = held_card(panel, 1)
        assert len(model.requests) > asked, "the turn ran on Codex"
        assert card["rule"] == "Submit a form" and "(text [redacted])" in card["target"], card
        assert card["target"].endswith(f"→ http://shop.localhost:{shop.port}/order"), card
        assert shop.sent() == [], "the form waits in the browser while the person decides"
        answer(panel, "deny")
        turn_over(panel)
        refused = last_tool_output(model)
        assert "user_declined" in refused, refused
    assert shop.sent() == []
