"""The handshake and mutual authentication of one extension connection, as a plain state machine.

Fed the peer's request frames, it returns the reply frame and whether to close the socket. Nothing
but ``system.handshake`` then ``system.authenticate`` is accepted until it reports success.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tabpilot import __version__, auth, protocol
from tabpilot.daemon.pairing import PairingCode, PairingCodes, SecretStore
from tabpilot.protocol import RpcError

INSTANCE_ID = re.compile(r"^[0-9a-f]{8}$")
NONCE = re.compile(r"^[0-9a-f]{32,128}$")


@dataclass
class PeerHello:
    """What an authenticated extension told us about itself."""

    instance_id: str
    label: str
    browser_name: str
    browser_version: str
    extension_version: str
    protocol_version: str
    verdict: str
    launch_token: str | None
    session_ids: list[str] = field(default_factory=list)


@dataclass
class Step:
    reply: dict[str, Any]
    close: bool = False
    authenticated: PeerHello | None = None
    paired_with: PairingCode | None = None


class PeerAuthenticator:
    """awaiting_handshake → awaiting_proof → authenticated (or closed on the first failure)."""

    def __init__(
        self,
        secrets: SecretStore,
        codes: PairingCodes,
        new_nonce: Callable[[], str] = auth.new_nonce,
    ) -> None:
        self.secrets = secrets
        self.codes = codes
        self.new_nonce = new_nonce
        self.state = "awaiting_handshake"
        self._hello: PeerHello | None = None
        self._secret = ""
        self._ext_nonce = ""
        self._daemon_nonce = ""
        self._code: PairingCode | None = None

    @property
    def authenticated(self) -> bool:
        return self.state == "authenticated"

    def on_frame(self, frame: Any) -> Step | None:
        """Handle one frame from a peer that is not authenticated yet. None: nothing to answer."""
        kind = protocol.classify(frame)
        if kind != "request":
            if kind is None and isinstance(frame, dict) and isinstance(frame.get("id"), str):
                return self._fail(frame["id"], RpcError("protocol_error", "malformed frame", "bad_frame"))
            return None
        frame_id = frame["id"]
        method = frame["method"]
        params = frame.get("params") or {}
        try:
            if self.state == "awaiting_handshake" and method == protocol.HANDSHAKE_METHOD:
                return Step(protocol.response(frame_id, self._handshake(params)))
            if self.state == "awaiting_proof" and method == protocol.AUTHENTICATE_METHOD:
                return self._authenticate(frame_id, params)
        except RpcError as err:
            return self._fail(frame_id, err)
        return self._fail(
            frame_id,
            RpcError(
                "auth_failed",
                f"{method} refused: handshake and authentication must come first",
                "handshake_required",
            ),
        )

    def refuse(self, frame_id: str | None, err: RpcError) -> Step:
        """Answer a frame the server could not even decode, and close."""
        return self._fail(frame_id, err)

    def _fail(self, frame_id: str | None, err: RpcError) -> Step:
        self.state = "closed"
        return Step(protocol.error_response(frame_id, err), close=True)

    def _handshake(self, params: dict[str, Any]) -> dict[str, Any]:
        verdict, why = protocol.compatibility_verdict(
            protocol.PROTOCOL_VERSION,
            protocol.MIN_COMPATIBLE_PROTOCOL,
            params.get("protocol_version"),
            params.get("min_compatible_protocol"),
        )
        if verdict == "rejected":
            raise RpcError(
                "version_too_old",
                f"incompatible extension: {why}",
                "protocol_incompatible",
                daemon_protocol=protocol.PROTOCOL_VERSION,
                min_compatible_protocol=protocol.MIN_COMPATIBLE_PROTOCOL,
            )
        instance_id = params.get("instance_id")
        if not isinstance(instance_id, str) or not INSTANCE_ID.match(instance_id):
            raise RpcError("protocol_error", "handshake needs an 8-hex instance_id", "bad_frame")
        auth_block = params.get("auth")
        if not isinstance(auth_block, dict):
            raise RpcError(
                "pairing_required", "this browser is not paired; run `tabpilot pair`", "not_paired"
            )
        nonce = auth_block.get("nonce")
        if not isinstance(nonce, str) or not NONCE.match(nonce):
            raise RpcError("protocol_error", "handshake auth needs a hex nonce", "bad_frame")
        mode = auth_block.get("mode")
        if mode == "secret":
            secret = self.secrets.secret_for(instance_id)
            if secret is None:
                raise RpcError(
                    "pairing_required",
                    f"browser {instance_id} is not paired with this daemon; run `tabpilot pair`",
                    "not_paired",
                )
        elif mode == "pair":
            self._code = self.codes.match(instance_id, nonce, auth_block.get("code_proof"))
            secret = auth.pairing_secret(self._code.display, instance_id, nonce)
        else:
            raise RpcError(
                "pairing_required", "this browser is not paired; run `tabpilot pair`", "not_paired"
            )

        browser = params.get("browser") if isinstance(params.get("browser"), dict) else {}
        session_ids = params.get("session_ids") if isinstance(params.get("session_ids"), list) else []
        launch_token = params.get("launch_token")
        self._hello = PeerHello(
            instance_id=instance_id,
            label=str(params.get("label") or ""),
            browser_name=str(browser.get("name") or "chromium"),
            browser_version=str(browser.get("version") or "unknown"),
            extension_version=str(params.get("version") or "0.0.0"),
            protocol_version=str(params.get("protocol_version")),
            verdict=verdict,
            launch_token=launch_token if isinstance(launch_token, str) and launch_token else None,
            session_ids=[s for s in session_ids if isinstance(s, str) and s],
        )
        self._secret = secret
        self._ext_nonce = nonce
        self._daemon_nonce = self.new_nonce()
        self.state = "awaiting_proof"
        return {
            "server": protocol.DAEMON_NAME,
            "version": __version__,
            "protocol_version": protocol.PROTOCOL_VERSION,
            "min_compatible_protocol": protocol.MIN_COMPATIBLE_PROTOCOL,
            "verdict": verdict,
            "auth": {
                "nonce": self._daemon_nonce,
                "proof": auth.daemon_proof(self._secret, instance_id, nonce, self._daemon_nonce),
            },
        }

    def _authenticate(self, frame_id: str, params: dict[str, Any]) -> Step:
        hello = self._hello
        assert hello is not None
        expected = auth.extension_proof(self._secret, hello.instance_id, self._ext_nonce, self._daemon_nonce)
        if not auth.proofs_equal(expected, params.get("proof")):
            raise RpcError("auth_failed", "the extension's proof is wrong", "bad_proof")
        paired = self._code is not None
        if self._code is not None:
            self.codes.consume(self._code, hello.instance_id)
            self.secrets.put(hello.instance_id, self._secret, hello.label, hello.browser_name)
        self.state = "authenticated"
        result = {"authenticated": True, "paired": paired, "instance_id": hello.instance_id}
        return Step(protocol.response(frame_id, result), authenticated=hello, paired_with=self._code)
