"""Blocked sites and read scope hold for every verb of the agent kit: on a blocked site's page, and on a
tab of the person's that was not borrowed, the network log, cookies, storage, state, emulation, PDF,
annotated screenshots, snapshot diffs and init scripts are all refused; neither a route nor the session's
headers for it let a request reach a blocked site."""

from __future__ import annotations

import json

from harness import PageServer, Tabpilot, wait_until
from test_consent import browser_ui, persons_window  # noqa: F401  (fixture)
from test_downloads import block, unblocked  # noqa: F401  (fixture)
from test_person import Person

VERBS = [
    ["network", "requests"],
    ["network", "request", "1"],
    ["network", "har", "--out", "/tmp/tabpilot-never-written.har"],
    ["cookies"],
    ["cookies", "set", "a", "b"],
    ["storage", "local"],
    ["state", "save", "/tmp/tabpilot-never-written.json"],
    ["emulate", "--viewport", "390x844"],
    ["emulate", "--user-agent", "Spoofed/1"],
    ["init-script", "list"],
    ["init-script", "remove"],
    ["pdf", "--out", "/tmp/tabpilot-never-written.pdf"],
    ["screenshot", "--annotate", "--out", "/tmp/tabpilot-never-written.png"],
    ["snapshot", "--diff"],
]


def refused(tp: Tabpilot, *argv: str) -> dict:
    result = tp.run(*argv, "--json", check=False)
    assert result.code == 1, (argv, result.out, result.err)
    return json.loads(result.out)["error"]  # type: ignore[no-any-return]


def test_a_blocked_sites_tab_takes_none_of_the_new_verbs(
    tp: Tabpilot,
    other_site: PageServer,
    pages: PageServer,
    unblocked: None,  # noqa: F811
) -> None:
    tp.run("open", other_site.url("agentkit/network.html"))
    block(tp, f"localhost:{other_site.server.server_address[1]}")
    for argv in VERBS:
        error = refused(tp, *argv)
        assert (error["code"], error["reason"]) == ("blocked_site", "site_blocked"), argv
    # A route cannot let the page reach (or fake) a blocked site: the guard fails the request first.
    tp.run("open", pages.url("agentkit/network.html"))
    tp.run("network", "route", "*/items.json*", "--body", '{"items": ["faked"]}')
    blocked_api = other_site.url("agentkit/items.json")
    tp.run(
        "eval",
        f"fetch({json.dumps(blocked_api)}).then(r => r.text()).then(t => window.got = t, e => window.got = 'failed')",
    )
    assert wait_until(lambda: json.loads(tp.run("eval", "window.got || null").out)) == "failed"
    assert not any("items.json" in r for r in other_site.requests)
    tp.run("network", "unroute")
    # Nor can the session's headers for a blocked origin: the guard fails its requests before they are shaped.
    tp.run("network", "headers", other_site.origin, "X-Api-Key: k")
    tp.run(
        "eval",
        f"fetch({json.dumps(blocked_api)}, {{mode: 'no-cors'}}).then(() => window.shaped = 'sent', () => window.shaped = 'failed')",
    )
    assert wait_until(lambda: json.loads(tp.run("eval", "window.shaped || null").out)) == "failed"
    assert not any("items.json" in r for r in other_site.requests)
    tp.run("network", "headers", other_site.origin, "--clear")


def test_a_persons_tab_is_out_of_scope_for_the_new_verbs(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
) -> None:
    tp.run("open", pages.url("index.html"))
    [theirs] = persons_window(browser_ui, [pages.url("second.html?scope=new-verbs")], active=0)
    for argv in VERBS:
        error = refused(tp, "--tab", str(theirs), *argv)
        assert (error["code"], error["reason"]) == ("permission_denied", "agent_window_scope"), argv
