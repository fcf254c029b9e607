"""An append's day copy is searched through its session row's trigram postings (schema version 6): one set of
postings per append, and every day search still answers as the file backend's. Rows changed or removed behind the
store cut the link, and the day row is searched by its own text from then on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.store.postgres import PostgresStore, upgrade_database
from agentmem_nb.store.postgres.records import fold

DAY = "2026-04-08"
ORIGINAL = "I moved to LYON, 我在找工作"


@pytest.fixture
def store(pg_url: str) -> PostgresStore:
    upgrade_database(pg_url)
    opened = MemoryStore(pg_url, zone="UTC")
    assert isinstance(opened, PostgresStore)
    yield opened
    opened.close()


def _rows(url: str, kind: str) -> list[tuple[Any, ...]]:
    """``(position, folded, copy, source)`` of every row of the user's layers of ``kind``."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT m.position, m.folded, (m.copy_layer, m.copy_position)::text, "
            "(m.source_layer, m.source_position)::text FROM am_messages m JOIN am_layers l USING (layer_id) "
            "WHERE l.kind = %s ORDER BY m.position", (kind,)).fetchall()


def _fill(store: PostgresStore, after: int) -> None:
    """``after`` messages without the keyword after the one looked for (a short day, or one where the keyword is
    rare and the trigram index answers)."""
    for i in range(after):
        store.user("u").append("s2", "assistant", f"filler {i}", day=DAY)


def test_an_append_indexes_the_session_row_and_links_its_day_copy(store: PostgresStore, pg_url: str) -> None:
    user = store.user("u")
    written = user.append("s1", "user", ORIGINAL, day=DAY)
    user.append("s1", "assistant", "noted", day=DAY)
    sessions, days = _rows(pg_url, "session"), _rows(pg_url, "daily")
    assert [row[1] for row in sessions] == [fold(ORIGINAL), "noted"]
    assert [row[1] for row in days] == [None, None]  # no text of their own: no postings, nothing to fold
    assert all(row[2] != "(,)" and row[3] == "(,)" for row in sessions)
    assert all(row[3] != "(,)" and row[2] == "(,)" for row in days)
    with psycopg.connect(pg_url) as conn:  # the rows the next search must fold: none (the partial index is empty)
        assert conn.execute("SELECT count(*) FROM am_messages WHERE folded IS NULL AND source_layer IS NULL"
                            ).fetchone() == (0,)
    day = user.daily(DAY)
    assert [m.message_id for m in day.search("lyon")] == [written.daily.message_id]
    assert [(m.day, m.message_id, m.tags) for m in user.search_daily("找工作")] == \
           [(DAY, written.daily.message_id, ("daily",))]


def _change_session_row(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE am_messages SET record = jsonb_set(record, '{content}', '\"changed in the session\"') "
                     "WHERE layer_id = (SELECT layer_id FROM am_layers WHERE kind = 'session' AND key = 's1') "
                     "AND position = 0")


