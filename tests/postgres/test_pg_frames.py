"""The frames over PostgreSQL: the same columns, dtypes and values as over files for the same data (the rows come
from the store's ``scan()`` and ``read_records``, the one bulk reader of the contract), and a follower that sees a
second process's turn by reading that turn only."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pandas as pd
import psycopg
import pytest
from pg_server import PASSWORD

from agentmem_nb import MemoryStore, frames
from agentmem_nb.store.postgres import PostgresStore

FRAMES: dict[str, Callable[..., pd.DataFrame]] = {
    "session_messages": lambda mem: frames.session_messages(mem),
    "session_messages_meta": lambda mem: frames.session_messages(mem, "s1", meta=True),
    "session_messages_filtered": lambda mem: frames.session_messages(mem, role="user", keyword="LYON"),
    "daily_messages": lambda mem: frames.daily_messages(mem),
    "daily_one_day": lambda mem: frames.daily_messages(mem, "2026-04-09"),
    "tool_calls_log": lambda mem: frames.tool_calls(mem),
    "tool_calls_sessions": lambda mem: frames.tool_calls(mem, source="sessions"),
    "dialogue_log": lambda mem: frames.dialogue_log(mem),
    "conversations": lambda mem: frames.conversations(mem),
    "long_term": lambda mem: frames.long_term(mem),
    "long_term_history": lambda mem: frames.long_term_history(mem),
    "problems": lambda mem: frames.problems(mem),
}


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_a_frame_on_postgres_equals_the_same_frame_on_files(twin: tuple[MemoryStore, PostgresStore],
                                                            name: str) -> None:
    files, pg = twin
    on_files = FRAMES[name](files.user("alice"))
    on_pg = FRAMES[name](pg.user("alice"))
    assert list(on_pg.columns) == list(on_files.columns)
    assert on_pg.dtypes.to_dict() == on_files.dtypes.to_dict()
    pd.testing.assert_frame_equal(on_pg, on_files)
    assert len(on_files) or name == "problems"


_WRITER = """
import datetime as dt, sys
from agentmem_nb import MemoryStore
store = MemoryStore(sys.argv[1], zone="Asia/Shanghai")
from agentmem_nb.store import DialogueEntry
when = dt.datetime(2026, 4, 9, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=8)))
user = store.user("alice")
with user.transaction():
    user.append("s1", "user", "a turn from another process", ts=when)
    user.log.append(DialogueEntry(entry_id=0, ts=when, session_id="s1", user_message="a turn from another process",
                                  assistant_reply="", error="stopped"))
store.close()
"""


def test_a_follower_sees_another_process_turn_without_a_reload(twin: tuple[MemoryStore, PostgresStore]) -> None:
    _, pg = twin
    follower = frames.LayerFollower(pg.user("alice"))
    first = follower.sessions()
    days = follower.days()
    assert len(first) == 13 and len(days) == 13
    log = follower.log()
    assert list(log["entry_id"]) == [1, 2, 3, 4, 5, 6]
    read = follower.stats.records
    assert read == 26
    subprocess.run([sys.executable, "-c", _WRITER, pg.db.pool.conninfo], check=True)
    again = follower.sessions()
    assert len(again) == 14 and again["content"].iloc[-1] == "a turn from another process"
    assert follower.stats.records - read == 1  # the new message only, not the thread again
    assert len(follower.days()) == 14 and follower.stats.records - read == 2  # and its day copy
    pd.testing.assert_frame_equal(again, frames.session_messages(pg.user("alice")))
    assert len(follower.sessions()) == 14 and follower.stats.records - read == 2  # unchanged: nothing read
    log = follower.log()
    assert list(log["entry_id"]) == [1, 2, 3, 4, 5, 6, 7] and log["error"].iloc[-1] == "stopped"
    pd.testing.assert_frame_equal(log, frames.dialogue_log(pg.user("alice")))


def test_problems_on_postgres_name_the_layer(twin: tuple[MemoryStore, PostgresStore]) -> None:
    _, pg = twin
    with psycopg.connect(pg.db.pool.conninfo, autocommit=True) as conn:  # a row another program broke
        conn.execute("INSERT INTO am_messages (layer_id, message_id, record) SELECT layer_id, NULL, '\"x\"' "
                     "FROM am_layers WHERE kind = 'session' AND key = 's1'")
    found = frames.problems(pg.user("alice"))
    assert list(found["file"]) == ["sessions/s1"] and list(found["line"]) == [8]
    assert "<redacted>" in found["path"].iloc[0] and PASSWORD not in found["path"].iloc[0]
