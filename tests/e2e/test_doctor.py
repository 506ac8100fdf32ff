"""doctor and status in the three states a person meets: nothing running, daemon only, browser connected."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest
from harness import Tabpilot


@pytest.fixture(scope="module")
def fresh() -> Iterator[Tabpilot]:
    home = tempfile.mkdtemp(prefix="tp-doctor-home-")
    env = Tabpilot(extra_env={"HOME": home})
    try:
        yield env
    finally:
        env.cleanup()


def rows(result_json: dict) -> dict[str, list[dict]]:
    by_name: dict[str, list[dict]] = {}
    for row in result_json["checks"]:
        by_name.setdefault(row["check"], []).append(row)
    return by_name


def test_doctor_through_the_three_states(fresh: Tabpilot) -> None:
    assert fresh.run("status").out.strip() == "daemon: not running (any command starts it)"

    # 1. nothing running: doctor starts the daemon, and says what is missing
    first = fresh.run("doctor", "--json", check=False)
    assert first.code == 1
    checks = rows(first.json)
    assert checks["daemon"][0]["status"] == "ok" and "started by doctor" in checks["daemon"][0]["detail"]
    assert checks["port"][0]["status"] == "ok"
    assert checks["state folder"][0]["status"] == "ok"
    assert (
        checks["paired browsers"][0]["status"] == "fail"
        and "tabpilot pair" in checks["paired browsers"][0]["hint"]
    )
    assert checks["skill"][0]["status"] == "na"

    # 2. the daemon is up, no browser: same failures, the daemon row says running
    second = fresh.run("doctor", check=False)
    assert second.code == 1
    assert "ok    daemon              running" in second.out
    assert "fail  connected browsers  0 browsers connected" in second.out
    assert "hint: " in second.out

    # 3. a paired, connected browser and the skill installed: all ok / na, exit 0
    fresh.run("browser", "launch", "--headless")
    import os

    os.makedirs(os.path.join(fresh.extra_env["HOME"], ".claude"), exist_ok=True)
    missing_skill = fresh.run("doctor", "--json", check=False)
    assert missing_skill.code == 1
    assert rows(missing_skill.json)["skill in Claude Code"][0]["hint"] == "run `tabpilot install-skill --yes`"
    fresh.run("install-skill", "--yes")
    third = fresh.run("doctor", "--json")
    assert third.code == 0 and third.json["ok"] is True
    statuses = {r["status"] for r in third.json["checks"]}
    assert statuses <= {"ok", "na"}
    browser = rows(third.json)["connected browser"][0]
    assert "(connected)" in browser["detail"] and "extension 0.1.0" in browser["detail"]
    status = fresh.run("status").out
    assert "browsers: 1 connected" in status and "sessions: 0" in status


def test_a_foreign_program_on_the_port_is_named(fresh: Tabpilot) -> None:
    import socket

    other = Tabpilot(extra_env={"HOME": fresh.extra_env["HOME"]})
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", other.port))
    squatter.listen()
    try:
        result = other.run("doctor", "--json", check=False)
        assert result.code == 1
        port = rows(result.json)["port"][0]
        assert (
            port["status"] == "fail"
            and "another program" in port["detail"]
            and "TABPILOT_PORT" in port["hint"]
        )
    finally:
        squatter.close()
        other.cleanup()
