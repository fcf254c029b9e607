"""benchmarks/bench_postgres.py runs end to end on a tiny size (figures are not asserted: only that it measured
what it says, on the data it says)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_benchmark_measures_both_backends_and_the_writers(pg_url: str, capsys) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_postgres
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert bench_postgres.main(["--url", pg_url, "--sizes", "300", "--writers", "1,2", "--each", "10",
                                "--repeats", "2", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    pair = results["sizes"]["300"]
    assert set(pair["files"]) == set(pair["postgres"]) >= {"window_us", "search_rare_us", "append_us",
                                                           "ranked_first_us", "ranked_us"}
    assert set(results["writers"]) == {"1", "2"}
    with psycopg.connect(pg_url) as conn:  # each writer process wrote its own user's messages, all of them
        rows = conn.execute("SELECT user_id, count(*) FROM am_messages JOIN am_layers USING (layer_id) "
                            "WHERE kind = 'session' AND user_id LIKE 'w%%' GROUP BY user_id ORDER BY user_id").fetchall()
    assert rows == [("w1-0", 10), ("w2-0", 10), ("w2-1", 10)]
    assert {"day_search_rare_us", "day_search_common_us"} <= set(pair["postgres"])
    if "langgraph" in pair:  # the dev extra: LangGraph's PostgresStore's writers too, two puts per message
        assert set(results["langgraph_writers"]) == {"1", "2"}
        with psycopg.connect(pg_url) as conn:
            puts = conn.execute("SELECT prefix, count(*) FROM store WHERE prefix LIKE 'memories.w%%' GROUP BY prefix "
                                "ORDER BY prefix").fetchall()
        assert puts == [(f"memories.{writer}.{where}", 10) for writer in ("w1-0", "w2-0", "w2-1")
                        for where in ("daily.2026-04-08", "s")], puts
