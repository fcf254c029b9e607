"""Redaction events in PostgreSQL (``am_redactions``): the rule of :mod:`agentmem_nb.store.redactions`, with the
events in a table instead of ``redactions.jsonl``.

The next ``redaction_id`` comes from the user's row (``am_users.next_redaction_id``), upserted in the same statement
that inserts the event (as the dialogue log's ids): 1, 2, 3… per user, no gap, whatever the writers. Inside
``with user.transaction():`` an event commits with the turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agentmem_nb.store.postgres.records import from_columns, to_columns
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.store.redactions import Redactions

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["PostgresRedactions"]

_APPEND = """
WITH u AS (INSERT INTO am_users (user_id, next_redaction_id) VALUES (%(user)s, 2)
           ON CONFLICT (user_id) DO UPDATE SET next_redaction_id = am_users.next_redaction_id + 1
           RETURNING next_redaction_id - 1 AS redaction_id)
INSERT INTO am_redactions (user_id, redaction_id, record, raw)
SELECT %(user)s, redaction_id, %(record)s::jsonb, %(raw)s FROM u RETURNING redaction_id
"""


class PostgresRedactions(Redactions):
    """The redaction events of one user in PostgreSQL."""

    def __init__(self, user: PostgresUser) -> None:
        super().__init__(clock=user.store.clock, zone=user.store.zone)
        self._user = user
        self._db = user.store.db
        self.where = f"{self._db.display}#{user.user_id}/redactions.jsonl"

    def __repr__(self) -> str:
        return f"PostgresRedactions(user={self._user.user_id!r})"

    def _write(self, record: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        jsonb, raw = to_columns(record)
        (row,) = self._db.write(_APPEND, {"user": self._user.user_id, "record": jsonb, "raw": raw},
                               doing=f"record a redaction of {self._user.user_id!r}")
        return int(row[0]), record

    def _read(self) -> Iterable[tuple[int, dict[str, Any]]]:
        for redaction_id, record, raw in self._db.fetch(
                "SELECT redaction_id, record, raw FROM am_redactions WHERE user_id = %s ORDER BY redaction_id",
                (self._user.user_id,)):
            value = from_columns(record, raw)
            if isinstance(value, dict):
                yield int(redaction_id), value

    def stamp(self) -> int:
        """The number of events and the last id together (grows with every event; 0 without one): one index
        lookup, no event read."""
        rows = self._db.fetch("SELECT count(*) + coalesce(max(redaction_id), 0) FROM am_redactions "
                              "WHERE user_id = %s", (self._user.user_id,))
        return int(rows[0][0]) if rows else 0

    def problems(self) -> list[Problem]:
        """Events that are not JSON objects (written by another program)."""
        rows = self._db.fetch("SELECT redaction_id FROM am_redactions WHERE user_id = %s AND raw IS NULL AND "
                              "jsonb_typeof(record) <> 'object' ORDER BY redaction_id", (self._user.user_id,))
        return [Problem(self.where, ProblemKind.NOT_AN_OBJECT, int(rid), "the event is not a JSON object; skipped "
                        "(fix or delete the row)") for (rid,) in rows]
