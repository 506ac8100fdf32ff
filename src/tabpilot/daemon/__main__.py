"""``python -m tabpilot.daemon``: start the daemon (single instance per TABPILOT_HOME)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import logging
import os
import sys
import time

from tabpilot import paths
from tabpilot.daemon.config import DaemonConfig
from tabpilot.daemon.server import run
from tabpilot.protocol import RpcError

EXIT_ALREADY_RUNNING = 0
EXIT_CANNOT_START = 3


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def _setup_logging(home: str, foreground: bool) -> None:
    log_dir = paths.log_dir(home)
    os.makedirs(log_dir, mode=0o700, exist_ok=True)
    handler = logging.FileHandler(os.path.join(log_dir, "daemon.log"), encoding="utf-8")
    handler.setFormatter(JsonLines())
    root = logging.getLogger("tabpilot")
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    if foreground:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        root.addHandler(console)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tabpilot.daemon", description=__doc__)
    parser.add_argument("--foreground", action="store_true", help="also log to stderr")
    args = parser.parse_args(argv)
    try:
        home = paths.ensure_home()
    except RpcError as err:
        print(f"error: {err.message}\nhint: {err.data.get('hint')}", file=sys.stderr)
        return EXIT_CANNOT_START
    try:
        port = paths.port()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    lock = open(paths.lock_path(home), "a+")  # noqa: SIM115 - held for the daemon's lifetime
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("tabpilot daemon is already running for this TABPILOT_HOME", file=sys.stderr)
        return EXIT_ALREADY_RUNNING
    _setup_logging(home, args.foreground)
    log = logging.getLogger("tabpilot.daemon")
    with open(paths.pid_path(home), "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    started = time.time()
    try:
        asyncio.run(run(home, port, DaemonConfig.from_env()))
    except OSError as exc:
        log.error("cannot start: %s", exc)
        print(f"error: tabpilot daemon cannot start: {exc}", file=sys.stderr)
        return EXIT_CANNOT_START
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(paths.pid_path(home))
        log.info("daemon exited after %.0f s", time.time() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
