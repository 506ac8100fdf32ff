"""Find a Chromium-family browser and run it with the extension on a managed, pre-paired profile."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from tabpilot import paths
from tabpilot.protocol import RpcError

# Debian ships a wrapper script at /usr/bin/chromium; the real binary gives a predictable argv.
LINUX_CANDIDATES = (
    "/usr/lib/chromium/chromium",
    "chromium",
    "chromium-browser",
    "chrome",  # Chrome for Testing
    "google-chrome-for-testing",
    "google-chrome",
    "google-chrome-stable",
    "microsoft-edge",
    "microsoft-edge-stable",
    "brave-browser",
)
MAC_CANDIDATES = (
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    "/Applications/Brave Browser.app/Contents/MacOS/Brave Browser",
)
CONFIG_FILE = "tabpilot-config.json"
STATE_FILE = "browser.json"
WINDOW_SIZE = "1280,800"


def extension_source() -> str:
    """The extension folder shipped inside the package (what "Load unpacked" needs)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "extension")


def find_browser(explicit: str | None = None) -> str:
    wanted = explicit or os.environ.get("TABPILOT_BROWSER_EXECUTABLE")
    if wanted:
        resolved = shutil.which(wanted) or (wanted if os.path.isfile(wanted) else None)
        if resolved is None or not os.access(resolved, os.X_OK):
            raise RpcError(
                "invalid_params",
                f"no executable browser at {wanted}",
                hint="give the full path of a Chromium, Chrome, Edge or Brave binary",
            )
        return os.path.abspath(resolved)
    for candidate in MAC_CANDIDATES if sys.platform == "darwin" else LINUX_CANDIDATES:
        found = (
            candidate
            if os.path.isabs(candidate) and os.access(candidate, os.X_OK)
            else shutil.which(candidate)
        )
        if found:
            return found
    raise RpcError(
        "not_found",
        "no Chromium-family browser found",
        hint="install one (Debian/Ubuntu: `apt-get install chromium`) or pass --executable PATH",
    )


def is_branded_chrome(executable: str) -> bool:
    """Google Chrome (not Chromium, not Chrome for Testing) ignores --load-extension since 137."""
    name = os.path.basename(executable).lower()
    lowered = executable.lower()
    if "for testing" in lowered or "for-testing" in lowered or name == "chrome":
        return False
    return name.startswith("google-chrome") or lowered.endswith("/google chrome")


def has_display() -> bool:
    if sys.platform == "darwin":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def prepare_extension(home: str, config: dict[str, Any]) -> str:
    """Copy the extension into the managed browser's folder and write its config file there.

    The manifest's fixed key keeps the extension id the same wherever the folder lives.
    """
    target = os.path.join(paths.browser_dir(home), "extension")
    if os.path.isdir(target):
        shutil.rmtree(target)
    shutil.copytree(extension_source(), target, ignore=shutil.ignore_patterns(CONFIG_FILE, "package.json"))
    config_path = os.path.join(target, CONFIG_FILE)
    fd = os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    return target


