"""Refs read from snapshot text: tabpilot's `[role "name" @eN …]` and agent-browser's `role "name" [ref=eN]`."""

from __future__ import annotations

import re

BRACKET = re.compile(r"\[([^\[\]]*?)\s@(e\d+)\b([^\[\]]*)\]")
PEER_LINE = re.compile(r"""^\s*-\s*(\w+)\s+"([^"]*)".*?\[ref=(e\d+)\]""", re.MULTILINE)
ROLE_NAME = re.compile(r"""^(\w+)(?:\s+"([^"]*)")?$""")
CONTROL_ROLES = frozenset(
    {
        "button",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "combobox",
        "listbox",
        "slider",
        "spinbutton",
        "switch",
    }
)
OTHER_ROLES = frozenset(
    {
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "treeitem",
        "summary",
        "clickable",
        "img",
    }
)


ANY_REF = re.compile(r"(?<![\w@])@(e\d+)\b")


def all_refs(text: str) -> list[str]:
    """Every ref named in a snapshot, as `@eN`, in order of first appearance.

    Read as bare tokens: a link's own text may hold brackets (`[[1] @e19]`, `[round(x[, n]) @e241]`).
    """
    seen = dict.fromkeys(f"@{m.group(1)}" for m in ANY_REF.finditer(text))
    seen.update(dict.fromkeys(f"@{m.group(3)}" for m in PEER_LINE.finditer(text)))
    return list(seen)


def kind_of(head: str) -> str:
    """'control', 'other' (an actionable of another role) or 'link', from the text before `@eN`."""
    match = ROLE_NAME.match(head.strip())
    if match and match.group(1) in CONTROL_ROLES:
        return "control"
    if match and match.group(1) in OTHER_ROLES:
        return "other"
    return "link"


def refs_by_kind(text: str) -> dict[str, set[str]]:
    """tabpilot refs grouped as links, controls and other actionables (for the approximate coverage)."""
    groups: dict[str, set[str]] = {"link": set(), "control": set(), "other": set()}
    for match in BRACKET.finditer(text):
        groups[kind_of(match.group(1))].add(f"@{match.group(2)}")
    return groups


def find_ref(text: str, role: str, name: str) -> str | None:
    """The ref of the first element with this role and accessible name, in either snapshot format."""
    for match in BRACKET.finditer(text):
        head = ROLE_NAME.match(match.group(1).strip())
        if head and head.group(1) == role and (head.group(2) or "") == name:
            return f"@{match.group(2)}"
    for match in PEER_LINE.finditer(text):
        if match.group(1) == role and match.group(2) == name:
            return f"@{match.group(3)}"
    return None
