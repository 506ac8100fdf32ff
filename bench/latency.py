"""Per-command latency: whole `tabpilot` processes against a warm daemon and browser, in one interleaved run.

Every command's ratio is to the same interpreter's bare start without `site` (`python -I -S -c pass`),
measured in the same rounds; beside it `python -c pass`, an MCP tool call's round trip over a running
`tabpilot mcp`, agent-browser's eval and click when it is installed (never installed here), and the
floor: the same `Runtime.evaluate('1+1')` sent straight to the page over a raw CDP WebSocket.

The command shapes agents write (issue 31): `eval 1` and `snapshot` with `--json` and `--session` before
or after the verb, each as a multiple of the same verb written plainly, in the same rounds, and whether the
CLI's hot path takes that shape (`tabpilot.cli.fast.plan`).

Inside the extension, the same rounds are timed by the service worker itself (extension/link/timings.js,
switched on over the worker's debugging target only for the timed rounds): per tool, the median time from
the request's arrival to each phase, `input` being the first mouse or key event sent to the page — the
setup every action on a ref pays before it acts.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.cdp import CdpError, PageCdp, open_page, open_worker
from bench.mcp_stdio import McpStdio
from bench.refs import find_ref
from bench.rig import Rig
from bench.stats import Record, measured, missing
from tabpilot.cli import fast

SUITE = "latency"
FORM_SESSION = "lat-form"
OPEN_SESSION = "lat-open"
MCP_SESSION = "lat-mcp"
PEER_SESSION = "lat-peer"
FLOOR_CASE = "CDP Runtime.evaluate 1+1 (floor)"
PYTHON_CASE = "python -c pass"
BARE_CASE = "python -I -S -c pass"
MCP_CASE = "MCP click @eN (round trip)"
PEER = "agent-browser"
FLOOR_PER_ROUND = 10
WARMUP_ROUNDS = 3
EVALUATE_ONE_PLUS_ONE = {"expression": "1+1", "returnByValue": True}
# What the hot path aims at (issue 17): whole commands as a multiple of the bare interpreter, MCP in ms.
TARGETS = {"eval 1+1": 1.8, "click @eN": 2.5}
MCP_TARGET_MS = 25.0
# Command shapes: (name, the argv after `tabpilot` with S for the session, the plain shape it is compared to).
SHAPE_PREFIX = "shape: "
SHAPE_TARGET = 1.15
SHAPES = (
    ("eval 1", ("eval", "1", "--session", "S"), None),
    ("eval 1 --json", ("eval", "1", "--json", "--session", "S"), "eval 1"),
    ("--json eval 1", ("--json", "eval", "1", "--session", "S"), "eval 1"),
    ("--session S eval 1", ("--session", "S", "eval", "1"), "eval 1"),
    (
        "--session S --tab T --timeout 5s eval 1",
        ("--session", "S", "--tab", "T", "eval", "1", "--timeout", "5s"),
        "eval 1",
    ),
    ("snapshot", ("snapshot", "--session", "S"), None),
    ("snapshot --json", ("snapshot", "--json", "--session", "S"), "snapshot"),
    ("--json snapshot", ("--json", "snapshot", "--session", "S"), "snapshot"),
    ("--session S --no-boundaries snapshot", ("--session", "S", "--no-boundaries", "snapshot"), "snapshot"),
)
# In the worker: the phases a tool marks (ms since the request came in), the answer sent, and the whole
# request (its clean-up after the answer included).
PHASES = ("tab", "begun", "looked", "input", "acted", "flushed", "answered", "whole")
SETUP_PHASE = "input"
SETUP_TARGET_MS = 3.0
SETUP_CASE = "tool.click (CLI)"
WORKER_PREFIX = "in the worker: "
# Which interface each session's requests came through.
VIA = {FORM_SESSION: "CLI", OPEN_SESSION: "CLI", MCP_SESSION: "MCP"}
TIMINGS_ON = "globalThis.tabpilotTimings = []; 0"
TIMINGS_OFF = (
    "(() => { const t = globalThis.tabpilotTimings ?? []; delete globalThis.tabpilotTimings; return t; })()"
)


@dataclass
class Case:
    """One command line to time; `note` says why it cannot run in this build."""

    name: str
    argv: list[str] | None
    note: str | None = None
    verb: str | None = None  # the tabpilot verb, for the commands that talk to the browser
    samples: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # A call timed in this process instead of a command (the MCP round trip): True when it succeeded.
    call: Callable[[], bool] | None = None
    # Left out of the memory suite's peaks: not a tabpilot command (agent-browser, MCP), or one more shape of a verb.
    other: bool = False
    # A command shape: the plain shape it is compared to (None for the plain one), and which path takes it.
    compared_to: str | None = None
    path: str | None = None

    @property
    def runnable(self) -> bool:
        return self.argv is not None or self.call is not None


def prepare(rig: Rig, peer: str | None = None) -> list[Case]:
    """Sessions on the form page and the small page, refs for click/fill, and the commands to time;
    `peer`: agent-browser's binary, for its eval and click in the same rounds."""
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
        Case(BARE_CASE, [sys.executable, "-I", "-S", "-c", "pass"]),
        Case(PYTHON_CASE, [sys.executable, "-c", "pass"]),
        Case("tabpilot --version", rig.command("--version")),
        case("eval 1+1", ["eval", "1+1"]),
        case("click @eN", ["click", button]),
        case("hover @eN", ["hover", button]),
        case("fill @eN text", ["fill", textbox, "text"]),
        case("press Tab", ["press", "Tab"]),
        case("snapshot (form page)", ["snapshot"]),
        case(
            "open (small page)", ["open", rig.fixture_url("index.html", OPEN_SESSION)], session=OPEN_SESSION
        ),
        _mcp_case(rig),
        *_peer_cases(rig, peer),
        *_shape_cases(rig),
    ]


