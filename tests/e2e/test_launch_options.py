"""`browser launch` options, checked where they land: with --proxy a page's request reaches the proxy
(a loopback one that answers itself) while the extension still reaches the daemon; with
--ignore-https-errors a self-signed HTTPS server gets the page's request; and a managed browser that is
alive but lost its extension is said to be so and restarted, with the same options, instead of a
"retry" loop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from echo_server import Echo, Proxy
from harness import Tabpilot, free_port, pid_alive, wait_until


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    server = Proxy()
    yield server
    server.close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Echo]:
    server = Echo(tls_dir=Path(tmp_path_factory.mktemp("tls")))
    yield server
    server.close()


@pytest.fixture(scope="module")
def launched(proxy: Proxy) -> Iterator[Tabpilot]:
    env = Tabpilot()
    try:
        line = env.run(
            "browser", "launch", "--headless", "--proxy", proxy.url, "--ignore-https-errors", timeout=90
        ).out
        assert f"proxy {proxy.url}, any certificate accepted)" in line, line
        yield env
    finally:
        env.cleanup()


def test_a_page_goes_through_the_proxy(launched: Tabpilot, proxy: Proxy) -> None:
    # Not a loopback name: loopback stays direct, which keeps the extension's link to the daemon.
    launched.run("open", "http://tabpilot-proxy.test/page?x=1")
    assert "http://tabpilot-proxy.test/page?x=1" in proxy.asked
    assert "via the proxy" in launched.run("text").out


def test_a_self_signed_server_gets_the_pages_request(launched: Tabpilot, tls: Echo) -> None:
    launched.run("open", tls.url("/secure"))
    assert tls.headers_of("/secure"), "the HTTPS server got no request"
    assert launched.run("eval", "location.protocol").out.strip() == '"https:"'


def test_a_browser_that_lost_its_extension_is_restarted_with_its_options(
    launched: Tabpilot, proxy: Proxy
) -> None:
    before = launched.browser_pid
    assert before is not None
    # The daemon comes back on another port: the running browser's extension cannot find it again.
    launched.run("daemon", "stop")
    launched.port = free_port()
    again = launched.run("browser", "launch", timeout=120)
    assert (
        f"the managed browser (pid {before}) was running without its extension connected: restarted it"
        in (again.out)
    ), again.out
    assert launched.browser_pid != before
    wait_until(lambda: not pid_alive(before), timeout=20)
    asked = len(proxy.asked)
    launched.run("open", "http://tabpilot-proxy.test/after-restart")
    assert len(proxy.asked) > asked
