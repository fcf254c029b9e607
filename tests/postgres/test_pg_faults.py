"""Faults a server brings: a connection killed mid-turn (nothing half-written, a clear error) and a restart (the pool
survives it)."""

from __future__ import annotations

import psycopg
import pytest
from pg_server import PASSWORD, PgServer

from agentmem_nb import MemoryStore
from agentmem_nb.errors import StoreError
from agentmem_nb.store import DialogueEntry
from agentmem_nb.store.postgres import PostgresStore, upgrade_database


@pytest.fixture
def store(pg_url: str, clock) -> PostgresStore:
    upgrade_database(pg_url)
    opened = MemoryStore(pg_url, zone="Asia/Shanghai", clock=clock)
    assert isinstance(opened, PostgresStore)
    yield opened
    opened.close()


def _terminate_open_transactions(pg: PgServer, store: PostgresStore) -> int:
    """``pg_terminate_backend`` every connection of the store's database that is inside a transaction."""
    database = store.db.display.rsplit("/", 1)[1]
    with psycopg.connect(pg.url()) as admin:
        rows = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                             "AND state LIKE 'idle in transaction%%'", (database,)).fetchall()
    return len(rows)


def test_a_turn_killed_mid_way_leaves_nothing_half_written(pg: PgServer, store: PostgresStore) -> None:
    user = store.user("alice")
    user.append("s1", "user", "what tea do I like?")
    with pytest.raises(StoreError, match="nothing of an unfinished write was kept") as caught:
        with user.transaction():  # a turn's writes: the reply, its log line, the conversation's update
            reply = user.append("s1", "assistant", "green tea")
            user.log.append(DialogueEntry(entry_id=0, ts=store.clock(), session_id="s1",
                                          user_message="what tea do I like?", assistant_reply="green tea",
                                          assistant_message_id=reply.session.message_id))
            assert _terminate_open_transactions(pg, store) == 1  # the turn's own connection, mid-transaction
            user.conversations.touch("s1", title="tea")
    assert PASSWORD not in str(caught.value)
    # nothing of the turn is there: not the reply (session or day copy), not the log line, not the conversation
    fresh = MemoryStore(store.db.pool.conninfo, zone="Asia/Shanghai").user("alice")
    assert [m.content for m in fresh.session("s1").messages()] == ["what tea do I like?"]
    assert [m.content for m in fresh.daily(reply.daily.day).messages()] == ["what tea do I like?"]
    assert fresh.log.entries() == [] and fresh.conversations.get("s1") is None
    # the ids the killed turn took are given back: the next message is #2 in both layers
    again = user.append("s1", "assistant", "green tea")
    assert (again.session.message_id, again.daily.message_id) == (2, 2)
    assert [e.entry_id for e in [user.log.append(DialogueEntry(0, None, "s1", "q", "a"))]] == [1]


def test_an_error_inside_a_turn_rolls_all_of_it_back(store: PostgresStore) -> None:
    user = store.user("alice")
    with pytest.raises(ZeroDivisionError):
        with user.transaction():
            user.append("s1", "user", "one")
            user.long_term.add_note("likes tea")
            1 / 0  # noqa: B018 - any failure of the turn's own code
    assert user.session_ids() == [] and user.long_term.read() == "" and len(user.long_term.history()) == 0


def test_the_pool_survives_a_server_restart(pg: PgServer, store: PostgresStore) -> None:
    user = store.user("alice")
    user.append("s1", "user", "before the restart")
    pg.restart()  # every pooled connection is now dead
    assert user.append("s1", "user", "after the restart").session.message_id == 2
    assert [m.content for m in user.session("s1").search("restart")] == ["before the restart", "after the restart"]


def test_a_lock_timeout_is_reported_as_one_not_as_a_lost_connection(pg_url: str, store: PostgresStore) -> None:
    """A server setting (``lock_timeout``) that ends an append waiting for another turn's row lock: the error says
    so, and that nothing was kept — not that the connection was cut, which would send an operator to the network."""
    store.user("alice").append("s1", "user", "first")
    impatient = MemoryStore(pg_url + "?options=-c%20lock_timeout%3D50", zone="UTC")
    try:
        with psycopg.connect(pg_url) as holder:  # another turn of alice holds her day and thread rows
            holder.execute("SELECT 1 FROM am_layers WHERE user_id = 'alice' FOR UPDATE")
            with pytest.raises(StoreError) as caught:
                impatient.user("alice").append("s1", "user", "second")
        text = str(caught.value)
        assert "lock timeout" in text and "nothing of the write was kept" in text
        assert "connection to the server failed" not in text, text
    finally:
        impatient.close()  # type: ignore[attr-defined]
    assert [m.content for m in store.user("alice").session("s1").messages()] == ["first"]