def _shape_cases(rig: Rig) -> list[Case]:
    """The shapes of SHAPES on the form page's session, each marked with the path the CLI takes for it."""
    note = rig.unavailable("eval")
    tab = rig.cli("eval", "1", "--json", session=FORM_SESSION)
    tab_id = str(json.loads(tab.out).get("tab_id", "")) if tab.ok else ""
    cases = []
    for name, words, compared_to in SHAPES:
        argv = [{"S": FORM_SESSION, "T": tab_id}.get(w, w) for w in words]
        path = "fast path" if fast.plan(argv) is not None else "full CLI"
        runnable = None if note or not tab_id else [rig.command()[0], *argv]
        shape = Case(
            f"{SHAPE_PREFIX}{name}", runnable, note or ("n/a (no tab id)" if not tab_id else None), other=True
        )
        shape.compared_to = f"{SHAPE_PREFIX}{compared_to}" if compared_to else None
        shape.path = path
        cases.append(shape)
    return cases


def _mcp_case(rig: Rig) -> Case:
    """A click over MCP: one `tabpilot mcp` on its own session on the form page, one tool call per round."""
    rig.start_session(MCP_SESSION, rig.fixture_url("bench-form.html", MCP_SESSION))
    button = find_ref(rig.cli("snapshot", session=MCP_SESSION).out, "button", "Count")
    if button is None:
        return Case(MCP_CASE, None, "n/a (no Count button in the snapshot)", other=True)
    try:
        client = McpStdio(rig, MCP_SESSION)
    except (OSError, RuntimeError, ValueError) as error:
        return Case(MCP_CASE, None, f"error: {error}", other=True)
    rig.closers.append(client.close)
    return Case(MCP_CASE, None, call=lambda: client.tool("click", {"target": button}), other=True)


def _peer_cases(rig: Rig, binary: str | None) -> list[Case]:
    """agent-browser's eval and click on the same form page, when it is installed."""
    if binary is None:
        return []
    from bench.peer import Peer

    peer = Peer(binary, rig.spawner, f"{PEER_SESSION}-{rig.tp.port}")
    rig.closers.append(peer.close)
    opened = rig.spawner.run(peer.argv("open", rig.fixture_url("bench-form.html", PEER_SESSION)), timeout=120)
    if not opened.ok:
        return [Case(f"{PEER} eval 1+1", None, f"error: {opened.error_line}", other=True)]
    button = find_ref(rig.spawner.run(peer.argv("snapshot", "-i")).out, "button", "Count")
    click = Case(f"{PEER} click @eN", peer.argv("click", button), other=True) if button else None
    return [Case(f"{PEER} eval 1+1", peer.argv("eval", "1+1"), other=True), *([click] if click else [])]


