"""The bench harness keeps working: a short latency run prints its table and writes well-formed records.

No speed is asserted here; the bench measures and reports, it never judges.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness import REPO, pid_alive

RECORD_KEYS = {"suite", "case", "metric", "unit", "samples", "median", "p95", "baseline", "ratio"}


@pytest.mark.timeout(300)
def test_quick_latency_run_prints_a_table_and_writes_records(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-m",
        "bench",
        "--quick",
        "--suite",
        "latency",
        "--samples",
        "3",
        "--results",
        str(tmp_path),
    ]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=280, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Latency" in proc.stdout
    for case in ("python -c pass", "tabpilot --version", "eval 1+1", "open (small page)"):
        assert case in proc.stdout, proc.stdout

    (results,) = tmp_path.glob("*.json")
    data = json.loads(results.read_text())
    assert data["mode"] == "quick" and data["machine"]["cpus"] >= 1
    records = data["records"]
    assert records and all(record.keys() >= RECORD_KEYS for record in records)
    by_case = {record["case"]: record for record in records if record["metric"] == "wall_time"}
    assert {"python -c pass", "tabpilot --version", "eval 1+1"} <= by_case.keys()
    # The service worker timed its side of the same runs: the phases of each tool, per interface.
    inside = {(r["case"], r["metric"]): r for r in records if r["case"].startswith("in the worker: ")}
    assert len(inside[("in the worker: tool.click (CLI)", "input")]["samples"]) == 3, sorted(inside)
    click = {metric: r["median"] for (case, metric), r in inside.items() if case.endswith("tool.click (CLI)")}
    assert 0 < click["tab"] <= click["looked"] <= click["input"] <= click["acted"] <= click["whole"], click
    assert ("in the worker: tool.evaluate (CLI)", "whole") in inside
    assert "In the extension's service worker" in proc.stdout
    for record in records:
        assert record["suite"] == "latency" and record["unit"] == "ms"
        assert record["metric"] == "wall_time" or record["case"].startswith("in the worker: "), record
        if record["median"] is None:
            # a verb that is not built yet is reported, not failed
            assert record["samples"] == [] and record["note"].startswith(("n/a", "error")), record
            continue
        samples = record["samples"]
        assert min(samples) <= record["median"] <= record["p95"] <= max(samples), record
        if record["baseline"] is not None:
            assert record["ratio"] > 0, record
    assert len(by_case["eval 1+1"]["samples"]) == 3
    # The command shapes agents write, each beside its verb's plain shape, every one on the hot path.
    assert "Command shapes as agents write them" in proc.stdout
    shapes = {case: r for case, r in by_case.items() if case.startswith("shape: ")}
    assert len(shapes) >= 9 and shapes["shape: --json eval 1"]["baseline"] == "shape: eval 1", sorted(shapes)
    assert all(r["note"] and r["note"].startswith("fast path") for r in shapes.values()), shapes
    assert by_case["eval 1+1"]["baseline"] == "python -I -S -c pass"

    environment = data["environment"]
    for pid in (environment["daemon_pid"], environment["browser_pid"]):
        assert not pid_alive(pid), f"the bench left process {pid} behind"
    # Every process the bench started carries its private TABPILOT_HOME; none may outlive it.
    check = "import sys; from bench.rig import leftovers; print(leftovers(sys.argv[1]))"
    left = subprocess.run(
        [sys.executable, "-c", check, environment["home"]],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert left.stdout.strip() == "[]", left.stdout
