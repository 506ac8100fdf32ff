"""`python -m bench`: start a private daemon, headless Chromium and loopback page servers, run the suites,
print a table per suite and write bench/results/<timestamp>.json (one record per measurement).

Speed is measured and reported here, never asserted: every figure is a median over repeated runs, shown
beside a baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import (
    agents,
    approvals,
    apps,
    cues,
    fences,
    latency,
    memory,
    panel,
    panel_view,
    parallel,
    peer,
    report,
    snapshots,
)
from bench.machine import describe, one_line
from bench.pages import docs_pages, fixture_pages, python_docs
from bench.rig import Rig, started
from bench.stats import Record, missing

SUITES = (
    "latency",
    "snapshots",
    "fences",
    "parallel",
    "agents",
    "peer",
    "memory",
    "panel",
    "approvals",
    "apps",
    "cues",
)
RESULTS = Path(__file__).resolve().parent / "results"
# The browser is still starting its extension right after launch; idle memory is read after this.
IDLE_SETTLE_S = 2.0


@dataclass(frozen=True)
class Budget:
    """How much each suite samples: the full run, or the quick one."""

    latency: int
    snapshots: int
    memory: int
    parallel_s: float
    apps: int


FULL = Budget(latency=50, snapshots=10, memory=5, parallel_s=30.0, apps=5)
QUICK = Budget(latency=10, snapshots=3, memory=3, parallel_s=4.0, apps=2)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="few samples and 4 s per parallel level (< 3 min)"
    )
    parser.add_argument("--suite", action="append", choices=SUITES, help="run only this suite (repeatable)")
    parser.add_argument("--samples", type=int, help="samples per case, for every suite")
    parser.add_argument("--duration", type=float, help="seconds per parallel level")
    parser.add_argument(
        "--vs-agent-browser", metavar="PATH", help="agent-browser binary for the side-by-side"
    )
    parser.add_argument("--results", metavar="DIR", type=Path, default=RESULTS, help="where the JSON goes")
    parser.add_argument("--report", metavar="JSON", type=Path, help="print a results file as Markdown tables")
    return parser.parse_args(argv)


def budget(args: argparse.Namespace) -> Budget:
    base = QUICK if args.quick else FULL
    n = args.samples
    return Budget(
        latency=n or base.latency,
        snapshots=n or base.snapshots,
        memory=n or base.memory,
        parallel_s=args.duration or base.parallel_s,
        apps=n or base.apps,
    )


def markdown(path: Path) -> str:
    """The tables of a results file in Markdown, headed by the machine it ran on (for the README)."""
    data = json.loads(path.read_text())
    records = [Record(**r) for r in data["records"]]
    suites = [s for s in SUITES if any(r.suite == s for r in records)]
    head = f"Run of {data['machine']['date']} ({data['mode']}, {data['wall_s']:.0f} s) on {one_line(data['machine'])}."
    notes = {r.note for r in records}
    skipped = [f"_{line}_" for line in data["skipped"] if line not in notes]
    return "\n\n".join([head, *(report.TABLES[s](records, True) for s in suites), *skipped])


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.report:
        print(markdown(args.report))
        return 0
    # A plain `kill` of the bench still stops its daemon and browser (the rig's `finally`).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    began, stamp = time.monotonic(), time.strftime("%Y%m%d-%H%M%S")
    plan = budget(args)
    suites = [s for s in SUITES if s in (args.suite or SUITES)]
    skipped: list[str] = []
    docs_root = None
    if "snapshots" in suites or "peer" in suites or "fences" in suites:
        docs_root, line = python_docs()
        print(line, flush=True)
        if docs_root is None:
            skipped.append(line)
    binary = None
    if "peer" in suites or "latency" in suites:
        binary, line = peer.locate(args.vs_agent_browser)
        print(line, flush=True)
        if binary is None:
            skipped.append(line)

    records: list[Record] = []
    with started(docs_root) as rig:
        machine = describe(rig)
        environment = {"home": rig.tp.home, "daemon_pid": rig.daemon_pid, "browser_pid": rig.browser_pid}
        print(f"machine: {one_line(machine)}", flush=True)
        pages = (docs_pages() if docs_root else []) + fixture_pages()
        if "memory" in suites:
            time.sleep(IDLE_SETTLE_S)
        idle = memory.footprint(rig) if "memory" in suites else None
        cases: list[latency.Case] = []

        def latency_cases(rig: Rig) -> list[latency.Case]:
            if not cases:
                cases.extend(latency.prepare(rig, binary if "latency" in suites else None))
            return cases

        def run_latency(rig: Rig) -> list[Record]:
            return latency.run(rig, latency_cases(rig), plan.latency)

        def run_peer(rig: Rig) -> list[Record]:
            if binary is None:
                return [missing("peer", f"{peer.PEER}: (skipped)", "wall_time", "ms", skipped[-1])]
            return peer.run(rig, binary, records, pages, plan.snapshots if args.quick else plan.latency)

        def run_memory(rig: Rig) -> list[Record]:
            assert idle is not None
            return memory.run(rig, idle, latency_cases(rig), plan.memory)

        steps: dict[str, Callable[[Rig], list[Record]]] = {
            "latency": run_latency,
            "snapshots": lambda rig: snapshots.run(rig, pages, plan.snapshots),
            "fences": lambda rig: fences.run(rig, pages),
            "parallel": lambda rig: parallel.run(rig, plan.parallel_s),
            "agents": lambda rig: agents.run(rig, 100 if not args.quick else 10),
            "peer": run_peer,
            "memory": run_memory,
            # The engine's figures (agents side), then the view's (the panel page in the browser).
            "panel": lambda rig: (
                panel.run(rig, 20 if not args.quick else 6) + panel_view.run(3 if not args.quick else 1)
            ),
            "approvals": lambda rig: approvals.run(10 if not args.quick else 3),
            "apps": lambda rig: apps.run(rig, plan.apps),
            "cues": lambda rig: cues.run(rig, plan.latency),
        }
        for suite in suites:
            found = guarded(suite, steps[suite], rig)
            records += found
            print("\n" + report.TABLES[suite](found, False), flush=True)

    wall = time.monotonic() - began
    machine["load_end"] = round(os.getloadavg()[0], 2)
    out = write(args.results / f"{stamp}.json", args, machine, environment, skipped, records, wall)
    print(f"\nwrote {out} ({len(records)} records) in {wall:.0f} s", flush=True)
    problems = [
        r for r in records if r.suite == "parallel" and r.metric in ("errors", "cross_talk") and r.median
    ]
    for record in problems:
        print(f"PROBLEM: {record.case}: {record.median:.0f} {record.metric}: {record.note}", file=sys.stderr)
    return 1 if problems else 0


def guarded(suite: str, step: Callable[[Rig], list[Record]], rig: Rig) -> list[Record]:
    """A suite's records; a suite that breaks is recorded as such and the others still run."""
    try:
        return step(rig)
    except Exception as error:
        traceback.print_exc()
        return [missing(suite, "(suite failed)", "error", "", f"error: {type(error).__name__}: {error}")]


def write(
    path: Path,
    args: argparse.Namespace,
    machine: dict[str, Any],
    environment: dict[str, Any],
    skipped: list[str],
    records: list[Record],
    wall: float,
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "mode": "quick" if args.quick else "full",
        "argv": sys.argv[1:],
        "wall_s": round(wall, 1),
        "machine": machine,
        "environment": environment,
        "skipped": skipped,
        "records": [r.to_json() for r in records],
    }
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path
