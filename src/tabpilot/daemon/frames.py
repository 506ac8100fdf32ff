"""One JSON frame off a socket: decoded, with a cap on how deeply it nests."""

from __future__ import annotations

import json
from typing import Any

# Requests (from clients, and from extensions before they authenticate) are a few levels deep.
MAX_DEPTH = 32
# An authenticated extension's results carry page values (eval), which may nest further.
PEER_MAX_DEPTH = 256


class BadFrame(ValueError):
    """JSON the daemon refuses to act on; ``frame_id`` is its id when it could still be read."""

    def __init__(self, message: str, frame_id: str | None = None) -> None:
        super().__init__(message)
        self.frame_id = frame_id


class TooDeep(BadFrame):
    """A frame nested deeper than allowed."""

    def __init__(self, limit: int, frame_id: str | None = None) -> None:
        super().__init__(f"frame nested deeper than {limit} levels", frame_id)


class NotFinite(BadFrame):
    """A frame holding NaN or Infinity: Python's json reads them, but they are not JSON."""

    def __init__(self, frame_id: str | None = None) -> None:
        super().__init__("frame with NaN or Infinity (not JSON)", frame_id)


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


class _Constant(Exception):
    pass


def _refuse_constant(constant: str) -> Any:
    raise _Constant(constant)


def _id_of(value: Any) -> str | None:
    frame_id = value.get("id") if isinstance(value, dict) else None
    return frame_id if isinstance(frame_id, str) and frame_id else None


def _id_in(raw: str | bytes) -> str | None:
    """The id of a frame that holds NaN or Infinity (read with them as null), to answer the right call."""
    try:
        return _id_of(json.loads(raw, parse_constant=lambda _c: None))
    except (RecursionError, ValueError):
        return None


def decode(raw: str | bytes, limit: int = MAX_DEPTH) -> Any:
    """The frame, or None when it is not JSON; raises TooDeep past ``limit`` levels and NotFinite for
    NaN or Infinity."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise TooDeep(limit) from None
    except _Constant:
        raise NotFinite(_id_in(raw)) from None
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(value, dict | list) and exceeds(value, limit):
        raise TooDeep(limit, _id_of(value))
    return value
