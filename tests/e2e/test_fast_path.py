"""The hot path against the full CLI on a real daemon, extension and Chromium: the same exit code, stdout
and stderr for results (Unicode, nested values, page exceptions), stale refs and errors.

Each command runs twice: as the installed `tabpilot` (which takes these shapes on its hot path, checked
with `fast.plan`) and as `python -m tabpilot.cli.main` (the full argparse CLI). Commands that change the
page are chosen so that running them again prints the same (a field filled with the same text, a box
already checked).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from harness import PageServer, Tabpilot

from tabpilot.cli import fast


def both(tp: Tabpilot, *argv: str, hot: bool = True) -> str:
    """Run argv through the hot path and the full CLI; they must answer alike. Returns the output."""
    assert (fast.plan(list(argv)) is not None) == hot, argv
    quick = tp.run(*argv, check=False)
    full = subprocess.run(
        [sys.executable, "-m", "tabpilot.cli.main", *argv],
        env=tp.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (quick.code, quick.out, quick.err) == (full.returncode, full.stdout, full.stderr), argv
    assert "Traceback" not in quick.err
    return quick.out + quick.err


def ref(snapshot: str, role: str, name: str) -> str:
    """The ref of `[role "name" @eN …]` (a link: `[name @eN]`)."""
    label = f'{role} "{re.escape(name)}"' if role != "link" else re.escape(name)
    match = re.search(rf"\[{label} (@e\d+)", snapshot)
    assert match, f"no {role} {name!r} in:\n{snapshot}"
    return match.group(1)


@pytest.mark.timeout(300)
def test_results_errors_and_stale_refs_print_alike(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("forms.html"))
    out = both(tp, "open", pages.url("bench-form.html?fast=1"))
    assert out.startswith("navigated to ") and "Bench form" in out

    snapshot = both(tp, "snapshot")
    count, name = ref(snapshot, "button", "Count"), ref(snapshot, "textbox", "Name")
    both(tp, "snapshot", "-i")
    both(tp, "snapshot", "--ref", count)
    both(tp, "text")
    assert "Count" in both(tp, "find", "Count")

    assert both(tp, "eval", "1+1") == "2\n"
    assert both(tp, "eval", "'é💥 ' + [1, 2].join('·')") == '"é💥 1·2"\n'
    both(tp, "eval", "({a: [1, {b: null, c: [true, 2.5]}], s: 'ünï', n: -0})")
    assert both(tp, "eval", "document.title", "--json").startswith("{")
    assert both(tp, "eval", "throw new Error('boom ü')").startswith("exception: Error: boom ü")

    assert both(tp, "click", count) == f'clicked button "Count" {count}\n'
    both(tp, "click", count, "--json")
    both(tp, "hover", count)
    assert both(tp, "fill", name, "Zoë 💥").startswith("filled ")
    both(tp, "type", "x y", "--ref", name)
    both(tp, "press", "End", "--ref", name)
    both(tp, "press", "Tab")

    assert "never given out" in both(tp, "click", "@e9999")
    assert "never given out" in both(tp, "click", "@e9999", "--json")
    # A new document: the old refs are stale.
    tp.run("open", pages.url("bench-form.html?fast=2"))
    stale = both(tp, "click", count)
    assert stale.startswith("error: ") and "hint: " in stale


@pytest.mark.timeout(300)
def test_form_controls_and_refusals_print_alike(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("forms.html"))
    snapshot = tp.run("snapshot").out
    size, subscribe = ref(snapshot, "combobox", "Size"), ref(snapshot, "checkbox", "Subscribe")
    gift, home = ref(snapshot, "checkbox", "Gift wrap"), ref(snapshot, "link", "Home")
    assert both(tp, "select", size, "M").startswith('selected "M"')
    assert both(tp, "check", subscribe).endswith("was already checked\n")
    assert both(tp, "uncheck", gift).endswith("was already unchecked\n")
    refused = both(tp, "fill", home, "x")
    assert refused.startswith("error: ") and "hint: " in refused
    both(tp, "click", home, "--timeout", "2s")
    # Shapes the hot path leaves to the full CLI answer alike too.
    both(tp, "click", "--snap", home, hot=False)
    both(tp, "wait", "--text", "Checkout", "--text", "x", hot=False)
    # Global options before the verb, as the README, the skill and agents write them, take the hot path too.
    tab = json.loads(tp.run("tab", "list", "--json").out)["tabs"][0]["tab_id"]
    assert json.loads(both(tp, "--json", "eval", "1"))["value"] == 1
    both(tp, "--no-boundaries", "snapshot", "-i")
    both(tp, "--json", "find", "Checkout")
    both(tp, "--tab", str(tab), "--timeout", "3s", "eval", "document.readyState", hot=False)
    assert both(tp, "--tab", str(tab), "eval", "document.readyState", "--timeout", "3s") == '"complete"\n'
    assert both(tp, "--browser", "nowhere", "eval", "1").startswith("error: no connected browser matches")
    unknown_tab = both(tp, "--tab", "999", "eval", "1")
    assert unknown_tab.startswith("error: tab 999 is not one of session"), unknown_tab
    # The CLI's own words in its hint (an MCP client hears "the tab_list tool" instead).
    assert "hint: List the session's tabs with `tabpilot tab list`." in unknown_tab, unknown_tab
