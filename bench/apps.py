"""The `apps` suite: the real-app tasks of the end-to-end tests (tests/e2e/app_tasks.py), each run 5 times in a
row through the `tabpilot` CLI and, as the baseline in the same run, through Playwright for Python reading
its aria snapshot (`page.locator("body").aria_snapshot()`) on the system's Chromium.

Per task: how many runs succeeded (checked in the app's own state), the commands issued, the snapshot tokens
read, and the coverage of the controls the task needs in what was read.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.rig import Rig
from bench.stats import Record, measured, missing
from bench.tokens import count

# The app tasks are the e2e tests' own, written against the e2e harness as a top-level module.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
import app_servers
import app_tasks
from app_tasks import Check, Click, CliDriver, Control, Fill, Open, Read, Select, Step, Task, TypeInto

SUITE = "apps"
RUNS = 5
BASELINE = "playwright aria snapshot"
CHROMIUM = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
LOOK_FOR_S = 10.0
# `- role "name"` at the start of an aria snapshot line; the name is JSON-like quoted.
ARIA_LINE = re.compile(r'^\s*- ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?')
ARIA_VALUE = re.compile(r'^\s*- (?:[a-z]+(?: "(?:[^"\\]|\\.)*")?(?: \[[^\]]*\])*: )?(.*)$')


def playwright_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "n/a (playwright not installed: pip install -e '.[dev]')"
    if not any(Path(p).exists() for p in CHROMIUM):
        return "n/a (no system Chromium for Playwright)"
    return None


def aria_controls(snapshot: str) -> list[tuple[str, str]]:
    """(role, name) of every line of an aria snapshot, in order (name "" when it has none)."""
    found = []
    for line in snapshot.splitlines():
        match = ARIA_LINE.match(line)
        if match:
            found.append((match.group(1), (match.group(2) or "").replace('\\"', '"')))
    return found


def aria_has(snapshot: str, control: Control) -> bool:
    """Does the aria snapshot show the control: by its name, or nameless after its anchor?"""
    seen = aria_controls(snapshot)
    if (control.role, control.name) in seen:
        return True
    if control.after is None or not aria_has(snapshot, control.after):
        return False
    anchor = (control.after.role, control.after.name)
    start = seen.index(anchor) if anchor in seen else 0
    return (control.role, "") in seen[start:]


def aria_text(snapshot: str) -> str:
    """The text of an aria snapshot without its structure: what the Read patterns are matched against."""
    lines = []
    for line in snapshot.splitlines():
        match = ARIA_VALUE.match(line)
        if match and match.group(1) and not match.group(1).startswith("/url:"):
            lines.append(match.group(1).strip().strip('"'))
    return "\n".join(lines)


@dataclass
class PlaywrightDriver:
    """The same steps through Playwright: its aria snapshot is what it reads, roles and names what it acts on."""

    page: Any
    commands: list[str] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)
    _seen: str | None = None

    def look(self) -> str:
        self.commands.append("aria_snapshot")
        self._seen = self.page.locator("body").aria_snapshot()
        self.snapshots.append(self._seen)
        return self._seen

    def locate(self, control: Control) -> Any:
        deadline = time.monotonic() + LOOK_FOR_S
        text = self._seen if self._seen is not None else self.look()
        while not aria_has(text, control):
            if time.monotonic() > deadline:
                raise AssertionError(f'no {control.role} "{control.name}" in the aria snapshot:\n{text}')
            # As the CLI agent does: wait for the name to show, then read again.
            if control.name:
                self.commands.append(f"wait for {control.name}")
                with contextlib.suppress(Exception):
                    self.page.get_by_text(control.name).first.wait_for(timeout=5000)
            else:
                time.sleep(0.3)
            text = self.look()
        if (control.role, control.name) in aria_controls(text):
            return self.page.get_by_role(control.role, name=control.name, exact=True).first
        return self.page.get_by_role(control.role, name=re.compile(r"^$")).first

    def act(self, what: str, control: Control, do: Callable[[Any], None]) -> None:
        self.commands.append(f'{what} {control.role} "{control.name}"')
        do(self.locate(control))

    def step(self, step: Step) -> str | None:
        match step:
            case Open(url):
                self.commands.append(f"goto {url}")
                self.page.goto(url)
                self._seen = None
            case Fill(control, text):
                self.act("fill", control, lambda el: el.fill(text))
            case TypeInto(control, text):
                self.act("click", control, lambda el: el.click())
                self.commands.append(f"type {text}")
                self.page.keyboard.type(text)
                self._seen = None
            case Click(control, then):
                # Streamlit draws its radios over hidden inputs: Playwright's own advice is to force those.
                hidden = control.role in ("radio", "checkbox")
                self.act("click", control, lambda el: el.check(force=True) if hidden else el.click())
                if then:
                    self.commands.append(f"wait for {then}")
                    self.page.get_by_text(then).first.wait_for()
                self._seen = None
            case Check(control, on):
                self.act("check" if on else "uncheck", control, lambda el: el.set_checked(on, force=True))
            case Select(control, option):
                self.act("select", control, lambda el: el.select_option(label=option))
            case Read(pattern, after):
                if after:
                    self.commands.append(f"wait for {after}")
                    self.page.get_by_text(after).first.wait_for()
                deadline = time.monotonic() + LOOK_FOR_S
                while not (found := re.search(pattern, aria_text(self.look()))):
                    assert time.monotonic() < deadline, f"{pattern!r} not in:\n{self._seen}"
                    time.sleep(0.3)
                return found.group(0)
        return None

    def run_task(self, task: Task, app: app_servers.App, tag: str) -> str | None:
        read = None
        for step in task.steps(tag):
            if isinstance(step, Open):
                step = Open(app.url + step.path.lstrip("/"))
            read = self.step(step) or read
        return read


@dataclass
class Tally:
    """What the runs of one task through one driver came to."""

    ok: int = 0
    commands: list[float] = field(default_factory=list)
    tokens: list[float] = field(default_factory=list)
    coverage: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    by_place: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)


def attempt(
    task: Task,
    app: app_servers.App,
    driver: Any,
    run_no: int,
    tally: Tally,
    shows: Callable[[str, Control], bool],
) -> None:
    """One run of a task: carried out, checked in the app's state, and what it read counted."""
    if task.name == "log in":
        app_tasks.log_out(app)
    started = time.monotonic()
    tag = f"r{run_no}"
    try:
        tag = app_tasks.tag_for(task, app, run_no)
        read = driver.run_task(task, app, tag)
        task.check(app, tag, read)
        tally.ok += 1
    except Exception as error:
        lines = str(error).strip().splitlines() or [""]
        tally.errors.append(f"{type(error).__name__}: {lines[0][:160]}")
    tally.seconds.append(time.monotonic() - started)
    who = "tabpilot" if isinstance(driver, CliDriver) else "playwright"
    outcome = "ok" if not tally.errors or tally.ok == len(tally.seconds) else f"FAILED {tally.errors[-1]}"
    print(f"  {task.app}: {task.name} [{who} run {run_no}] {outcome} ({tally.seconds[-1]:.1f} s)", flush=True)
    tally.commands.append(len(driver.commands))
    tally.tokens.append(sum(count(s) for s in driver.snapshots))
    needed = task.controls(tag)
    covered = [c for c in needed if any(shows(s, c) for s in driver.snapshots)]
    tally.coverage.append(100.0 * len(covered) / len(needed) if needed else 100.0)
    for control in getattr(driver, "by_place", []):
        tally.by_place.add(f'{control.role} "{control.name}"')


