"""A description of the machine and software a run measured, for the JSON and the README."""

from __future__ import annotations

import json
import os
import platform
import time
import urllib.request
from typing import Any

from bench.rig import Rig
from tabpilot import __version__


def _first(path: str, key: str, sep: str = ":") -> str | None:
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(key):
                    return line.split(sep, 1)[1].strip().strip('"')
    except OSError:
        return None
    return None


def browser_version(rig: Rig) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{rig.devtools.port}/json/version", timeout=5) as response:
        version = json.load(response)
    state = rig.tp.state("browser/browser.json") or {}
    return f"{version.get('Browser', '?')} ({state.get('executable', '?')}, headless)"


def describe(rig: Rig) -> dict[str, Any]:
    mem_kb = _first("/proc/meminfo", "MemTotal")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "cpu": _first("/proc/cpuinfo", "model name") or platform.processor() or "?",
        "cpus": os.cpu_count(),
        "ram_gib": round(int(mem_kb.split()[0]) / 2**20, 1) if mem_kb else None,
        "kernel": platform.release(),
        "distro": _first("/etc/os-release", "PRETTY_NAME", "=") or platform.platform(),
        "browser": browser_version(rig),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "tabpilot": __version__,
        # The machine is shared: its 1-minute load average when the run began (and ended, see run.py).
        "load_start": round(os.getloadavg()[0], 2),
    }


def one_line(machine: dict[str, Any]) -> str:
    load = ""
    if "load_start" in machine:
        end = f" → {machine['load_end']}" if "load_end" in machine else ""
        load = f", load average {machine['load_start']}{end}"
    return (
        f"{machine['cpus']} × {machine['cpu']}, {machine['ram_gib']} GiB RAM, {machine['distro']}, "
        f"Linux {machine['kernel']}, {machine['browser']}, {machine['python']}{load}"
    )
