"""`browser launch` options, checked where they land: a managed browser that is alive but lost its
extension is said to be so and restarted (here with new options) instead of a "retry" loop; with
--proxy a page's request reaches the proxy (a loopback one that answers itself) while the extension
still reaches the daemon; with --ignore-https-errors a self-signed HTTPS server gets the page's
request. The tests run in order on one browser."""

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
    """A managed browser, plain at first; the first test restarts it with the options."""
    env = Tabpilot()
    try:
        env.run("browser", "launch", "--headless", timeout=90)
        yield env
    finally:
        env.cleanup()


def test_a_browser_that_lost_its_extension_is_said_so_and_restarted(launched: Tabpilot, proxy: Proxy) -> None:
    before = launched.browser_pid
    assert before is not None
    # The daemon comes back on another port: the running browser's extension cannot find it again.
    launched.run("daemon", "stop")
    launched.port = free_port()
    again = launched.run("browser", "launch", "--proxy", proxy.url, "--ignore-https-errors", timeout=120)
    lost = f"the managed browser (pid {before}) was running without its extension connected: restarted it"
    assert again.out.startswith(lost), again.out
    assert f"proxy {proxy.url}, any certificate accepted)" in again.out, again.out
    assert launched.browser_pid != before
    wait_until(lambda: not pid_alive(before), timeout=20)
    assert launched.run("open", "about:blank").code == 0


def test_a_page_goes_through_the_proxy(launched: Tabpilot, proxy: Proxy) -> None:
    # Not a loopback name: loopback stays direct, which keeps the extension's link to the daemon.
    launched.run("open", "http://tabpilot-proxy.test/page?x=1")
    assert "http://tabpilot-proxy.test/page?x=1" in proxy.asked
    assert "via the proxy" in launched.run("text").out


def test_a_self_signed_server_gets_the_pages_request(launched: Tabpilot, tls: Echo) -> None:
    launched.run("open", tls.url("/secure"))
    assert tls.headers_of("/secure"), "the HTTPS server got no request"
    assert launched.run("eval", "location.protocol").out.strip() == '"https:"'


def test_other_options_for_a_connected_browser_are_refused_with_a_hint(launched: Tabpilot) -> None:
    refused = launched.run("browser", "launch", "--proxy", "http://127.0.0.1:9", check=False)
    assert refused.code == 1 and "running with other network options" in refused.err, refused.err
    assert "hint: stop it first" in refused.err
    assert launched.run("browser", "launch").out.startswith("managed browser already running")
