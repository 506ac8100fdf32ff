"""One JSON frame off a socket: decoded, with a cap on how deeply it nests."""

from __future__ import annotations

import json
from typing import Any

# Requests (from clients, and from extensions before they authenticate) are a few levels deep.
MAX_DEPTH = 32
# An authenticated extension's results carry page values (eval), which may nest further.
PEER_MAX_DEPTH = 256


class TooDeep(ValueError):
    """A frame nested deeper than allowed; ``frame_id`` is its id when it could still be read."""

    def __init__(self, limit: int, frame_id: str | None = None) -> None:
        super().__init__(f"frame nested deeper than {limit} levels")
        self.frame_id = frame_id


def exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects/arrays more than ``limit`` levels deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if level > limit:
            return True
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return False


def decode(raw: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """The frame, or None when it is not JSON; raises TooDeep past ``limit`` levels."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise TooDeep(limit) from None
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(value, dict | list) and exceeds(value, limit):
        frame_id = value.get("id") if isinstance(value, dict) else None
        raise TooDeep(limit, frame_id if isinstance(frame_id, str) and frame_id else None)
    return value
