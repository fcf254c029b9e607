"""Ranked retrieval on PostgreSQL: the same module, the same answers and explanations as on files.

The index is built from the store's ``scan()`` cursor and ``read_records`` on either backend; a PostgreSQL user has
no folder, so its index lives in the process's memory only (``retrieval/persist.py`` keeps nothing for it)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

import psycopg
import pytest


from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import RankerConfig, Retriever, Scope, search, user_index
from agentmem_nb.retrieval.hits import SearchResult
from agentmem_nb.store import index_cache
from agentmem_nb.store.postgres import PostgresStore, upgrade_database

LATER = _dt.datetime(2026, 4, 9, 12, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))
QUERIES = ("where did I go hiking near Lyon", "which city did I move to", "我在找工作 数据分析",
           "sunrise painting river", "lyon", "footbridge")
SCOPES = (Scope.everything(), Scope.everything(layer="session"), Scope.session("s1"), Scope.day("2026-04-08"))


def _shape(result: SearchResult) -> tuple[object, ...]:
    """Everything a caller sees of a result: mode, anchors with their scores and explanations, the messages."""
    hits = tuple((h.layer, h.key, h.message.message_id, h.rank, round(h.score, 9), h.explain()) for h in result.hits)
    messages = tuple((m.layer, m.key, m.anchor_id, m.is_anchor, m.message) for m in result.messages)
    return result.mode, hits, messages


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: f"{s.kind}-{s.key or s.layer}")
@pytest.mark.parametrize("query", QUERIES)
def test_ranked_search_on_postgres_equals_files(twin: tuple[MemoryStore, PostgresStore], query: str,
                                                scope: Scope) -> None:
    files, pg = twin
    on_files = search(files.user("alice"), query, scope=scope, budget=6)
    on_pg = search(pg.user("alice"), query, scope=scope, budget=6)
    assert on_files.hits or scope.kind != "all", "every query has a hit somewhere (one thread or day may have none)"
    assert _shape(on_pg) == _shape(on_files)


def test_the_index_follows_appends_by_the_scan_cursor(twin: tuple[MemoryStore, PostgresStore]) -> None:
    files, pg = twin
    user = pg.user("alice")
    search(user, "sunrise painting river", budget=4, how="ranked")
    index = user_index(user)
    before = {f.key: f.records_read for f in index.kinds["daily"].files}
    assert sum(before.values()) == 13
    for store in (files, pg):
        store.user("alice").append("s1", "user", "a kayak trip on the river at sunrise", ts=LATER)
    on_pg = search(user, "kayak river sunrise", budget=4, how="ranked")
    on_files = search(files.user("alice"), "kayak river sunrise", budget=4, how="ranked")
    assert _shape(on_pg) == _shape(on_files)
    assert on_pg.hits[0].message.content == "a kayak trip on the river at sunrise"
    after = {f.key: f.records_read for f in index.kinds["daily"].files}
    assert sum(after.values()) - sum(before.values()) == 1  # only the appended message was read


def test_a_large_postgres_index_is_kept_in_memory_only(pg_url: str) -> None:
    """Above the size at which the files' index is persisted beside them: on PostgreSQL nothing is written (there
    is no folder), and another store object (another process, as far as caches go) builds the same index."""
    upgrade_database(pg_url)
    store = MemoryStore(pg_url, zone="Asia/Shanghai")
    assert isinstance(store, PostgresStore)
    rows = index_cache.MIN_RECORDS + 100
    store.user("alice").append("s1", "user", "filler number 0")
    with psycopg.connect(pg_url) as conn:  # filled by SQL: appending one by one is slow
        conn.execute("""
            INSERT INTO am_messages (layer_id, position, message_id, record, folded)
            SELECT l.layer_id, i, i + 1, jsonb_build_object('ts', '2026-04-08T10:00:00.000000+08:00', 'role', 'user',
                   'content', CASE WHEN i = 1000 THEN 'the kayak trip at sunrise' ELSE 'filler number ' || i END,
                   'tags', '["session"]'::jsonb, 'meta', '{"session_id": "s1"}'::jsonb), NULL
            FROM am_layers l, generate_series(1, %(rows)s - 1) AS i WHERE l.kind = 'session'""", {"rows": rows})
        conn.execute("UPDATE am_layers SET rows = %(rows)s, next_id = %(rows)s + 1 WHERE kind = 'session'",
                     {"rows": rows})
    other = MemoryStore(pg_url, zone="Asia/Shanghai")
    try:
        found = [search(s.user("alice"), "kayak sunrise trip", scope=Scope.session("s1"), budget=1)
                 for s in (store, other)]
        assert _shape(found[0]) == _shape(found[1])
        assert found[0].hits[0].message.message_id == 1001
        index = user_index(store.user("alice")).kinds["session"]
        assert len(index) == rows and index.persisted == 0  # built, and kept nowhere
    finally:
        other.close()
        store.close()


class _RiverEmbedder:
    """One made-up dimension, 'water' (a query can match a message it shares no word with)."""

    WATER = ("river", "saône", "kayak", "lake", "swim")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(sum(w.strip(".,!?") in self.WATER for w in t.lower().split())), 0.01] for t in texts]


def test_a_dense_signal_reads_the_texts_from_postgres(twin: tuple[MemoryStore, PostgresStore]) -> None:
    """An embedder's texts are read back by position (``read_at``): the same dense scores on both backends."""
    files, pg = twin
    retriever = Retriever(ranker=RankerConfig(embedder=_RiverEmbedder(), dense_weight=2.0))
    found = [retriever.search(s.user("alice"), "a swim in the lake", budget=4, how="ranked") for s in (files, pg)]
    assert found[0].hits and all(h.signal("dense") > 0 for h in found[0].hits)
    assert _shape(found[1]) == _shape(found[0])


@pytest.mark.filterwarnings("ignore::agentmem_nb.errors.MemoryDataWarning")  # the broken row, warned about once
def test_a_layer_with_a_broken_row_is_not_read_again_after_an_append(twin: tuple[MemoryStore, PostgresStore],
                                                                     pg_url: str) -> None:
    """A row another program broke (a JSON array, not a message) is skipped on both backends, as a broken line
    is. The index then reads only what is appended after it: positions are counted in readable messages on both
    backends, so the scan's start is where the index stopped."""
    files, pg = twin
    path = files.root / "alice" / "sessions" / "s1.jsonl"
    with open(path, "a", encoding="utf-8") as handle:  # the same broken record in the thread on both backends
        handle.write("[1, 2]\n")
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO am_messages (layer_id, message_id, record) SELECT layer_id, 99, '[1, 2]' "
                     "FROM am_layers WHERE user_id = 'alice' AND kind = 'session' AND key = 's1'")
    query, scope = "kayak river sunrise", Scope.session("s1")
    assert _shape(search(pg.user("alice"), query, scope=scope, budget=4)) == \
        _shape(search(files.user("alice"), query, scope=scope, budget=4))
    index = user_index(pg.user("alice")).kinds["session"]
    read_before = sum(f.records_read for f in index.files)
    for round_ in range(3):
        for store in (files, pg):
            store.user("alice").append("s1", "user", f"a kayak trip on the river at sunrise, round {round_}", ts=LATER)
        on_pg = search(pg.user("alice"), query, scope=scope, budget=4)
        assert _shape(on_pg) == _shape(search(files.user("alice"), query, scope=scope, budget=4))
    assert index.rebuilds == 0
    assert sum(f.records_read for f in index.files) - read_before == 3  # the appended messages, nothing else