def _probe(rig: Rig, verb: str, argv: list[str]) -> str | None:
    """One trial run: None when the command can be timed, else why not (the extension lacks the tool)."""
    result = rig.spawner.run(argv)
    return None if result.ok else rig.missing_tool(verb, result)


def run(rig: Rig, cases: list[Case], samples: int) -> list[Record]:
    """Round-robin over the cases in a shuffled order per round, so drift on a noisy machine hits all alike."""
    runnable = [c for c in cases if c.runnable]
    floor: list[float] = []
    cdp = open_page(rig.devtools, FORM_SESSION)
    worker, worker_note = _worker(rig)
    timings: list[dict[str, Any]] = []
    order = random.Random(20261129)
    try:
        for round_no in range(WARMUP_ROUNDS + samples):
            warm = round_no >= WARMUP_ROUNDS
            if worker is not None and round_no == WARMUP_ROUNDS:
                worker.evaluate(TIMINGS_ON)
            order.shuffle(runnable)
            for case in runnable:
                ok, seconds, error = _time(rig, case)
                if not warm:
                    continue
                if ok:
                    case.samples.append(seconds * 1000)
                else:
                    case.errors.append(error)
            floor_round = _floor(cdp)
            if warm:
                floor.extend(floor_round)
        if worker is not None:
            timings = worker.evaluate(TIMINGS_OFF)
    finally:
        cdp.close()
        if worker is not None:
            worker.close()
    return records(cases, floor) + worker_records(timings, worker_note)


def _worker(rig: Rig) -> tuple[PageCdp | None, str | None]:
    """The extension's service worker over the browser's debugging port, or why it cannot be read."""
    try:
        return open_worker(rig.devtools), None
    except (CdpError, OSError) as error:
        return None, f"n/a (the service worker cannot be read: {error})"


def worker_records(timings: list[dict[str, Any]], note: str | None = None) -> list[Record]:
    """Per tool and interface, the median of each phase it marked in the worker (see PHASES)."""
    if note is not None:
        return [missing(SUITE, f"{WORKER_PREFIX}(none)", "whole", "ms", note)]
    phases: dict[str, dict[str, list[float]]] = {}
    for t in timings:
        via = VIA.get(t.get("session_id") or "")
        if via is None:
            continue
        seen = phases.setdefault(f"{WORKER_PREFIX}{t['method']} ({via})", {})
        for phase, ms in [*t.get("marks", {}).items(), ("whole", t["ms"])]:
            seen.setdefault(phase, []).append(ms)
    return [
        measured(SUITE, case, phase, "ms", seen[phase])
        for case, seen in phases.items()
        for phase in PHASES
        if phase in seen
    ]


def _time(rig: Rig, case: Case) -> tuple[bool, float, str]:
    """(succeeded, seconds, the error line) of one run of the case."""
    if case.call is not None:
        started = time.perf_counter()
        try:
            ok = case.call()
        except Exception as error:
            return False, 0.0, f"error: {error}"
        return ok, time.perf_counter() - started, "" if ok else "the tool call failed"
    assert case.argv is not None
    result = rig.spawner.run(case.argv)
    return result.ok, result.seconds, result.error_line


def _floor(cdp: PageCdp) -> list[float]:
    return [cdp.round_trip("Runtime.evaluate", EVALUATE_ONE_PLUS_ONE) * 1000 for _ in range(FLOOR_PER_ROUND)]


def records(cases: list[Case], floor: list[float]) -> list[Record]:
    """A record per case, each command's with the bare interpreter of the same rounds as its baseline."""
    medians = {c.name: measured(SUITE, c.name, "wall_time", "ms", c.samples).median for c in cases}
    out = [measured(SUITE, FLOOR_CASE, "wall_time", "ms", floor)]
    for case in cases:
        if not case.runnable:
            out.append(missing(SUITE, case.name, "wall_time", "ms", case.note or "n/a"))
            continue
        errors = f"{len(case.errors)} failed runs: {case.errors[0]}" if case.errors else None
        note = "; ".join(n for n in (case.path, errors) if n) or None
        if case.name.startswith(SHAPE_PREFIX):
            baseline = (case.compared_to, medians.get(case.compared_to)) if case.compared_to else None
        elif case.name == BARE_CASE or case.call is not None:
            baseline = None
        else:
            baseline = (BARE_CASE, medians.get(BARE_CASE))
        out.append(measured(SUITE, case.name, "wall_time", "ms", case.samples, baseline, note))
    return out
