"""The value types of emulation and request shaping: device names in any spelling, headers, origins,
one-line text, credentials."""

from __future__ import annotations

import argparse

import pytest

from tabpilot.cli.devices import catalogue, device
from tabpilot.cli.shaping_commands import credentials
from tabpilot.cli.values import Header, OneLine, WebOrigin


def test_the_catalogue_is_playwrights_and_names_match_in_any_spelling() -> None:
    assert len(catalogue()) >= 200
    for spelling in ("iPhone 15 Pro", "iphone-15-pro", "IPHONE_15_PRO", " iphone 15  pro "):
        assert device(spelling).name == "iPhone 15 Pro"
    assert device("galaxy s9+").name == "Galaxy S9+" and device("galaxy-s9-plus").name == "Galaxy S9+"
    pro = device("iPhone 15 Pro")
    assert (pro.viewport, pro.screen, pro.dpr, pro.mobile, pro.touch) == (
        (393, 659),
        (393, 852),
        3.0,
        True,
        True,
    )
    assert device("Desktop").user_agent is None and not device("Laptop").mobile
    with pytest.raises(argparse.ArgumentTypeError, match="did you mean 'iPhone 15'"):
        device("iphone 15x")


def test_headers_origins_and_credentials_are_checked() -> None:
    assert Header()("X-Api-Key:  abc ") == ("X-Api-Key", "abc")
    for bad in ("NoColon", "Bad Name: x", "Cookie: a=b", "host: x", ": x"):
        with pytest.raises(argparse.ArgumentTypeError):
            Header()(bad)
    assert WebOrigin()("HTTPS://Api.Example.com:443/path?q") == "https://api.example.com"
    assert WebOrigin()("http://[::1]:8080") == "http://[::1]:8080"
    assert WebOrigin(("socks5",))("socks5://127.0.0.1:1080") == "socks5://127.0.0.1:1080"
    for bad in ("ftp://x", "example.com", "http://", "http://a:99999", "http://u:p@a"):
        with pytest.raises(argparse.ArgumentTypeError):
            WebOrigin()(bad)
    assert credentials("alice:pa:ss") == {"username": "alice", "password": "pa:ss"}
    for bad in ("alice", ":pw", "a:b\nc"):
        with pytest.raises(argparse.ArgumentTypeError):
            credentials(bad)
    with pytest.raises(argparse.ArgumentTypeError):
        OneLine(5)("toolong")
