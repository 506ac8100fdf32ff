"""Per-command latency: whole `tabpilot` processes against a warm daemon and browser, beside two baselines.

Baselines from the same run: the venv interpreter's bare start, and the floor, the same
`Runtime.evaluate('1+1')` sent straight to the page over a raw CDP WebSocket.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field

from bench.cdp import PageCdp, open_page
from bench.refs import find_ref
from bench.rig import Rig
from bench.stats import Record, measured, missing

SUITE = "latency"
FORM_SESSION = "lat-form"
OPEN_SESSION = "lat-open"
FLOOR_CASE = "CDP Runtime.evaluate 1+1 (floor)"
PYTHON_CASE = "python -c pass"
FLOOR = "cdp floor"
FLOOR_PER_ROUND = 10
WARMUP_ROUNDS = 3
EVALUATE_ONE_PLUS_ONE = {"expression": "1+1", "returnByValue": True}


@dataclass
class Case:
    """One command line to time; `note` says why it cannot run in this build."""

    name: str
    argv: list[str] | None
    note: str | None = None
    verb: str | None = None  # the tabpilot verb, for the commands that talk to the browser
    samples: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def prepare(rig: Rig) -> list[Case]:
    """Sessions on the form page and the small page, refs for click/fill, and the commands to time."""
    rig.start_session(FORM_SESSION, rig.fixture_url("bench-form.html", FORM_SESSION))
    rig.start_session(OPEN_SESSION, rig.fixture_url("index.html", OPEN_SESSION))
    button = textbox = None
    ref_note = "n/a (no ref: snapshot not available)"
    if rig.unavailable("snapshot") is None:
        snapshot = rig.cli("snapshot", session=FORM_SESSION)
        button, textbox = find_ref(snapshot.out, "button", "Count"), find_ref(snapshot.out, "textbox", "Name")
        ref_note = f"n/a (no ref in the form page's snapshot: {snapshot.error_line if not snapshot.ok else 'not found'})"

    def case(name: str, words: list[str | None], session: str = FORM_SESSION) -> Case:
        verb = words[0]
        assert verb is not None
        note = rig.unavailable(verb) or (ref_note if None in words else None)
        if note is not None:
            return Case(name, None, note, verb)
        argv = rig.command(*[w for w in words if w is not None], session=session)
        missing_tool = _probe(rig, verb, argv)
        return Case(name, None if missing_tool else argv, missing_tool, verb)

    return [
        Case(PYTHON_CASE, [sys.executable, "-c", "pass"]),
        Case("tabpilot --version", rig.command("--version")),
        case("eval 1+1", ["eval", "1+1"]),
        case("click @eN", ["click", button]),
        case("fill @eN text", ["fill", textbox, "text"]),
        case("press Tab", ["press", "Tab"]),
        case("snapshot (form page)", ["snapshot"]),
        case(
            "open (small page)", ["open", rig.fixture_url("index.html", OPEN_SESSION)], session=OPEN_SESSION
        ),
    ]


def _probe(rig: Rig, verb: str, argv: list[str]) -> str | None:
    """One trial run: None when the command can be timed, else why not (the extension lacks the tool)."""
    result = rig.spawner.run(argv)
    return None if result.ok else rig.missing_tool(verb, result)


def run(rig: Rig, cases: list[Case], samples: int) -> list[Record]:
    """Round-robin over the cases in a shuffled order per round, so drift on a noisy machine hits all alike."""
    runnable = [c for c in cases if c.argv is not None]
    floor: list[float] = []
    cdp = open_page(rig.devtools, FORM_SESSION)
    order = random.Random(20261129)
    try:
        for round_no in range(WARMUP_ROUNDS + samples):
            warm = round_no >= WARMUP_ROUNDS
            order.shuffle(runnable)
            for case in runnable:
                assert case.argv is not None
                result = rig.spawner.run(case.argv)
                if not warm:
                    continue
                if result.ok:
                    case.samples.append(result.seconds * 1000)
                else:
                    case.errors.append(result.error_line)
            floor_round = _floor(cdp)
            if warm:
                floor.extend(floor_round)
    finally:
        cdp.close()
    return records(cases, floor)


def _floor(cdp: PageCdp) -> list[float]:
    return [cdp.round_trip("Runtime.evaluate", EVALUATE_ONE_PLUS_ONE) * 1000 for _ in range(FLOOR_PER_ROUND)]


def records(cases: list[Case], floor: list[float]) -> list[Record]:
    floor_record = measured(SUITE, FLOOR_CASE, "wall_time", "ms", floor)
    baseline = (FLOOR, floor_record.median)
    out = [floor_record]
    for case in cases:
        if case.argv is None:
            out.append(missing(SUITE, case.name, "wall_time", "ms", case.note or "n/a"))
            continue
        note = f"{len(case.errors)} failed runs: {case.errors[0]}" if case.errors else None
        out.append(measured(SUITE, case.name, "wall_time", "ms", case.samples, baseline, note))
    return out
