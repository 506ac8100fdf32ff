"""Talk to the daemon over its Unix socket; start it when it is not running.

Blocking stdlib sockets only: this runs on every agent command. It uses the C module ``_socket``
directly: the ``socket`` wrapper adds ~3 ms of imports (selectors, enum classes) for nothing we use.
The hot path (``tabpilot.cli.fast``) sends through ``exchange`` too, so only built-in modules load
up front; ``os``, ``paths`` and the error class are imported where they are needed.
"""

import _socket

from tabpilot.cli import fastjson

# typing is for checkers only (see tabpilot/protocol.py). On the hot path annotations are
# evaluated (`from __future__ import annotations` would import one more module): Any stands for object.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
else:
    Any = object

START_TIMEOUT_S = 10.0
# Beyond the call's own timeout, how long the CLI waits for the daemon's answer (queueing, margins).
REPLY_MARGIN_S = 20.0


def open_socket(path: str) -> _socket.socket:
    """A connection to the socket at ``path``; raises what connect raises (FileNotFoundError, …)."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


# Thread id → who hears the progress lines of that thread's calls (`tabpilot mcp` runs each tool call
# in a thread of its own and passes them on to its client).
progress_listeners: dict[int, Any] = {}
# Progress lines are a few dozen bytes; a longer line is the reply.
_PROGRESS_MAX = 4096


def _read_reply(sock: _socket.socket) -> bytes:
    """The reply line. Progress lines before it (the person is being asked) each push the read
    deadline out to what they say, so a call waiting for the person is not cut off."""
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        if b"\n" not in chunk:
            continue
        pending = b"".join(chunks)
        while (end := pending.find(b"\n")) >= 0:
            if not _on_progress(sock, pending[:end]):
                return pending
            pending = pending[end + 1 :]
        chunks = [pending] if pending else []


def _on_progress(sock: _socket.socket, line: bytes) -> bool:
    """Take a progress line; False when the line is something else (the reply, whatever it holds)."""
    # Cheap tests first: the reply may be megabytes, and a page's value may say "progress" too.
    if len(line) >= _PROGRESS_MAX or b'"progress":' not in line:
        return False
    try:
        frame = fastjson.loads(line)
    except ValueError:
        return False
    payload = frame.get("progress") if isinstance(frame, dict) else None
    if not isinstance(payload, dict) or "result" in frame or "error" in frame:
        return False
    wait = payload.get("deadline_ms")
    wait_s = float(wait) / 1000.0 if isinstance(wait, int | float) else 0.0
    current = sock.gettimeout() or 0.0
    sock.settimeout(max(current, wait_s + REPLY_MARGIN_S))
    if progress_listeners:
        import _thread

        listener = progress_listeners.get(_thread.get_ident())
        if listener is not None:
            listener(payload)
    return True


def connect(autostart: bool = True) -> _socket.socket:
    """A connection to the daemon of ``$TABPILOT_HOME``, starting the daemon when needed."""
    from tabpilot import paths
    from tabpilot.protocol import RpcError

    path = paths.socket_path()
    try:
        return open_socket(path)
    except (FileNotFoundError, ConnectionRefusedError):
        if not autostart:
            raise RpcError(
                "daemon_unreachable",
                "the tabpilot daemon is not running",
                "daemon_not_running",
                hint="any tabpilot command starts it, e.g. `tabpilot daemon start`",
            ) from None
    except OSError as exc:
        raise _refused(path, exc) from None
    return start_daemon()


def _refused(path: str, exc: OSError) -> Exception:
    """The socket is there but the OS will not let us reach it (a sandbox, a foreign owner, a path too long)."""
    from tabpilot.protocol import RpcError

    return RpcError(
        "daemon_unreachable",
        f"cannot reach the daemon's socket {path}: {exc.strerror or exc}",
        "socket_refused",
        hint="this process may not open Unix sockets there (an agent's sandbox?): allow it "
        "$TABPILOT_HOME, or point TABPILOT_HOME at a folder it may use",
    )


def start_daemon() -> _socket.socket:
    """Spawn ``python -m tabpilot.daemon`` detached and wait until its socket answers."""
    import os
    import subprocess
    import sys
    import time

    from tabpilot import paths
    from tabpilot.protocol import RpcError

    home = paths.ensure_home()
    log_dir = paths.log_dir(home)
    os.makedirs(log_dir, mode=0o700, exist_ok=True)
    out_path = os.path.join(log_dir, "daemon.out")
    with open(out_path, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tabpilot.daemon"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    path = paths.socket_path(home)
    while time.monotonic() < deadline:
        try:
            return open_socket(path)
        except (FileNotFoundError, ConnectionRefusedError):
            pass
        except OSError as exc:
            raise _refused(path, exc) from None
        code = process.poll()
        # Exit 0 means another daemon won the race for the lock: keep waiting for its socket.
        if code not in (None, 0):
            raise RpcError(
                "daemon_unreachable",
                f"the tabpilot daemon could not start: {_tail(out_path)}",
                "daemon_start_failed",
                hint=f"see {out_path} and {os.path.join(log_dir, 'daemon.log')}",
            )
        time.sleep(0.02)
    raise RpcError(
        "daemon_unreachable",
        f"the tabpilot daemon did not answer within {START_TIMEOUT_S:.0f} s",
        "daemon_start_failed",
        hint=f"see {os.path.join(log_dir, 'daemon.log')}",
    )


def _tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = [line.strip() for line in handle.read().splitlines() if line.strip()]
    except OSError:
        return "no output"
    return " / ".join(text[-lines:]) or "no output"


def frame(
    method: str, params: dict[str, Any] | None, session: str | None, browser: str | None
) -> dict[str, Any]:
    """The request object of one call."""
    request: dict[str, Any] = {"id": "cli", "method": method, "params": params or {}}
    if session:
        request["session"] = session
    if browser:
        request["browser"] = browser
    # A side-panel agent's run token: its panel session answers only with it, only during its turn.
    import posix  # built in (os would cost an import here)

    run = posix.environ.get(b"TABPILOT_RUN")
    if run:
        request["run"] = run.decode()
    return request


def call(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    session: str | None = None,
    browser: str | None = None,
    timeout_s: float = 30.0,
    autostart: bool = True,
) -> Any:
    """Send one request and return its result; raises RpcError for an error reply."""
    return exchange(connect(autostart), frame(method, params, session, browser), timeout_s)


def exchange(sock: _socket.socket, request: dict[str, Any], timeout_s: float) -> Any:
    """Send ``request`` on ``sock`` (closed after) and return the reply's result; raises RpcError."""
    try:
        sock.settimeout(timeout_s + REPLY_MARGIN_S)
        # The socket stays open for writing until the reply comes: EOF tells the daemon to cancel.
        sock.sendall(fastjson.dumps(request).encode() + b"\n")
        raw = _read_reply(sock)
    except TimeoutError:
        from tabpilot.protocol import RpcError

        raise RpcError(
            "timeout",
            f"no answer from the daemon within {sock.gettimeout() or 0:.0f} s",
            "rpc_timeout",
        ) from None
    except OSError as exc:
        from tabpilot.protocol import RpcError

        raise RpcError(
            "daemon_unreachable", f"lost the daemon connection: {exc}", "client_disconnected"
        ) from None
    finally:
        sock.close()
    try:
        reply = fastjson.loads(raw) if raw else None
    except ValueError:
        reply = None
    if isinstance(reply, dict) and "result" in reply and "error" not in reply:
        return reply["result"]
    return _failed(raw, reply)


def _failed(raw: bytes, reply: Any) -> Any:
    """Raise the RpcError an unusable or error reply stands for."""
    from tabpilot.protocol import RpcError

    if not raw:
        import os

        from tabpilot import paths

        raise RpcError(
            "daemon_unreachable",
            "the daemon closed the connection without answering",
            "client_disconnected",
            hint=f"see {os.path.join(paths.log_dir(), 'daemon.log')}",
        )
    if isinstance(reply, dict) and "error" in reply:
        raise RpcError.from_wire(reply["error"])
    raise RpcError("protocol_error", "the daemon sent a malformed reply", "bad_frame")
