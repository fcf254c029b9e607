"""Smoke test of ``benchmarks/bench_api.py --quick``: it runs end to end against the real server in its own process
and reports every figure; timings are not asserted (the machine is shared), statuses and counts are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from api_harness import REPO


@pytest.mark.slow
def test_the_api_benchmark_runs_and_reports_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "api.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTMEM_", "OPENAI_"))}
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_api.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    for part, count in (("messages_endpoint", 20), ("chat_turns", 20)):
        figures = report[part]
        assert figures["statuses"] == {"200": count}
        assert {"requests_per_s", "p50_ms", "p95_ms"} <= set(figures) and figures["p95_ms"] >= figures["p50_ms"]
    assert report["messages_endpoint"]["mean_bytes"] > 500 * 100  # the whole 500-message thread came back
