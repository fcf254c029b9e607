"""The PostgreSQL backend as a whole: the entry, the schema's migrations, secrets, JSONB, what only a database has."""

from __future__ import annotations

import contextlib
import datetime as _dt
import logging
import subprocess
import sys

import psycopg
import pytest
from legacy import legacy_append
from pg_server import PASSWORD, PgServer

from agentmem_nb import MemoryStore
from agentmem_nb.cli import main
from agentmem_nb.errors import StoreError
from agentmem_nb.messages import ToolCall
from agentmem_nb.store import DialogueEntry
from agentmem_nb.store.postgres import LATEST, PostgresStore, upgrade_database

SHANGHAI = _dt.timezone(_dt.timedelta(hours=8))


@pytest.fixture
def store(pg_url: str, clock) -> PostgresStore:
    upgrade_database(pg_url)
    opened = MemoryStore(pg_url, zone="Asia/Shanghai", clock=clock)
    assert isinstance(opened, PostgresStore)
    yield opened
    opened.close()


def test_a_url_opens_the_database_backend_and_its_repr_hides_the_password(store: PostgresStore) -> None:
    assert PASSWORD not in repr(store) and PASSWORD not in repr(store.user("alice"))
    assert "127.0.0.1" in repr(store)
    store.user("alice").append("s1", "user", "hello")
    assert store.users() == ["alice"]


def test_an_unmigrated_database_is_refused_with_the_command_that_fixes_it(pg_url: str) -> None:
    with pytest.raises(StoreError, match="agentmem-nb db upgrade") as caught:
        MemoryStore(pg_url)
    assert PASSWORD not in str(caught.value)
    with PostgresStore(pg_url, upgrade=True) as store:  # or on open, when asked
        store.user("a").append("s", "user", "x")
    assert upgrade_database(pg_url) == []  # idempotent: nothing left to apply


def test_db_upgrade_command_applies_the_migrations_once(pg_url: str, capsys) -> None:
    assert main(["db", "upgrade", pg_url]) == 0
    first = capsys.readouterr().out
    assert f"now at version {LATEST}" in first and PASSWORD not in first
    assert main(["db", "upgrade", pg_url]) == 0
    assert "nothing to do" in capsys.readouterr().out
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT max(version) FROM am_schema").fetchone() == (LATEST,)


def test_concurrent_upgrades_apply_each_migration_once(pg_url: str) -> None:
    code = "import sys; from agentmem_nb.store.postgres import upgrade_database; upgrade_database(sys.argv[1])"
    procs = [subprocess.Popen([sys.executable, "-c", code, pg_url]) for _ in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM am_schema").fetchone() == (LATEST,)


def test_a_wrong_password_fails_clearly_without_showing_any_password(pg: PgServer, pg_url: str,
                                                                      caplog) -> None:
    upgrade_database(pg_url)
    wrong = pg_url.replace(PASSWORD, "Wr0ng-pa55word-77")
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StoreError, match="cannot connect") as caught:
        MemoryStore(wrong)
    text = str(caught.value) + repr(caught.value) + caplog.text
    assert "password authentication failed" in text
    assert "Wr0ng-pa55word-77" not in text and PASSWORD not in text


def test_a_lost_server_is_a_store_error_without_the_password(pg: PgServer, store: PostgresStore, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    store.user("alice").append("s1", "user", "before")
    with psycopg.connect(pg.url()) as admin:  # every connection of the store's database is cut
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                      "AND pid <> pg_backend_pid()", (store.db.display.rsplit("/", 1)[1],))
    # the pool replaces the dead connection: the next call works
    assert [m.content for m in store.user("alice").session("s1").messages()] == ["before"]
    assert PASSWORD not in caplog.text


@pytest.mark.parametrize("content", ["nul \x00 inside", "lone \ud800 surrogate", "emoji 😀 and 中文"])
def test_text_jsonb_cannot_hold_round_trips_exactly_and_is_found(store: PostgresStore, content: str) -> None:
    user = store.user("alice")
    user.append("s1", "user", "unrelated")
    written = user.append("s1", "user", content)
    back = user.session("s1").get(written.session.message_id)
    assert back is not None and back.content == content
    assert [m.content for m in user.session("s1").search(content.split()[1])] == [content]
    assert [m.content for m in user.daily(written.daily.day).search(content.split()[1])] == [content]


