"""What the numbers were measured on: CPU, cores, load, disk sync latency, Python and package versions."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import sqlite3
import subprocess
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["describe_machine", "code_version", "load_average", "fsync_latency_us", "PACKAGES"]

PACKAGES = ("agentmem_nb", "langchain-community", "langchain-core", "langchain", "langgraph", "langgraph-checkpoint",
            "langgraph-checkpoint-sqlite")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> float | None:
    """The 1-minute load average (``None`` where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def fsync_latency_us(folder: Path, *, samples: int = 20) -> float:
    """Median time of a 200-byte append + ``fsync`` in ``folder``: how busy the disk is right now."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=folder, prefix=".fsync-probe-")
    timings = []
    try:
        for _ in range(samples):
            t0 = time.perf_counter()
            os.write(fd, b"x" * 199 + b"\n")
            os.fsync(fd)
            timings.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(name)
    timings.sort()
    return round(timings[len(timings) // 2] * 1e6, 1)


def _filesystem(folder: Path) -> str:
    """The mount type holding ``folder`` (from /proc/mounts; longest matching mount point wins)."""
    best, kind = "", "unknown"
    try:
        real = os.path.realpath(folder)
        with open("/proc/mounts", encoding="utf-8") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 3 and (real == parts[1] or real.startswith(parts[1].rstrip("/") + "/")):
                    if len(parts[1]) > len(best):
                        best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def code_version(repo: Path) -> str:
    """``git`` commit of ``repo`` and how many files under ``agentmem_nb/`` and ``benchmarks/`` differ from it."""
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "agentmem_nb", "benchmarks"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return f"git {commit}" + (f" + {len(changed)} uncommitted file(s)" if changed else "")


def describe_machine(data_folder: Path, *, repo: Path | None = None) -> dict[str, Any]:
    """A JSON-ready description of this machine and software, for the report header."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_gb": _memory_gb(),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlite": sqlite3.sqlite_version,
        "packages": {name: _version(name) for name in PACKAGES},
        "data_folder_fs": _filesystem(data_folder),
        "code": code_version(repo) if repo is not None else "unknown",
    }


def _memory_gb() -> float | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None
