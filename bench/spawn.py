"""Run one command as a whole process, spawn included, and time it; read a command's peak RSS."""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from dataclasses import dataclass

# A child exec'd from this (large) process starts with our RSS high-water mark in its ru_maxrss, so
# peak RSS is read through a tiny `python -S` spawner: the floor is then the spawner's ~9 MB.
PEAK_RSS_SPAWNER = (
    "import os,sys;"
    "null=[(os.POSIX_SPAWN_OPEN,f,'/dev/null',os.O_RDWR,0) for f in (0,1,2)];"
    "pid=os.posix_spawn(sys.argv[1],sys.argv[1:],os.environ,file_actions=null);"
    "_,status,usage=os.wait4(pid,0);"
    "print(usage.ru_maxrss,os.waitstatus_to_exitcode(status))"
)


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def error_line(self) -> str:
        """The first line that explains a failure, for notes."""
        for line in (self.err + "\n" + self.out).splitlines():
            if line.strip():
                return line.strip()[:160]
        return f"exit {self.code}"


class Spawner:
    """Spawns commands with their output in private temporary files (one Spawner per thread)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        # In-memory files: a child's output costs it no pipe back-pressure and us no reader thread.
        self.stdout = os.memfd_create("bench-stdout")
        self.stderr = os.memfd_create("bench-stderr")

    def run(self, argv: list[str], timeout: float = 90.0) -> Run:
        """Run argv to completion; the time covers posix_spawn to reaping. A hung child is killed."""
        for fd in (self.stdout, self.stderr):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, self.stdout, 1),
            (os.POSIX_SPAWN_DUP2, self.stderr, 2),
        ]
        started = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, self.env, file_actions=actions)
        pidfd = os.pidfd_open(pid)
        try:
            ready, _, _ = select.select([pidfd], [], [], timeout)
            if not ready:
                os.kill(pid, signal.SIGKILL)
            _, status, _ = os.wait4(pid, 0)
        finally:
            os.close(pidfd)
        seconds = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status) if ready else -signal.SIGKILL
        return Run(code, self._read(self.stdout), self._read(self.stderr), seconds)

    def peak_rss_kb(self, argv: list[str]) -> int | None:
        """The peak resident set size of argv run to completion, in KiB (None when it failed)."""
        run = self.run([sys.executable, "-S", "-c", PEAK_RSS_SPAWNER, *argv])
        fields = run.out.split()
        if not run.ok or len(fields) != 2 or fields[1] != "0":
            return None
        return int(fields[0])

    def close(self) -> None:
        os.close(self.stdout)
        os.close(self.stderr)

    @staticmethod
    def _read(fd: int) -> str:
        size = os.fstat(fd).st_size
        return os.pread(fd, size, 0).decode("utf-8", "replace") if size else ""
