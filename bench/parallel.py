"""Parallel sessions in one browser: each loops open/snapshot/click/fill on its own tab, then checks its page.

Every iteration ends with a read-back of the session's own page (its marker, its click count, its text):
anything else means an action landed in another session's tab.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from bench.refs import find_ref
from bench.rig import Rig
from bench.spawn import Spawner
from bench.stats import Record, measured

SUITE = "parallel"
LEVELS = (1, 4, 8)
PAGE = "bench-form.html"
READ_BACK = (
    "JSON.stringify([document.getElementById('marker').textContent,"
    " document.getElementById('clicks').textContent, document.getElementById('name').value])"
)


STEPS = ("snapshot", "click", "fill")


def label(rig: Rig) -> str:
    """The loop as this build runs it: a step whose verb or tool is missing is left out."""
    return "/".join(["open", *(step for step in STEPS if rig.unavailable(step) is None)]) + " + read-back"


@dataclass
class Worker:
    """One session's loop: its latencies, errors and what its read-backs found out of place."""

    name: str
    spawner: Spawner
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # by verb
    errors: list[str] = field(default_factory=list)
    crossed: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)


def run(rig: Rig, duration_s: float, levels: tuple[int, ...] = LEVELS) -> list[Record]:
    out: list[Record] = []
    base_rate: float | None = None
    base_latency: float | None = None
    for level in levels:
        workers, elapsed = run_level(rig, level, duration_s)
        by_verb: dict[str, list[float]] = {}
        for worker in workers:
            for verb, times in worker.latencies_ms.items():
                by_verb.setdefault(verb, []).extend(times)
        latencies = [ms for times in by_verb.values() for ms in times]
        errors = [e for w in workers for e in w.errors]
        crossed = [c for w in workers for c in w.crossed]
        rate = len(latencies) / elapsed
        case = f"{level} session{'s' if level > 1 else ''} ({label(rig)})"
        latency = measured(SUITE, case, "latency", "ms", latencies, ("1 session", base_latency))
        out += [
            measured(SUITE, case, "actions_per_s", "actions/s", [rate], ("1 session", base_rate)),
            latency,
            *(measured(SUITE, case, f"latency {verb}", "ms", times) for verb, times in by_verb.items()),
            measured(SUITE, case, "errors", "count", [len(errors)], note=errors[0] if errors else None),
            measured(
                SUITE, case, "cross_talk", "count", [len(crossed)], note=crossed[0] if crossed else None
            ),
        ]
        if base_rate is None:
            base_rate, base_latency = rate, latency.median
    return out


def run_level(rig: Rig, level: int, duration_s: float) -> tuple[list[Worker], float]:
    """`level` sessions looping side by side for `duration_s`, then a final read-back of every page."""
    workers = [Worker(f"par{level}-{i}", Spawner(rig.tp.env)) for i in range(level)]
    try:
        for worker in workers:
            rig.start_session(worker.name, rig.fixture_url(PAGE, worker.name))
        started = time.monotonic()
        deadline = started + duration_s
        # Daemon threads: an interrupted bench exits without waiting for the loops to reach the deadline.
        threads = [threading.Thread(target=loop, args=(rig, w, deadline), daemon=True) for w in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        for worker in workers:
            read_back(rig, worker, timed=False)
    finally:
        for worker in workers:
            rig.stop_session(worker.name)
            worker.spawner.close()
    return workers, elapsed


def loop(rig: Rig, worker: Worker, deadline: float) -> None:
    iteration = 0
    while time.monotonic() < deadline:
        iteration += 1
        url = f"{rig.fixture_url(PAGE, worker.name)}&i={iteration}"
        if act(rig, worker, "open", url) is None:
            continue
        clicks, text = 0, ""
        snapshot = act(rig, worker, "snapshot") if rig.unavailable("snapshot") is None else None
        button = find_ref(snapshot, "button", "Count") if snapshot else None
        textbox = find_ref(snapshot, "textbox", "Name") if snapshot else None
        if button and rig.unavailable("click") is None:
            clicks = 0 if act(rig, worker, "click", button) is None else 1
        if textbox and rig.unavailable("fill") is None:
            text = "" if act(rig, worker, "fill", textbox, worker.name) is None else worker.name
        worker.expected = [worker.name, str(clicks), text]
        read_back(rig, worker, timed=True)


def act(rig: Rig, worker: Worker, *args: str, timed: bool = True) -> str | None:
    """One command in the worker's session: its output, or None after recording the error."""
    result = worker.spawner.run(rig.command(*args, session=worker.name))
    if not result.ok:
        # A tool the extension does not have yet leaves the loop; it is not an error of the loop.
        if not rig.missing_tool(args[0], result):
            worker.errors.append(f"{worker.name} {args[0]}: {result.error_line}")
        return None
    if timed:
        worker.latencies_ms.setdefault(args[0], []).append(result.seconds * 1000)
    return result.out


def read_back(rig: Rig, worker: Worker, timed: bool) -> None:
    """Compare the session's page with what the session did to it; a difference is cross-talk."""
    out = act(rig, worker, "eval", READ_BACK, timed=timed)
    if out is None or not worker.expected:
        return
    found = json.loads(json.loads(out))
    if found != worker.expected:
        worker.crossed.append(f"{worker.name} expected {worker.expected}, its page has {found}")
