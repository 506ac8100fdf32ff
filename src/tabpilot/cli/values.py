"""argparse types for every number, duration, name and target the CLI takes, each with sane bounds.

A value out of bounds is a usage error (exit 1) at parse time: nothing reaches the daemon, and
nothing like ``inf`` or ``1e400`` gets as far as a traceback or a wait that never ends.
Each type carries ``json_type``, the JSON Schema type the MCP server gives the parameter.
"""

from __future__ import annotations

import argparse
import math
import re

# Waits and timeouts longer than an hour are typos (or `inf`), never a plan.
MAX_DURATION_S = 3600.0
# JavaScript's Number.MAX_SAFE_INTEGER: the largest count the extension reads exactly.
MAX_SAFE_INT = 2**53 - 1
# Chrome's tab ids are 32-bit.
MAX_TAB_ID = 2**31 - 1
_SUFFIXES = (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0))


def _seconds_text(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


class Duration:
    """``30``, ``30s``, ``500ms``, ``2m``, ``1h`` → seconds, from ``low_s`` (0: none) to ``limit_s``."""

    json_type = "string"

    def __init__(self, limit_s: float = MAX_DURATION_S, low_s: float = 0.0, why: str = "") -> None:
        self.limit_s = limit_s
        self.low_s = low_s
        self.why = why
        self.__name__ = "duration"

    def __call__(self, text: str) -> float:
        raw = text.strip().lower()
        scale = 1.0
        for suffix, factor in _SUFFIXES:
            if raw.endswith(suffix):
                raw, scale = raw[: -len(suffix)], factor
                break
        try:
            value = float(raw) * scale
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a duration (try 30, 30s, 500ms or 2m)")
        if value < 0:
            raise argparse.ArgumentTypeError("a duration cannot be negative")
        if value < self.low_s:
            raise argparse.ArgumentTypeError(
                f"{text!r} is too short: at least {_seconds_text(self.low_s)}{self.why}"
            )
        if value > self.limit_s:
            raise argparse.ArgumentTypeError(f"{text!r} is too long: at most {_seconds_text(self.limit_s)}")
        return value


class Count:
    """A whole number from ``low`` to ``high`` (an argparse type); ``unit`` names it in errors."""

    json_type = "integer"

    def __init__(self, low: int = 0, high: int = MAX_SAFE_INT, unit: str = "") -> None:
        self.low, self.high, self.unit = low, high, unit
        self.__name__ = "count"

    def __call__(self, text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number") from None
        unit = f" {self.unit}" if self.unit else ""
        if value < self.low:
            raise argparse.ArgumentTypeError(f"must be {self.low:,}{unit} or more")
        if value > self.high:
            raise argparse.ArgumentTypeError(f"must be at most {self.high:,}{unit}")
        return value


class TabId(Count):
    """A tab id from `tabpilot tab list`."""

    def __init__(self) -> None:
        super().__init__(1, MAX_TAB_ID)
        self.__name__ = "tab id"

    def __call__(self, text: str) -> int:
        try:
            int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text[:40]!r} is not a tab id (a number from `tabpilot tab list`)"
            ) from None
        try:
            return super().__call__(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"{text[:40]!r} is not a tab id: tab ids are from 1 to {MAX_TAB_ID:,}"
            ) from None


class Point:
    """``X,Y`` in CSS pixels, each finite and within ±100,000."""

    json_type = "string"
    LIMIT = 100_000.0

    def __init__(self) -> None:
        self.__name__ = "point"

    def __call__(self, text: str) -> dict[str, float]:
        try:
            x, y = (float(part) for part in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not X,Y (e.g. 10,5)") from None
        if not all(math.isfinite(v) and abs(v) <= self.LIMIT for v in (x, y)):
            raise argparse.ArgumentTypeError(f"{text!r}: X and Y are pixels, each within ±{self.LIMIT:,.0f}")
        return {"x": x, "y": y}


class Name:
    """A non-empty name (sessions, browsers): an empty one would silently mean the default."""

    json_type = "string"

    def __init__(self, what: str) -> None:
        self.what = what
        self.__name__ = what

    def __call__(self, text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {self.what} name is empty")
        return text


class Target:
    """What an action acts on: ``@eN``, a CSS selector or ``text=…``; refuses what can never match."""

    json_type = "string"

    def __init__(self) -> None:
        self.__name__ = "target"

    def __call__(self, text: str) -> str:
        raw = text.strip()
        if not raw:
            raise argparse.ArgumentTypeError(
                'the target is empty: give a ref (@e12), a CSS selector or text="…"'
            )
        if raw[:5].lower() == "text=":
            rest = raw[5:].strip()
            if not rest:
                raise argparse.ArgumentTypeError('text= needs some text, e.g. text="Save" or text=save')
            if rest[0] in "\"'" and (len(rest) < 2 or not rest.endswith(rest[0])):
                raise argparse.ArgumentTypeError(
                    f'{text!r}: the quote after text= is not closed (e.g. text="Save"; in a shell, '
                    "put the whole target in single quotes: 'text=\"Save\"')"
                )
        return text


parse_duration = Duration()
tab_id = TabId()
target = Target()


class OneLine:
    """Non-empty text of one line, at most ``limit`` characters (a user agent, a header's value)."""

    json_type = "string"

    def __init__(self, limit: int, what: str = "text") -> None:
        self.limit = limit
        self.what = what
        self.__name__ = what

    def __call__(self, text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"the {self.what} is empty")
        if "\n" in text or "\r" in text or "\0" in text:
            raise argparse.ArgumentTypeError(f"the {self.what} must be one line")
        if len(text) > self.limit:
            raise argparse.ArgumentTypeError(f"the {self.what} is longer than {self.limit} characters")
        return text


# RFC 9110's token: what a header's name may be made of.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class Header:
    """``Name: value`` → (name, value); a name the browser sets itself (Host, Cookie…) is refused."""

    json_type = "string"
    # The browser owns these: a page's request that carried ours would not be the request it makes.
    RESERVED = frozenset({"host", "content-length", "cookie", "connection", "transfer-encoding", "origin"})

    def __init__(self) -> None:
        self.__name__ = "header"

    def __call__(self, text: str) -> tuple[str, str]:
        name, sep, value = text.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not _TOKEN.fullmatch(name):
            raise argparse.ArgumentTypeError(f"{text!r} is not 'Name: value' (e.g. 'X-Api-Key: abc')")
        if name.lower() in self.RESERVED:
            raise argparse.ArgumentTypeError(f"{name} is set by the browser itself")
        return name, OneLine(8192, "header value")(value or " ").strip()


class WebOrigin:
    """``https://example.com`` (a path is dropped) → the origin, as the browser writes it."""

    json_type = "string"

    def __init__(self, schemes: tuple[str, ...] = ("http", "https")) -> None:
        self.schemes = schemes
        self.__name__ = "origin"

    def __call__(self, text: str) -> str:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(text.strip())
            port = parts.port
        except ValueError:
            parts, port = None, None
        if parts is None or parts.scheme not in self.schemes or not parts.hostname:
            shown = " or ".join(f"{s}://" for s in self.schemes)
            raise argparse.ArgumentTypeError(f"{text!r} is not an origin ({shown}host[:port])")
        if parts.username is not None:
            raise argparse.ArgumentTypeError(f"{text!r}: give it without user:password@")
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        default = {"http": 80, "https": 443}.get(parts.scheme)
        return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")
