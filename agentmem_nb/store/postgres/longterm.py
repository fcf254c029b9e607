"""Long-term memory in PostgreSQL: the text and its version in ``am_longterm``, every change in
``am_longterm_history``; the standing instructions (``instructions.md``, procedural memory) the same way in
``am_instructions`` and ``am_instructions_history`` (:data:`DOCUMENTS`).

A change is one transaction that locks the user's ``am_longterm`` row (``SELECT … FOR UPDATE``): read-modify-write
(``edit``, ``add_note``) and compare-and-swap (``write(expected_version=N)``) see every other writer's change, on any
host. The history keeps the file backend's records (a delta — the splice from the previous text — with a full text, a
checkpoint, whenever the deltas since the last one add up to the text's size: :mod:`agentmem_nb.store.longterm`), so
history grows with the size of each change and any version is rebuilt from one checkpoint and a few deltas. The text
and its history change in the same transaction, so they cannot be out of step, and no repair is ever needed.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import psycopg

from agentmem_nb.errors import StoreError, VersionConflict
from agentmem_nb.store.longterm import (
    _RECORD_OVERHEAD,
    MemoryHistory,
    MemorySnapshot,
    MemoryVersion,
    _apply,
    _digest,
    _is_checkpoint,
    _Replay,
    _splice_of,
    _text_field,
    note_edit,
)
from agentmem_nb.store.postgres.records import from_columns, to_columns
from agentmem_nb.store.problems import Problem
from agentmem_nb.timeutil import format_ts, parse_ts, to_zone

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["PostgresLongTerm", "record_change", "text_digest", "DOCUMENTS"]

DOCUMENTS = {"am_longterm": "memory.md", "am_instructions": "instructions.md"}
"""The versioned documents of a user: table (its history is ``<table>_history``) -> the file it stands for. Table
names go into the SQL text (an identifier cannot be a parameter), so only these are accepted."""


def _table(table: str) -> str:
    if table not in DOCUMENTS:
        raise ValueError(f"no versioned document table {table!r}: use one of {', '.join(DOCUMENTS)}")
    return table


def text_digest(text: str) -> str:
    """The ``sha`` of a version's text (the file backend's: BLAKE2b-128 of its UTF-8)."""
    return _digest(text.encode("utf-8"))


def record_change(conn: psycopg.Connection[Any], user_id: str, version: int, since: int, before: str, after: str,
                  *, ts: _dt.datetime | None, source: str, digest: str, table: str = "am_longterm") -> int:
    """Record version ``version + 1`` (``before -> after``) and make it the current text of the document ``table``
    (:data:`DOCUMENTS`). The caller holds the user's row lock in ``table``; ``since`` is its ``since_checkpoint``.
    The record is the file backend's: a delta, or a checkpoint when the deltas since the last one add up to the
    text's size (the rule of store/longterm.py).
    Returns the new ``since_checkpoint``."""
    record: dict[str, Any] = {"ts": format_ts(ts) if ts else None, "source": source}
    at, cut, insert = _splice_of(before, after)
    if version == 0 and before:
        record["before"] = before  # the text before the history began
    if since + len(insert) + _RECORD_OVERHEAD >= len(after):
        record["after"] = after
        since = 0
    else:
        record.update(at=at, cut=cut, insert=insert)
        since += len(insert) + _RECORD_OVERHEAD
    record["sha"] = digest
    jsonb, raw = to_columns(record)
    table = _table(table)
    conn.execute(f"INSERT INTO {table}_history (user_id, version, checkpoint, record, raw) "
                 "VALUES (%s, %s, %s, %s::jsonb, %s)", (user_id, version + 1, _is_checkpoint(record), jsonb, raw))
    conn.execute(f"UPDATE {table} SET text = %s, version = %s, since_checkpoint = %s WHERE user_id = %s",
                 (after, version + 1, since, user_id))
    return since


class PostgresLongTerm:
    """The long-term memory of one user (the contract's ``LongTerm``), or with ``table="am_instructions"`` the
    standing instructions (a document versioned the same way)."""

    def __init__(self, user: PostgresUser, *, table: str = "am_longterm") -> None:
        self._user = user
        self._db = user.store.db
        self._table = _table(table)
        self._history = f"{self._table}_history"
        # where it lives, for messages and errors
        self.path = f"{self._db.display}#{user.user_id}/{DOCUMENTS[self._table]}"

    def __repr__(self) -> str:
        return f"PostgresLongTerm(user={self._user.user_id!r}, document={DOCUMENTS[self._table]!r})"

    # ------------------------------------------------------------------ reading

    def _row(self) -> tuple[str, int]:
        rows = self._db.fetch(f"SELECT text, version FROM {self._table} WHERE user_id = %s", (self._user.user_id,))
        return (str(rows[0][0]), int(rows[0][1])) if rows else ("", 0)

    def read(self) -> str:
        """The whole text (empty if there is none yet)."""
        return self._row()[0]

    def lines(self) -> list[str]:
        """Non-empty lines of the text."""
        return [line for line in self.read().splitlines() if line.strip()]

    def current(self) -> MemorySnapshot:
        """The text and the version that names it, read together."""
        text, version = self._row()
        return MemorySnapshot(version, text)

    # ------------------------------------------------------------------ changing

    def write(self, text: str, *, source: str = "user", expected_version: int | None = None) -> MemoryVersion | None:
        """Replace the whole text; ``None`` if it did not change. With ``expected_version`` the write happens only if
        the text is still that version, else :class:`~agentmem_nb.errors.VersionConflict` and nothing is written."""
        if not isinstance(text, str):
            raise StoreError(f"long-term memory must be text, got {type(text).__name__}")
        return self._change(lambda _before: text, source, expected_version)

    def edit(self, change: Callable[[str], str], *, source: str = "user") -> MemoryVersion | None:
        """Replace the text with ``change(text)``, read and written under the row lock, so no concurrent change is
        lost. Returns the recorded change (``None`` if none)."""
        return self._change(change, source, None)

    def add_note(self, note: str, *, source: str = "remember_note") -> MemoryVersion | None:
        """Append ``note`` as a ``- note`` line (skipped when the same line is already there)."""
        append_line = note_edit(note)
        return None if append_line is None else self.edit(append_line, source=source)

    def _change(self, change: Callable[[str], str], source: str, expected: int | None) -> MemoryVersion | None:
        user_id = self._user.user_id
        with self._db.transaction(f"change {DOCUMENTS[self._table]} of {user_id!r}") as conn:
            conn.execute("INSERT INTO am_users (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user_id,))
            conn.execute(f"INSERT INTO {self._table} (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user_id,))
            row = conn.execute(f"SELECT text, version, since_checkpoint FROM {self._table} WHERE user_id = %s "
                               "FOR UPDATE", (user_id,)).fetchone()
            assert row is not None  # inserted just above if it was missing
            before, version, since = str(row[0]), int(row[1]), int(row[2])
            if expected is not None and expected != version:
                raise VersionConflict(self.path, expected, version)
            after = change(before)
            if not isinstance(after, str):
                raise StoreError(f"edit: the function must return the new text as str, got {type(after).__name__}; "
                                 "nothing was written")
            if after == before:
                return None
            if "\x00" in after:
                raise StoreError("long-term memory text holds a NUL character, which PostgreSQL text cannot keep: "
                                 "remove it; nothing was written")
            try:
                digest = text_digest(after)
            except UnicodeEncodeError as exc:
                raise StoreError(f"long-term memory text has an unencodable character {after[exc.start]!r} at "
                                 f"position {exc.start}: remove it (lone surrogates cannot be stored as UTF-8)"
                                 ) from None
            now = to_zone(self._user.store.clock(), self._user.store.zone)
            record_change(conn, user_id, version, since, before, after, ts=now, source=source, digest=digest,
                          table=self._table)
        return MemoryVersion(version + 1, now, source, before, after)

    # ------------------------------------------------------------------ versions

    def _count(self) -> int:
        rows = self._db.fetch(f"SELECT count(*) FROM {self._history} WHERE user_id = %s", (self._user.user_id,))
        return int(rows[0][0])

    def history(self) -> MemoryHistory:
        """Every recorded change, oldest first (a lazy sequence: see :class:`~agentmem_nb.store.MemoryHistory`)."""
        return MemoryHistory(self, self._count())

    def version(self, version: int) -> MemoryVersion:
        """Change number ``version`` with its texts (rebuilt from the nearest checkpoint)."""
        count = self._count()
        if type(version) is not int or not 1 <= version <= count:
            raise StoreError(f"no long-term memory version {version!r}; known versions: 1..{count}"
                             if count else f"no long-term memory version {version!r}; there is no version yet")
        return self._version_at(version - 1)

    def text_at(self, version: int) -> str:
        """The text as version ``version`` left it; ``0`` is the text before the first change."""
        if version == 0:
            return self._version_at(0).before if self._count() else self.read()
        return self.version(version).after

    def restore(self, version: int, *, which: str = "after") -> MemoryVersion | None:
        """Make the text what it was after (or before) change number ``version``; itself a recorded change."""
        if which not in ("after", "before"):
            raise StoreError(f"which={which!r}: use 'after' or 'before'")
        old = self.version(version)
        return self.write(old.after if which == "after" else old.before, source=f"restore:{version}:{which}")

    def _records(self, first: int, last: int) -> list[tuple[int, dict[str, Any]]]:
        rows = self._db.fetch(f"SELECT version, record, raw FROM {self._history} WHERE user_id = %s AND "
                              "version BETWEEN %s AND %s ORDER BY version", (self._user.user_id, first, last))
        out = []
        for version, record, raw in rows:
            value = from_columns(record, raw)
            out.append((int(version), value if isinstance(value, dict) else {}))
        return out

    def _version_at(self, position: int) -> MemoryVersion:
        """Version ``position + 1``, replayed from the nearest checkpoint at or before the version before it."""
        rows = self._db.fetch(f"SELECT coalesce(max(version), 1) FROM {self._history} WHERE user_id = %s AND "
                              "checkpoint AND version <= %s", (self._user.user_id, max(position, 1)))
        start = int(rows[0][0])
        records = self._records(start, position + 1)
        text = _Replay("")
        previous = ""
        for version, record in records:
            if version == position + 1:
                previous = text.text()
            text = self._step(record, text, version)
        version, record = records[-1]
        return self._make(version, record, previous, text.text())

    def _iter_versions(self, length: int) -> Iterator[MemoryVersion]:
        text = _Replay("")
        for version, record in self._records(1, length):
            previous = text.text()
            text = self._step(record, text, version)
            yield self._make(version, record, previous, text.text())

    def _step(self, record: dict[str, Any], text: _Replay, version: int) -> _Replay:
        try:
            return _apply(record, text)
        except ValueError as exc:
            raise StoreError(f"{self.path}: version {version} cannot be replayed ({exc})") from None

    def _make(self, version: int, record: dict[str, Any], previous: str, after: str) -> MemoryVersion:
        ts, _ = parse_ts(record.get("ts"), self._user.store.zone)
        before = _text_field(record, "before")
        return MemoryVersion(version, ts, str(record.get("source", "")), previous if before is None else before, after)

    def problems(self) -> list[Problem]:
        """Nothing can be out of step (the text and its history change in one transaction): always empty."""
        return []

