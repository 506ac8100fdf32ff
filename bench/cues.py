"""Action cues (issue 26): the time a cue adds to an action, cues on against cues off in the same run.

The same `click` on tests/pages/cues.html, rounds alternating the options page's switch (set in the
extension's storage, as the options page sets it) in a shuffled order per round. Two figures per state:
the whole command as the agent runs it, and inside the service worker (extension/link/timings.js) the
time from the request's arrival to the first mouse event sent to the page (`input`), which holds the
cue's paint wait and nothing of process start. The target is ≤ 20 ms added at the median.
"""

from __future__ import annotations

import random

from bench.cdp import CdpError, open_worker
from bench.rig import Rig
from bench.stats import Record, measured, missing

SUITE = "cues"
SESSION = "bench-cues"
TARGET_MS = 20.0
WARMUP_ROUNDS = 3
TIMINGS_ON = "globalThis.tabpilotTimings = []; 0"
TIMINGS_OFF = (
    "(() => { const t = globalThis.tabpilotTimings ?? []; delete globalThis.tabpilotTimings; return t; })()"
)
CASES = {True: "click #go, cues on", False: "click #go, cues off"}


def switch(on: bool) -> str:
    return f"chrome.storage.local.set({{tp_cues: {'true' if on else 'false'}}}).then(() => 0)"


def run(rig: Rig, samples: int) -> list[Record]:
    try:
        worker = open_worker(rig.devtools)
    except (CdpError, OSError) as error:
        return [
            missing(SUITE, CASES[True], "added", "ms", f"n/a (the service worker cannot be read: {error})")
        ]
    rig.start_session(SESSION, rig.fixture_url("cues.html", SESSION))
    wall: dict[bool, list[float]] = {True: [], False: []}
    to_input: dict[bool, list[float]] = {True: [], False: []}
    order = random.Random(20261204)
    states = [True, False]
    try:
        for round_no in range(WARMUP_ROUNDS + samples):
            order.shuffle(states)
            for on in states:
                worker.evaluate(switch(on))
                worker.evaluate(TIMINGS_ON)
                result = rig.cli("click", "#go", session=SESSION)
                timings = worker.evaluate(TIMINGS_OFF)
                if round_no < WARMUP_ROUNDS or not result.ok:
                    continue
                wall[on].append(result.seconds * 1000)
                marks = [
                    t["marks"]["input"]
                    for t in timings
                    if t["method"] == "tool.click" and "input" in t["marks"]
                ]
                to_input[on].extend(marks)
    finally:
        worker.evaluate(switch(True))
        worker.close()
        rig.stop_session(SESSION)
    return records(wall, to_input)


def records(wall: dict[bool, list[float]], to_input: dict[bool, list[float]]) -> list[Record]:
    """Each state's medians, cues on as a multiple of off, and the time added: the median of each
    round's difference (on minus off), which a noisy machine's drift touches least."""
    out: list[Record] = []
    for name, metric, samples in (
        ("the whole command", "wall_time", wall),
        ("to the first input", "to_input", to_input),
    ):
        off = measured(SUITE, f"{CASES[False]}: {name}", metric, "ms", samples[False])
        on = measured(SUITE, f"{CASES[True]}: {name}", metric, "ms", samples[True], ("cues off", off.median))
        out += [off, on]
    pairs = [a - b for a, b in zip(to_input[True], to_input[False], strict=False)]
    added = measured(SUITE, "time a cue adds, in the worker", "added", "ms", pairs)
    if added.median is not None:
        verdict = "within" if added.median <= TARGET_MS else "over"
        added.note = f"{verdict} the {TARGET_MS:.0f} ms target (per round: on − off, to the first input)"
    return [*out, added]
