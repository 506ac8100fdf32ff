"""Every `tabpilot …` command SKILL.md shows runs as written, in order, against tests/pages/skill.html.

Placeholders are filled the way an agent would: URL is the page, TAB_ID one of the person's tabs;
where a person must answer (a borrow, a help request) the test answers like a person would.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import REPO, TABPILOT, PageServer, Tabpilot, wait_until
from test_consent import answer_borrow, chrome, extension_page, page_target_loaded
from test_person import person_at

SKILL = REPO / "src" / "tabpilot" / "skill" / "SKILL.md"
FENCE = re.compile(r"```sh\n(.*?)```", re.DOTALL)
INLINE = re.compile(r"`(tabpilot [^`]*)`")
PAGE_STATE = (
    "({welcome: document.querySelector('#welcome').textContent,"
    " remember: document.querySelector('#remember').checked,"
    " size: document.querySelector('#size').value,"
    " report: document.querySelector('#report').files[0]?.name,"
    " deleted: document.querySelector('#deleted').textContent})"
)
EXPORT = re.compile(r"^export (\w+)=\$\((.*)\)(?:\s+#.*)?$")


def skill_commands() -> list[str]:
    """The command lines of SKILL.md, in document order: lines of ```sh blocks and inline `tabpilot …`."""
    text = SKILL.read_text()
    found: list[tuple[int, str]] = []
    for block in FENCE.finditer(text):
        offset = block.start(1)
        for line in block.group(1).splitlines():
            if line.strip():
                found.append((offset, line.strip()))
            offset += len(line) + 1
    # Commands inside code blocks are not wrapped in backticks, so the two kinds never overlap.
    found += [(span.start(), span.group(1)) for span in INLINE.finditer(text)]
    return [line for _, line in sorted(found)]


def test_the_skill_stays_small_and_names_itself() -> None:
    import bpe_openai

    text = SKILL.read_text()
    assert text.startswith("---\nname: tabpilot\ndescription: ")
    assert len(bpe_openai.get_encoding("o200k_base").encode(text)) <= 2000


@pytest.fixture()
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tp-skill-") as folder:
        Path(folder, "report.pdf").write_bytes(b"%PDF-1.4 a tiny report\n")
        yield Path(folder)


def test_every_command_in_the_skill_works_as_written(tp: Tabpilot, pages: PageServer, workdir: Path) -> None:
    commands = skill_commands()
    assert len(commands) >= 30, commands
    page = pages.url("skill.html")
    theirs = pages.url("second.html?persons-tab")
    # As an agent runs it: `tabpilot` on PATH, in a home of its own.
    env = {**tp.env, "HOME": str(workdir), "PATH": f"{Path(TABPILOT).parent}:{tp.env.get('PATH', '')}"}
    with extension_page(tp, "options/options.html") as browser_ui:
        window = chrome(browser_ui, f"chrome.windows.create({{url: '{theirs}', focused: true}})")
        page_target_loaded(browser_ui, theirs)
        tab_id = str(window["tabs"][0]["id"])

        def run(line: str) -> subprocess.CompletedProcess[str]:
            filled = line.replace("URL", page).replace("TAB_ID", tab_id)
            proc = subprocess.Popen(
                ["bash", "-c", filled],
                cwd=workdir,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            answer = None
            if " tab borrow " in filled:
                answer = threading.Thread(target=answer_borrow, args=(tp, theirs, "allow"))
            elif " request-help " in filled:
                answer = threading.Thread(target=press_done, args=(tp, page))
            if answer:
                answer.start()
            out, err = proc.communicate(timeout=90)
            if answer:
                answer.join(timeout=30)
            return subprocess.CompletedProcess(filled, proc.returncode, out, err)

        last = [c for c in commands if c.startswith("tabpilot session stop")]
        state = None
        for line in [c for c in commands if c not in last] + last[-1:]:
            if line.startswith("tabpilot reload") and state is None:
                # Before the reload wipes it: what the examples did to the page.
                state = json.loads(run(f"tabpilot eval {shlex.quote(PAGE_STATE)}").stdout)
            export = EXPORT.match(line)
            if export:
                result = run(export.group(2))
                assert result.returncode == 0, (line, result.stdout, result.stderr)
                env[export.group(1)] = result.stdout.strip()
                continue
            result = run(line)
            assert result.returncode == 0, (line, result.stdout, result.stderr)

    # what the examples did, seen by the page and the browser
    assert state == {
        "welcome": "Welcome, ada@example.com",
        "remember": True,
        "size": "M",
        "report": "report.pdf",
        "deleted": "deleted",
    }
    assert "TABPILOT_SESSION" in env
    sessions = tp.run("session", "list", "--json").json["sessions"]
    assert env["TABPILOT_SESSION"] not in {s["session_id"] for s in sessions}  # the skill ends by stopping it
    with extension_page(tp, "options/options.html") as browser_ui:
        assert chrome(browser_ui, f"chrome.tabs.get({tab_id})")["url"] == theirs  # the borrowed tab went back


def press_done(tp: Tabpilot, url: str) -> None:
    """The person reads the help panel and presses Done."""
    with person_at(tp, url) as person:
        person.answer("help-done", timeout=20)
        wait_until(lambda: person.prompt_frame("help") is None, timeout=5, interval=0.05)
