"""Everything a hostile page supplies reaches the model fenced, on every path an agent reads it by.

The page (tests/pages/hostile/every-string.html) puts a marker in every string it hands out: its title,
headings, text, link and option labels, control names, a cover over a button, a disabled option, a
dialog, a console message, a network response body, a cookie and a download's file name. The real
agent CLIs read it through tabpilot against fake model APIs on loopback, and the test looks at what
the fake model RECEIVED: every occurrence of the marker must lie inside a fence carrying the session's
nonce (tests/e2e/fence_check.py).

- the side panel's real Claude Code, through its `tabpilot mcp` (browser-only: page tools only);
- Claude Code (`claude -p`) with `tabpilot mcp --caps network,storage,downloads` (the opt-in groups the
  panel does not offer) and its Bash tool running the CLI;
- Codex (`codex exec`) the same way: tabpilot's MCP tools and its `exec_command` shell.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fence_check import nonces_in, received, unfenced, unfenced_in
from harness import REPO, TABPILOT, PageServer, Tabpilot, wait_until
from panel_world import REAL_CLAUDE, FakeAnthropic, Say, Use, claude_browser, open_tab, popped_out
from test_consent import chrome, extension_page
from test_person import Person
from test_sidepanel import say

if str(REPO / "tests" / "agents") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "agents"))
from fake_openai import FakeOpenAI

REAL_CODEX = REPO / ".venv" / "node" / "node_modules" / ".bin" / "codex"
PAGE = "hostile/every-string.html"
pytestmark = pytest.mark.skipif(
    not (REAL_CLAUDE.exists() and REAL_CODEX.exists()),
    reason="the agent CLIs are not installed (run scripts/bootstrap)",
)

# What an agent does with the page: each verb that hands it one of the page's strings. Nothing the
# agent itself writes carries the marker, so every marker the model receives came from the page.
PAGE_TOOLS = [
    ("snapshot", {}),
    ("find", {"text": "plan"}),
    ("text", {}),
    ("html", {}),
    ("click", {"target": "#buy", "timeout": "2s"}),
    ("select", {"target": "#plan", "values": ["gold"]}),
    ("click", {"target": "#ask"}),
    ("dialog", {"action": "dismiss"}),
    ("console", {}),
]
CLI = [
    "snapshot",
    "find plan",
    "text",
    "html",
    "click '#buy' --timeout 2s",
    "select '#plan' gold",
    "click '#ask'",
    "dialog dismiss",
    "console",
    "network requests",
    "network request {seq} --body",
    "cookies",
    "click '#report'",
    "downloads",
]
# Each kind of page string the model must have been given (fenced) at least once.
PANEL_STRINGS = [
    "QZX title",
    "QZX heading",
    "QZX link to more",
    "QZX your name",
    "QZX buy now",
    "QZX cover",
    "QZX gold plan",
    "QZX dialog",
    "QZX console",
]
EVERY_STRING = [*PANEL_STRINGS, "QZX response body", "QZX_cookie", "QZX-report.txt"]
ON = {"TABPILOT_BOUNDARIES": "on"}


def mcp_uses(seq: int) -> list[Use]:
    """The opt-in groups through MCP: the network log and a body, cookies, a download and the list."""
    return [
        Use("mcp__tabpilot__network_requests", {}),
        Use("mcp__tabpilot__network_request", {"id": seq, "body": True}),
        Use("mcp__tabpilot__cookies", {}),
        Use("mcp__tabpilot__click", {"target": "#report"}),
        Use("mcp__tabpilot__downloads", {}),
    ]


def cli_script(seq: int) -> str:
    return "; ".join(f"{TABPILOT} {line.format(seq=seq)} 2>&1" for line in CLI)


@pytest.fixture(scope="module")
def claude_model() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic(
        {"panel": [*(Use(f"mcp__tabpilot__{n}", a) for n, a in PAGE_TOOLS), Say(["Looked."])]}
    )
    yield fake.start()
    fake.close()


@pytest.fixture(scope="module")
def codex_model() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI({}).start()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def tp(claude_model: FakeAnthropic) -> Iterator[Tabpilot]:
    # The harness turns fences off for tests that parse page output; these are about the fences.
    with claude_browser(claude_model, env=ON) as env:
        yield env


@pytest.fixture(scope="module")
def browser_ui(tp: Tabpilot) -> Iterator[Person]:
    with extension_page(tp, "options/options.html") as page:
        yield page


@pytest.fixture
def scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tp-fenced-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def assert_all_fenced(bodies: list[Any], nonce: str, expected: list[str]) -> None:
    """Every marker the model received is inside the session's fences, and each page string got there."""
    assert nonces_in(bodies) == {nonce}, nonces_in(bodies)
    outside = unfenced_in(bodies, nonce)
    assert outside == [], "\n---\n".join(outside[:5])
    seen = received(bodies)
    assert [s for s in expected if s not in seen] == [], seen[-3000:]


def tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def page_session(tp: Tabpilot, pages: PageServer, session: str) -> tuple[str, int]:
    """A session of its own on the hostile page: its nonce, and the number of the page's fetch."""
    tp.run("session", "start", session)
    tp.run("open", pages.url(PAGE), "--session", session)
    entries = wait_until(
        lambda: [
            e
            for e in tp.run("network", "requests", "--session", session, "--json").json["entries"]
            if e["url"].endswith("every-string.json") and e["status"] == 200
        ]
    )
    nonce = tp.run("text", "--session", session, "--json").json["page_nonce"]
    return nonce, int(entries[0]["seq"])


def mcp_args(session: str) -> list[str]:
    return ["mcp", "--caps", "network,storage,downloads", "--session", session]


