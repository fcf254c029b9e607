"""Smoke test of ``benchmarks/bench_cold.py`` at a small N: it runs end to end, every query answers, and the
"after" processes really use the cache (lines parsed and bytes read, never seconds, are asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_cold_runs_and_the_cache_spares_the_parse(tmp_path: Path) -> None:
    out = tmp_path / "cold.json"
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_cold.py"), "--n", "5000", "--root",
                    str(tmp_path / "data"), "--json", str(out)], check=True, env=env, cwd=REPO, timeout=600,
                   capture_output=True)
    results = json.loads(out.read_text())
    queries = results["queries"]
    assert set(queries) == {"window", "keyword", "ranked"}
    for query in ("window", "keyword"):
        before, after = queries[query]["before"], queries[query]["after"]
        assert before["session_lines_parsed"] == 5000 and after["session_lines_parsed"] == 0
        assert after["session_bytes_read"] < 16_384 < before["session_bytes_read"]
    assert queries["keyword"]["after"]["runs"][0]["hits"] > 0
    ranked_before, ranked_after = queries["ranked"]["before"]["runs"][0], queries["ranked"]["after"]["runs"][0]
    assert ranked_after["messages"] > 0
    assert ranked_before["records_tokenised"] == 5000 and ranked_after["records_tokenised"] == 0
