"""Facts in PostgreSQL: the events in ``am_fact_events`` (one row each), the facts queue in ``am_fact_queue``.

The rules are not here: :class:`~agentmem_nb.store.facts.FactsLayer` decides, folds and reads for both backends; this
module only keeps its events (:class:`PostgresEventLog`, a :class:`~agentmem_nb.store.facts.FactEventLog`):

* **The writers' lock is the user's ``am_fact_logs`` row.** :meth:`PostgresEventLog.writing` opens a transaction (or
  joins the thread's) and locks that row (``FOR UPDATE``); the layer then reads what is new, decides and appends
  inside it, so two processes on two hosts never decide on the same view, and the decision commits with its event.
* **Ids and positions** come from the same row (``next_event``, ``rows``), moved by the statement that inserts the
  event: 1, 2, 3… per user with no gap, as ``facts.jsonl`` numbers its lines. A migrated file keeps its ids.
* **A replay records nothing twice.** The layer skips an assertion whose ``event_key`` (source message + content) is
  known; the unique index on ``(user_id, event_key)`` makes that a guarantee of the database too.
* **The cursor rule.** :meth:`PostgresEventLog.scan` answers as ``facts.jsonl``'s scan does: the cursor holds the
  generation (bumped by a trigger when a row is changed or removed behind the store) and the row count, so a reader
  folds only new events, and everything again after an edit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentmem_nb.store.postgres.records import from_columns, to_columns
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.store.scan import Change, Cursor, Scan

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["PostgresEventLog", "PostgresFactQueue", "key_column"]


def key_column(key: object) -> str | None:
    """The ``event_key`` column of an event: its key as text the server takes. A key holding a NUL or a lone
    surrogate (a value that came from such a message) is kept as its ASCII JSON form instead — still one per key, so
    the unique index holds — as :mod:`~agentmem_nb.store.postgres.records` keeps such a record in ``raw``."""
    if not isinstance(key, str):
        return None
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(key)
    return json.dumps(key) if "\x00" in key else key

_APPEND = """
WITH l AS (UPDATE am_fact_logs SET next_event = next_event + 1, rows = rows + 1 WHERE user_id = %(user)s
           RETURNING next_event - 1 AS event_id, rows - 1 AS position)
