"""Where a hostile page's marker lies in what a model received: inside the session's fences, or not.

A fence is a block (`<<<page nonce=N` line … `>>>page nonce=N` line) or a one-line mark
(`<<<page nonce=N …>>>`, no line break inside). Only fences with the session's own nonce count: a page
that writes a fence of its own writes a wrong nonce, and its marker then lies outside.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Every string of tests/pages/hostile/every-string.html carries it.
MARKER = "QZX"
NONCE = re.compile(r"<<<page nonce=(\d{12})")


def fenced_spans(text: str, nonce: str) -> list[tuple[int, int]]:
    """(start, end) of every well-formed fence of ``nonce`` in ``text``; an unclosed one covers nothing."""
    opening = f"<<<page nonce={nonce}"
    spans = []
    at = 0
    while (start := text.find(opening, at)) >= 0:
        after = start + len(opening)
        if text.startswith("\n", after):
            close = f"\n>>>page nonce={nonce}"
            end = text.find(close, after)
            if end < 0 or not (end + len(close) == len(text) or text[end + len(close)] in "\r\n"):
                return spans
            spans.append((start, end + len(close)))
            at = end + len(close)
        elif text.startswith(" ", after):
            end = text.find(">>>", after)
            if end < 0 or "\n" in text[after:end]:
                at = after
                continue
            spans.append((start, end + 3))
            at = end + 3
        else:
            at = after
    return spans


def unfenced(text: str, nonce: str, marker: str = MARKER) -> list[str]:
    """Each occurrence of ``marker`` outside the fences, with some text around it."""
    spans = fenced_spans(text, nonce)
    outside = []
    for found in re.finditer(re.escape(marker), text):
        if not any(start <= found.start() and found.end() <= end for start, end in spans):
            outside.append(text[max(0, found.start() - 80) : found.end() + 80])
    return outside


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (a recorded request body): each is text a model reads."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def nonces_in(bodies: list[Any]) -> set[str]:
    return {n for body in bodies for text in strings(body) for n in NONCE.findall(text)}


def unfenced_in(bodies: list[Any], nonce: str, marker: str = MARKER) -> list[str]:
    """Every occurrence of ``marker`` outside the session's fences in what the model received."""
    return [hit for body in bodies for text in strings(body) for hit in unfenced(text, nonce, marker)]


def received(bodies: list[Any]) -> str:
    """All the text the model received, for asserting that a page string got there at all."""
    return "\n".join(text for body in bodies for text in strings(body))
