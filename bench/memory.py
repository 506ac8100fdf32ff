"""Memory: the daemon's RSS idle and after the suites, the managed browser's total PSS, each command's peak RSS."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass

from bench.latency import BARE_CASE, PYTHON_CASE, Case
from bench.rig import Rig
from bench.stats import Record, measured, missing

SUITE = "memory"
READINGS = 3
SPAWNER_FLOOR = "spawner floor (/bin/true)"


def status_kb(pid: int, field: str) -> int | None:
    """A `kB` field of /proc/PID/status (VmRSS, VmHWM…), or None when the process is gone."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def process_tree(root: int) -> list[int]:
    """`root` and all its descendants (Chromium's zygotes, renderers, GPU and utility processes)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError), open(f"{entry.path}/stat") as handle:
            # The command name may hold spaces and parentheses: the fields start after the last ')'.
            ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    tree, index = [root], 0
    while index < len(tree):
        tree += children.get(tree[index], [])
        index += 1
    return tree


def pss_kb(pids: list[int]) -> int:
    """Proportional set size summed over processes: shared pages are counted once across them."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
    return total


@dataclass
class Footprint:
    """Readings of the daemon's RSS and the browser's total PSS, in KiB."""

    daemon_rss_kb: list[int]
    browser_pss_kb: list[int]


def footprint(rig: Rig) -> Footprint:
    daemon, browser = rig.daemon_pid, rig.browser_pid
    rss: list[int] = []
    pss: list[int] = []
    for _ in range(READINGS):
        value = status_kb(daemon, "VmRSS") if daemon else None
        if value is not None:
            rss.append(value)
        if browser:
            pss.append(pss_kb(process_tree(browser)))
        time.sleep(0.2)
    return Footprint(rss, pss)


def run(rig: Rig, idle: Footprint, cases: list[Case], samples: int) -> list[Record]:
    """Footprint after the suites beside the idle one, and peak RSS of every latency command."""
    after = footprint(rig)
    cases = [case for case in cases if not case.other]
    peaks = {case.name: _peaks(rig, case.argv, samples) for case in cases if case.argv is not None}
    floor = _peaks(rig, ["/bin/true"], samples)
    python = measured(SUITE, f"CLI peak RSS {PYTHON_CASE}", "peak_rss", "MiB", peaks.pop(PYTHON_CASE, []))
    idle_rss = measured(SUITE, "daemon RSS idle", "rss", "MiB", _mib(idle.daemon_rss_kb))
    idle_pss = measured(SUITE, "browser PSS idle", "pss", "MiB", _mib(idle.browser_pss_kb))
    out = [
        idle_rss,
        measured(
            SUITE,
            "daemon RSS after the suites",
            "rss",
            "MiB",
            _mib(after.daemon_rss_kb),
            ("idle", idle_rss.median),
        ),
        idle_pss,
        measured(
            SUITE,
            "browser PSS after the suites",
            "pss",
            "MiB",
            _mib(after.browser_pss_kb),
            ("idle", idle_pss.median),
        ),
        measured(
            SUITE,
            SPAWNER_FLOOR,
            "peak_rss",
            "MiB",
            floor,
            note="RSS of the spawner itself: no peak reads lower",
        ),
        python,
    ]
    for case in cases:
        if case.name in (PYTHON_CASE, BARE_CASE):
            continue
        name = f"CLI peak RSS {case.name}"
        if case.argv is None:
            out.append(missing(SUITE, name, "peak_rss", "MiB", case.note or "n/a"))
        else:
            out.append(
                measured(SUITE, name, "peak_rss", "MiB", peaks[case.name], (PYTHON_CASE, python.median))
            )
    return out


def _peaks(rig: Rig, argv: list[str] | None, samples: int) -> list[float]:
    assert argv is not None
    readings = [rig.spawner.peak_rss_kb(argv) for _ in range(samples)]
    return _mib([r for r in readings if r is not None])


def _mib(values_kb: list[int]) -> list[float]:
    return [v / 1024 for v in values_kb]
