"""Adapters, vetting and env sealing: pure functions over recorded CLI output and built launches."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tabpilot.agents import claude, codex, envseal, vet
from tabpilot.agents.plans import Launch, McpServer, Signal, TurnPlan
from tabpilot.protocol import RpcError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SESSION = "6348e7e6-e73a-40d4-9fa1-ff6025d61e7a"


def signals(adapter: Any, fixture: str) -> list[Signal]:
    stream = adapter.Stream()
    out: list[Signal] = []
    for line in (FIXTURES / fixture).read_text().splitlines():
        out += stream.feed(json.loads(line))
    return out


def merged(found: list[Signal]) -> list[tuple[str, Any]]:
    """Kinds with text runs merged; what the panel ends up showing."""
    out: list[tuple[str, Any]] = []
    for sig in found:
        if sig.kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + sig.data["delta"])
        elif sig.kind == "text":
            out.append(("text", sig.data["delta"]))
        else:
            out.append((sig.kind, None))
    return out


def test_claude_and_codex_tool_turns_become_the_same_signals() -> None:
    from_claude = signals(claude, "claude-2.1.328-tool-turn.jsonl")
    from_codex = signals(codex, "codex-0.169.0-tool-turn.jsonl")
    assert merged(from_claude) == [("session", None), ("text", "Hello there."), ("done", None)]
    # Codex also ran a shell command; tabpilot's own call is reported by the daemon, not here.
    assert merged(from_codex) == [
        ("session", None),
        ("tool", None),
        ("tool_result", None),
        ("text", "Hello there."),
        ("done", None),
    ]
    tool, result = from_codex[1], from_codex[2]
    assert tool.data == {
        "call_id": "item_1",
        "name": "command_execution",
        "input": {"command": "bash -lc ls"},
    }
    assert result.data["ok"] is True and result.data["summary"] == "notes.txt\n"
    assert [s.data["delta"] for s in from_codex if s.kind == "text"] == ["Hello ", "there."]
    assert (
        from_claude[0].data["agent_session_id"]
        == json.loads((FIXTURES / "claude-2.1.328-tool-turn.jsonl").read_text().splitlines()[0])["session_id"]
    )


def test_an_interrupted_claude_turn_keeps_its_partial_text_and_fails() -> None:
    found = signals(claude, "claude-2.1.328-interrupted-turn.jsonl")
    text = "".join(s.data["delta"] for s in found if s.kind == "text")
    assert text.startswith("w0 w1 ") and not text.endswith("w29 ")
    assert found[-1].kind == "failed" and found[-1].data["terminal_reason"] == "aborted_streaming"


def test_the_recorded_text_turn_of_the_reference_parses() -> None:
    found = signals(claude, "claude-2.1.328-tool-turn.jsonl")
    assert not [
        s for s in found if s.kind in ("tool", "tool_result")
    ]  # the tabpilot call is the daemon's to report


def test_a_failed_codex_turn_and_unknown_lines() -> None:
    found = signals(codex, "codex-0.169.0-failed-turn.jsonl")
    assert [s.kind for s in found] == ["session", "warning", "failed"]
    assert codex.Stream().feed({"type": "something.new"}) == []
    assert claude.Stream().feed({"type": "rate_limit_event"}) == [] and claude.Stream().feed("x") == []


def test_claude_permission_requests_and_subagent_output() -> None:
    stream = claude.Stream()
    asked = stream.feed(
        {
            "type": "control_request",
            "request_id": "r1",
            "request": {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "touch x"}},
        }
    )
    assert asked == [
        Signal("permission", {"permission_id": "r1", "tool": "Bash", "input": {"command": "touch x"}})
    ]
    sub = {
        "type": "stream_event",
        "parent_tool_use_id": "toolu_9",
        "event": {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}},
    }
    assert stream.feed(sub) == []
    deny = json.loads(claude.deny_line("r1", "no"))
    assert deny["response"]["response"] == {"behavior": "deny", "message": "no"}


# ----- vetting ----------------------------------------------------------------------------

CWD = tempfile.mkdtemp()
BIN = "/opt/agents/claude"


def claude_launch(resume: str | None = None) -> Launch:
    plan = TurnPlan(
        bin=BIN,
        text="hello --yolo",
        cwd=CWD,
        mode="browser",
        env={"PATH": "/usr/bin", "ANTHROPIC_API_KEY": "sk", "TABPILOT_RUN": "tok"},
        mcp=McpServer("/venv/bin/tabpilot", ["mcp", "--session", "p-abc"], {"TABPILOT_RUN": "tok"}),
        preamble="be brief",
        resume_id=resume,
        new_session_id=None if resume else SESSION,
    )
    return claude.plan(plan)


def codex_launch(resume: str | None = None) -> Launch:
    plan = TurnPlan(
        bin="/opt/agents/codex",
        text="hello",
        cwd=CWD,
        mode="browser",
        env={"PATH": "/usr/bin", "OPENAI_API_KEY": "sk"},
        mcp=McpServer("/venv/bin/tabpilot", ["mcp", "--session", "p-abc"], {"TABPILOT_RUN": "tok"}),
        preamble="be brief",
        resume_id=resume,
    )
    return codex.plan(plan)


def with_arg(extra: str) -> Callable[[Launch], None]:
    return lambda launch: launch.argv.append(extra)


def without(word: str) -> Callable[[Launch], None]:
    def change(launch: Launch) -> None:
        launch.argv[:] = [a for a in launch.argv if not a.startswith(word)]

    return change


def replace(old: str, new: str) -> Callable[[Launch], None]:
    def change(launch: Launch) -> None:
        launch.argv[:] = [new if a.startswith(old) else a for a in launch.argv]

    return change


def set_env(name: str, value: str = "x") -> Callable[[Launch], None]:
    return lambda launch: launch.env.__setitem__(name, value)


def set_cwd(path: str) -> Callable[[Launch], None]:
    return lambda launch: setattr(launch, "cwd", path)


def set_bin(path: str) -> Callable[[Launch], None]:
    return lambda launch: launch.argv.__setitem__(0, path)


CLAUDE_TAMPERS = {
    "skip permissions": with_arg("--dangerously-skip-permissions"),
    "allow skip permissions": with_arg("--allow-dangerously-skip-permissions"),
    "bypass mode": with_arg("--permission-mode=bypassPermissions"),
    "bypass mode, two tokens": lambda launch: launch.argv.extend(["--permission-mode", "bypassPermissions"]),
    "yolo": with_arg("--yolo"),
    "continue": with_arg("--continue"),
    "short resume": lambda launch: launch.argv.extend(["-r", SESSION]),
    "resume two tokens": lambda launch: launch.argv.extend(["--resume", SESSION]),
    "resume to a flag": replace("--session-id=", "--resume=--dangerously-skip-permissions"),
    "another conversation": replace("--session-id=", "--session-id=00000000-0000-4000-8000-000000000000"),
    "extra folder": with_arg("--add-dir=/"),
    "settings file": with_arg("--settings=/tmp/evil.json"),
    "no strict mcp": without("--strict-mcp-config"),
    "second mcp config": with_arg('--mcp-config={"mcpServers":{}}'),
    "more tools allowed": replace("--allowedTools=", "--allowedTools=Bash"),
    "shell in browser mode": without("--tools="),
    "text in argv": replace("--input-format=", "--input-format=text"),
    "no permission relay": without("--permission-prompt-tool"),
    "another binary": set_bin("/bin/sh"),
    "relative binary": set_bin("claude"),
    "cwd elsewhere": set_cwd("/"),
    "cwd missing": set_cwd("/nonexistent/folder"),
    "secret in env": set_env("GITHUB_TOKEN"),
    "cloud creds in env": set_env("AWS_SECRET_ACCESS_KEY"),
    "preload": set_env("LD_PRELOAD", "/tmp/x.so"),
    "nested claude": set_env("CLAUDECODE", "1"),
    "database url in env": set_env("DB_URL", "postgres://u:pw@h/d"),
    "proxy with credentials in env": set_env("HTTPS_PROXY", "http://u:pw@proxy:3128"),
    "webhook in env": set_env("DEPLOY_HOOK_URL"),
}
CODEX_TAMPERS = {
    "bypass": with_arg("--dangerously-bypass-approvals-and-sandbox"),
    "full auto": with_arg("--full-auto"),
    "approve for me": with_arg("--approve-for-me"),
    "full access sandbox": replace("--sandbox=", "--sandbox=danger-full-access"),
    "write sandbox in browser mode": replace("--sandbox=", "--sandbox=workspace-write"),
    "second sandbox": lambda launch: launch.argv.insert(2, "-s"),
    "approval policy": replace('approval_policy="never"', 'approval_policy="on-request"'),
    "other config": lambda launch: launch.argv.__setitem__(slice(2, 2), ["-c", 'model_provider="evil"']),
    "prompt in argv": lambda launch: launch.argv.__setitem__(-1, "hello"),
    "resume another": lambda launch: launch.argv.__setitem__(slice(-1, -1), ["resume", "other-thread"]),
    "cwd elsewhere": set_cwd("/"),
    "secret in env": set_env("GH_TOKEN"),
    "shell in browser mode": lambda launch: launch.argv.remove("features.shell_tool=false"),
    "shell switched back on": lambda launch: launch.argv.__setitem__(
        slice(-1, -1), ["-c", "features.shell_tool=true"]
    ),
    "web search back on": replace('web_search="disabled"', 'web_search="live"'),
    "feature flag": with_arg("--enable=unified_exec"),
    "long config flag": with_arg("--config=features.unified_exec=true"),
    "glued config flag": with_arg("-cfeatures.unified_exec=true"),
}


def refused(agent: str, launch: Launch, session: str | None) -> RpcError:
    expected_bin = BIN if agent == "claude" else "/opt/agents/codex"
    with pytest.raises(RpcError) as caught:
        vet.vet(agent, launch, expected_bin, [CWD], session)
    return caught.value


def test_untampered_launches_pass_vetting() -> None:
    vet.vet("claude", claude_launch(), BIN, [CWD], SESSION)
    vet.vet("claude", claude_launch(resume=SESSION), BIN, [CWD], SESSION)
    vet.vet("codex", codex_launch(), "/opt/agents/codex", [CWD], None)
    vet.vet("codex", codex_launch(resume="thread-1"), "/opt/agents/codex", [CWD], "thread-1")


@pytest.mark.parametrize("case", sorted(CLAUDE_TAMPERS))
def test_vetting_refuses_every_claude_tamper(case: str) -> None:
    launch = claude_launch()
    CLAUDE_TAMPERS[case](launch)
    err = refused("claude", launch, SESSION)
    assert (err.code, err.reason) == ("permission_denied", "agent_unsafe")


@pytest.mark.parametrize("case", sorted(CODEX_TAMPERS))
def test_vetting_refuses_every_codex_tamper(case: str) -> None:
    launch = codex_launch()
    CODEX_TAMPERS[case](launch)
    err = refused("codex", launch, None)
    assert (err.code, err.reason) == ("permission_denied", "agent_unsafe")


def test_the_persons_text_is_on_stdin_and_never_in_argv() -> None:
    for launch in (claude_launch(), codex_launch()):
        assert not any("--yolo" in arg or arg == "hello" for arg in launch.argv)
        assert any("hello" in line for line in launch.stdin_lines)


def test_resume_ids_are_validated() -> None:
    assert claude.valid_session_id(SESSION)
    for bad in ("--dangerously-skip-permissions", "", "6348e7e6", SESSION + "x", SESSION.upper()):
        assert not claude.valid_session_id(bad)
    assert codex.valid_session_id("0199a213-81c0-7800-8aa1-bbab2a035a53")
    assert not codex.valid_session_id("-c") and not codex.valid_session_id("a b")


def test_the_env_is_an_allow_list_the_agents_own_and_the_persons_choice_pass() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/home/p",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "TMPDIR": "/tmp/p",
        "AWS_SECRET_ACCESS_KEY": "a",
        "GITHUB_TOKEN": "g",
        "DB_URL": "postgres://u:pw@h/d",
        "MONGODB_URI": "mongodb://u:pw@h/d",
        "HTTPS_PROXY": "http://u:pw@proxy:3128",
        "JWT": "eyJ",
        "BEARER": "b",
        "DEPLOY_HOOK_URL": "https://hooks.test/x",
        "SSH_AUTH_SOCK": "/tmp/ssh",
        "CLAUDECODE": "1",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "LD_PRELOAD": "x.so",
        "NODE_OPTIONS": "--require=/tmp/x.js",
        "ANTHROPIC_API_KEY": "sk-ant",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        "CLAUDE_CODE_USE_BEDROCK": "0",
        "DISABLE_TELEMETRY": "1",
        "OPENAI_API_KEY": "sk-oai",
        "CODEX_HOME": "/home/p/.codex",
        "TABPILOT_SESSION": "default",
        "CORP_CA": "/etc/ca.pem",
    }
    sealed = envseal.seal(env, claude.KEEP_ENV, ["CORP_CA"])
    assert sealed == {
        "PATH": "/usr/bin",
        "HOME": "/home/p",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
        "TMPDIR": "/tmp/p",
        "ANTHROPIC_API_KEY": "sk-ant",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:1",
        "CLAUDE_CODE_USE_BEDROCK": "0",
        "DISABLE_TELEMETRY": "1",
        "CORP_CA": "/etc/ca.pem",
    }
    for_codex = envseal.seal(env, codex.KEEP_ENV)
    assert for_codex["OPENAI_API_KEY"] == "sk-oai" and for_codex["CODEX_HOME"] == "/home/p/.codex"
    assert "ANTHROPIC_API_KEY" not in for_codex and "CORP_CA" not in for_codex
    # What the person names cannot smuggle in what is never passed.
    assert "LD_PRELOAD" not in envseal.seal(env, claude.KEEP_ENV, ["LD_PRELOAD", "TABPILOT_SESSION"])
    assert envseal.unsealed({**sealed, "TABPILOT_RUN": "t", "DB_URL": "x"}, claude.KEEP_ENV, ["CORP_CA"]) == [
        "DB_URL"
    ]
    assert (
        not envseal.choosable("TABPILOT_RUN")
        and not envseal.choosable("A=B")
        and envseal.choosable("CORP_CA")
    )
