"""Files the CLI writes for the agent (``--out``, ``state save``): checked before the call, private (0600)
like every file tabpilot keeps, and a write the OS refuses is an error with a hint, never a traceback."""

from __future__ import annotations

import os

from tabpilot.protocol import RpcError

PRIVATE = 0o600


def out_path(path: str) -> str:
    """The absolute path to write to, refused before the call when it cannot be a file we write."""
    out = os.path.abspath(path)
    parent = os.path.dirname(out)
    if not os.path.isdir(parent):
        raise RpcError(
            "invalid_params", f"the folder {parent} does not exist", hint="create it, or pick another --out"
        )
    if os.path.isdir(out):
        raise RpcError(
            "invalid_params",
            f"{out} is a folder",
            hint=f"give a file name inside it, e.g. --out {out}/page.txt",
        )
    if not os.access(parent, os.W_OK):
        raise _unwritable(out, "permission denied")
    return out


def write_private(path: str, data: bytes | str) -> None:
    """Write ``data`` to ``path``, readable by this user only (an existing file is made 0600 too)."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), PRIVATE)
            handle.write(raw)
    except OSError as err:
        raise _unwritable(path, err.strerror or str(err)) from None


def _unwritable(path: str, why: str) -> RpcError:
    return RpcError(
        "invalid_params",
        f"cannot write {path}: {why}",
        hint="pick an --out in a folder you may write to (e.g. /tmp or the current folder)",
    )