def test_the_dialogue_log_is_jsonb_the_database_can_query(store: PostgresStore, pg_url: str) -> None:
    log = store.user("alice").log
    call = ToolCall("search_session", {"keyword": "tea"}, "#1 ...", id="c1")
    log.append(DialogueEntry(entry_id=0, ts=store.clock(), session_id="s1", user_message="what tea?",
                             assistant_reply="green", tool_calls=(call,), timings_ms={"total": 3.5}))
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT record->>'user_message', record->'tool_calls'->0->'input'->>'keyword', "
                           "jsonb_typeof(record) FROM am_dialogue WHERE user_id = 'alice'").fetchone()
    assert row == ("what tea?", "tea", "object")


def test_long_term_history_matches_the_file_backend_version_for_version(store: PostgresStore, tmp_path,
                                                                         clock) -> None:
    files = MemoryStore(tmp_path / "memory", zone="Asia/Shanghai", clock=clock).user("alice").long_term
    database = store.user("alice").long_term
    for memory in (files, database):  # many small changes: deltas with a checkpoint now and then
        memory.write("# Alice\n" + "background line\n" * 20)
        for i in range(40):
            memory.add_note(f"note number {i}")
            if i % 7 == 0:
                memory.edit(lambda text, i=i: text.replace(f"note number {i}", f"note #{i} (edited)"))
        memory.restore(3)
    assert len(database.history()) == len(files.history()) > 40
    assert [(v.version, v.source, v.before, v.after) for v in database.history()] == \
           [(v.version, v.source, v.before, v.after) for v in files.history()]
    assert database.read() == files.read() and database.text_at(17) == files.text_at(17)
    with psycopg.connect(store.db.pool.conninfo) as conn:
        checkpoints = conn.execute("SELECT count(*) FILTER (WHERE checkpoint), count(*) FROM am_longterm_history"
                                   ).fetchone()
    assert checkpoints is not None and 1 < checkpoints[0] < checkpoints[1] / 2  # mostly deltas


def test_problems_name_rows_another_program_broke(store: PostgresStore, pg_url: str) -> None:
    user = store.user("alice")
    user.append("s1", "user", "kept")
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO am_messages (layer_id, message_id, record) SELECT layer_id, NULL, '[1, 2]' "
                     "FROM am_layers WHERE kind = 'session'")
    found = user.problems()
    assert [(p.kind.value, p.line) for p in found] == [("not_an_object", 2)]
    assert "sessions/s1" in found[0].path and PASSWORD not in found[0].path


def test_importing_the_store_does_not_import_the_database_client() -> None:
    code = "import sys, agentmem_nb.store; print(any(m.startswith('psycopg') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_message_with_a_nul_or_a_lone_surrogate_names_its_conversation(store: PostgresStore) -> None:
    from agentmem_nb.agent import ChatService
    from agentmem_nb.agent.offline import OfflineChatModel

    service = ChatService(store, model=OfflineChatModel())  # type: ignore[arg-type]  # the contract, not the class
    result = service.turn("alice", "s1", "nul \x00 and \ud800 here")
    assert result.error is None and result.title == "nul \ufffd and \ufffd here"
    user = store.user("alice")
    assert user.session("s1").messages()[0].content == "nul \x00 and \ud800 here"  # the message itself is exact
    assert user.conversations.get("s1").title == "nul \ufffd and \ufffd here"  # type: ignore[union-attr]


def test_a_password_in_the_query_string_is_hidden_too(pg_url: str) -> None:
    upgrade_database(pg_url)
    in_query = pg_url.replace(f":{PASSWORD}@", "@") + f"?password={PASSWORD}"
    store = MemoryStore(in_query, fact_policy="review", durability="fsync")  # durability: the server decides
    assert isinstance(store, PostgresStore) and store.fact_policy == "review"
    user = store.user("alice")
    user.append("s1", "user", "hello")
    shown = [repr(store), repr(user), user.session("s1").where, store.db.display]
    assert all(PASSWORD not in text for text in shown), shown
    assert [m.content for m in user.session("s1").messages()] == ["hello"]  # the URL still connects


def _wal_bytes_per_append(url: str, user: str, count: int, *, legacy: bool = False) -> float:
    """WAL bytes per append of ``count`` messages to a thread: by the store, or (``legacy``) by the statement an
    agentmem_nb of schema versions 1–5 ran (today's append needs today's schema)."""
    with MemoryStore(url, zone="UTC") if not legacy else contextlib.nullcontext() as store, \
            psycopg.connect(url, autocommit=True) as conn:
        def append(text: str) -> None:
            if store is None:
                legacy_append(conn, user, "s1", "2026-04-08", text)
            else:
                store.user(user).append("s1", "user", text)
        append("the first append creates the layer rows")
        start = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        for i in range(count):
            append(f"message {i} about topic {i % 97}: the quick brown fox and filler words")
        delta = conn.execute("SELECT pg_current_wal_insert_lsn() - %s::pg_lsn", start).fetchone()
    assert delta is not None
    return float(delta[0]) / count


