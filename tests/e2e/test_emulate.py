"""Emulation and PDF, end to end: the page sees the emulated viewport, mobile user agent, timezone, locale,
colour scheme, place (with no person granting it) and offline network, and its server the emulated
user agent and Accept-Language; any catalogued device by any spelling, its screenshot the phone's size;
`--reset`, the session's end and giving a borrowed tab back leave none of it; `pdf` writes a real PDF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from echo_server import Echo
from harness import PageServer, Tabpilot
from test_consent import answer_borrow, browser_ui, persons_window  # noqa: F401  (fixture)
from test_person import Person, person_at


def page(tp: Tabpilot, expression: str, *args: str) -> Any:
    return json.loads(tp.run("eval", expression, *args).out)


def test_the_page_sees_what_is_emulated_and_reset_restores_it(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("agentkit/mobile.html"))
    width, agent = page(tp, "innerWidth"), page(tp, "navigator.userAgent")
    zone = page(tp, "Intl.DateTimeFormat().resolvedOptions().timeZone")
    line = tp.run("emulate", "--viewport", "390x844", "--mobile").out.strip()
    assert line.endswith("emulates viewport 390x844, dpr 1, mobile"), line
    assert page(tp, "innerWidth") == 390 and page(tp, "innerHeight") == 844
    assert "Mobile" in page(tp, "navigator.userAgent") and page(tp, "navigator.maxTouchPoints") > 0
    tp.run("reload")  # it stays across navigations
    assert page(tp, "innerWidth") == 390
    tp.run("emulate", "--timezone", "Asia/Tokyo", "--locale", "fr-FR", "--color-scheme", "dark")
    assert page(tp, "Intl.DateTimeFormat().resolvedOptions().timeZone") == "Asia/Tokyo"
    assert page(tp, "new Intl.NumberFormat().format(1234.5)") == "1\u202f234,5"
    assert page(tp, "matchMedia('(prefers-color-scheme: dark)').matches") is True
    tp.run("emulate", "--geolocation", "48.85,2.35")
    where = "new Promise(r => navigator.geolocation.getCurrentPosition(p => r([p.coords.latitude, p.coords.longitude]), e => r(e.message)))"
    assert page(tp, where) == [48.85, 2.35]
    tp.run("emulate", "--offline")
    fetch = "fetch('/index.html?x=' + Math.random()).then(() => 'online', () => 'offline')"
    assert page(tp, fetch) == "offline"
    assert tp.run("emulate", "--reset").out.strip().endswith("emulation reset")
    assert page(tp, "innerWidth") == width and page(tp, "navigator.userAgent") == agent
    assert page(tp, "Intl.DateTimeFormat().resolvedOptions().timeZone") == zone
    assert page(tp, "matchMedia('(prefers-color-scheme: dark)').matches") is False
    assert page(tp, fetch) == "online"
    device = tp.run("emulate", "--device", "pixel-7", "--json").json["emulating"]
    assert device["viewport"] == "412x839" and page(tp, "devicePixelRatio") == 2.625
    tp.run("emulate", "--reset")


def test_a_returned_borrowed_tab_has_no_emulation_left(
    tp: Tabpilot,
    pages: PageServer,
    browser_ui: Person,  # noqa: F811
) -> None:
    url = pages.url("agentkit/mobile.html?borrowed=1")
    [theirs] = persons_window(browser_ui, [url], active=0)
    with person_at(tp, url) as person:
        width = person.eval("innerWidth")
    borrow = tp.spawn("tab", "borrow", str(theirs), "--reason", "check the phone layout")
    try:
        answer_borrow(tp, url, "allow")
        _, err = borrow.communicate(timeout=15)
    finally:
        borrow.kill()
    assert borrow.returncode == 0, err
    tab = ("--tab", str(theirs))
    tp.run("emulate", "--viewport", "390x844", "--mobile", "--color-scheme", "dark", *tab)
    assert page(tp, "innerWidth", *tab) == 390
    tp.run("tab", "return", str(theirs))
    with person_at(tp, url) as person:
        assert person.eval("innerWidth") == width
        assert "Mobile" not in person.eval("navigator.userAgent")
        assert person.eval("matchMedia('(prefers-color-scheme: dark)').matches") is False


def test_pdf_writes_a_pdf_of_the_page(tp: Tabpilot, pages: PageServer, tmp_path: Path) -> None:
    tp.run("open", pages.url("index.html"))
    out = tmp_path / "page.pdf"
    printed = tp.run("pdf", "--out", str(out)).out.splitlines()
    assert printed[0] == str(out) and out.read_bytes().startswith(b"%PDF-")
    default = Path(tp.run("pdf", "--json").json["path"])
    assert default.parent == Path(tp.home, "pdf") and default.read_bytes()[:5] == b"%PDF-"


WHERE = "new Promise(r => navigator.geolocation.getCurrentPosition(p => r([p.coords.latitude, p.coords.longitude]), e => r(e.message), {timeout: 5000}))"


def test_geolocation_reaches_a_page_nobody_granted_it_to(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("open", pages.url("agentkit/mobile.html?geo=1"))
    assert page(tp, "navigator.permissions.query({name: 'geolocation'}).then(p => p.state)") != "granted"
    tp.run("emulate", "--geolocation", "35.68,139.69")
    assert page(tp, WHERE) == [35.68, 139.69]
    state = "navigator.permissions.query({name: 'geolocation'}).then(p => p.state)"
    tp.run("emulate", "--reset")
    assert page(tp, state) != "granted"
    # Another session's grant ends with it.
    other = ("--session", "geo")
    tp.run("session", "start", "geo")
    tp.run("open", pages.url("agentkit/mobile.html?geo=2"), *other)
    tp.run("emulate", "--geolocation", "1,2", *other)
    assert json.loads(tp.run("eval", state, *other).out) == "granted"
    tp.run("session", "stop", "geo")
    tp.run("reload")
    assert page(tp, state) != "granted"


def test_a_locale_is_the_pages_language_and_the_servers_accept_language(tp: Tabpilot) -> None:
    echo = Echo()
    try:
        tp.run("open", echo.url("/first"))
        assert not echo.headers_of("/first")[-1].get("accept-language", "").startswith("fr-FR")
        tp.run("emulate", "--locale", "fr-FR", "--device", "iPhone 15 Pro")
        tp.run("open", echo.url("/second"))
        assert page(tp, "navigator.language") == "fr-FR"
        assert page(tp, "navigator.languages")[0] == "fr-FR"
        assert page(tp, "new Intl.NumberFormat().format(1234.5)") == "1\u202f234,5"
        got = echo.headers_of("/second")[-1]
        assert got["accept-language"].startswith("fr-FR"), got
        # The device's user agent and the locale keep each other.
        assert "iPhone" in got["user-agent"] and "iPhone" in page(tp, "navigator.userAgent")
        tp.run("emulate", "--user-agent", "TabpilotTest/1.0 (agent)")
        tp.run("open", echo.url("/third"))
        got = echo.headers_of("/third")[-1]
        assert got["user-agent"] == "TabpilotTest/1.0 (agent)" and got["accept-language"].startswith("fr-FR")
        assert page(tp, "navigator.userAgent") == "TabpilotTest/1.0 (agent)"
        tp.run("emulate", "--reset")
        tp.run("open", echo.url("/fourth"))
        got = echo.headers_of("/fourth")[-1]
        assert "TabpilotTest" not in got["user-agent"] and not got["accept-language"].startswith("fr-FR")
    finally:
        echo.close()


def test_any_device_of_the_catalogue_by_any_spelling_and_its_screenshot_is_the_phones_size(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    assert len(tp.run("emulate", "--list-devices").out.splitlines()) >= 200
    tp.run("open", pages.url("index.html"))  # no viewport tag: a phone lays it out 980 px wide
    for spelling in ("iPhone 15 Pro", "iphone-15-pro"):
        line = tp.run("emulate", "--device", spelling).out.strip()
        assert line.endswith("emulates viewport 393x659, dpr 3, mobile, device iPhone 15 Pro"), line
        assert page(tp, "[screen.width, screen.height, devicePixelRatio]") == [393, 852, 3]
        assert "iPhone" in page(tp, "navigator.userAgent") and page(tp, "navigator.maxTouchPoints") > 0
    shot = tp.run("screenshot", "--out", str(tmp_path / "phone.png"), "--json").json
    assert (shot["width"], shot["height"]) == (393 * 3, 659 * 3), shot
    tp.run("emulate", "--device", "Galaxy S9+")
    assert page(tp, "devicePixelRatio") == 4.5
    tp.run("emulate", "--reset")
