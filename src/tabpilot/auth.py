"""Pairing codes and the mutual HMAC proofs of the handshake (twin: extension/link/auth.js).

Pairing: both sides derive the per-browser secret from the one-time code and the extension's
nonce, so not even the first secret crosses the wire. Every connect: each side answers the
other's nonce with HMAC-SHA256 keyed by that secret.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
# A managed browser's code is written into its profile, never typed: long enough that guessing is
# hopeless without any throttle (about 250 bits).
LAUNCH_CODE_LENGTH = 50
NONCE_BYTES = 16
SECRET_BYTES = 32


def new_nonce() -> str:
    return secrets.token_hex(NONCE_BYTES)


def new_secret() -> str:
    return secrets.token_hex(SECRET_BYTES)


def new_pairing_code() -> str:
    """A short code a person can type: 8 characters (40 bits), shown as ``ABCD-EFGH``."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return f"{raw[:4]}-{raw[4:]}"


def new_launch_code() -> str:
    """The one-time code `browser launch` hands its own browser (no person types it)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(LAUNCH_CODE_LENGTH))


def normalize_code(code: str) -> str:
    """Uppercase, separators and spaces removed, so ``abcd efgh`` equals ``ABCD-EFGH``."""
    return "".join(ch for ch in code.upper() if ch.isascii() and ch.isalnum())


def _hmac_hex(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()


def pairing_code_proof(code: str, instance_id: str, extension_nonce: str) -> str:
    """What the extension sends to show it holds the code, without sending the code."""
    return _hmac_hex(normalize_code(code).encode(), f"tabpilot-pair-proof|{instance_id}|{extension_nonce}")


def pairing_secret(code: str, instance_id: str, extension_nonce: str) -> str:
    """The per-browser secret both sides derive from a correct pairing code."""
    return _hmac_hex(normalize_code(code).encode(), f"tabpilot-pair-secret|{instance_id}|{extension_nonce}")


def daemon_proof(secret: str, instance_id: str, extension_nonce: str, daemon_nonce: str) -> str:
    return _hmac_hex(bytes.fromhex(secret), f"tabpilot-daemon|{instance_id}|{extension_nonce}|{daemon_nonce}")


def extension_proof(secret: str, instance_id: str, extension_nonce: str, daemon_nonce: str) -> str:
    return _hmac_hex(
        bytes.fromhex(secret), f"tabpilot-extension|{instance_id}|{daemon_nonce}|{extension_nonce}"
    )


def proofs_equal(expected: str, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(expected.encode(), given.encode())
