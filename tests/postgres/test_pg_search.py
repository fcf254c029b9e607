"""Exact search on PostgreSQL: the file backend's answers (casefold substring, CJK, the last ``limit`` hits in order),
found through the trigram index rather than by reading the layer (the plan shows it); windows by (thread, id)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
from collections.abc import Iterator
from unittest import mock

import psycopg
import pytest
from pg_server import shared_server

from agentmem_nb import MemoryStore
from agentmem_nb.store.postgres import PostgresStore, upgrade_database
from agentmem_nb.store.postgres.layer import RECENT_ROWS, WALK_ROWS

ROWS = 20_000
SPECIAL = "I moved to LYON, 我在找工作"


@pytest.fixture(scope="module")
def big() -> PostgresStore:
    """A thread of 20,000 messages and their day, as appends leave them (each day row a copy linked to its session
    row); every 5,000th holds ``SPECIAL`` (filled by SQL: appending one by one is slow). Shared by this module's
    tests: they read it, and append only what no other test looks for."""
    pg_url = shared_server().new_database()
    upgrade_database(pg_url)
    store = MemoryStore(pg_url, zone="Asia/Shanghai")
    assert isinstance(store, PostgresStore)
    store.user("alice").append("s1", "user", "filler message number 0")
    with psycopg.connect(pg_url) as conn:
        conn.execute("""
            WITH s AS (SELECT layer_id FROM am_layers WHERE kind = 'session'),
            d AS (SELECT layer_id FROM am_layers WHERE kind = 'daily'),
            c AS (SELECT i, CASE WHEN i %% 5000 = 0 THEN %(special)s || ' ' || i ELSE 'filler message number ' || i
                            END AS content FROM generate_series(1, %(rows)s - 1) AS i),
            ms AS (INSERT INTO am_messages (layer_id, position, message_id, record, folded, copy_layer, copy_position)
                   SELECT s.layer_id, i, i + 1, jsonb_build_object('ts', '2026-04-08T10:00:00.000000+08:00',
                          'role', 'user', 'content', content, 'tags', '["session"]'::jsonb,
                          'meta', '{"session_id": "s1"}'::jsonb), lower(content), d.layer_id, i
                   FROM s, d, c)
            INSERT INTO am_messages (layer_id, position, message_id, record, source_layer, source_position)
            SELECT d.layer_id, i, i + 1, jsonb_build_object('ts', '2026-04-08T10:00:00.000000+08:00', 'role', 'user',
                   'content', content, 'tags', '["daily"]'::jsonb, 'meta', '{"session_id": "s1"}'::jsonb),
                   s.layer_id, i
            FROM s, d, c""", {"special": SPECIAL, "rows": ROWS})
        conn.execute("UPDATE am_layers SET rows = %(rows)s, next_id = %(rows)s + 1", {"rows": ROWS})
        conn.execute("ANALYZE am_messages")
    yield store
    store.close()


def _plan(store: PostgresStore, sql: str, params: dict[str, object]) -> str:
    with psycopg.connect(store.db.pool.conninfo) as conn:
        rows = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params, prepare=False).fetchall()
    return json.dumps(rows[0][0])


@contextlib.contextmanager
def _recording(store: PostgresStore) -> Iterator[list[tuple[str, object]]]:
    """Every read statement the store sends while the block runs, with its parameters, in order."""
    statements: list[tuple[str, object]] = []
    real_fetch = store.db.fetch

    def recorded(sql: str, params: object = None, **kwargs: object) -> list[tuple[object, ...]]:
        statements.append((sql, params))
        return real_fetch(sql, params, **kwargs)  # type: ignore[arg-type]

    with mock.patch.object(store.db, "fetch", recorded):
        yield statements


def _searched(store: PostgresStore, layer: object, keyword: str, limit: int
              ) -> tuple[list[int], list[list[dict[str, object]]]]:
    """The ids a search of ``layer`` gives, and the plan nodes that ran of each statement it ran (each statement
    recorded as it went to the server, then run again under ``EXPLAIN ANALYZE``)."""
    with _recording(store) as statements:
        ids = [m.message_id for m in layer.search(keyword, limit=limit)]  # type: ignore[attr-defined]
    plans = []
    with psycopg.connect(store.db.pool.conninfo) as conn:
        for sql, params in statements:
            (plan,) = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params, prepare=False).fetchone()
            plans.append([node for node in _nodes(plan[0]["Plan"]) if node.get("Actual Loops")])
    return ids, plans


def _rows_read(nodes: list[dict[str, object]]) -> int:
    """The table rows a statement's scans of am_messages looked at: kept, filtered out, or rechecked away."""
    return sum(int(node["Actual Rows"]) * int(node["Actual Loops"]) + int(node.get("Rows Removed by Filter", 0))
               + int(node.get("Rows Removed by Index Recheck", 0))
               for node in nodes if node.get("Relation Name") == "am_messages")


