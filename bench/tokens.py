"""o200k_base token counts with the `bpe-openai` package, which ships its tables and works offline."""

from __future__ import annotations

import functools
from typing import Any

ENCODING = "o200k_base"
# The tokenizer refuses inputs over 200k tokens; lines are grouped into chunks well below that.
CHUNK_CHARS = 100_000
MISSING = "n/a (bpe-openai not installed: .venv/bin/pip install -e '.[dev]')"


@functools.cache
def _encoding() -> Any:
    try:
        import bpe_openai
    except ImportError:
        return None
    return bpe_openai.get_encoding(ENCODING)


def available() -> bool:
    return _encoding() is not None


def count(text: str) -> int:
    """Tokens of `text` as a model reading it would pay (special-token strings count as plain text)."""
    encoding = _encoding()
    total, chunk = 0, []
    size = 0
    for line in text.splitlines(keepends=True):
        if size + len(line) > CHUNK_CHARS and chunk:
            total += len(encoding.encode_ordinary("".join(chunk)))
            chunk, size = [], 0
        chunk.append(line)
        size += len(line)
    if chunk:
        total += len(encoding.encode_ordinary("".join(chunk)))
    return total
