"""benchmarks/bench_turn.py still runs (tiny sizes; no timing is asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_bench_turn_runs_at_a_tiny_size(capsys) -> None:  # noqa: ANN001
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_turn
    finally:
        sys.path.remove(str(BENCHMARKS))
    row = bench_turn.run_size(40, 3)
    assert row["n"] == 40 and row["graphs_built"] == 1
    for kind in ("chat", "recall"):
        assert set(row[kind]["overhead_ms"]) == {"median", "p95", "min", "max"}
        assert row[kind]["overhead_ms"]["min"] <= row[kind]["overhead_ms"]["median"] <= row[kind]["overhead_ms"]["max"]
    assert row["recall"]["steps_ms_median"]["tools"] > 0 == row["chat"]["steps_ms_median"]["tools"]