@pytest.mark.parametrize("keyword", ["lyon", "找工作"])
def test_a_rare_keyword_is_found_through_the_trigram_index(big: PostgresStore, keyword: str) -> None:
    layer = big.user("alice").session("s1")
    assert [m.message_id for m in layer.search(keyword, limit=2)] == [10001, 15001]  # the last two, in order
    ids, (recent, *older) = _searched(big, layer, keyword.upper(), 20)
    assert ids == [5001, 10001, 15001]
    # the last RECENT_ROWS rows walked (none holds it), then the WALK_ROWS before them, then the rest through the
    # trigram index: no scan of the thread
    walk, rest = older
    assert _rows_read(recent) <= RECENT_ROWS and _rows_read(walk) <= WALK_ROWS, (recent, walk)
    assert any(node.get("Index Name") == "am_messages_search" for node in rest), rest
    assert _rows_read(rest) < 100 and "Seq Scan" not in json.dumps(older), older


@pytest.mark.parametrize("keyword", ["lyon", "找工作"])
def test_a_rare_keyword_in_a_day_is_found_through_its_session_rows_trigram_postings(big: PostgresStore,
                                                                                   keyword: str) -> None:
    user = big.user("alice")
    (day,) = user.days()
    layer = user.daily(day)
    assert [m.message_id for m in layer.search(keyword, limit=2)] == [10001, 15001]
    assert [(m.day, m.message_id) for m in user.search_daily(keyword.upper())] == \
           [(day, 5001), (day, 10001), (day, 15001)]
    assert all(m.tags[0] == "daily" for m in layer.search(keyword))  # the day's rows, not their session rows
    ids, (recent, walk, rest) = _searched(big, layer, keyword, 20)
    assert ids == [5001, 10001, 15001]
    assert _rows_read(recent) <= RECENT_ROWS and _rows_read(walk) <= WALK_ROWS, (recent, walk)
    older = rest
    ran = [(node.get("Index Name"), node.get("Index Cond", "")) for node in rest if node.get("Index Name")]
    # a rare keyword is not among the last rows walked first: the trigram index answers, for the copies (through
    # their session rows) and for the day's own rows, each branch its own index scan; no scan of the day. (Whether
    # the scan also keys on the layer is the planner's choice: here the layer is the whole index, so it filters the
    # few candidates instead of reading the layer's every posting.)
    assert [name for name, _ in ran].count("am_messages_search") == 2, ran
    assert _rows_read(older) < 100 and "Seq Scan" not in json.dumps(older), older


