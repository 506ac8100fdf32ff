"""Snapshot size and time per page and mode, with coverage beside the size: a smaller snapshot that loses
links, controls or text is not a win.

Baselines from the same run: the page's own visible text (`document.body.innerText`), its tokens and
characters, and the time to fetch it over a raw CDP connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bench import coverage, tokens
from bench.cdp import open_page
from bench.pages import Page
from bench.rig import Rig
from bench.spawn import Run
from bench.stats import Record, measured, missing

SUITE = "snapshots"
SESSION = "snap"
MODES = (("full", ()), ("-i", ("-i",)), ("--viewport", ("--viewport",)))
# Full snapshots are measured uncapped (0: no limit; the CLI refuses counts above its bound).
UNCAPPED = ("--max-tokens", "0")
INNER_TEXT = {"expression": "document.body.innerText", "returnByValue": True}
TEXT = "innerText"
PATH_LINE = re.compile(r"(/\S+)")


METRICS = (
    ("wall_time", "ms"),
    ("chars", "chars"),
    ("tokens", "tokens"),
    ("links_with_ref", "%"),
    ("controls_with_ref", "%"),
    ("words", "%"),
    ("extra_refs", "refs"),
)


@dataclass
class Snapshot:
    """The last output of a mode on a page, with the timings of its runs."""

    text: str
    times_ms: list[float]
    errors: list[str]
    failure: Run | None  # the first failed run


@dataclass
class PageText:
    """The baseline of a page: its visible text, that text's tokens, and the time to fetch it over CDP."""

    text: str
    tokens: int | None
    fetch_ms: float | None


def run(rig: Rig, pages: list[Page], samples: int) -> list[Record]:
    rig.start_session(SESSION, rig.url(pages[0], SESSION))
    out: list[Record] = []
    for page in pages:
        out += measure_page(rig, page, samples)
    rig.stop_session(SESSION)
    return out


def measure_page(rig: Rig, page: Page, samples: int) -> list[Record]:
    opened = rig.cli("open", rig.url(page, SESSION), session=SESSION)
    if not opened.ok:
        return [missing(SUITE, f"{page.label} open", "wall_time", "ms", f"error: {opened.error_line}")]
    cdp = open_page(rig.devtools, SESSION)
    try:
        inner_text = str(cdp.evaluate("document.body.innerText"))
        fetch_ms = [cdp.round_trip("Runtime.evaluate", INNER_TEXT) * 1000 for _ in range(max(samples, 5))]
    finally:
        cdp.close()
    case = f"{page.label} {TEXT}"
    out = [
        measured(SUITE, case, "wall_time", "ms", fetch_ms, note="raw CDP Runtime.evaluate"),
        measured(SUITE, case, "chars", "chars", [len(inner_text)]),
    ]
    text_tokens = tokens.count(inner_text) if tokens.available() else None
    out.append(
        measured(SUITE, case, "tokens", "tokens", [text_tokens])
        if text_tokens is not None
        else missing(SUITE, case, "tokens", "tokens", tokens.MISSING)
    )
    baseline = PageText(inner_text, text_tokens, out[0].median)
    for mode, flags in MODES:
        out += measure_mode(rig, f"{page.label} {mode}", flags, samples, baseline)
    return out


def measure_mode(rig: Rig, case: str, flags: tuple[str, ...], samples: int, page: PageText) -> list[Record]:
    note = rig.unavailable("snapshot", *flags)
    snapshot = take(rig, flags, samples) if note is None else None
    if snapshot is not None and snapshot.failure is not None and not snapshot.times_ms:
        note = rig.missing_tool("snapshot", snapshot.failure) or f"error: {snapshot.failure.error_line}"
    if snapshot is None or note is not None:
        return [missing(SUITE, case, metric, unit, note or "n/a") for metric, unit in METRICS]
    cdp = open_page(rig.devtools, SESSION)
    try:
        cover = coverage.measure(cdp, snapshot.text, page.text, viewport="--viewport" in flags)
    finally:
        cdp.close()
    errors = f"{len(snapshot.errors)} failed runs: {snapshot.errors[0]}" if snapshot.errors else None
    return [
        measured(SUITE, case, "wall_time", "ms", snapshot.times_ms, ("cdp innerText", page.fetch_ms), errors),
        measured(SUITE, case, "chars", "chars", [len(snapshot.text)], ("innerText chars", len(page.text))),
        measured(
            SUITE, case, "tokens", "tokens", [tokens.count(snapshot.text)], ("innerText tokens", page.tokens)
        )
        if page.tokens is not None
        else missing(SUITE, case, "tokens", "tokens", tokens.MISSING),
        _share(case, "links_with_ref", cover.links, cover, "link"),
        _share(case, "controls_with_ref", cover.controls, cover, "control"),
        measured(SUITE, case, "words", "%", [cover.words * 100], note="share of the page's innerText words"),
        measured(SUITE, case, "extra_refs", "refs", [cover.extra_refs], note="refs on other actionables"),
    ]


def take(rig: Rig, flags: tuple[str, ...], samples: int) -> Snapshot:
    """One warm-up and `samples` timed snapshots of the session's page; the text of the last good one."""
    capped = () if rig.unavailable("snapshot", *UNCAPPED[:1]) else UNCAPPED
    argv = ["snapshot", *flags, *capped]
    rig.cli(*argv, session=SESSION)
    times, errors, text, failure = [], [], "", None
    for _ in range(samples):
        result = rig.cli(*argv, session=SESSION)
        if result.ok:
            times.append(result.seconds * 1000)
            text = snapshot_text(result)
        else:
            errors.append(result.error_line)
            failure = failure or result
    return Snapshot(text, times, errors, failure)


def snapshot_text(result: Run) -> str:
    """What the agent reads: stdout, or the file it names when the CLI put a large result in a file."""
    lines = result.out.strip().splitlines()
    match = PATH_LINE.search(lines[0]) if len(lines) == 1 else None
    if match and Path(match.group(1)).is_file():
        return Path(match.group(1)).read_text(errors="replace")
    return result.out


def _share(case: str, metric: str, pair: tuple[int, int], cover: coverage.Coverage, kind: str) -> Record:
    value = coverage.share(pair)
    if value is None:
        return missing(SUITE, case, metric, "%", f"n/a (none on the page), {cover.kind}")
    missed = cover.missed.get(kind)
    without = f"; without a ref: {' '.join(missed)}" if missed else ""
    note = f"{pair[0]}/{pair[1]} visible, {cover.kind}{without}"
    return measured(SUITE, case, metric, "%", [value * 100], note=note)