def records_of(task: Task, ours: Tally, theirs: Tally | None, why_not: str | None) -> list[Record]:
    case = f"{task.app}: {task.name}"
    note = "; ".join(
        ours.errors[:1]
        + ([f"found by place only: {', '.join(sorted(ours.by_place))}"] if ours.by_place else [])
    )
    records = [
        measured(SUITE, case, "succeeded", "runs", [ours.ok], note=note or None),
        measured(SUITE, case, "commands", "", ours.commands),
        measured(SUITE, case, "coverage", "%", ours.coverage),
    ]
    if theirs is None:
        records.append(measured(SUITE, case, "snapshot_tokens", "tokens", ours.tokens, note=why_not))
        records.append(missing(SUITE, case, "baseline_tokens", "tokens", why_not or "n/a"))
        return records
    base = measured(
        SUITE, case, "baseline_tokens", "tokens", theirs.tokens, note="; ".join(theirs.errors[:1]) or None
    )
    records += [
        measured(SUITE, case, "snapshot_tokens", "tokens", ours.tokens, baseline=(BASELINE, base.median)),
        base,
        measured(SUITE, case, "baseline_succeeded", "runs", [theirs.ok]),
        measured(SUITE, case, "baseline_commands", "", theirs.commands),
        measured(SUITE, case, "baseline_coverage", "%", theirs.coverage),
    ]
    return records


def run(rig: Rig, runs: int = RUNS) -> list[Record]:
    why_not = playwright_missing()
    records: list[Record] = []
    session = ("--session", "bench-apps")
    rig.tp.run("session", "start", "bench-apps", timeout=30)
    try:
        for name in app_servers.STARTERS:
            reason = app_servers.missing(name)
            if reason:
                records.append(missing(SUITE, f"{name}: (skipped)", "succeeded", "runs", f"n/a ({reason})"))
                continue
            records += run_app(rig, name, session, runs, why_not)
    finally:
        rig.stop_session("bench-apps")
    return records


def run_app(rig: Rig, name: str, session: tuple[str, ...], runs: int, why_not: str | None) -> list[Record]:
    tasks = app_tasks.tasks_of(name)
    ours = {t.name: Tally() for t in tasks}
    theirs = {t.name: Tally() for t in tasks}
    with app_servers.running(name) as app:
        browser = None
        playwright = None
        if why_not is None:
            from playwright.sync_api import sync_playwright

            playwright = sync_playwright().start()
            path = next(p for p in CHROMIUM if Path(p).exists())
            browser = playwright.chromium.launch(executable_path=path, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 713}) if browser else None
            for run_no in range(1, runs + 1):
                for task in tasks:
                    attempt(task, app, CliDriver(rig.tp, session), run_no, ours[task.name], _tabpilot_shows)
                if page is None:
                    continue
                for task in tasks:
                    attempt(task, app, PlaywrightDriver(page), 100 + run_no, theirs[task.name], aria_has)
        finally:
            if browser is not None:
                browser.close()
            if playwright is not None:
                playwright.stop()
    out: list[Record] = []
    for task in tasks:
        out += records_of(task, ours[task.name], theirs[task.name] if why_not is None else None, why_not)
    return out


def _tabpilot_shows(snapshot: str, control: Control) -> bool:
    return app_tasks.ref_of(snapshot, control) is not None
