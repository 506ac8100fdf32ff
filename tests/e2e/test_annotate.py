"""`snapshot --diff` (what changed since this tab's last snapshot) and `screenshot --annotate` (the refs on
screen boxed and labelled on the image, with a legend that matches the snapshot's refs), end to end."""

from __future__ import annotations

import re
from pathlib import Path

from harness import PageServer, Tabpilot
from test_observation import png_pixels

MAGENTA = (255, 0, 255)


def test_snapshot_diff_shows_only_what_changed(tp: Tabpilot, pages: PageServer) -> None:
    tp.run("session", "start", "diffs")
    s = ("--session", "diffs")
    tp.run("open", pages.url("agentkit/changes.html"), *s)
    first = tp.run("snapshot", "--diff", *s).out
    assert first.startswith("(no earlier snapshot of this tab"), first
    tp.run(
        "eval",
        "document.querySelector('#save').click(); document.querySelector('#list').innerHTML += '<li>second order</li>'",
        *s,
    )
    diff = tp.run("snapshot", "--diff", *s).out
    lines = diff.splitlines()
    assert "- Nothing saved yet" in lines and "+ Saved 3 orders" in lines, diff
    assert any(line.startswith("+") and "second order" in line for line in lines), diff
    # Only hunks of changed lines: nothing that stayed the same is printed again.
    assert all(line.startswith(("@@", "- ", "+ ")) for line in lines), diff
    assert tp.run("snapshot", "--diff", *s).out.strip() == "(no change since the last snapshot)"
    refused = tp.run("snapshot", "--diff", "-i", *s, check=False)
    assert refused.code == 1 and "hint:" in refused.err
    tp.run("session", "stop", "diffs")


def test_screenshot_annotate_labels_match_the_snapshots_refs(
    tp: Tabpilot, pages: PageServer, tmp_path: Path
) -> None:
    tp.run("open", pages.url("agentkit/changes.html"))
    snapshot = tp.run("snapshot", "-i", "--viewport").out
    expected = [(f"@{ref}", label) for label, ref in re.findall(r"\[([^\[\]]*?) @(e\d+)\b", snapshot)]
    assert len(expected) >= 3, snapshot
    out = tmp_path / "annotated.png"
    printed = tp.run("screenshot", "--annotate", "--out", str(out)).out.splitlines()
    assert printed[0] == str(out)
    legend = [tuple(line.split(" ", 1)) for line in printed[1:]]
    assert legend == expected, (legend, expected)
    shot = tp.run("screenshot", "--annotate", "--out", str(out), "--json").json
    plain = tmp_path / "plain.png"
    tp.run("screenshot", "--out", str(plain))
    _, _, annotated_at = png_pixels(out)
    _, _, plain_at = png_pixels(plain)
    for box in shot["legend"]:
        # The left edge of each box, halfway down: magenta on the annotated image only.
        x, y = box["x"], box["y"] + box["height"] // 2
        assert annotated_at(x, y) == MAGENTA, box
        assert plain_at(x, y) != MAGENTA, box