INSERT INTO am_fact_events (user_id, position, event_id, record, raw, event_key)
SELECT %(user)s, position, event_id, %(record)s::jsonb, %(raw)s, %(key)s FROM l RETURNING event_id
"""


class PostgresEventLog:
    """The fact events of one user (``user.facts.log`` on the PostgreSQL backend)."""

    def __init__(self, user: PostgresUser) -> None:
        self._user = user
        self._db = user.store.db
        self.path = f"{self._db.display}#{user.user_id}/facts.jsonl"

    def __repr__(self) -> str:
        return f"PostgresEventLog(user={self._user.user_id!r})"

    def scan(self, since: Cursor | None = None) -> Scan:
        """What changed since ``since`` (the store's cursor rule; see the module docstring).

        The cursor's ``tail`` is the transaction id (``xmin``) that wrote the last event it covers: a reader that
        folded an event whose transaction was then rolled back (a ``user.transaction()`` that failed after the
        facts were recorded, a failed commit) and meets another writer's event at that position — same count, same
        generation — sees a different writer there and folds everything again, instead of keeping an event that
        was never kept and deciding the next write on it."""
        since = since or Cursor()
        rows = self._db.fetch(
            "SELECT l.generation, l.rows, "
            "(SELECT e.xmin::text FROM am_fact_events e WHERE e.user_id = l.user_id AND e.position = %(seen)s), "
            "(SELECT e.xmin::text FROM am_fact_events e WHERE e.user_id = l.user_id AND e.position = l.rows - 1) "
            "FROM am_fact_logs l WHERE l.user_id = %(user)s",
            {"user": self._user.user_id, "seen": since.end - 1})
        if not rows:
            return Scan("unchanged" if since.end == 0 else "truncated", 0, 0, Cursor())
        generation, count = int(rows[0][0]), int(rows[0][1])
        seen_writer, last_writer = (str(w or "").encode() for w in rows[0][2:])
        cursor = Cursor(file=(0, generation), end=count, tail=last_writer)
        if since.end == 0:
            return Scan("appended" if count else "unchanged", 0, count, cursor)
        if since.file != cursor.file or count < since.end or seen_writer != since.tail:
            change: Change = "truncated" if count < since.end else "rewritten"
            return Scan(change, 0, count, cursor)
        return Scan("unchanged" if count == since.end else "appended", since.end, count, cursor)

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        """``(event id, record)`` of the readable events at positions ``start <= i < stop``."""
        out = []
        for event_id, record, raw in self._db.fetch(
                "SELECT event_id, record, raw FROM am_fact_events WHERE user_id = %s AND position >= %s AND "
                "position < %s ORDER BY position", (self._user.user_id, max(0, int(start)), int(stop))):
            value = from_columns(record, raw)
            if isinstance(value, dict):
                out.append((int(event_id), {**value, "message_id": int(event_id)}))
        return out

    @contextmanager
    def writing(self) -> Iterator[None]:
        """A transaction holding the user's ``am_fact_logs`` row lock (created with the user's row if missing)."""
        user_id = self._user.user_id
        with self._db.transaction(f"record facts of {user_id!r}") as conn:
            conn.execute("INSERT INTO am_users (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user_id,))
            conn.execute("INSERT INTO am_fact_logs (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user_id,))
            conn.execute("SELECT 1 FROM am_fact_logs WHERE user_id = %s FOR UPDATE", (user_id,))
            yield

    def append(self, record: dict[str, Any]) -> int:
        """Insert one event with the next id (inside :meth:`writing`); returns the id."""
        kept = {key: value for key, value in record.items() if key != "message_id"}
        jsonb, raw = to_columns(kept)
        (row,) = self._db.write(_APPEND, {"user": self._user.user_id, "record": jsonb, "raw": raw,
                                          "key": key_column(kept.get("event_key"))},
                                doing=f"record a fact event of {self._user.user_id!r}")
        return int(row[0])

    def problems(self) -> list[Problem]:
        """Events that are not JSON objects (written by another program)."""
        rows = self._db.fetch("SELECT position FROM am_fact_events WHERE user_id = %s AND raw IS NULL AND "
                              "jsonb_typeof(record) <> 'object' ORDER BY position", (self._user.user_id,))
        return [Problem(self.path, ProblemKind.NOT_AN_OBJECT, int(position) + 1, "the event is not a JSON object; "
                        "skipped (fix or delete the row)") for (position,) in rows]


class PostgresFactQueue:
    """The facts queue of one user (``user.fact_queue``; the contract's ``RecordQueue``): one row per line."""

    def __init__(self, user: PostgresUser) -> None:
        self._user = user
        self._db = user.store.db

    def __repr__(self) -> str:
        return f"PostgresFactQueue(user={self._user.user_id!r})"

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Keep ``record`` (committed before this returns, unless inside the thread's open transaction)."""
        jsonb, raw = to_columns(record)
        (row,) = self._db.write(
            "WITH u AS (INSERT INTO am_users (user_id) VALUES (%(user)s) ON CONFLICT DO NOTHING) "
            "INSERT INTO am_fact_queue (user_id, record, raw) VALUES (%(user)s, %(record)s::jsonb, %(raw)s) "
            "RETURNING entry_id", {"user": self._user.user_id, "record": jsonb, "raw": raw},
            doing=f"queue a message of {self._user.user_id!r} for fact extraction")
        return {**record, "message_id": int(row[0])}

    def iter_records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every readable line, oldest first."""
        for entry_id, record, raw in self._db.fetch("SELECT entry_id, record, raw FROM am_fact_queue WHERE "
                                                    "user_id = %s ORDER BY entry_id", (self._user.user_id,)):
            value = from_columns(record, raw)
            if isinstance(value, dict):
                yield int(entry_id), value