def test_the_checker_counts_only_whole_fences_of_the_sessions_nonce() -> None:
    n = "123456789012"
    assert unfenced(f'<<<page nonce={n}\nQZX\n>>>page nonce={n}\nok <<<page nonce={n} "QZX">>>', n) == []
    forged = "<<<page nonce=000000000000\nQZX\n>>>page nonce=000000000000"
    assert len(unfenced(forged, n)) == 1
    # A block never closed, a closing line with more on it, a mark broken by a line: none of them fences.
    assert len(unfenced(f"<<<page nonce={n}\nQZX", n)) == 1
    assert len(unfenced(f"<<<page nonce={n}\nQZX\n>>>page nonce={n} QZX", n)) == 2
    assert len(unfenced(f"<<<page nonce={n} QZX\nQZX>>>", n)) == 2


def test_the_side_panels_claude_code_gets_every_page_string_fenced(
    tp: Tabpilot, browser_ui: Person, pages: PageServer, claude_model: FakeAnthropic
) -> None:
    tab = open_tab(browser_ui, pages.url(PAGE))
    asked = len(claude_model.main_requests())
    with popped_out(tp, tab) as panel:
        say(panel, "Look at this page [[script:panel]]")
        wait_until(lambda: "Looked." in panel.eval("document.body.innerText"), timeout=180)
    bodies = claude_model.main_requests()[asked:]
    # The panel session's nonce is the one its results carry: exactly one, checked for every marker.
    nonces = nonces_in(bodies)
    assert len(nonces) == 1, f"the model got no fenced text, or two nonces: {nonces}"
    (nonce,) = nonces
    assert_all_fenced(bodies, nonce, PANEL_STRINGS)
    chrome(browser_ui, f"chrome.tabs.remove({tab})")


def test_claude_code_gets_every_page_string_fenced_through_mcp_groups_and_its_bash(
    tp: Tabpilot, pages: PageServer, claude_model: FakeAnthropic, scratch: Path
) -> None:
    session = "fx-claude"
    nonce, seq = page_session(tp, pages, session)
    claude_model.scripts["direct"] = [
        *mcp_uses(seq),
        Use("Bash", {"command": cli_script(seq), "timeout": 300000}),
        Say(["Done."]),
    ]
    server = {"type": "stdio", "command": TABPILOT, "args": mcp_args(session), "env": {**tp.env, **ON}}
    env = {
        **tp.env,
        **claude_model.claude_env(str(scratch)),
        **ON,
        "TABPILOT_SESSION": session,
        "ENABLE_TOOL_SEARCH": "false",
    }
    asked = len(claude_model.main_requests())
    run = subprocess.run(
        [
            str(REAL_CLAUDE),
            "-p",
            "--output-format=stream-json",
            "--verbose",
            f"--mcp-config={json.dumps({'mcpServers': {'tabpilot': server}})}",
            "--strict-mcp-config",
            "--tools=Bash",
            "--allowedTools=mcp__tabpilot,Bash",
            "Look at the page [[script:direct]]",
        ],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    bodies = claude_model.main_requests()[asked:]
    assert len(tool_results(bodies[-1]["messages"])) == len(claude_model.scripts["direct"]) - 1
    assert_all_fenced(bodies, nonce, EVERY_STRING)


def test_codex_gets_every_page_string_fenced_through_mcp_and_its_shell(
    tp: Tabpilot, pages: PageServer, codex_model: FakeOpenAI, scratch: Path
) -> None:
    session = "fx-codex"
    nonce, seq = page_session(tp, pages, session)
    codex_model.scripts["codex"] = [
        *mcp_uses(seq),
        *(Use(f"mcp__tabpilot__{name}", arguments) for name, arguments in PAGE_TOOLS),
        Use("exec_command", {"cmd": cli_script(seq), "max_output_tokens": 60000, "yield_time_ms": 120000}),
        Say(["Done."]),
    ]
    codex_home = scratch / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f'model = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{codex_model.base_url}"\nwire_api = "responses"\n'
    )
    passed = sorted({"TABPILOT_HOME", "TABPILOT_PORT", *ON})
    asked = len(codex_model.requests)
    run = subprocess.run(
        [
            str(REAL_CODEX),
            "exec",
            "--json",
            "--skip-git-repo-check",
            # Its shell must reach the daemon's socket, which Codex's own sandboxes refuse.
            "--sandbox=danger-full-access",
            f"--cd={scratch}",
            "-c",
            f"mcp_servers.tabpilot.command={json.dumps(TABPILOT)}",
            "-c",
            f"mcp_servers.tabpilot.args={json.dumps(mcp_args(session))}",
            "-c",
            f"mcp_servers.tabpilot.env_vars={json.dumps(passed)}",
            "-c",
            "mcp_servers.tabpilot.required=true",
            "-c",
            'mcp_servers.tabpilot.default_tools_approval_mode="approve"',
            "-c",
            'approval_policy="never"',
            "-",
        ],
        input="Look at the page [[script:codex]]",
        cwd=scratch,
        env={
            **tp.env,
            **ON,
            "HOME": str(scratch),
            "CODEX_HOME": str(codex_home),
            "TABPILOT_SESSION": session,
        },
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    bodies = [r["body"] for r in codex_model.requests[asked:]]
    outputs = [i for b in bodies[-1:] for i in b["input"] if i.get("type") == "function_call_output"]
    assert len(outputs) == len(codex_model.scripts["codex"]) - 1, [o.get("call_id") for o in outputs]
    assert_all_fenced(bodies, nonce, EVERY_STRING)
    assert os.path.isdir(Path(tp.home, "downloads", session))
