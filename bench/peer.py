"""Optional side-by-side: agent-browser on the same pages in the same run, when its binary is on PATH or given.

The bench never installs it. Each tabpilot figure is recorded against the peer's as baseline, so the
ratio is tabpilot/peer (below 1: tabpilot is faster or smaller).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from bench import tokens
from bench.latency import WARMUP_ROUNDS
from bench.pages import Page
from bench.refs import find_ref
from bench.rig import Rig
from bench.spawn import Spawner
from bench.stats import Record, measured, missing

SUITE = "peer"
PEER = "agent-browser"
MODES = (("full", ()), ("-i", ("-i",)))


def locate(explicit: str | None) -> tuple[str | None, str]:
    """The agent-browser binary to compare with, or None and the line that says why it is skipped."""
    if explicit:
        path = shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
        return (path, f"{PEER}: {path}") if path else (None, f"skipped {PEER}: {explicit} not found")
    path = shutil.which(PEER)
    if path is None:
        return None, f"skipped the side-by-side: no {PEER} on PATH (or pass --vs-agent-browser PATH)"
    return path, f"{PEER}: {path}"


class Peer:
    """agent-browser in a session of its own, run like the agent would run it."""

    def __init__(self, binary: str, spawner: Spawner, session: str) -> None:
        self.binary, self.spawner, self.session = binary, spawner, session

    def argv(self, *args: str, session: bool = True) -> list[str]:
        return [self.binary, *(["--session", self.session] if session else []), *args]

    def close(self) -> None:
        self.spawner.run(self.argv("close"), timeout=60)


def run(rig: Rig, binary: str, ours: list[Record], pages: list[Page], samples: int) -> list[Record]:
    """The latency cases and the full/-i snapshots of `pages`, for agent-browser, beside tabpilot's `ours`."""
    peer = Peer(binary, rig.spawner, f"tabpilot-bench-{rig.tp.port}")
    try:
        return latency(rig, peer, ours, samples) + snapshots(rig, peer, ours, pages, samples)
    finally:
        peer.close()


def latency(rig: Rig, peer: Peer, ours: list[Record], samples: int) -> list[Record]:
    form = rig.fixture_url("bench-form.html", "peer")
    opened = peer.spawner.run(peer.argv("open", form), timeout=120)
    if not opened.ok:
        return [missing(SUITE, f"{PEER} open", "wall_time", "ms", f"error: {opened.error_line}")]
    snapshot = peer.spawner.run(peer.argv("snapshot", "-i")).out
    button, textbox = find_ref(snapshot, "button", "Count"), find_ref(snapshot, "textbox", "Name")
    cases: dict[str, list[str] | None] = {
        "tabpilot --version": peer.argv("--version", session=False),
        "eval 1+1": peer.argv("eval", "1+1"),
        "click @eN": peer.argv("click", button) if button else None,
        "fill @eN text": peer.argv("fill", textbox, "text") if textbox else None,
        "press Tab": peer.argv("press", "Tab"),
        "snapshot (form page)": peer.argv("snapshot"),
    }
    times = _round_robin(peer.spawner, {k: v for k, v in cases.items() if v}, samples)
    # Opening the small page leaves the form page, so it runs after the others.
    cases["open (small page)"] = peer.argv("open", rig.fixture_url("index.html", "peer"))
    times.update(_round_robin(peer.spawner, {"open (small page)": cases["open (small page)"]}, samples))
    out: list[Record] = []
    for case, argv in cases.items():
        if argv is None:
            out.append(missing(SUITE, f"{PEER}: {case}", "wall_time", "ms", "n/a (no ref in its snapshot)"))
            continue
        out += _pair(case, "wall_time", "ms", times[case], _find(ours, "latency", case, "wall_time"))
    return out


def snapshots(rig: Rig, peer: Peer, ours: list[Record], pages: list[Page], samples: int) -> list[Record]:
    out: list[Record] = []
    for page in pages:
        peer.spawner.run(peer.argv("open", rig.url(page, "peer")), timeout=120)
        for mode, flags in MODES:
            case = f"{page.label} {mode}"
            argv = peer.argv("snapshot", *flags)
            peer.spawner.run(argv)
            runs = [peer.spawner.run(argv) for _ in range(samples)]
            good = [r for r in runs if r.ok]
            if not good:
                out.append(
                    missing(SUITE, f"{PEER}: {case}", "wall_time", "ms", f"error: {runs[0].error_line}")
                )
                continue
            text = good[-1].out
            out += _pair(
                case,
                "wall_time",
                "ms",
                [r.seconds * 1000 for r in good],
                _find(ours, "snapshots", case, "wall_time"),
            )
            out += _pair(case, "chars", "chars", [len(text)], _find(ours, "snapshots", case, "chars"))
            if tokens.available():
                out += _pair(
                    case, "tokens", "tokens", [tokens.count(text)], _find(ours, "snapshots", case, "tokens")
                )
    return out


def _round_robin(spawner: Spawner, cases: dict[str, list[str]], samples: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {case: [] for case in cases}
    names = list(cases)
    order = random.Random(20261129)
    for round_no in range(WARMUP_ROUNDS + samples):
        order.shuffle(names)
        for name in names:
            result = spawner.run(cases[name])
            if round_no >= WARMUP_ROUNDS and result.ok:
                times[name].append(result.seconds * 1000)
    return times


def _find(records: list[Record], suite: str, case: str, metric: str) -> Record | None:
    return next((r for r in records if (r.suite, r.case, r.metric) == (suite, case, metric)), None)


def _pair(case: str, metric: str, unit: str, theirs: list[float], ours: Record | None) -> list[Record]:
    """The peer's record, and tabpilot's with the peer as baseline (ratio tabpilot/peer)."""
    peer = measured(SUITE, f"{PEER}: {case}", metric, unit, theirs)
    if ours is None or not ours.available:
        return [
            peer,
            missing(SUITE, f"tabpilot: {case}", metric, unit, ours.note if ours and ours.note else "n/a"),
        ]
    return [peer, measured(SUITE, f"tabpilot: {case}", metric, unit, ours.samples, (PEER, peer.median))]