@pytest.mark.parametrize("kind", ["session", "daily"])
def test_a_keyword_common_long_ago_but_absent_lately_reads_its_hits_not_the_layer(
        big: PostgresStore, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    # "number 2": 1,111 rows (2, 20-29, 200-299, 2,000-2,999), all in the first 3,000 of 20,000. Spread evenly, it
    # would be met within the last few hundred rows, so a backward walk was planned — and read 17,000 rows first.
    # Now the walks stop after RECENT_ROWS + WALK_ROWS rows, and the trigram index reads its hits
    user = big.user("alice")
    layer = user.session("s1") if kind == "session" else user.daily(user.days()[0])
    ids, plans = _searched(big, layer, "Number 2", 20)
    assert ids == list(range(2981, 3001))
    assert len(plans) == 3 and sum(map(_rows_read, plans)) <= RECENT_ROWS + WALK_ROWS + 2 * 1111, plans


@pytest.mark.parametrize("kind", ["session", "daily"])
def test_a_keyword_in_every_row_until_shortly_before_the_last_is_walked_to_not_read_whole(big: PostgresStore,
                                                                                         kind: str) -> None:
    # "number 18": rows 18, 180-189, 1,800-1,899 and 18,000-18,999, none of the last 512 (19,488-19,999). Its 20
    # last hits are 490-508 rows before those: the second walk reaches them; the trigram index would read all 1,111
    user = big.user("alice")
    layer = user.session("s1") if kind == "session" else user.daily(user.days()[0])
    ids, plans = _searched(big, layer, "number 18", 20)
    assert ids == list(range(18981, 19001))
    assert len(plans) == 2 and sum(map(_rows_read, plans)) <= RECENT_ROWS + 600, plans


@pytest.mark.parametrize("kind", ["session", "daily"])
@pytest.mark.parametrize("limit", [5, 11, 20])
def test_hits_on_both_sides_of_the_recent_rows_come_once_and_in_order(big: PostgresStore, kind: str,
                                                                      limit: int) -> None:
    # "number 1999": row 1,999 and rows 19,990-19,999, these ten among the last RECENT_ROWS: the recent part gives
    # them, the older part the eleventh (planned freely: the keyword was alive lately)
    user = big.user("alice")
    layer = user.session("s1") if kind == "session" else user.daily(user.days()[0])
    ids, plans = _searched(big, layer, "number 1999", limit)
    assert ids == ([2000] + list(range(19991, 20001)))[-limit:]
    # the recent part; then the walk (nothing), a sample of the rows before the rest ("number" is in every one),
    # and the rest
    assert len(plans) == (1 if limit <= 10 else 4)


@pytest.mark.parametrize("kind", ["session", "daily"])
def test_a_phrase_with_a_word_in_most_rows_asks_the_index_for_its_rare_word(big: PostgresStore, kind: str) -> None:
    # "message number 1500": "message" and "number" are in every row, the phrase in ten (1,500 and 15,001-15,009;
    # 15,000 is a special row),
    # none of the last RECENT_ROWS + WALK_ROWS. Asked for the whole phrase, the trigram index read the postings of
    # "mes", "ess", "num", "umb" … — each as long as the layer — to find them; asked for "1500", only its own
    user = big.user("alice")
    layer = user.session("s1") if kind == "session" else user.daily(user.days()[0])
    with _recording(big) as statements:
        ids = [m.message_id for m in layer.search("Message Number 1500", limit=20)]
    assert ids == [1501] + list(range(15002, 15011))  # message ids: position + 1
    (rest_sql, rest_params), = [(sql, params) for sql, params in statements if "+ 0 <" in sql]
    assert rest_params["pattern"] == "%1500%", rest_params  # type: ignore[index]

    def index_pages(pattern: str) -> int:
        with psycopg.connect(big.db.pool.conninfo) as conn:
            asked = {**rest_params, "pattern": pattern}  # type: ignore[dict-item]
            (plan,) = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + rest_sql, asked,
                                   prepare=False).fetchone()
        return sum(int(node["Shared Hit Blocks"]) + int(node["Shared Read Blocks"])  # type: ignore[call-overload]
                   for node in _nodes(plan[0]["Plan"]) if node.get("Index Name") == "am_messages_search")

    # the same answer from far fewer index pages than the whole phrase would have read
    assert index_pages("%1500%") * 4 < index_pages("%message number 1500%")


