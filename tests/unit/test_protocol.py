"""protocol.py and auth.py against the vectors shared with the extension's twins."""

import json
from pathlib import Path

import pytest

from tabpilot import auth, protocol

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
P = json.loads((VECTORS / "protocol.json").read_text())
A = json.loads((VECTORS / "auth.json").read_text())


def test_constants_match_vectors() -> None:
    assert P["protocol_version"] == protocol.PROTOCOL_VERSION
    assert P["min_compatible_protocol"] == protocol.MIN_COMPATIBLE_PROTOCOL
    assert P["default_port"] == protocol.DEFAULT_PORT
    assert P["extension_id"] == protocol.EXTENSION_ID
    assert P["error_exit_codes"] == protocol.ERROR_EXIT_CODES
    assert sorted(protocol.REASONS) == P["reasons"]
    assert sorted(protocol.EXTENSION_METHODS) == P["extension_methods"]
    assert sorted(protocol.EXTENSION_EVENTS) == P["extension_events"]
    assert list(protocol.WAIT_UNTIL) == P["wait_until"]
    assert sorted(protocol.PANEL_METHODS) == P["panel_methods"]
    assert sorted(protocol.DAEMON_EVENTS) == P["daemon_events"]
    assert list(protocol.CHAT_EVENT_KINDS) == P["chat_event_kinds"]
    assert P["panel_session_prefix"] == protocol.PANEL_SESSION_PREFIX


@pytest.mark.parametrize(("text", "expected"), P["protocol_major"])
def test_protocol_major(text: object, expected: int | None) -> None:
    assert protocol.parse_protocol_major(text) == expected


@pytest.mark.parametrize(("text", "expected"), P["protocol_version_parse"])
def test_protocol_version(text: str, expected: list[int] | None) -> None:
    parsed = protocol.parse_protocol_version(text)
    assert (list(parsed) if parsed else None) == expected


@pytest.mark.parametrize("case", P["verdicts"])
def test_verdicts(case: list) -> None:
    local, local_floor, remote, remote_floor, verdict, why = case
    got, reason = protocol.compatibility_verdict(local, local_floor, remote, remote_floor)
    assert got == verdict
    assert why in reason


@pytest.mark.parametrize(("frame", "expected"), P["classify"])
def test_classify(frame: object, expected: str | None) -> None:
    assert protocol.classify(frame) == expected


def test_error_values_round_trip() -> None:
    err = protocol.RpcError("not_found", "tab 9 not found", "unknown_tab", tab_id=9)
    again = protocol.RpcError.from_wire(err.to_wire())
    assert (again.code, again.message, again.reason, again.data["tab_id"]) == (
        "not_found",
        "tab 9 not found",
        "unknown_tab",
        9,
    )
    assert again.exit_code == 1
    with pytest.raises(ValueError):
        protocol.RpcError("nope", "x")
    with pytest.raises(ValueError):
        protocol.RpcError("timeout", "x", "nope")
    assert protocol.RpcError.from_wire({"code": "weird"}).code == "protocol_error"
    assert protocol.exit_code_for("whatever") == protocol.EXIT_TRANSPORT


def test_auth_vectors() -> None:
    for raw, normal in A["normalize"]:
        assert auth.normalize_code(raw) == normal
    inst, nc, ns = A["instance_id"], A["extension_nonce"], A["daemon_nonce"]
    assert auth.pairing_code_proof(A["code"], inst, nc) == A["pairing_code_proof"]
    assert auth.pairing_code_proof("abcd efgh", inst, nc) == A["pairing_code_proof_lowercase_input"]
    assert A["pairing_code_proof"] == A["pairing_code_proof_lowercase_input"]
    assert auth.pairing_secret(A["code"], inst, nc) == A["pairing_secret"]
    assert auth.daemon_proof(A["secret"], inst, nc, ns) == A["daemon_proof"]
    assert auth.extension_proof(A["secret"], inst, nc, ns) == A["extension_proof"]
    assert auth.daemon_proof(A["pairing_secret"], inst, nc, ns) == A["daemon_proof_with_pairing_secret"]
    assert A["daemon_proof"] != A["extension_proof"]


def test_pairing_codes_are_typeable() -> None:
    code = auth.new_pairing_code()
    assert len(code) == 9 and code[4] == "-"
    assert set(auth.normalize_code(code)) <= set(auth.CODE_ALPHABET)
    assert auth.proofs_equal("ab", "ab") and not auth.proofs_equal("ab", "ac")
    assert not auth.proofs_equal("ab", None)
