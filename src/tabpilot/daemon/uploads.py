"""``tool.upload``: the daemon reads the files the agent names and sends their bytes to the extension.

An extension cannot read local files, and ``DOM.setFileInputFiles`` is refused ("Not allowed") under
chrome.debugger in a person's own profile, so the page gets ``File`` objects made from these bytes.
Every file is checked and read here, before anything reaches the page.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
from typing import Any

from tabpilot.protocol import RpcError

# A tool frame may be 64 MiB; base64 grows the bytes by a third.
MAX_TOTAL_BYTES = 40 * 1024 * 1024
MAX_FILES = 100


def _file_error(reason: str, message: str, path: str, hint: str) -> RpcError:
    code = "not_found" if reason == "file_not_found" else "invalid_params"
    return RpcError(code, message, reason, path=path, hint=hint)


def read_file(path: str, budget: int) -> dict[str, Any]:
    """One file as ``{name, path, type, size, last_modified, data}`` (data in base64)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise _file_error(
            "file_not_found",
            f"no file at {path}",
            path,
            "check the path; it is read on the machine running tabpilot",
        ) from None
    except OSError as exc:
        raise _file_error(
            "file_unreadable", f"cannot read {path}: {exc.strerror}", path, "check its permissions"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise _file_error(
            "file_unreadable", f"{path} is not a regular file", path, "give the path of a file, not a folder"
        )
    if info.st_size > budget:
        raise _file_error(
            "file_too_large",
            f"{path} is {info.st_size} bytes; one upload can carry {MAX_TOTAL_BYTES // (1024 * 1024)} MiB in all",
            path,
            "upload fewer or smaller files at a time",
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(budget + 1)
    except OSError as exc:
        raise _file_error(
            "file_unreadable", f"cannot read {path}: {exc.strerror}", path, "check its permissions"
        ) from None
    if len(data) > budget:
        raise _file_error(
            "file_too_large", f"{path} grew past the upload limit while being read", path, "retry"
        )
    name = os.path.basename(path)
    return {
        "name": name,
        # For the person's card only (the page gets the name): which of their files this really is.
        "path": os.path.realpath(path),
        "type": mimetypes.guess_type(name)[0] or "",
        "size": len(data),
        "last_modified": int(info.st_mtime * 1000),
        "data": base64.b64encode(data).decode("ascii"),
    }


def prepare(params: dict[str, Any]) -> dict[str, Any]:
    """Replace ``paths`` (absolute paths) with ``files`` (their names, types and bytes)."""
    paths = params.pop("paths", None)
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
        raise RpcError("invalid_params", "paths must be a non-empty list of file paths")
    if len(paths) > MAX_FILES:
        raise RpcError("invalid_params", f"at most {MAX_FILES} files per upload")
    files = []
    budget = MAX_TOTAL_BYTES
    for path in paths:
        if not os.path.isabs(path):
            raise RpcError(
                "invalid_params", f"{path} is not an absolute path", hint="the CLI passes absolute paths"
            )
        entry = read_file(path, budget)
        budget -= entry["size"]
        files.append(entry)
    return {**params, "files": files}