def test_a_phrase_whose_rare_word_is_common_somewhere_in_the_older_rows_is_asked_whole(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The thread's topic changed: its last 300 rows say "kubernetes", the 900 before them "deployment", and three of
    # those both. Next to the recent rows "deployment" looks rare; over the older rows "kubernetes" is in a quarter.
    # Asked for either word alone, the index would give hundreds of candidates; asked for the phrase, it gives the
    # three (the review's case: 194,000 rows read instead of 3 in a 200k thread, when the sample was taken next to
    # the recent rows)
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.RECENT_ROWS", 16)
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.WALK_ROWS", 32)
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.OLDER_WINDOW", 64)
    upgrade_database(pg_url)
    store = MemoryStore(pg_url, zone="UTC")
    assert isinstance(store, PostgresStore)
    user = store.user("u")
    for i in range(1200):
        text = f"we talk about kubernetes here {i}" if i >= 900 else (
            f"kubernetes deployment notes of item {i}" if i in (100, 200, 300) else f"deployment notes of item {i}")
        user.append("s", "user", text, day="2026-04-08")
    for layer in (user.session("s"), user.daily("2026-04-08")):
        with _recording(store) as statements:
            assert [m.message_id for m in layer.search("kubernetes deployment", limit=20)] == [101, 201, 301]
        rest = [params for sql, params in statements if "+ 0 <" in sql]
        assert [params["pattern"] for params in rest] == ["%kubernetes deployment%"], rest  # type: ignore[index]
    store.close()


@pytest.mark.parametrize("keyword", ["number 18", "filler number", "message 7 number"])
def test_a_phrase_whose_words_are_not_common_enough_is_asked_whole(big: PostgresStore, monkeypatch: pytest.MonkeyPatch,
                                                                  keyword: str) -> None:
    # a word shorter than a trigram ("18", "7" with one word of three letters or more: nothing sampled), or every
    # word common ("filler number": the rarest is in every row too): the index is asked for the whole keyword
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.RECENT_ROWS", 4)
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.WALK_ROWS", 4)
    layer = big.user("alice").session("s1")
    with _recording(big) as statements:
        layer.search(keyword, limit=20)
    rest = [params for sql, params in statements if "+ 0 <" in sql]
    assert rest and all(params["pattern"] == f"%{keyword}%" for params in rest), rest  # type: ignore[index]


def _nodes(node: dict[str, object]) -> list[dict[str, object]]:
    """A plan node and every node under it."""
    found = [node]
    for child in node.get("Plans", []):  # type: ignore[union-attr]
        found += _nodes(child)  # type: ignore[arg-type]
    return found


@pytest.fixture(scope="module")
def upgraded() -> PostgresStore:
    """A day of 20,000 own rows, as a database of version 5 leaves them after the upgrade (each row its own folded
    text, no link), same contents as ``big``'s."""
    pg_url = shared_server().new_database()
    upgrade_database(pg_url)
    store = MemoryStore(pg_url, zone="Asia/Shanghai")
    assert isinstance(store, PostgresStore)
    store.user("alice").append("s1", "user", "filler message number 0")
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE am_messages SET folded = 'filler message number 0', copy_layer = NULL, "
                     "copy_position = NULL, source_layer = NULL, source_position = NULL")
        conn.execute("""
            WITH c AS (SELECT i, CASE WHEN i %% 5000 = 0 THEN %(special)s || ' ' || i ELSE 'filler message number '
                                 || i END AS content FROM generate_series(1, %(rows)s - 1) AS i)
            INSERT INTO am_messages (layer_id, position, message_id, record, folded)
            SELECT l.layer_id, i, i + 1, jsonb_build_object('ts', '2026-04-08T10:00:00.000000+08:00', 'role', 'user',
                   'content', content, 'tags', jsonb_build_array(l.kind), 'meta', '{"session_id": "s1"}'::jsonb),
                   lower(content)
            FROM am_layers l, c""", {"special": SPECIAL, "rows": ROWS})
        conn.execute("UPDATE am_layers SET rows = %(rows)s, next_id = %(rows)s + 1", {"rows": ROWS})
        conn.execute("ANALYZE am_messages")
    yield store
    store.close()


@pytest.mark.parametrize(("days", "walked"), [("big", "am_messages_copies"), ("upgraded", "am_messages_own")],
                         ids=["linked copies", "own rows"])
