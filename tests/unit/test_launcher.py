"""The launcher's decisions that need no browser: flags, branded Chrome, stale service workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tabpilot import launcher
from tabpilot.protocol import RpcError


def test_headless_flags_and_extension() -> None:
    argv = launcher.browser_argv("/usr/bin/chromium", "/x/ext", "/x/profile", headless=True)
    assert "--headless=new" in argv and "--silent-debugger-extension-api" in argv
    assert "--load-extension=/x/ext" in argv and "--user-data-dir=/x/profile" in argv
    assert "--window-size=1280,800" in argv
    headed = launcher.browser_argv("/usr/bin/chromium", "/x/ext", "/x/profile", headless=False)
    assert "--headless=new" not in headed


def test_browser_args_take_quoted_values_with_spaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABPILOT_BROWSER_ARGS", "--lang=fr '--user-agent=My Agent 1.0' --x=\"a b\"")
    argv = launcher.browser_argv("/usr/bin/chromium", "/x/ext", "/x/profile", headless=True)
    assert argv[-4:] == ["--lang=fr", "--user-agent=My Agent 1.0", "--x=a b", "about:blank"]
    monkeypatch.setenv("TABPILOT_BROWSER_ARGS", "--user-agent='unclosed")
    with pytest.raises(RpcError) as refused:
        launcher.browser_argv("/usr/bin/chromium", "/x/ext", "/x/profile", headless=True)
    assert refused.value.code == "invalid_params" and "quote" in refused.value.data["hint"]


@pytest.mark.parametrize(
    ("path", "branded"),
    [
        ("/usr/bin/google-chrome", True),
        ("/opt/google/chrome/google-chrome-stable", True),
        ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", True),
        ("/usr/lib/chromium/chromium", False),
        ("/opt/chrome-linux64/chrome", False),
        ("/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing", False),
    ],
)
def test_branded_chrome_is_recognised(path: str, branded: bool) -> None:
    assert launcher.is_branded_chrome(path) is branded


def test_changed_extension_drops_the_cached_service_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path / "home"))
    home = str(tmp_path / "home")
    os.makedirs(launcher.paths.browser_dir(home))
    profile = tmp_path / "profile"
    cache = profile / "Default" / "Service Worker" / "ScriptCache"
    cache.mkdir(parents=True)
    assert launcher.forget_stale_service_worker(home, str(profile), "v1") is True
    assert not cache.exists()
    cache.mkdir(parents=True)
    assert launcher.forget_stale_service_worker(home, str(profile), "v1") is False
    assert cache.exists()
    assert launcher.forget_stale_service_worker(home, str(profile), "v2") is True
    assert not cache.exists()


def test_extension_digest_follows_content() -> None:
    source = launcher.extension_source()
    assert launcher.extension_digest(source) == launcher.extension_digest(source)
    assert len(launcher.extension_digest(source)) == 64


def test_unknown_executable_is_a_clear_error() -> None:
    with pytest.raises(launcher.RpcError) as info:
        launcher.find_browser("/nonexistent/browser")
    assert info.value.code == "invalid_params" and "no executable browser" in info.value.message
