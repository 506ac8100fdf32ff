"""Cookies, Web Storage and saved login state, end to end: a page's cookies listed (HttpOnly values
hidden without the flag), set and cleared as the page and the server see them; localStorage and
sessionStorage as the page sees them; `state save` in one managed browser and `state load` into a fresh
one restores a signed-in fixture session."""

from __future__ import annotations

import json
from pathlib import Path

from harness import PageServer, Tabpilot
from test_downloads import block, unblocked  # noqa: F401  (a fixture)


def page_value(tp: Tabpilot, expression: str) -> object:
    return json.loads(tp.run("eval", expression).out)


def signed_in_as(tp: Tabpilot, pages: PageServer) -> str:
    tp.run("open", pages.url("whoami"))
    return str(page_value(tp, "document.querySelector('#who').textContent"))


def test_cookies_of_the_site_are_listed_set_and_cleared(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("login?user=ada"))
    assert page_value(tp, "document.querySelector('#who').textContent") == "Signed in as ada"
    tp.run("eval", "document.cookie = 'theme=dark; path=/'")
    listed = tp.run("cookies").out.strip().splitlines()
    assert "theme=dark 127.0.0.1 /" in listed, listed
    sid = next(line for line in listed if line.startswith("sid="))
    assert "ada-token" not in sid and "HttpOnly" in sid and "(hidden" in sid
    assert (
        tp.run("cookies", "get", "sid", "--show-secrets", "--json").json["cookies"][0]["value"] == "ada-token"
    )
    assert tp.run("cookies", "set", "lang", "en").out.startswith("set lang=en 127.0.0.1 /")
    assert "lang=en" in str(page_value(tp, "document.cookie"))
    refused = tp.run("cookies", "set", "x", "1", "--domain", "example.com", "--json", check=False)
    assert refused.code == 1 and json.loads(refused.out)["error"]["code"] == "permission_denied"
    assert tp.run("cookies", "clear").out.startswith("cleared 3 cookies")
    assert page_value(tp, "document.cookie") == ""
    assert signed_in_as(tp, pages) == "Signed out"


def test_local_and_session_storage_as_the_page_sees_them(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("index.html"))
    tp.run("eval", "localStorage.clear(); sessionStorage.clear(); localStorage.setItem('from-page', 'yes')")
    assert tp.run("storage", "local").out.strip() == 'from-page="yes"'
    assert tp.run("storage", "local", "set", "cart", '{"n": 2}').out.startswith(
        "set cart in localStorage of "
    )
    assert page_value(tp, "localStorage.getItem('cart')") == '{"n": 2}'
    assert tp.run("storage", "local", "get", "cart").out.strip() == '{"n": 2}'
    tp.run("storage", "session", "set", "step", "3")
    assert page_value(tp, "sessionStorage.getItem('step')") == "3"
    tp.run("storage", "local", "clear", "cart")
    assert page_value(tp, "localStorage.getItem('cart')") is None
    tp.run("storage", "local", "clear")
    assert page_value(tp, "localStorage.length") == 0
    assert page_value(tp, "sessionStorage.getItem('step')") == "3"


def test_state_save_then_load_into_a_fresh_managed_browser_restores_the_login(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    tp.run("open", pages.url("login?user=grace"))
    tp.run("storage", "local", "set", "draft", "hello")
    saved = tmp_path / "state.json"
    printed = tp.run("state", "save", str(saved)).out.splitlines()
    assert printed[0] == str(saved)
    state = json.loads(saved.read_text())
    assert {"name": "sid", "value": "grace-token"}.items() <= next(
        c for c in state["cookies"] if c["name"] == "sid"
    ).items()
    assert {"origin": pages.origin, "localStorage": [{"name": "draft", "value": "hello"}]} in state["origins"]
    assert saved.stat().st_mode & 0o077 == 0
    fresh = Tabpilot()
    try:
        fresh.run("browser", "launch", "--headless", timeout=90)
        assert signed_in_as(fresh, pages) == "Signed out"
        loaded = fresh.run("state", "load", str(saved)).out.strip()
        assert loaded.startswith("loaded ") and "localStorage of 1 origin" in loaded, loaded
        assert signed_in_as(fresh, pages) == "Signed in as grace"
        assert page_value(fresh, "localStorage.getItem('draft')") == "hello"
    finally:
        fresh.cleanup()


def test_state_save_and_load_leave_out_a_blocked_sites_cookies_whatever_port_or_path_it_names(
    tp: Tabpilot,
    pages: PageServer,
    other_site: PageServer,
    tmp_path: Path,
    unblocked: None,  # noqa: F811
) -> None:
    # A cookie knows no port: the one localhost:PORT/login sets goes to localhost:PORT/private too.
    tp.run("open", other_site.url("login?user=mallory"))
    tp.run("open", pages.url("index.html"))
    port = other_site.origin.rsplit(":", 1)[1]
    planted = tmp_path / "planted.json"
    planted.write_text(
        json.dumps(
            {
                "cookies": [{"name": "planted", "value": "x", "domain": "localhost", "path": "/"}],
                "origins": [],
            }
        )
    )
    for pattern in (f"localhost:{port}", f"localhost:{port}/private/*", f"http://localhost:{port}/private"):
        block(tp, pattern)
        saved = tmp_path / "state.json"
        tp.run("state", "save", str(saved))
        cookies = json.loads(saved.read_text())["cookies"]
        assert not [c for c in cookies if c["domain"].lstrip(".") == "localhost"], (pattern, cookies)
        tp.run("state", "load", str(planted))
    # nor did loading plant one there
    block(tp)
    tp.run("open", other_site.url("index.html"))
    assert "planted" not in str(page_value(tp, "document.cookie"))
