"""Request shaping, end to end, checked where it lands: extra headers and basic credentials reach the
origin they were set for (its page and its subresources) and no other, not even after the page sends the
browser there by a redirect; an init script runs before the page's own first script; a tab opened on a
URL has nothing to go back to; and an MCP client hears about a dialog in MCP's words."""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from echo_server import Echo
from harness import PageServer, Tabpilot
from test_mcp_families import Mcp


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Echo, Echo]]:
    """Two origins: 127.0.0.1 and localhost, each on a port of its own."""
    mine, other = Echo(), Echo(host="localhost")
    yield mine, other
    mine.close()
    other.close()


def page(tp: Tabpilot, expression: str) -> Any:
    return json.loads(tp.run("eval", expression).out)


def fetched(tp: Tabpilot, url: str) -> None:
    """The page fetches ``url`` (no-cors: a server that says nothing of CORS still gets the request)."""
    assert (
        page(tp, f"fetch({json.dumps(url)}, {{mode: 'no-cors'}}).then(() => 'sent', e => String(e))")
        == "sent"
    )


def test_headers_and_credentials_reach_their_origin_only(tp: Tabpilot, servers: tuple[Echo, Echo]) -> None:
    mine, other = servers
    said = tp.run("network", "headers", mine.origin, "X-Api-Key: k-123", "X-Team: blue").out.strip()
    assert said == f"requests to {mine.origin} carry X-Api-Key, X-Team (1 origin shaped)", said
    said = tp.run("network", "credentials", mine.origin, "alice:s3:cret").out.strip()
    assert said == f"requests to {mine.origin} carry basic credentials for alice", said
    listing = tp.run("network", "headers").out
    assert listing.strip() == f"{mine.origin}: X-Api-Key, X-Team; basic credentials"
    assert "k-123" not in listing and "s3:cret" not in listing

    tp.run("open", mine.url("/page"))
    fetched(tp, mine.url("/text?sub=1"))
    fetched(tp, other.url("/text?cross=1"))
    basic = "Basic " + base64.b64encode(b"alice:s3:cret").decode()
    for got in (mine.headers_of("/page")[-1], mine.headers_of("/text?sub=1")[-1]):
        assert got["x-api-key"] == "k-123" and got["x-team"] == "blue" and got["authorization"] == basic
    cross = other.headers_of("/text?cross=1")[-1]
    assert "x-api-key" not in cross and "authorization" not in cross

    # The page fights back: it sends the browser to another origin by a redirect from the shaped one.
    away = "/redirect?to=" + urllib.parse.quote(other.url("/landed"), safe="")
    tp.run("open", mine.url(away))
    assert mine.headers_of(away)[-1]["authorization"] == basic
    landed = other.headers_of("/landed")[-1]
    assert "authorization" not in landed and "x-api-key" not in landed

    tp.run("network", "headers", mine.origin, "--clear")
    tp.run("network", "credentials", mine.origin, "--clear")
    assert tp.run("network", "headers").out.strip() == "no origin is shaped in this session"
    tp.run("open", mine.url("/after"))
    after = mine.headers_of("/after")[-1]
    assert "x-api-key" not in after and "authorization" not in after


def test_an_init_script_runs_before_the_pages_own_scripts(
    tp: Tabpilot, servers: tuple[Echo, Echo], tmp_path: Path
) -> None:
    mine, _ = servers
    script = tmp_path / "first.js"
    script.write_text("window.initScriptRan = true; window.sawDocument = document.documentElement !== null;")
    tp.run("open", mine.url("/init"))
    assert page(tp, "window.seenFirst") == "page"
    said = tp.run("init-script", "add", str(script)).out.strip()
    assert said.startswith("init script s") and "(first.js) runs first in tab" in said, said
    script_id = said.split()[2]
    tp.run("reload")
    assert page(tp, "window.seenFirst") == "init script"
    assert tp.run("init-script", "list").out.strip().startswith(f"{script_id}  first.js  ")
    tp.run("open", mine.url("/init?again=1"))  # every document from then on
    assert page(tp, "window.seenFirst") == "init script"
    assert tp.run("init-script", "remove").out.strip() == "removed 1 init script (0 left)"
    tp.run("reload")
    assert page(tp, "window.seenFirst") == "page"


def test_a_tab_opened_on_a_url_has_nothing_to_go_back_to(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("tab", "new", pages.url("index.html"))
    back = tp.run("back", check=False)
    assert back.code == 1 and "no previous history entry" in back.err, back
    assert page(tp, "location.href") == pages.url("index.html")
    tp.run("open", pages.url("second.html"))
    assert "index.html" in tp.run("back").out


def test_an_mcp_client_hears_about_a_dialog_in_mcp_words(tp: Tabpilot, pages: PageServer) -> None:
    mcp = Mcp(tp)
    try:
        mcp.call("open", url=pages.url("actions/dialogs.html"))
        result = mcp.request("tools/call", {"name": "click", "arguments": {"target": "#confirm"}})
        text = result["content"][-1]["text"]
        assert text.endswith("— the dialog tool with action=accept or dismiss"), text
        blocked = mcp.request("tools/call", {"name": "eval", "arguments": {"expression": "1"}})
        said = blocked["content"][0]["text"]
        assert blocked["isError"] and "tabpilot" not in said and said.count("the dialog tool") == 1, said
        mcp.call("dialog", action="dismiss")
    finally:
        mcp.close()
