"""Smoke test of ``benchmarks/bench_langgraph.py`` at tiny sizes: it runs end to end (its own asserts check every
frame has the rows it built) and prints a figure for every store. No time is asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_langgraph_runs_and_reports_every_store() -> None:
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_langgraph.py"), "--steps", "20",
                           "--items", "300", "--ops-items", "200"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "thread 20 steps (InMemorySaver" in out and "store_items at 300 items:" in out
    for name in ("AgentMemStore (files)", "InMemoryStore", "SqliteStore"):
        assert f"{name}" in out and "search(filter)" in out
    assert out.count(" at 200 items: put ") == 3