def _delete_session_row(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM am_messages WHERE layer_id = (SELECT layer_id FROM am_layers WHERE kind = 'session'"
                     " AND key = 's1') AND position = 0")


def _change_day_row(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("UPDATE am_messages SET record = jsonb_set(record, '{content}', '\"edited in the day\"') "
                     "WHERE layer_id = (SELECT layer_id FROM am_layers WHERE kind = 'daily') AND position = 0")


def _delete_day_row(url: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM am_messages WHERE layer_id = (SELECT layer_id FROM am_layers WHERE kind = 'daily') "
                     "AND position = 0")


# (edit, what the session s1 then finds for "lyon", what the day finds for "lyon", for "edited")
EDITS: dict[str, tuple[Callable[[str], None], list[int], list[int], list[int]]] = {
    "session row changed": (_change_session_row, [], [1], []),
    "session row deleted": (_delete_session_row, [], [1], []),
    "day row changed": (_change_day_row, [1], [], [1]),
    "day row deleted": (_delete_day_row, [1], [], []),
}


@pytest.mark.parametrize("after", [3, 150], ids=["walked", "indexed"])
@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_behind_the_store_cuts_the_link_and_the_day_keeps_its_own_text(store: PostgresStore, pg_url: str,
                                                                               edit: str, after: int) -> None:
    change, in_session, in_day, edited = EDITS[edit]
    user = store.user("u")
    user.append("s1", "user", ORIGINAL, day=DAY)
    _fill(store, after)
    change(pg_url)
    assert [m.message_id for m in user.session("s1").search("lyon")] == in_session
    day = user.daily(DAY)
    assert [m.message_id for m in day.search("lyon")] == in_day
    assert [m.message_id for m in day.search("edited")] == edited
    assert [m.message_id for m in user.search_daily("LYON")] == in_day
    assert [m.message_id for m in day.search("changed in the session")] == []  # the session's new text is not the day's
    assert [m.message_id for m in day.search("filler")][-1:] == [after + 1]  # the other copies are still found
    with psycopg.connect(pg_url) as conn:  # no half link is left: every copy named by a session row names it back
        assert conn.execute(
            "SELECT count(*) FROM am_messages s LEFT JOIN am_messages d ON (d.layer_id, d.position, d.source_layer, "
            "d.source_position) = (s.copy_layer, s.copy_position, s.layer_id, s.position) "
            "WHERE s.copy_layer IS NOT NULL AND d.layer_id IS NULL").fetchone() == (0,)
        # a copy cut loose was folded by the search, as any row another program writes
        assert conn.execute("SELECT count(*) FROM am_messages WHERE folded IS NULL AND source_layer IS NULL"
                            ).fetchone() == (0,)


@pytest.mark.parametrize("after", [0, 150], ids=["walked", "indexed"])
def test_a_copy_removed_and_its_place_taken_again_is_not_found_by_its_old_session_row(store: PostgresStore,
                                                                                     pg_url: str, after: int) -> None:
    user = store.user("u")
    _fill(store, after)
    user.append("s1", "user", "alpha", day=DAY)
    with psycopg.connect(pg_url) as conn:  # the day's last row removed by hand: its place is handed out again
        conn.execute("DELETE FROM am_messages WHERE layer_id = (SELECT layer_id FROM am_layers WHERE kind = 'daily') "
                     "AND position = %s", (after,))
    beta = user.append("s3", "user", "beta", day=DAY)
    assert _rows(pg_url, "daily")[-1][0] == after  # the same place
    day = user.daily(DAY)
    assert [m.content for m in day.search("alpha")] == []
    assert [(m.message_id, m.content) for m in day.search("beta")] == [(beta.daily.message_id, "beta")]
    assert [m.content for m in user.session("s1").search("alpha")] == ["alpha"]


def test_rows_removed_together_with_their_copies_in_one_statement(store: PostgresStore, pg_url: str) -> None:
    user = store.user("u")
    for i in range(5):
        user.append("s1", "user", f"message {i}", day=DAY)
    with psycopg.connect(pg_url) as conn:  # both sides of every link in one statement, then a whole user
        conn.execute("DELETE FROM am_messages WHERE position >= 3")
        assert conn.execute("SELECT count(*) FROM am_messages").fetchone() == (6,)
    assert [m.content for m in user.daily(DAY).search("message")] == [f"message {i}" for i in range(3)]
    with psycopg.connect(pg_url) as conn:
        conn.execute("DELETE FROM am_users WHERE user_id = 'u'")
        assert conn.execute("SELECT count(*) FROM am_messages").fetchone() == (0,)


# A link re-pointed by hand (a script "fixing" links): one column of one side, nothing else changed.
REPOINTS = {
    "session row's copy_position": "UPDATE am_messages SET copy_position = 100 WHERE copy_position = 3",
    "session row's copy_layer": "UPDATE am_messages SET copy_layer = copy_layer + 1000 WHERE copy_position = 3",
    "day copy's source_position": "UPDATE am_messages SET source_position = 100 WHERE source_position = 3",
}


@pytest.mark.parametrize("repoint", list(REPOINTS))
def test_a_link_re_pointed_by_hand_is_cut_on_both_sides_and_every_copy_is_still_found(
        store: PostgresStore, pg_url: str, repoint: str) -> None:
    user = store.user("u")
    for i in range(5):
        user.append("s1", "user", f"tea {i}", day=DAY)  # positions 0..4 in the session and in the day
    for i in range(150):
        user.append("s2", "user", f"filler {i}", day=DAY)
    with psycopg.connect(pg_url) as conn:
        conn.execute(REPOINTS[repoint])
    day = user.daily(DAY)
    teas = [f"tea {i}" for i in range(5)]
    # the copy whose link was re-pointed is found by its own text, and takes its place among the last `limit`
    assert [m.content for m in day.search("tea")] == teas
    assert [m.content for m in day.search("tea", limit=2)] == teas[3:]
    assert [m.content for m in user.search_daily("tea", limit=2)] == teas[3:]
    assert [m.content for m in user.session("s1").search("tea")] == teas
    assert [m.content for m in day.search("filler 95")] == ["filler 95"]  # the row pointed at keeps its own text
    with psycopg.connect(pg_url) as conn:  # no half link is left, on either side
        assert conn.execute(
            "SELECT count(*) FROM am_messages s LEFT JOIN am_messages d ON (d.layer_id, d.position, d.source_layer, "
            "d.source_position) = (s.copy_layer, s.copy_position, s.layer_id, s.position) "
            "WHERE s.copy_layer IS NOT NULL AND d.layer_id IS NULL").fetchone() == (0,)
        assert conn.execute(
            "SELECT count(*) FROM am_messages d LEFT JOIN am_messages s ON (s.layer_id, s.position, s.copy_layer, "
            "s.copy_position) = (d.source_layer, d.source_position, d.layer_id, d.position) "
            "WHERE d.source_layer IS NOT NULL AND s.layer_id IS NULL").fetchone() == (0,)
