"""The doors agents use besides single commands: batch (many commands, one process) and the MCP server."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
from pathlib import Path

from harness import TABPILOT, PageServer, Tabpilot

FORM = "bench-form.html"


def refs_of(snapshot: str) -> tuple[str, str]:
    """The textbox and the button of the bench form."""
    box = re.search(r'\[textbox "Name" (@e\d+)', snapshot)
    button = re.search(r'\[button "Count" (@e\d+)', snapshot)
    assert box and button, snapshot
    return box.group(1), button.group(1)


def page_state(tp: Tabpilot, session: str) -> dict:
    out = tp.run(
        "--session",
        session,
        "eval",
        "({name: document.querySelector('#name').value, "
        "clicks: document.querySelector('#clicks').textContent, url: location.href})",
    ).out
    return json.loads(out)


def test_batch_runs_commands_in_one_process_and_stops_at_a_failure(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "batch")
    script = "\n".join(
        [
            "# a comment, then the steps (refs are not known yet, so targets are text and CSS)",
            f"tabpilot open {pages.url(FORM)}",
            "snapshot -i",
            "click text=count",
            "fill '#name' 'Ada Lovelace'",
            "click '#count'",
            "click @e999999",
            "click '#count'",
        ]
    )
    proc = subprocess.run(
        [TABPILOT, "--session", "batch", "batch"],
        input=script,
        env=tp.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr  # the stale-or-unknown ref line fails with exit code 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"navigated to {pages.url(FORM)}")
    box, button = refs_of(proc.stdout)
    assert any(line.startswith(f'filled textbox "Name" {box} = "Ada Lovelace"') for line in lines), (
        proc.stdout
    )
    assert "line 7 failed with exit code 1" in proc.stderr and "@e999999" in proc.stderr
    # the page saw both clicks before the failing line and none after it
    assert page_state(tp, "batch")["clicks"] == "2", proc.stdout
    assert page_state(tp, "batch")["name"] == "Ada Lovelace"

    keep_going = subprocess.run(
        [TABPILOT, "--session", "batch", "batch", "--keep-going", "--json"],
        input=f"click @e999999\nclick {button}\n",
        env=tp.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert keep_going.returncode == 1
    outputs = [json.loads(line) for line in keep_going.stdout.splitlines()]
    assert outputs[0]["error"]["reason"] == "ref_not_found" and outputs[1]["target"]["ref"] == button.lstrip(
        "@"
    )
    assert page_state(tp, "batch")["clicks"] == "3"
    tp.run("session", "stop", "batch")


def test_mcp_client_drives_the_browser_beside_a_cli_agent(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    tp.run("session", "start", "cli-agent")
    tp.run("--session", "cli-agent", "open", pages.url("index.html"))
    before = {s["session_id"] for s in tp.run("session", "list", "--json").json["sessions"]}

    async def scenario() -> dict:
        params = StdioServerParameters(command=TABPILOT, args=["mcp"], env=tp.env)
        async with Client(params) as client:
            listed = await client.list_tools()
            names = {tool.name for tool in listed.tools}
            opened = await client.call_tool("open", {"url": pages.url(FORM)})
            snapshot = await client.call_tool("snapshot", {})
            box, button = refs_of(snapshot.content[0].text)
            # the CLI agent works in its own session at the same time
            cli = await asyncio.to_thread(tp.run, "--session", "cli-agent", "eval", "document.title")
            clicked = await client.call_tool("click", {"target": button})
            filled = await client.call_tool("fill", {"target": box, "text": "from MCP"})
            shot = await client.call_tool("screenshot", {})
            sessions = await client.call_tool("session_list", {})
            await client.call_tool("eval", {"expression": "document.querySelector('#count').remove()"})
            stale = await client.call_tool("click", {"target": button})
            return {
                "names": names,
                "opened": opened,
                "clicked": clicked,
                "filled": filled,
                "shot": shot,
                "sessions": sessions,
                "stale": stale,
                "cli": cli,
            }

    got = asyncio.run(scenario())
    assert {"open", "snapshot", "click", "fill", "screenshot", "tab_list", "session_stop"} <= got["names"]
    assert not {"pair", "daemon", "browser", "install_skill"} & got["names"]
    assert got["opened"].is_error is False and got["opened"].structured_content["status"] == 200
    assert got["clicked"].content[0].text.startswith('clicked button "Count"')
    assert got["filled"].structured_content["value"] == "from MCP"
    image = got["shot"].content[0]
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data)[:8] == b"\x89PNG\r\n\x1a\n"
    error = got["stale"].structured_content["error"]
    assert (
        got["stale"].is_error and error["reason"] == "ref_stale" and error["exit_code"] == 1 and error["hint"]
    )
    assert got["cli"].out.strip() == '"tabpilot test page"'
    # the MCP client had its own session, which it stopped when it left; the CLI agent's is untouched
    listed = {s["session_id"] for s in tp.run("session", "list", "--json").json["sessions"]}
    assert listed == before
    during = {line.split()[0] for line in got["sessions"].content[0].text.splitlines()}
    (mcp_session,) = during - before
    assert mcp_session not in listed
    assert tp.run("--session", "cli-agent", "eval", "location.pathname").out.strip() == '"/index.html"'
    tp.run("session", "stop", "cli-agent")
