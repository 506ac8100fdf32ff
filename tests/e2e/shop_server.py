"""A shop on this machine under two names, shop.localhost and other.localhost (two sites to the browser,
one server): it serves tests/pages and records every form posted to it, with when it arrived, so a test
or the bench sees whether an order left the browser. Shared by tests/e2e/test_approvals.py and bench/."""

from __future__ import annotations

import http.server
import threading
import time
import urllib.parse
from typing import Any

from harness import PAGES, free_port


class Shop:
    """A shop on this machine under two names (two sites): it serves tests/pages and records orders."""

    def __init__(self) -> None:
        shop = self
        # (host, path, body, when it arrived: time.time())
        self.posts: list[tuple[str, str, str, float]] = []
        # (host, path) of every page asked for
        self.gets: list[tuple[str, str]] = []

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(PAGES), **kwargs)

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                host = self.headers.get("Host", "").split(":")[0]
                shop.gets.append((host, self.path))
                if self.path == "/away":
                    # A link of the shop's own that sends the browser to another site.
                    away = f"http://other.localhost:{shop.port}/approvals/effects.html?away"
                    self._send(302, b"", "text/html", {"Location": away})
                elif self.path == "/receipt.txt":
                    self._send(
                        200,
                        b"receipt: one loaf",
                        "text/plain",
                        {"Content-Disposition": 'attachment; filename="receipt.txt"'},
                    )
                else:
                    super().do_GET()

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                shop.posts.append((self.headers.get("Host", "").split(":")[0], self.path, body, time.time()))
                if self.path == "/order-here":
                    # A thank-you page answered to the POST itself: reloading it sends the order again.
                    return self._send(200, b"<!doctype html><title>Thanks</title><p>Thanks!</p>", "text/html")
                # Back to the shop, as shops do: the next order starts from the same page.
                self._send(
                    303, b"", "text/html", {"Location": f"/approvals/shop.html?ordered={len(shop.posts)}"}
                )

            def _send(self, code: int, data: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
                self.send_response(code)
                for name, value in {
                    "Content-Type": kind,
                    "Content-Length": str(len(data)),
                    **(headers or {}),
                }.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, site: str = "shop", page: str = "shop.html") -> str:
        return f"http://{site}.localhost:{self.port}/approvals/{page}"

    def orders(self) -> list[tuple[str, str]]:
        return [
            (host, urllib.parse.parse_qs(body).get("qty", [""])[0])
            for host, path, body, _ in self.posts
            if path == "/order"
        ]

    def sent(self) -> list[tuple[str, str, str]]:
        """Every form or script POST that reached the server: (host, path, body)."""
        return [(host, path, body) for host, path, body, _ in self.posts]

    def order_times(self) -> list[float]:
        return [at for _, path, _, at in self.posts if path == "/order"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
