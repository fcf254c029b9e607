"""Many writers, real processes: ids per thread and per day are exactly 1, 2, 3… with no gap and no duplicate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.store.postgres import upgrade_database

WORKER = Path(__file__).with_name("pg_worker.py")


def _run_writers(url: str, processes: int, each: int) -> None:
    procs = [subprocess.Popen([sys.executable, str(WORKER), url, f"p{n}", str(each)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for n in range(processes)]
    try:
        for proc in procs:  # every writer connected before any starts
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
            assert proc.wait(timeout=300) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


@pytest.mark.slow
def test_eight_processes_times_500_appends_give_ids_1_to_4000_in_the_thread_and_the_day(pg_url: str) -> None:
    upgrade_database(pg_url)
    _run_writers(pg_url, processes=8, each=500)
    user = MemoryStore(pg_url, zone="UTC").user("u")
    session = user.session("s1").messages()
    daily = user.daily("2026-04-08").messages()
    assert [m.message_id for m in session] == list(range(1, 4001))
    assert [m.message_id for m in daily] == list(range(1, 4001))
    # every message exactly once, each writer's in its own order, and the day copy beside its session line
    assert sorted(m.content for m in session) == sorted(f"p{n}-{i}" for n in range(8) for i in range(500))
    for n in range(8):
        mine = [int(m.content.split("-")[1]) for m in session if m.content.startswith(f"p{n}-")]
        assert mine == list(range(500))
    assert [(m.message_id, m.content) for m in session] == [(m.message_id, m.content) for m in daily]
    with psycopg.connect(pg_url) as conn:
        positions = conn.execute("SELECT array_agg(position ORDER BY position) FROM am_messages GROUP BY layer_id"
                                 ).fetchall()
    assert [row[0] for row in positions] == [list(range(4000))] * 2


_HOLDER = """
import sys
from agentmem_nb import MemoryStore
from agentmem_nb.store import DialogueEntry
store = MemoryStore(sys.argv[1], zone="UTC")
user = store.user("holder")
with user.transaction():  # a whole turn's writes, its row locks held until the commit
    user.append("s1", "user", "written, not committed yet", day="2026-04-08")
    user.conversations.touch("s1")
    user.log.append(DialogueEntry(entry_id=0, ts=store.clock(), session_id="s1", user_message="q", assistant_reply="a"))
    print("holding", flush=True)
    sys.stdin.readline()
print("committed", flush=True)
"""


def test_a_writer_of_another_user_never_waits_for_an_open_turn(pg_url: str) -> None:
    """Writers of different users share no row (no global counter, no shared layer row): while one process holds
    a turn's transaction open, another user's appends, log entries and conversation updates (same session id, same
    day) go through. ``lock_timeout`` turns any wait for a lock the holder has into an error instead of a hang."""
    upgrade_database(pg_url)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, pg_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        done = subprocess.run(
            [sys.executable, "-c",
             "import sys, datetime as dt\n"
             "from agentmem_nb import MemoryStore\n"
             "from agentmem_nb.store import DialogueEntry\n"
             "store = MemoryStore(sys.argv[1] + '?options=-c%20lock_timeout%3D2000', zone='UTC')\n"
             "for name in ('other', 'holder2'):\n"
             "    user = store.user(name)\n"
             "    with user.transaction():\n"
             "        user.append('s1', 'user', 'hello', day='2026-04-08')\n"
             "        user.conversations.touch('s1')\n"
             "        user.log.append(DialogueEntry(entry_id=0, ts=store.clock(), session_id='s1', user_message='q',"
             " assistant_reply='a'))\n"
             "print('through')\n", pg_url],
            capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0 and done.stdout.strip() == "through", done.stderr[-2000:]
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "committed"
        assert holder.wait(timeout=300) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
    user = MemoryStore(pg_url, zone="UTC").user("holder")
    assert [m.message_id for m in user.daily("2026-04-08").messages()] == [1]  # the holder's turn committed