def _at_version(monkeypatch: pytest.MonkeyPatch, version: int) -> None:
    """Make this agentmem_nb one of schema ``version`` (its migrations and what it expects) until ``undo``."""
    from agentmem_nb.store.postgres import migrations, store as store_module

    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:version])
    monkeypatch.setattr(store_module, "LATEST", version)


def _left_by_version(pg_url: str, monkeypatch: pytest.MonkeyPatch, version: int,
                     messages: list[tuple[str, str]]) -> None:
    """A database as an agentmem_nb of schema ``version`` left it: its migrations applied, then ``messages``
    ((session, text), all on 2026-04-08) appended by that version's statement; this agentmem_nb's schema after."""
    _at_version(monkeypatch, version)
    upgrade_database(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for session, text in messages:
            legacy_append(conn, "alice", session, "2026-04-08", text)
    monkeypatch.undo()


def test_a_0001_database_with_messages_is_upgraded_and_appends_write_their_trigrams_in_one_record(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a database at version 1, with messages, as an agentmem_nb of that version left it
    _at_version(monkeypatch, 1)
    upgrade_database(pg_url)
    before = _wal_bytes_per_append(pg_url, "alice", 40, legacy=True)
    monkeypatch.undo()

    applied = upgrade_database(pg_url)
    assert 2 in applied
    with psycopg.connect(pg_url) as conn:
        options = conn.execute("SELECT reloptions FROM pg_class WHERE relname = 'am_messages_search'").fetchone()
    assert options is not None and "fastupdate=on" in options[0], options
    with MemoryStore(pg_url, zone="UTC") as store:  # the old rows are still there, found, and ids go on
        layer = store.user("alice").session("s1")
        assert len(layer) == 41 and [m.message_id for m in layer.search("message 39 ")] == [41]
        assert store.user("alice").append("s1", "user", "after the upgrade").session.message_id == 42
    after = _wal_bytes_per_append(pg_url, "bob", 40)
    # version 1 wrote each trigram posting into the tree one by one (~80 WAL records a message, twice); the pending
    # list takes a message's postings in one record (merged in batches when it fills)
    assert after < before / 2, (before, after)


def test_a_version_5_database_keeps_its_day_rows_and_new_appends_link_their_day_copy(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _left_by_version(pg_url, monkeypatch, 5,
                     [(f"s{i % 2}", f"old {i}: " + ("green tea" if i % 3 else "找工作")) for i in range(6)])

    assert upgrade_database(pg_url) == [6, 7]
    with MemoryStore(pg_url, zone="UTC") as store:
        user = store.user("alice")
        for i in range(4):
            user.append(f"s{i % 2}", "user", f"new {i}: " + ("GREEN TEA" if i % 2 else "我在找工作"),
                        day="2026-04-08")
        day = user.daily("2026-04-08")
        assert len(day) == 10 and [m.message_id for m in day.messages()] == list(range(1, 11))
        assert [m.content for m in day.search("green tea")] == \
               ["old 1: green tea", "old 2: green tea", "old 4: green tea", "old 5: green tea", "new 1: GREEN TEA",
                "new 3: GREEN TEA"]
        assert [(m.day, m.message_id) for m in user.search_daily("找工作", limit=3)] == \
               [("2026-04-08", 4), ("2026-04-08", 7), ("2026-04-08", 9)]
        assert [m.message_id for m in user.session("s0").search("找工作")] == [1, 4, 5]
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT m.position, m.folded IS NOT NULL, m.source_layer IS NOT NULL FROM am_messages m "
            "JOIN am_layers l USING (layer_id) WHERE l.kind = 'daily' ORDER BY m.position").fetchall()
        linked_sessions = conn.execute("SELECT count(*) FROM am_messages WHERE copy_layer IS NOT NULL").fetchone()
    # the old day rows are own rows (folded, indexed under their day); the new ones are copies without a text
    assert rows == [(p, True, False) for p in range(6)] + [(p, False, True) for p in range(6, 10)]
    assert linked_sessions == (4,)


def test_an_append_indexes_its_text_once_not_once_per_copy(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def measure(count: int, *, legacy: bool) -> tuple[float, float]:
        """(all WAL, the trigram index's WAL) bytes per append, pending list merged at both ends."""
        with MemoryStore(pg_url, zone="UTC") if not legacy else contextlib.nullcontext() as store, \
                psycopg.connect(pg_url, autocommit=True) as conn:
            def append(text: str) -> None:
                if store is None:
                    legacy_append(conn, "alice", "s1", "2026-04-08", text)
                else:
                    store.user("bob").append("s1", "user", text, day="2026-04-08")
            append("the first append creates the layer rows")
            conn.execute("SELECT gin_clean_pending_list('am_messages_search')")
            (start,) = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()  # type: ignore[misc]
            for i in range(count):
                append(f"message {i} about topic {i % 97}: the quick brown fox jumps over the lazy dog, again")
            conn.execute("SELECT gin_clean_pending_list('am_messages_search')")
            (end,) = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()  # type: ignore[misc]
            conn.execute("SELECT pg_switch_wal()")  # pg_get_wal_records_info reads only WAL already written out
            # WAL is the whole cluster's, and the tests' server is shared (other databases, their background
            # threads, autovacuum): only the records that touch this database's blocks are counted
            (database,) = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()"
                                       ).fetchone()  # type: ignore[misc]
            stats = dict(conn.execute(
                "SELECT resource_manager, sum(record_length) FROM pg_get_wal_records_info(%s, %s) "
                "WHERE block_ref LIKE %s GROUP BY resource_manager", (start, end, f"%/{database}/%")).fetchall())
        return float(sum(stats.values())) / count, float(stats.get("Gin", 0)) / count

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")  # PostgreSQL 15+, in Debian's server package
    _at_version(monkeypatch, 5)
    upgrade_database(pg_url)
    v5_total, v5_gin = measure(150, legacy=True)  # two rows, each with its own ~90 trigram postings
    monkeypatch.undo()
    upgrade_database(pg_url)
    v6_total, v6_gin = measure(150, legacy=False)
    # one set of postings: the session row's, which the day search also uses (measured: 3,020 -> 1,727 bytes)
    assert v6_gin < 0.65 * v5_gin, (v5_gin, v6_gin)
    assert v6_total < 0.8 * v5_total, (v5_total, v6_total)  # two rows and their btrees are still written
    assert v5_gin > 0 and v6_gin > 0  # the filter kept this database's records (an empty sum would pass anything)


def test_the_upgrade_builds_the_day_search_indexes_while_readers_keep_reading(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # version 6 adds columns (the strongest lock until its file commits); the indexes are built by version 7 under
    # a SHARE lock, which readers pass. Caught in the act: a reader's open transaction lets the build through but
    # holds back the DROP of the old index at its end, so the upgrade is seen waiting there with what it holds.
    import threading

    _left_by_version(pg_url, monkeypatch, 6, [("s1", f"old {i}") for i in range(20)])
    done: list[object] = []
    with psycopg.connect(pg_url) as reader, psycopg.connect(pg_url, autocommit=True) as watcher:
        assert reader.execute("SELECT count(*) FROM am_messages").fetchone() == (40,)  # its transaction stays open
        upgrading = threading.Thread(target=lambda: done.append(upgrade_database(pg_url)))
        upgrading.start()
        held: list[tuple[str, bool]] = []
        while upgrading.is_alive() and not any(not granted for _, granted in held):
            held = watcher.execute(
                "SELECT l.mode, l.granted FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                "WHERE l.relation = 'am_messages'::regclass AND l.pid <> pg_backend_pid() AND a.backend_type = "
                "'client backend' AND l.pid <> %s", (reader.info.backend_pid,)).fetchall()
        assert ("ShareLock", True) in held and ("AccessExclusiveLock", False) in held, (held, done)
        assert reader.execute("SELECT count(*) FROM am_messages WHERE position < 5").fetchone() == (10,)  # reading
        reader.commit()
        upgrading.join()
    assert done == [[7]]
    with psycopg.connect(pg_url) as conn:
        names = {name for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'am_messages'")}
    assert {"am_messages_search", "am_messages_unfolded", "am_messages_copies", "am_messages_own"} <= names, names
    assert not any(name.endswith("_7") for name in names), names


def test_an_upgrade_leaves_the_planner_statistics_of_the_new_columns(pg_url: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The upgrade analyses the table it changed: without statistics for the link columns, the planner guessed
    and an upgraded day's search walked every old row (autovacuum analyses only after a tenth of the table changed)."""
    _left_by_version(pg_url, monkeypatch, 5, [("s1", f"old {i}") for i in range(20)])
    assert upgrade_database(pg_url) == [6, 7]
    with psycopg.connect(pg_url) as conn:
        analysed = {name for (name,) in conn.execute(
            "SELECT attname FROM pg_stats WHERE tablename = 'am_messages' AND attname IN ('copy_layer', "
            "'source_layer', 'folded')").fetchall()}
    assert analysed == {"copy_layer", "source_layer", "folded"}
    assert upgrade_database(pg_url) == []  # up to date: nothing applied, nothing analysed again
