"""``json.dumps`` / ``json.loads`` through the C accelerator ``_json`` alone, for the CLI's hot path.

The ``json`` package imports ``re`` (~4 ms per command); its C parts give the same bytes for what
crosses the wire (dicts, lists, str, int, float, bool, None): the same encoder and scanner run.
"""

import _json


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The arguments json.JSONEncoder passes for dumps(obj) and dumps(obj, ensure_ascii=False).
_ENCODERS = {
    ascii_only: _json.make_encoder(
        {},
        _refuse,
        _json.encode_basestring_ascii if ascii_only else _json.encode_basestring,
        None,
        ": ",
        ", ",
        False,
        False,
        True,
    )
    for ascii_only in (True, False)
}


def dumps(value: object, ensure_ascii: bool = True) -> str:
    """What ``json.dumps(value, ensure_ascii=…)`` returns."""
    if isinstance(value, str):
        return (_json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring)(value)
    encoder = _ENCODERS[ensure_ascii]
    # A fresh circular-reference memo per call, as JSONEncoder makes one.
    encoder.markers.clear()
    return "".join(encoder(value, 0))


class _Context:
    """The attributes the C scanner reads from a json.JSONDecoder (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = _json.make_scanner(_Context())


def loads(raw: bytes) -> object:
    """What ``json.loads(raw)`` returns, for a UTF-8 document; raises ValueError as it does."""
    if raw[:1] not in (b"{", b"["):
        # A BOM, another encoding or leading space: json's own detection and error texts.
        import json

        return json.loads(raw)
    text = raw.decode("utf-8", "surrogatepass")
    try:
        value, end = _scan(text, 0)
    except StopIteration:
        raise ValueError("Expecting value") from None
    if text[end:].strip(" \t\n\r"):
        raise ValueError("Extra data")
    return value
