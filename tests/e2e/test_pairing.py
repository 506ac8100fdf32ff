"""Wrong pairing codes from any local process throttle typed codes, never a managed `browser launch`."""

from __future__ import annotations

import json
import secrets

from harness import PageServer, Tabpilot
from websockets.sync.client import connect

from tabpilot import auth, protocol


def try_code(port: int, code: str) -> str:
    """Pair with ``code`` as an extension would; returns the refusal's reason (or "ok")."""
    instance_id = secrets.token_hex(4)
    nonce = auth.new_nonce()
    origin = f"chrome-extension://{protocol.EXTENSION_ID}"
    with connect(f"ws://127.0.0.1:{port}", origin=origin, compression=None, open_timeout=5) as ws:  # type: ignore[arg-type]
        params = {
            "client": protocol.EXTENSION_CLIENT,
            "version": "0.1.0",
            "protocol_version": protocol.PROTOCOL_VERSION,
            "min_compatible_protocol": protocol.MIN_COMPATIBLE_PROTOCOL,
            "instance_id": instance_id,
            "browser": {"name": "chromium", "version": "1"},
            "auth": {
                "mode": "pair",
                "nonce": nonce,
                "code_proof": auth.pairing_code_proof(code, instance_id, nonce),
            },
        }
        ws.send(json.dumps(protocol.request("h", protocol.HANDSHAKE_METHOD, params)))
        reply = json.loads(ws.recv(5))
    return "ok" if "result" in reply else str(reply["error"]["data"]["reason"])


def test_after_five_wrong_codes_browser_launch_still_connects(pages: PageServer) -> None:
    env = Tabpilot()
    try:
        env.run("daemon", "start")
        reasons = [try_code(env.port, "WRNG-CODE") for _ in range(6)]
        assert reasons == ["wrong_pairing_code"] * 5 + ["pairing_throttled"]
        paired = env.run("pair", "--no-wait").out
        assert "note: pairing is throttled after wrong codes; the browser can pair in" in paired
        launched = env.run("browser", "launch", "--headless", timeout=90)
        assert launched.out.startswith("browser ") and " connected in " in launched.out, launched.out
        # Typed codes are still locked out: the launch did not wait for the lockout to end.
        assert try_code(env.port, "WRNG-CODE") == "pairing_throttled"
        assert env.run("open", pages.url("index.html")).out.startswith("navigated to")
    finally:
        env.cleanup()
