"""Servers that record what reached them, for the request-shaping tests: `Echo` (plain HTTP, or HTTPS with a
certificate made here), which keeps every request's headers and serves a page that runs a script of its own
first thing; and `Proxy`, a forward proxy on loopback that answers every request itself and keeps which
URLs it was asked for."""

from __future__ import annotations

import contextlib
import http.server
import shutil
import ssl
import subprocess
import threading
import urllib.parse
from pathlib import Path
from typing import Any

# The page's own first script: it writes down what the init script had done before it ran.
PAGE = b"""<!doctype html><html><head><title>Echo</title>
<script>window.seenFirst = typeof window.initScriptRan === "undefined" ? "page" : "init script";</script>
</head><body><h1 id="where">echo</h1></body></html>"""


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every GET with PAGE (/text: plain text; /redirect?to=URL: a 302 there) and records
    (path, headers) first."""

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        server: Any = self.server
        server.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        if self.path.startswith("/redirect?to="):
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(302)
                self.send_header("Location", urllib.parse.unquote(self.path.split("=", 1)[1]))
                self.send_header("Content-Length", "0")
                self.end_headers()
            return
        body = PAGE if not self.path.startswith("/text") else b"plain text"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if body is PAGE else "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


class Echo:
    """A recording server on 127.0.0.1 (HTTPS with a self-signed certificate when ``tls_dir`` is given)."""

    def __init__(self, tls_dir: Path | None = None, host: str = "127.0.0.1") -> None:
        self.server = http.server.ThreadingHTTPServer((host, 0), Recorder)
        self.server.seen = []  # type: ignore[attr-defined]
        self.scheme = "http"
        self.host = host
        if tls_dir is not None:
            cert, key = self_signed(tls_dir)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.lstrip('/')}"

    def headers_of(self, path: str) -> list[dict[str, str]]:
        """The headers of every request for ``path`` so far."""
        return [h for p, h in self.server.seen if p == path]  # type: ignore[attr-defined]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def self_signed(folder: Path) -> tuple[str, str]:
    """A certificate for 127.0.0.1 that no browser trusts, and its key."""
    openssl = shutil.which("openssl")
    assert openssl, "the HTTPS test needs openssl"
    cert, key = folder / "cert.pem", folder / "key.pem"
    request = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
    names = ["-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [openssl, *request, *names, "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    return str(cert), str(key)


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.server.asked.append(self.path)  # type: ignore[attr-defined]
        body = b"<!doctype html><title>Proxied</title><h1 id='via'>via the proxy</h1>"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


class Proxy:
    """A forward proxy on loopback that answers itself: whatever the browser asks it for, it records."""

    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ProxyHandler)
        self.server.asked = []  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def asked(self) -> list[str]:
        return self.server.asked  # type: ignore[attr-defined]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
