"""tool.upload: the daemon reads the files and sends their bytes; bad files fail before the browser."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from fakes import running_daemon

from tabpilot.daemon import uploads
from tabpilot.protocol import RpcError


def test_prepare_reads_names_types_and_bytes(tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4\x00\xff binary")
    notes = tmp_path / "notes"
    notes.write_text("plain")
    prepared = uploads.prepare({"target": "#f", "paths": [str(report), str(notes)], "timeout_ms": 5})
    assert "paths" not in prepared and prepared["target"] == "#f" and prepared["timeout_ms"] == 5
    first, second = prepared["files"]
    assert (first["name"], first["type"], first["size"]) == ("report.pdf", "application/pdf", 17)
    assert base64.b64decode(first["data"]) == report.read_bytes()
    assert first["last_modified"] == int(report.stat().st_mtime * 1000)
    assert (second["name"], second["type"]) == ("notes", "")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda d: str(d / "missing.txt"), "file_not_found"),
        (lambda d: str(d), "file_unreadable"),
    ],
)
def test_missing_or_unusable_files_are_clear_errors(tmp_path: Path, make: Any, reason: str) -> None:
    with pytest.raises(RpcError) as caught:
        uploads.prepare({"paths": [make(tmp_path)]})
    assert caught.value.reason == reason
    assert caught.value.data["hint"] and caught.value.data["path"] == make(tmp_path)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads every file")
def test_a_file_without_read_permission_is_unreadable(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    secret.chmod(0)
    with pytest.raises(RpcError) as caught:
        uploads.prepare({"paths": [str(secret)]})
    assert caught.value.reason == "file_unreadable"


def test_bad_path_lists_and_too_much_data_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for paths in (None, [], [""], ["relative.txt"], "x"):
        with pytest.raises(RpcError) as caught:
            uploads.prepare({"paths": paths})
        assert caught.value.code == "invalid_params"
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * 600)
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 1000)
    uploads.prepare({"paths": [str(big)]})
    with pytest.raises(RpcError) as caught:
        uploads.prepare({"paths": [str(big), str(big)]})
    assert caught.value.reason == "file_too_large"


async def test_the_daemon_sends_bytes_and_stops_a_missing_file_before_the_browser(tmp_path: Path) -> None:
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n")
    async with running_daemon() as d:
        peer = await d.paired_peer()
        reply = await d.call("tool.upload", {"target": "#f", "paths": [str(photo)], "timeout_ms": 1000})
        sent = reply["result"]["echo"]
        assert "paths" not in sent
        assert [(f["name"], f["type"], base64.b64decode(f["data"])) for f in sent["files"]] == [
            ("photo.png", "image/png", photo.read_bytes())
        ]
        before = peer.methods()
        missing = await d.call("tool.upload", {"target": "#f", "paths": [str(tmp_path / "nope.png")]})
        assert missing["error"]["data"]["reason"] == "file_not_found"
        assert peer.methods() == before
