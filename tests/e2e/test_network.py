"""The network, end to end: the requests a page makes (status, type, headers with credentials hidden,
bodies), routes that answer the page's fetch with the agent's body or abort it, and a HAR file that
Python's json reads back."""

from __future__ import annotations

import json
from pathlib import Path

from harness import PageServer, Tabpilot, wait_until


def page_text(tp: Tabpilot, *s: str) -> str:
    return json.loads(tp.run("eval", "document.querySelector('#out').textContent", *s).out)


def test_requests_list_the_pages_fetch_with_status_type_and_hidden_credentials(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    tp.run("open", pages.url("agentkit/network.html"))
    tp.run("click", "#load")
    assert wait_until(lambda: page_text(tp) == "200: from the server")
    listed = tp.run("network", "requests", "--type", "fetch").out.strip().splitlines()
    assert (
        len(listed) == 1
        and " GET 200 fetch " in listed[0]
        and listed[0].endswith("/agentkit/items.json?page=1")
    ), listed
    seq = listed[0].split()[0].lstrip("#")
    documents = tp.run("network", "requests", "--type", "document", "--json").json["entries"]
    assert [e["url"] for e in documents] == [pages.url("agentkit/network.html")]
    detail = tp.run("network", "request", seq, "--body", "--json").json
    assert detail["request_headers"]["Authorization"].startswith("(hidden")
    assert json.loads(detail["body"]) == {"items": ["from the server"]}
    text = tp.run("network", "request", seq).out
    assert "s3cret-token" not in text and "> Authorization: (hidden" in text
    shown = tp.run("network", "request", seq, "--show-secrets", "--json").json
    assert shown["request_headers"]["Authorization"] == "Bearer s3cret-token"
    body = tmp_path / "items.json"
    tp.run("network", "request", seq, "--out", str(body))
    assert json.loads(body.read_text()) == {"items": ["from the server"]}
    since = tp.run("network", "requests", "--since", seq, "--json").json
    assert all(e["seq"] > int(seq) for e in since["entries"])


def test_route_mocks_and_aborts_the_pages_fetch_and_unroute_lets_it_through(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    tp.run("open", pages.url("agentkit/network.html"))
    served = len(pages.requests)
    mocked = '{"items": ["mocked one", "mocked two"]}'
    routed = tp.run(
        "network", "route", "*/items.json*", "--body", mocked, "--content-type", "application/json"
    )
    assert routed.out.startswith("routed */items.json* → 200 with "), routed.out
    tp.run("click", "#load")
    assert wait_until(lambda: page_text(tp) == "200: mocked one, mocked two")
    assert not any("items.json" in r for r in pages.requests[served:])
    fetched = tp.run("network", "requests", "--filter", "items.json", "--json").json["entries"][-1]
    assert fetched["status"] == 200
    tp.run("network", "route", "items.json", "--abort")
    tp.run("click", "#load")
    assert wait_until(lambda: page_text(tp).startswith("failed:"))
    assert tp.run("network", "unroute").out.startswith("removed 2 routes")
    tp.run("click", "#load")
    assert wait_until(lambda: page_text(tp) == "200: from the server")
    har = tmp_path / "run.har"
    printed = tp.run("network", "har", "--out", str(har)).out.splitlines()
    assert printed[0] == str(har)
    log = json.loads(har.read_text())["log"]
    urls = [e["request"]["url"] for e in log["entries"]]
    assert pages.url("agentkit/network.html") in urls
    # This page's three fetches, last in the tab's log: mocked, aborted, from the server.
    statuses = [e["response"]["status"] for e in log["entries"] if "items.json" in e["request"]["url"]][-3:]
    assert statuses == [200, 0, 200], statuses
    headers = [h for e in log["entries"] for h in e["request"]["headers"] if h["name"] == "Authorization"]
    assert headers and all(h["value"].startswith("(hidden") for h in headers)
