"""Every environment variable the source reads is in the README's configuration table."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def documented() -> set[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split(" | ")[0])}


def read_by_the_source() -> set[str]:
    names: set[str] = set()
    for path in (REPO / "src" / "tabpilot").rglob("*.py"):
        names |= set(re.findall(r"\bTABPILOT_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    return names


def test_every_tabpilot_variable_is_documented() -> None:
    missing = read_by_the_source() - documented()
    assert not missing, f"document these in README.md's Configuration table: {sorted(missing)}"


def test_the_table_lists_no_variable_the_source_does_not_read() -> None:
    stale = {n for n in documented() if n.startswith("TABPILOT_")} - read_by_the_source()
    assert not stale, f"no longer read by the source: {sorted(stale)}"
