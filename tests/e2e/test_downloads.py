"""Downloads, end to end: a click on an attachment link or an `<a download>` reports the file, which is in
the session's own folder of the managed browser with the page's bytes; a file of the same name is never
replaced; `downloads wait` and `downloads` list them; a blocked site's download never starts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import PageServer, Tabpilot, wait_until
from test_person import in_service_worker

REPORT = b"id,name\n1,ada\n"


def test_clicked_downloads_land_in_the_sessions_folder_and_are_reported(
    tp: Tabpilot, pages: PageServer
) -> None:
    folder = Path(tp.home, "downloads", "default")
    tp.run("open", pages.url("agentkit/downloads.html"))
    line = tp.run("click", "#attachment").out.strip()
    first = folder / "report.csv"
    assert (
        line == f'clicked link "Get the report" → downloaded report.csv ({len(REPORT)} bytes) to {first}'
    ), line
    assert first.read_bytes() == REPORT
    # The same name again: a second file, the first one untouched.
    again = tp.run("click", "#attachment", "--json").json["download"]
    assert again["state"] == "complete" and again["path"] != str(first)
    assert Path(again["path"]).parent == folder and Path(again["path"]).read_bytes() == REPORT
    assert first.read_bytes() == REPORT
    saved = tp.run("click", "#saved", "--json").json
    assert saved["download"]["name"] == "notes.txt", saved
    assert (folder / "notes.txt").read_text() == (
        Path(__file__).parents[1] / "pages/agentkit/notes.txt"
    ).read_text()
    waited = tp.run("downloads", "wait", "--json").json["download"]
    assert (
        waited["path"] == str(folder / "notes.txt")
        and waited["bytes"] == (folder / "notes.txt").stat().st_size
    )
    assert (
        tp.run("downloads", "wait").out.strip()
        == f"downloaded notes.txt ({waited['bytes']} bytes) to {folder / 'notes.txt'}"
    )
    listed = tp.run("downloads", "--json").json["downloads"]
    assert [Path(d["path"]).name for d in listed] == ["report.csv", Path(again["path"]).name, "notes.txt"]
    assert len(tp.run("downloads").out.strip().splitlines()) == 3


def test_open_of_an_attachment_reports_the_download_in_another_sessions_folder(
    tp: Tabpilot, pages: PageServer
) -> None:
    tp.run("session", "start", "files")
    opened = tp.run("open", pages.url("attachment/plan.txt?body=step%201"), "--session", "files")
    path = Path(tp.home, "downloads", "files", "plan.txt")
    assert opened.out.strip().endswith(f"downloaded plan.txt (6 bytes) to {path}"), opened.out
    assert path.read_bytes() == b"step 1"
    assert [d["name"] for d in tp.run("downloads", "--json", "--session", "files").json["downloads"]] == [
        "plan.txt"
    ]
    tp.run("session", "stop", "files")


def test_a_reserved_or_overlong_name_lands_named_inside_the_sessions_folder(
    tp: Tabpilot, pages: PageServer
) -> None:
    tp.run("session", "start", "names")
    folder = Path(tp.home, "downloads", "names")
    before = set(Path(tp.home, "downloads").rglob("*"))
    long_name = "a" * 296 + ".txt"
    for name, body in (("CON", "reserved"), ("aux.txt", "reserved too"), (long_name, "long")):
        opened = tp.run("open", pages.url(f"attachment/{name}?body={body}"), "--session", "names", "--json")
        download = opened.json["download"]
        path = Path(download["path"])
        # a real name, in the session's folder, holding what the server sent
        assert path.parent == folder, (name, download)
        assert path.read_text() == body, name
        assert path.stem.lower() not in ("con", "aux") and len(path.name.encode()) <= 255, path.name
    landed = set(Path(tp.home, "downloads").rglob("*")) - before
    assert {p.parent for p in landed if p.is_file()} == {folder}
    tp.run("session", "stop", "names")


def block(tp: Tabpilot, *patterns: str) -> None:
    """The person's blocked sites, as the options page stores them."""
    in_service_worker(
        tp, f"chrome.storage.local.set({{tp_blocked_sites: {json.dumps(list(patterns))}}}).then(() => 1)"
    )


@pytest.fixture()
def unblocked(tp: Tabpilot) -> Iterator[None]:
    yield
    block(tp)


def test_a_blocked_sites_download_never_starts(
    tp: Tabpilot, pages: PageServer, other_site: PageServer, unblocked: None
) -> None:
    secret = other_site.url("attachment/secret.csv?body=nope")
    tp.run("open", pages.url("agentkit/downloads.html?blocked=" + secret))
    block(tp, f"localhost:{other_site.server.server_address[1]}")
    refused = tp.run("click", "#blocked", "--json", check=False)
    assert refused.code == 1 and json.loads(refused.out)["error"]["code"] == "blocked_site", refused.out
    opened = tp.run("open", secret, "--json", check=False)
    assert json.loads(opened.out)["error"]["code"] == "blocked_site"
    assert not any("secret.csv" in r for r in other_site.requests)
    assert not list(Path(tp.home, "downloads").rglob("secret*"))
    # Nothing was waiting half-written either: the session's list has no such file.
    assert wait_until(lambda: "secret" not in tp.run("downloads").out, timeout=2)
