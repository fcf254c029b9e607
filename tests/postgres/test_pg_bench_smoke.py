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
                                "--repeats", "2", "--append-rounds", "2", "--json"]) == 0
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
    if "langgraph" in pair:  # and PostgresStore doing the same work with the index it needs: the trigram index
        assert set(pair["langgraph_trgm"]) >= {"search_rare_us", "search_absent_us", "append2_us",
                                               "append2_client_cpu_us"}
        assert set(results["langgraph_trgm_writers"]) == {"1", "2"}
        schema = bench_postgres.TRGM_SCHEMA
        with psycopg.connect(pg_url) as conn:
            row = conn.execute("SELECT pg_get_indexdef(c.oid) FROM pg_class c JOIN pg_namespace n "
                               "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
                               (schema, bench_postgres.TRGM_INDEX)).fetchone()
            assert row is not None, f"no index {bench_postgres.TRGM_INDEX} in schema {schema}"
            (definition,) = row
            # on the message text of LangGraph's own table, with our pending-list settings (migrations/0006)
            assert "USING gin (((value ->> 'content'::text)) gin_trgm_ops)" in definition, definition
            assert "fastupdate='on'" in definition and "gin_pending_list_limit='256'" in definition, definition
            puts = conn.execute(f"SELECT prefix, count(*) FROM {schema}.store WHERE prefix LIKE 'memories.w%%' "
                                "GROUP BY prefix ORDER BY prefix").fetchall()
            assert puts == [(f"memories.{writer}.{where}", 10) for writer in ("w1-0", "w2-0", "w2-1")
                            for where in ("daily.2026-04-08", "s")], puts
        with psycopg.connect(bench_postgres.trgm_conninfo(pg_url)) as conn:
            namespace = ("memories", bench_postgres.USER, bench_postgres.SESSION)
            hits = conn.execute(bench_postgres.TRGM_SEARCH, (".".join(namespace), "%" + bench_postgres.RARE.upper()
                                                             + "%")).fetchall()
            assert [key for key, _ in hits] == [f"{8:012d}"]  # message 8 of 300 holds the rare term, any case
            # the raw search is served by the trigram index once the thread is more than a few pages (300 rows are
            # read whole), the benchmark's plan reader sees it: 20,000 more messages of the benchmark's kind
            conn.execute("INSERT INTO store (prefix, key, value) SELECT %s, lpad(i::text, 12, '0'), "
                         "jsonb_build_object('content', 'message ' || i || ' about topic ' || i %% 97 || "
                         "': the quick brown fox and some filler words to make it longer') "
                         "FROM generate_series(100001, 120000) AS i", (".".join(namespace),))
            conn.execute("ANALYZE store")
            assert bench_postgres.search_plan(conn, namespace, bench_postgres.RARE) == [
                "Bitmap Heap Scan on store", f"Bitmap Index Scan on {bench_postgres.TRGM_INDEX}"]
        assert results["langgraph_trgm_plans"]["300"]["rare"]  # recorded for every term
        # the interleaved appends: each configuration did its warm-up round and its 2 rounds of 10 appends, each
        # where it says (ours as a user of the store; both PostgresStores, the natural one and the indexed one)
        assert {name: len(rows) for name, rows in results["append_rounds"].items()} == {
            "postgres": 2, "langgraph": 2, "langgraph_trgm": 2}
        assert set(results["append_round_ratios"]) == {"langgraph", "langgraph_trgm"}
        with psycopg.connect(pg_url) as conn:
            counts = [conn.execute(sql).fetchone()[0] for sql in (
                "SELECT count(*) FROM am_messages JOIN am_layers USING (layer_id) WHERE user_id = 'interleaved'",
                "SELECT count(*) FROM public.store WHERE prefix LIKE 'memories.interleaved.%%'",
                f"SELECT count(*) FROM {schema}.store WHERE prefix LIKE 'memories.interleaved.%%'")]
        assert counts == [60, 60, 60], counts  # 30 messages, each a session row and its day copy
