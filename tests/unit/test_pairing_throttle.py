"""The pairing throttle: wrong codes cannot keep a person's pairing out for more than a minute, and
never block the launch code of a managed browser."""

from __future__ import annotations

import pytest
from fakes import FakeExtension, running_daemon

from tabpilot import auth
from tabpilot.daemon.pairing import LOCKOUT_S, PairingCodes
from tabpilot.protocol import RpcError

INSTANCE = "0badc0de"
# The extension's reconnect backoff tops out at 5 s (+10 % jitter).
POPUP_RETRY_S = 5.5


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def attempt(codes: PairingCodes, code: str) -> str:
    nonce = auth.new_nonce()
    try:
        codes.match(INSTANCE, nonce, auth.pairing_code_proof(code, INSTANCE, nonce))
    except RpcError as err:
        return str(err.reason)
    return "ok"


@pytest.mark.parametrize("start", [0.0, 3.0, 30.0, 59.0, 61.0, 100.0, 119.0, 150.0, 200.0])
def test_a_flood_of_wrong_codes_holds_the_popup_back_at_most_one_minute(start: float) -> None:
    clock = Clock()
    codes = PairingCodes(clock=clock)
    person = codes.create(ttl_s=3600).display
    next_try = start
    while clock.now - start <= 10 * LOCKOUT_S:
        # An attacker sends a wrong code every 0.2 s, for as long as it takes.
        for _ in range(int(POPUP_RETRY_S / 0.2)):
            attempt(codes, "WRNG-CODE")
            clock.now += 0.2
            if clock.now >= next_try:
                break
        if clock.now < next_try:
            continue
        if attempt(codes, person) == "ok":
            break
        next_try = clock.now + POPUP_RETRY_S
    assert clock.now - start <= LOCKOUT_S + POPUP_RETRY_S


def test_five_wrong_codes_lock_for_a_minute_then_the_right_code_works() -> None:
    clock = Clock()
    codes = PairingCodes(clock=clock)
    person = codes.create().display
    assert [attempt(codes, "WRNG-CODE") for _ in range(6)] == ["wrong_pairing_code"] * 5 + [
        "pairing_throttled"
    ]
    assert attempt(codes, person) == "pairing_throttled"
    assert 59 < codes.retry_after() <= 60
    clock.now += 60.0
    assert attempt(codes, person) == "ok"


def test_a_launch_code_pairs_while_typed_codes_are_locked() -> None:
    codes = PairingCodes(clock=Clock())
    launch = codes.create(launch=True).display
    assert len(auth.normalize_code(launch)) == auth.LAUNCH_CODE_LENGTH
    for _ in range(5):
        attempt(codes, "WRNG-CODE")
    assert codes.retry_after() > 0
    assert attempt(codes, launch) == "ok"


async def test_pair_create_says_when_pairing_is_throttled() -> None:
    async with running_daemon() as d:
        assert "throttled_for_s" not in (await d.call("pair.create"))["result"]
        for _ in range(5):
            await FakeExtension(d.port).connect(code="WRNG-CODE")
        created = (await d.call("pair.create"))["result"]
        assert 0 < created["throttled_for_s"] <= 60
        launch = (await d.call("pair.create", {"launch": True}))["result"]
        assert "throttled_for_s" not in launch
        peer = FakeExtension(d.port)
        assert "result" in await peer.connect(code=launch["code"])