@pytest.mark.parametrize("limit", [1, 20])
def test_a_common_keyword_in_a_day_walks_a_btree_backwards_and_stops_a_rare_one_asks_the_trigram_index(
        request: pytest.FixtureRequest, days: str, walked: str, limit: int) -> None:
    store: PostgresStore = request.getfixturevalue(days)
    day = store.user("alice").daily(store.user("alice").days()[0])
    assert [m.message_id for m in day.search("filler", limit=limit)] == list(range(ROWS - limit + 1, ROWS + 1))
    assert [m.message_id for m in day.search("lyon", limit=limit)] == [5001, 10001, 15001][-limit:]

    # a keyword in every row: the day's btree walked backwards, `limit` rows read and no more, nothing sorted but
    # those (a sort of every hit, 20,000 here, was the cost cliff); the trigram index not asked; one statement
    _, (common,) = _searched(store, day, "filler", limit)
    walks = [node for node in common if node.get("Index Name") == walked]
    assert [node.get("Scan Direction") for node in walks] == ["Backward"], common
    assert walks[0]["Actual Rows"] == limit and not walks[0].get("Rows Removed by Filter"), walks
    assert all(node["Actual Rows"] <= limit for node in common if "Sort" in str(node["Node Type"])), common
    assert not any(node.get("Index Name") == "am_messages_search" for node in common), common
    # a keyword in 4 rows of 20,000: the last RECENT_ROWS rows walked, then the trigram index, not the whole day
    _, (recent, *older) = _searched(store, day, "lyon", limit)
    assert _rows_read(recent) <= RECENT_ROWS, recent
    rare = older[-1]  # after the walk of WALK_ROWS more (where "lyon" is not), the rest through the index
    assert any(node.get("Index Name") == "am_messages_search" for node in rare), rare
    assert not any(node.get("Index Name") == walked and node["Actual Rows"] for node in rare), rare
    assert all(node.get("Rows Removed by Filter", 0) < 100 for node in rare), rare


@pytest.mark.parametrize("days", ["big", "upgraded"], ids=["linked copies", "own rows"])
def test_a_common_keyword_across_days_reads_at_most_limit_rows_of_a_day(request: pytest.FixtureRequest,
                                                                        days: str) -> None:
    from agentmem_nb.store.postgres.layer import DAYS_SEARCH, like_pattern

    store: PostgresStore = request.getfixturevalue(days)
    user = store.user("alice")
    assert [m.message_id for m in user.search_daily("filler", limit=20)] == list(range(ROWS - 19, ROWS + 1))
    with psycopg.connect(store.db.pool.conninfo) as conn:
        (plan,) = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + DAYS_SEARCH,
                               {"user": "alice", "pattern": like_pattern("filler"), "limit": 20},
                               prepare=False).fetchone()
    # no step of the plan reads every hit of the day (20,000 here) to sort them: each gives `limit` rows at most
    executed = [node for node in _nodes(plan[0]["Plan"]) if node.get("Actual Loops")]
    assert all(node["Actual Rows"] <= 20 for node in executed), [(n["Node Type"], n["Actual Rows"]) for n in executed]


def test_what_is_appended_is_searchable_at_once(big: PostgresStore) -> None:
    user = big.user("alice")
    written = user.append("s1", "user", "Back from Marseille")
    assert [m.message_id for m in user.session("s1").search("marseille")] == [written.session.message_id]


@pytest.mark.parametrize("count", [2**63, 2**70])
def test_a_count_past_a_bigint_reads_every_row_as_the_file_backend_does(pg_url: str, tmp_path, count: int) -> None:
    # a row count is written into the statement (literal_limit); past PostgreSQL's bigint it failed ("bigint out of
    # range") where the files give every message
    upgrade_database(pg_url)
    stores = [MemoryStore(tmp_path / "memory", zone="UTC"), MemoryStore(pg_url, zone="UTC")]
    for store in stores:
        for i in range(3):
            store.user("u").append("s", "user", f"message {i}", day="2026-04-08")
    files, database = (store.user("u").session("s") for store in stores)
    assert [m.content for m in database.tail(count)] == [m.content for m in files.tail(count)] == \
           ["message 0", "message 1", "message 2"]
    assert [m.content for m in database.head(count)] == [m.content for m in files.head(count)]
    assert stores[1].user("u").log.tail(count) == []
    stores[1].close()  # type: ignore[attr-defined]


def test_a_window_is_an_index_lookup_by_thread_and_id(big: PostgresStore) -> None:
    layer = big.user("alice").session("s1")
    assert [m.message_id for m in layer.window(10001, 2, 2).messages] == [9999, 10000, 10001, 10002, 10003]
    assert [m.message_id for m in layer.window(3, 5, 1).messages] == [1, 2, 3, 4]
    assert layer.position_of(15001) == 15000
    plan = _plan(big, *layer.window_query(10001, 5, 5))
    # the anchor by (layer, message_id), then each side an ordered primary-key scan of a few rows: no sort, no scan
    assert "am_messages_by_id" in plan and '"Scan Direction": "Backward"' in plan and "am_messages_pkey" in plan, plan
    assert "Sort" not in plan and "Seq Scan" not in plan and "Bitmap" not in plan, plan