def extension_digest(directory: str) -> str:
    """A fingerprint of the extension's files, to notice when an upgrade changed them."""
    import hashlib

    digest = hashlib.sha256()
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            if name == CONFIG_FILE:
                continue
            path = os.path.join(root, name)
            digest.update(os.path.relpath(path, directory).encode() + b"\0")
            with open(path, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


def forget_stale_service_worker(home: str, profile: str, digest: str) -> bool:
    """Chromium keeps running a cached copy of an extension's service worker after its files change
    on disk; when they changed since the last launch, drop the profile's service-worker cache."""
    marker = os.path.join(paths.browser_dir(home), "extension.sha256")
    try:
        with open(marker, encoding="utf-8") as handle:
            previous = handle.read().strip()
    except FileNotFoundError:
        previous = ""
    stale = previous != digest
    if stale:
        shutil.rmtree(os.path.join(profile, "Default", "Service Worker"), ignore_errors=True)
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write(digest)
    return stale


def set_download_folder(profile: str, folder: str) -> None:
    """Point the profile's downloads at `folder`, without asking where to save.

    Extensions cannot choose a download folder (chrome.downloads names files relative to the
    default one), so the managed profile's preferences set it before the browser starts.
    """
    os.makedirs(folder, mode=0o700, exist_ok=True)
    prefs_path = os.path.join(profile, "Default", "Preferences")
    os.makedirs(os.path.dirname(prefs_path), mode=0o700, exist_ok=True)
    try:
        with open(prefs_path, encoding="utf-8") as handle:
            prefs = json.load(handle)
        if not isinstance(prefs, dict):
            prefs = {}
    except (FileNotFoundError, ValueError):
        prefs = {}
    download = prefs.get("download") if isinstance(prefs.get("download"), dict) else {}
    download.update(default_directory=folder, prompt_for_download=False, directory_upgrade=True)
    prefs["download"] = download
    prefs["savefile"] = {**(prefs.get("savefile") or {}), "default_directory": folder}
    with open(prefs_path, "w", encoding="utf-8") as handle:
        json.dump(prefs, handle)


@dataclass(frozen=True)
class NetworkOptions:
    """How the managed browser reaches the web: through a proxy, and whether it trusts any certificate."""

    proxy: str | None = None
    ignore_https_errors: bool = False

    def argv(self) -> list[str]:
        # Chromium sends loopback directly whatever the proxy, so the extension still reaches the daemon.
        flags = [f"--proxy-server={self.proxy}"] if self.proxy else []
        return flags + (["--ignore-certificate-errors"] if self.ignore_https_errors else [])


def browser_argv(
    executable: str,
    extension_dir: str,
    profile: str,
    headless: bool,
    network: NetworkOptions = NetworkOptions(),
) -> list[str]:
    argv = [
        executable,
        f"--user-data-dir={profile}",
        f"--load-extension={extension_dir}",
        f"--disable-extensions-except={extension_dir}",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-sync",
        "--disable-background-networking",
        "--disable-component-update",
        f"--window-size={WINDOW_SIZE}",
    ]
    if headless:
        # Without a screen nobody sees the debugger infobar; it would only steal 56 px of viewport.
        argv += ["--headless=new", "--disable-gpu", "--silent-debugger-extension-api"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--no-sandbox")
    argv += network.argv()
    argv += extra_args(os.environ.get("TABPILOT_BROWSER_ARGS", ""))
    argv.append("about:blank")
    return argv


def extra_args(text: str) -> list[str]:
    """``TABPILOT_BROWSER_ARGS`` split as a shell would (``--user-agent="A B"`` is one flag)."""
    import shlex

    try:
        return shlex.split(text)
    except ValueError as err:
        raise RpcError(
            "invalid_params",
            f"TABPILOT_BROWSER_ARGS cannot be split into flags: {err}",
            hint="close every quote, e.g. TABPILOT_BROWSER_ARGS='--user-agent=\"My Agent\" --lang=fr'",
        ) from None


@dataclass
class ManagedBrowser:
    pid: int
    executable: str
    profile: str
    headless: bool
    launch_token: str
    started_at: float
    proxy: str | None = None
    ignore_https_errors: bool = False


def state_path(home: str) -> str:
    return os.path.join(paths.browser_dir(home), STATE_FILE)


def read_state(home: str) -> ManagedBrowser | None:
    try:
        with open(state_path(home), encoding="utf-8") as handle:
            return ManagedBrowser(**json.load(handle))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def write_state(home: str, browser: ManagedBrowser) -> None:
    os.makedirs(paths.browser_dir(home), mode=0o700, exist_ok=True)
    with open(state_path(home), "w", encoding="utf-8") as handle:
        json.dump(asdict(browser), handle)


def is_alive(browser: ManagedBrowser) -> bool:
    """The recorded PID still runs *our* browser (its command line names our profile)."""
    try:
        with open(f"/proc/{browser.pid}/cmdline", "rb") as handle:
            cmdline = handle.read().decode(errors="replace")
    except OSError:
        if sys.platform == "darwin":
            try:
                os.kill(browser.pid, 0)
            except OSError:
                return False
            return True
        return False
    return f"--user-data-dir={browser.profile}" in cmdline


def spawn(argv: list[str], log_path: str) -> subprocess.Popen[bytes]:
    os.makedirs(os.path.dirname(log_path), mode=0o700, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )


def stop(home: str, grace_s: float = 5.0) -> int | None:
    """Stop the managed browser by its recorded PID (its whole process group); its PID or None."""
    browser = read_state(home)
    if browser is None:
        return None
    alive = is_alive(browser)
    if alive:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(browser.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and is_alive(browser):
            _reap(browser.pid)
            time.sleep(0.05)
        if is_alive(browser):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(browser.pid, signal.SIGKILL)
        _reap(browser.pid)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(state_path(home))
    return browser.pid if alive else None


def _reap(pid: int) -> None:
    """Collect the exit status when the browser is our own child (tests), so it is not a zombie."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def log_tail(path: str, lines: int = 5) -> str:
    noise = ("dbus", "Fontconfig", "GetTerminationStatus", "unexpected operator")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = [
                ln.strip()
                for ln in handle.read().splitlines()
                if ln.strip() and not any(n in ln for n in noise)
            ]
    except OSError:
        return ""
    return " / ".join(text[-lines:])
