"""The dialogue log in PostgreSQL (``am_dialogue``): one JSONB document per turn (``DialogueEntry.to_record()``).

The next ``entry_id`` comes from the user's row (``am_users.next_log_id``), upserted in the same statement that
inserts the entry, so ids run 1, 2, 3… per user with no gap under concurrent writers (the row lock orders them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmem_nb.store.dialogue_log import DialogueEntry, entry_from_record
from agentmem_nb.store.postgres.connection import literal_limit
from agentmem_nb.store.postgres.records import from_columns, to_columns
from agentmem_nb.store.problems import Problem, ProblemKind

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["PostgresDialogueLog"]

_APPEND = """
WITH u AS (INSERT INTO am_users (user_id, next_log_id) VALUES (%(user)s, 2)
           ON CONFLICT (user_id) DO UPDATE SET next_log_id = am_users.next_log_id + 1
           RETURNING next_log_id - 1 AS entry_id)
INSERT INTO am_dialogue (user_id, entry_id, record, raw)
SELECT %(user)s, entry_id, %(record)s::jsonb, %(raw)s FROM u RETURNING entry_id
"""


class PostgresDialogueLog:
    """The dialogue log of one user (the contract's ``DialogueRecord``)."""

    def __init__(self, user: PostgresUser) -> None:
        self._user = user
        self._db = user.store.db
        self.where = f"{self._db.display}#{user.user_id}/logs/llm_dialogue.jsonl"

    def __repr__(self) -> str:
        return f"PostgresDialogueLog(user={self._user.user_id!r})"

    def append(self, entry: DialogueEntry) -> DialogueEntry:
        """Write ``entry``; returns it with its ``entry_id`` (as read back)."""
        record = entry.to_record()
        jsonb, raw = to_columns(record)
        (row,) = self._db.write(_APPEND, {"user": self._user.user_id, "record": jsonb, "raw": raw},
                               doing=f"append to the dialogue log of {self._user.user_id!r}")
        return entry_from_record(int(row[0]), record, self._user.store.zone)

    def _entries(self, sql: str, params: tuple[Any, ...]) -> list[DialogueEntry]:
        out = []
        for entry_id, record, raw in self._db.fetch(sql, params):
            value = from_columns(record, raw)
            if isinstance(value, dict):
                out.append(entry_from_record(int(entry_id), value, self._user.store.zone))
        return out

    def __len__(self) -> int:
        """The number of readable entries (a follower reads ``tail(len(log) - seen)``): one count on the user's
        rows, the unreadable ones (see :meth:`problems`) left out."""
        rows = self._db.fetch("SELECT count(*) FROM am_dialogue WHERE user_id = %s AND "
                              "(raw IS NOT NULL OR jsonb_typeof(record) = 'object')", (self._user.user_id,))
        return int(rows[0][0])

    def entries(self) -> list[DialogueEntry]:
        """Every readable entry, oldest first."""
        return self._entries("SELECT entry_id, record, raw FROM am_dialogue WHERE user_id = %s ORDER BY entry_id",
                             (self._user.user_id,))

    def tail(self, count: int) -> list[DialogueEntry]:
        """The last ``count`` entries, oldest first."""
        rows = self._entries("SELECT entry_id, record, raw FROM am_dialogue WHERE user_id = %s "
                             f"ORDER BY entry_id DESC LIMIT {literal_limit(count)}", (self._user.user_id,))
        return rows[::-1]

    def problems(self) -> list[Problem]:
        """Entries that are not JSON objects (written by another program)."""
        rows = self._db.fetch("SELECT entry_id FROM am_dialogue WHERE user_id = %s AND raw IS NULL AND "
                              "jsonb_typeof(record) <> 'object' ORDER BY entry_id", (self._user.user_id,))
        return [Problem(self.where, ProblemKind.NOT_AN_OBJECT, int(entry_id), "the entry is not a JSON object; "
                        "skipped (fix or delete the row)") for (entry_id,) in rows]