def test_statements_run_again_and_again_are_planned_once_not_on_every_run(big: PostgresStore) -> None:
    """A statement the store prepares is planned for its first five runs, then by a generic plan if that is no
    costlier. With its row counts as parameters (``LIMIT $n``) the generic plan never was, and the server planned the
    window, a day's search and the dialogue's tail on every run (0.3 ms of a window's 0.7 at 100k)."""
    fresh = MemoryStore(big.db.pool.conninfo, zone="Asia/Shanghai")  # its own pool: no statement prepared yet
    user = fresh.user("alice")
    day = user.daily("2026-04-08")
    with user.transaction():  # one connection for the block: its prepared statements are the ones counted
        for _ in range(20):
            user.session("s1").window(10001, 5, 5)
            day.search("filler", limit=20)
            user.log.tail(5)
        counts = fresh.db.fetch("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
    fresh.close()
    planned = {"window": "WITH a AS (SELECT layer_id, position FROM am_messages", "day search": "h.copy_layer",
               "dialogue tail": "FROM am_dialogue WHERE user_id = $1 ORDER BY entry_id DESC"}
    for name, marker in planned.items():
        (generic, custom), = [(g, c) for statement, g, c in counts if marker in statement]
        # run 20 times, prepared at the first run (the window) or the sixth (psycopg's threshold): five plans for
        # the runs' parameters, then the generic plan for every other run
        assert custom == 5 and generic >= 10, (name, generic, custom)


TRICKY = ["Straße", "STRASSE", "İstanbul", "ﬁle", "50% off", "snake_case", "back\\slash", "中文词语", "😀 smile",
          "Ǆ digraph", "ΣΊΣΥΦΟΣ", "a\u3000b"]


@pytest.mark.parametrize("keyword", ["strasse", "ß", "i̇stanbul", "fi", "%", "_", "\\", "%_", "文词", "😀", "ǆ",
                                     "σίσυφοσ", "\u3000b", "a"])
def test_search_answers_as_the_file_backend_does(pg_url: str, tmp_path, clock, keyword: str) -> None:
    upgrade_database(pg_url)
    stores = [MemoryStore(tmp_path / "memory", zone="UTC", clock=clock), MemoryStore(pg_url, zone="UTC", clock=clock)]
    for store in stores:
        for text in TRICKY:
            store.user("u").append("s1", "user", text)
    files, database = (store.user("u").session("s1") for store in stores)
    for limit in (1, 3, 20):
        assert [m.content for m in database.search(keyword, limit=limit)] == \
               [m.content for m in files.search(keyword, limit=limit)]


@pytest.mark.parametrize("keyword", ["tea", "TEA ", "", "找工作", "absent"])
@pytest.mark.parametrize("limit", [1, 4, 50])
def test_a_search_across_days_answers_as_the_file_backend_does(pg_url: str, tmp_path, keyword: str,
                                                               limit: int) -> None:
    upgrade_database(pg_url)
    stores = [MemoryStore(tmp_path / "memory", zone="UTC"), MemoryStore(pg_url, zone="UTC")]
    for store in stores:
        for day in ("2026-04-06", "2026-04-07", "2026-04-08"):
            for i in range(4):
                text = f"{day} #{i}: " + ("green tea" if i % 2 else "我在找工作")
                store.user("u").append(f"s{i % 2}", "user", text, day=day)
    files, database = (store.user("u") for store in stores)
    assert [(m.day, m.message_id, m.content) for m in database.search_daily(keyword, limit=limit)] == \
           [(m.day, m.message_id, m.content) for m in files.search_daily(keyword, limit=limit)]


def test_the_length_of_a_layer_counts_what_is_readable(store_url: str) -> None:
    store = MemoryStore(store_url, zone="UTC")
    layer = store.user("u").session("s1")
    for i in range(5):
        store.user("u").append("s1", "user", f"m{i}")
    assert len(layer) == 5
    with psycopg.connect(store_url) as conn:  # another program breaks one row and removes another
        conn.execute("UPDATE am_messages SET record = '[1]' WHERE position = 1 AND layer_id = "
                     "(SELECT layer_id FROM am_layers WHERE kind = 'session')")
        conn.execute("DELETE FROM am_messages WHERE position = 2 AND layer_id = "
                     "(SELECT layer_id FROM am_layers WHERE kind = 'session')")
    assert len(layer) == 3 == len([m for m in layer.tail(10)])


@pytest.fixture
def store_url(pg_url: str) -> str:
    upgrade_database(pg_url)
    return pg_url


@pytest.mark.parametrize("older_window", [64, 1000])
@pytest.mark.parametrize("keyword", ["tea", "找工作", "message", "message 12", "message 5", "absent", "message 120",
                                     "message 12 green", "tea message"])
def test_a_long_day_answers_as_the_file_backend_does_whether_its_last_rows_or_the_index_answer(
        pg_url: str, tmp_path, monkeypatch: pytest.MonkeyPatch, keyword: str, older_window: int) -> None:
    # 130 messages, of which the last 16 are searched first, then the 32 before them, then the rest (RECENT_ROWS and
    # WALK_ROWS made small; OLDER_WINDOW 64: the older rows are too many to plan freely; 1,000: they are not): a
    # keyword with `limit` hits among the last is answered there, one with fewer by the older parts too ("message
    # 12": rows 12 and 120-129; "message 5": rows 5 and 50-59; "message 120", whose index lookup leaves "message",
    # in every row, out: row 120); the answers must not differ from the files'
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.RECENT_ROWS", 16)
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.WALK_ROWS", 32)
    monkeypatch.setattr("agentmem_nb.store.postgres.layer.OLDER_WINDOW", older_window)
    upgrade_database(pg_url)
    stores = [MemoryStore(tmp_path / "memory", zone="UTC"), MemoryStore(pg_url, zone="UTC")]
    for store in stores:
        for i in range(130):
            text = f"message {i}" + (" green tea" if i % 7 == 0 else "") + (" 我在找工作" if i % 40 == 5 else "")
            store.user("u").append(f"s{i % 3}", "user", text, day="2026-04-08")
    files, database = (store.user("u") for store in stores)
    for limit in (1, 4, 20, 50):
        assert [(m.message_id, m.content) for m in database.daily("2026-04-08").search(keyword, limit=limit)] == \
               [(m.message_id, m.content) for m in files.daily("2026-04-08").search(keyword, limit=limit)]
        assert [(m.message_id, m.content) for m in database.search_daily(keyword, limit=limit)] == \
               [(m.message_id, m.content) for m in files.search_daily(keyword, limit=limit)]


def test_the_store_never_plans_parallel_workers(big: PostgresStore) -> None:
    # a parallel plan started workers for a search branch a one-time filter never ran (10 to 25 ms each time): a
    # full read of the table, with parallel plans made free, is still planned without a Gather on the store's
    # connections
    with big.db.reading("a test's plan") as conn:
        conn.execute("SET parallel_setup_cost = 0")
        conn.execute("SET parallel_tuple_cost = 0")
        conn.execute("SET min_parallel_table_scan_size = 0")
        plan = json.dumps(conn.execute("EXPLAIN (FORMAT JSON) SELECT count(*) FROM am_messages WHERE record::text "
                                       "LIKE '%lyon%'").fetchone()[0])
        conn.execute("RESET parallel_setup_cost")
        conn.execute("RESET parallel_tuple_cost")
        conn.execute("RESET min_parallel_table_scan_size")
    assert "Gather" not in plan, plan


@pytest.mark.parametrize("layer", ["session", "daily"])
def test_a_search_that_finds_something_is_one_statement_and_still_finds_another_programs_rows(
        store_url: str, layer: str) -> None:
    """The hits carry whether rows wait to be folded, so a search is one round trip when none wait (it was two: the
    check, then the search); a row another program writes (no folded text) is still found, by one more round."""
    store = MemoryStore(store_url, zone="UTC")
    assert isinstance(store, PostgresStore)
    for text in ("green tea", "coffee", "black tea"):
        store.user("u").append("s1", "user", text, ts=_dt.datetime(2026, 4, 8, 10, tzinfo=_dt.timezone.utc))
    searched = store.user("u").session("s1") if layer == "session" else store.user("u").daily("2026-04-08")
    with _recording(store) as statements:
        assert [m.content for m in searched.search("TEA")] == ["green tea", "black tea"]
        assert len(statements) == 1
        with psycopg.connect(store_url) as conn:  # another program adds a row: its text is not folded yet
            conn.execute("INSERT INTO am_messages (layer_id, message_id, record) SELECT layer_id, 9, "
                         "'{\"ts\": \"2026-04-08T11:00:00+00:00\", \"role\": \"user\", "
                         "\"content\": \"White Tea\"}'::jsonb "
                         "FROM am_layers WHERE kind = %s", (layer,))
        statements.clear()
        assert [m.content for m in searched.search("tea")] == ["green tea", "black tea", "White Tea"]
        assert len(statements) == 3  # the flagged search, the rows to fold, the search again
        statements.clear()
        assert [m.content for m in searched.search("tea")] == ["green tea", "black tea", "White Tea"]
        assert len(statements) == 1  # folded once, for good


def test_the_last_messages_across_days_fold_nothing_but_a_keyword_search_does(store_url: str) -> None:
    """An empty keyword asks for the last messages of every day: no folded text is read, so the rows another program
    wrote are left for the next keyword search to fold (it folded them first, a wasted read and write per day)."""
    store = MemoryStore(store_url, zone="UTC")
    assert isinstance(store, PostgresStore)
    store.user("u").append("s1", "user", "green tea", ts=_dt.datetime(2026, 4, 8, 10, tzinfo=_dt.timezone.utc))
    with psycopg.connect(store_url) as conn:  # another program adds a row to the day: its text is not folded yet
        conn.execute("INSERT INTO am_messages (layer_id, message_id, record) SELECT layer_id, 9, "
                     "'{\"ts\": \"2026-04-08T11:00:00+00:00\", \"role\": \"user\", \"content\": \"White Tea\"}'::jsonb "
                     "FROM am_layers WHERE kind = 'daily'")

    def unfolded() -> int:
        with psycopg.connect(store_url) as conn:
            (count,) = conn.execute("SELECT count(*) FROM am_messages WHERE folded IS NULL "
                                    "AND source_layer IS NULL").fetchone()
        return int(count)

    assert [m.content for m in store.user("u").search_daily("")] == ["green tea", "White Tea"]
    assert unfolded() == 1
    assert [m.content for m in store.user("u").search_daily("TEA")] == ["green tea", "White Tea"]
    assert unfolded() == 0


def test_a_search_across_days_that_finds_something_is_one_statement_and_still_finds_another_programs_rows(
        store_url: str) -> None:
    """As in one layer: the hits carry whether any day holds rows waiting to be folded, so a search across days is
    one round trip when none wait (it was two: the days with waiting rows, then the search)."""
    store = MemoryStore(store_url, zone="UTC")
    assert isinstance(store, PostgresStore)
    for day, text in ((7, "green tea"), (8, "coffee"), (9, "black tea")):
        store.user("u").append("s1", "user", text, ts=_dt.datetime(2026, 4, day, 10, tzinfo=_dt.timezone.utc))
    with _recording(store) as statements:

        def messages_statements() -> int:  # the messages' statements (the redactions' own check is another matter)
            return sum("am_messages" in sql for sql, _ in statements)

        assert [m.content for m in store.user("u").search_daily("TEA")] == ["green tea", "black tea"]
        assert messages_statements() == 1
        with psycopg.connect(store_url) as conn:  # another program adds a row to a day: its text is not folded yet
            conn.execute("INSERT INTO am_messages (layer_id, message_id, record) SELECT layer_id, 9, "
                         "'{\"ts\": \"2026-04-08T11:00:00+00:00\", \"role\": \"user\", "
                         "\"content\": \"White Tea\"}'::jsonb "
                         "FROM am_layers WHERE kind = 'daily' AND key = '2026-04-08'")
        statements.clear()
        found = store.user("u").search_daily("tea")
        assert [(m.day, m.content) for m in found] == [("2026-04-07", "green tea"), ("2026-04-08", "White Tea"),
                                                       ("2026-04-09", "black tea")]
        assert messages_statements() == 4  # the flagged search, the days with waiting rows, that day's rows, again
        statements.clear()
        assert [m.content for m in store.user("u").search_daily("tea")] == ["green tea", "White Tea", "black tea"]
        assert messages_statements() == 1  # folded once, for good
