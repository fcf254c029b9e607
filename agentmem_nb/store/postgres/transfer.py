"""Moving memory in and out: :func:`migrate_folder` copies a file store (the original demo's folders included) into
PostgreSQL; :func:`export_database` writes a database back as a memory folder.

Why it looks like this:

* **Read through the file store, copy records as they are.** The folder is opened with the file backend, so its
  rules apply once (legacy ids normalised, torn and malformed lines skipped — ``problems()`` of the folder lists them;
  duplicate ids kept): each readable line is copied with its normalised id at its position, its record otherwise
  untouched (naive legacy timestamps, the original demo's tool-call shape), so the database answers as the folder did.
  A day's lines are copied as the day's own rows, each with its folded text, not linked to a session line as an
  append links its copy (schema version 6): in a folder the day file is its own history (nothing ties a day line to
  a session line but equal text, and a line repeated word for word would make the match a guess), and the layers
  are copied one at a time, resumably, so a day may be copied before its sessions. It costs the index a second set of
  postings for migrated days only; every append after the migration is linked.
* **Resumable and idempotent.** Each layer is copied in batches, one transaction each, that also move the layer's
  row count and next id; a second run starts where the database's copy ends, after checking that its last row is the
  file's line at that position (anything else is another layer's history: refused, nothing merged). A run stopped
  half way (Ctrl-C, a lost connection) is finished by running it again; a finished one copies nothing. Long-term
  versions, the standing instructions' versions, the dialogue log, redaction events and conversations are copied the
  same way (what is there is kept); fact events like a layer (ids and positions kept, so resolutions still name their
  facts); the facts queue (what is still waiting for extraction) once, whole. Redactions go both ways with the
  messages: a message hidden in one store stays hidden in the other.
* **Export writes the file backend's format**: lines with their ids, ``memory.md`` and ``instructions.md`` with their
  history records, ``facts.jsonl``, ``facts.queue.jsonl``, the conversation index, the log and the redaction events,
  into a folder that must not hold those users yet (nothing is overwritten).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from agentmem_nb.errors import StoreError
from agentmem_nb.store.memory_store import MemoryStore
from agentmem_nb.store.postgres.facts import key_column
from agentmem_nb.store.postgres.layer import searchable
from agentmem_nb.store.longterm import LongTermMemory
from agentmem_nb.store.postgres.longterm import DOCUMENTS, record_change, text_digest
from agentmem_nb.store.postgres.records import from_columns, to_columns
from agentmem_nb.store.postgres.store import PostgresStore
from agentmem_nb.store.user import UserMemory
from agentmem_nb.timeutil import format_ts, system_clock, to_zone

__all__ = ["TransferReport", "migrate_folder", "export_database"]

Progress = Callable[[str, int], None]
"""Called after each batch with what was copied (``"alice/sessions/s1"``) and how many records so far."""


@dataclass
class TransferReport:
    """What a migration or an export did: records copied per kind, and what was skipped or refused."""

    copied: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def add(self, kind: str, count: int) -> None:
        self.copied[kind] = self.copied.get(kind, 0) + count

    def __str__(self) -> str:
        parts = ", ".join(f"{count} {kind}" for kind, count in sorted(self.copied.items()) if count) or "nothing new"
        return parts + (f"; skipped: {'; '.join(self.skipped)}" if self.skipped else "")


def _as_dict(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _stored(record: object, raw: str | None, key: str, value: int) -> dict[str, Any] | None:
    """The stored record with its id under ``key`` as the file store writes it (``None``: not a JSON object)."""
    found = _as_dict(from_columns(record, raw))
    return None if found is None else {**found, key: value}


def _strip_id(record: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in record.items() if key != "message_id"}


def migrate_folder(root: str | os.PathLike[str], target: PostgresStore, *, batch: int = 2000,
                   progress: Progress | None = None) -> TransferReport:
    """Copy every user of the memory folder ``root`` into ``target`` (resumable, idempotent: see the module)."""
    source = MemoryStore(root, zone=target.zone)
    if not source.root.is_dir():
        raise StoreError(f"memory folder {str(source.root)!r} does not exist: give the folder that holds the users")
    report = TransferReport()
    for user_id in source.users():
        user = source.user(user_id)
        with target.db.transaction(f"register user {user_id!r}") as conn:
            conn.execute("INSERT INTO am_users (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user_id,))
        for kind, keys in (("session", user.session_ids()), ("daily", user.days())):
            for key in keys:
                _copy_layer(user, kind, key, target, report, batch, progress)
        _copy_long_term(user, target, report)
        _copy_long_term(user, target, report, document=user.instructions, table="am_instructions")
        _copy_log(user, target, report, batch, progress)
        _copy_redactions(user, target, report)
        _copy_conversations(user, target, report)
        _copy_facts(user, target, report, batch, progress)
        _copy_fact_queue(user, target, report)
    return report


def _copy_layer(user: UserMemory, kind: str, key: str, target: PostgresStore, report: TransferReport, batch: int,
                progress: Progress | None) -> None:
    layer = user.session(key) if kind == "session" else user.daily(key)
    total = len(layer)
    name = f"{user.user_id}/{'sessions' if kind == 'session' else 'daily'}/{key}"
    with target.db.transaction(f"copy {name}") as conn:
        row = conn.execute("INSERT INTO am_layers (user_id, kind, key) VALUES (%s, %s, %s) ON CONFLICT (user_id, kind,"
                           " key) DO UPDATE SET rows = am_layers.rows RETURNING layer_id, rows",
                           (user.user_id, kind, key)).fetchone()
        assert row is not None  # an upsert returns its row
        layer_id, have = int(row[0]), int(row[1])
        if have:
            check = min(have, total) - 1
            theirs = conn.execute("SELECT message_id, record, raw FROM am_messages WHERE layer_id = %s AND "
                                  "position = %s", (layer_id, check)).fetchone()
            ours = layer.read_records(check, check + 1) if check >= 0 else []
            if not ours or theirs is None or (theirs[0], from_columns(theirs[1], theirs[2])) != (
                    ours[0][0], _strip_id(ours[0][1])):
                report.skipped.append(f"{name}: the database already holds other messages for it (not merged)")
                return
    copied = 0
    for start in range(have, total, batch):
        records = layer.read_records(start, min(total, start + batch))
        rows = []
        for offset, (message_id, record) in enumerate(records):
            kept = _strip_id(record)
            jsonb, raw = to_columns(kept)
            rows.append((layer_id, start + offset, message_id, jsonb, raw, searchable(kept)))
        with target.db.transaction(f"copy {name}") as conn:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO am_messages (layer_id, position, message_id, record, raw, folded) "
                                "VALUES (%s, %s, %s, %s::jsonb, %s, %s)", rows)
            conn.execute("UPDATE am_layers SET rows = %s, next_id = greatest(next_id, %s) WHERE layer_id = %s",
                         (start + len(rows), max(mid for mid, _ in records) + 1, layer_id))
        copied += len(rows)
        if progress is not None:
            progress(name, have + copied)
    report.add("messages", copied)


def _copy_long_term(user: UserMemory, target: PostgresStore, report: TransferReport, *,
                    document: LongTermMemory | None = None, table: str = "am_longterm") -> None:
    """Copy a versioned document (``memory.md``, or ``instructions.md`` into ``am_instructions``) with its history."""
    memory = user.long_term if document is None else document
    versions = list(memory.history())
    text = memory.read()
    name = f"{user.user_id}/{DOCUMENTS[table]}"
    kind = "long-term versions" if table == "am_longterm" else "instruction versions"
    if table != "am_longterm" and not versions and not text:
        return  # no instructions: no row (memory.md keeps its row, as before, even when empty)
    with target.db.transaction(f"copy {name}") as conn:
        conn.execute(f"INSERT INTO {table} (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user.user_id,))
        row = conn.execute(f"SELECT text, version, since_checkpoint FROM {table} WHERE user_id = %s FOR UPDATE",
                           (user.user_id,)).fetchone()
        assert row is not None  # inserted above if missing
        current, have, since = str(row[0]), int(row[1]), int(row[2])
        count = len(versions)
        if count and have >= count:  # the file's history was copied before: is it the same history?
            copied = conn.execute(f"SELECT record, raw FROM {table}_history WHERE user_id = %s AND version = %s",
                                  (user.user_id, count)).fetchone()
            stored = _as_dict(from_columns(*copied)) if copied else None
            if stored is None or stored.get("sha") != text_digest(versions[-1].after):
                report.skipped.append(f"{name}: the database's history differs (not merged)")
            if have > count or stored is None or stored.get("sha") != text_digest(versions[-1].after):
                return
        elif have and (have > count or versions[have - 1].after != current):
            report.skipped.append(f"{name}: the database's history differs (not merged)")
            return
        if not count and not have:  # a memory.md without history (the original demo's): its text, version 0
            conn.execute(f"UPDATE {table} SET text = %s WHERE user_id = %s", (text, user.user_id))
            return
        if not have:
            current = versions[0].before  # a memory.md older than its history: the first record keeps it
        for version in versions[have:]:
            since = record_change(conn, user.user_id, have, since, current, version.after, ts=version.ts,
                                  source=version.source, digest=text_digest(version.after), table=table)
            have, current = have + 1, version.after
            report.add(kind, 1)
        if text != current:  # memory.md changed outside the file store: recorded as the file backend repairs it
            record_change(conn, user.user_id, have, since, current, text, ts=to_zone(system_clock(), target.zone),
                          source="repair", digest=text_digest(text), table=table)
            report.add(kind, 1)


def _copy_log(user: UserMemory, target: PostgresStore, report: TransferReport, batch: int,
              progress: Progress | None) -> None:
    rows = [(user.user_id, entry_id, *to_columns(_strip_id(record))) for entry_id, record in user.log.file.iter_records()]
    copied = 0
    for start in range(0, len(rows), batch):
        chunk = rows[start:start + batch]
        with target.db.transaction(f"copy the dialogue log of {user.user_id!r}") as conn:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO am_dialogue (user_id, entry_id, record, raw) VALUES (%s, %s, %s::jsonb, %s)"
                                " ON CONFLICT (user_id, entry_id) DO NOTHING RETURNING entry_id", chunk,
                                returning=True)
                while True:  # one result per row: counted only when it was new
                    copied += len(cur.fetchall())
                    if not cur.nextset():
                        break
            conn.execute("UPDATE am_users SET next_log_id = greatest(next_log_id, %s) WHERE user_id = %s",
                         (max(entry_id for _, entry_id, _, _ in chunk) + 1, user.user_id))
        if progress is not None:
            progress(f"{user.user_id}/logs/llm_dialogue.jsonl", start + len(chunk))
    report.add("log entries", copied)


def _copy_redactions(user: UserMemory, target: PostgresStore, report: TransferReport) -> None:
    events = user.redactions.file
    rows = ([(user.user_id, rid, *to_columns(_strip_id(record))) for rid, record in events.iter_records()]
            if events.path.exists() else [])
    if not rows:
        return
    copied = renumbered = 0
    with target.db.transaction(f"copy the redactions of {user.user_id!r}") as conn:
        conn.execute("INSERT INTO am_users (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user.user_id,))
        conn.execute("UPDATE am_users SET next_redaction_id = greatest(next_redaction_id, %s) WHERE user_id = %s",
                     (max(rid for _, rid, _, _ in rows) + 1, user.user_id))
        for user_id, rid, record, raw in rows:
            # Copied already (a second run), under its id or another: nothing to do. Its id taken by another event
            # (the database's own redactions): it is kept under the next id instead — dropping it would show the
            # message it hides; ids only order the events, and either way the message stays hidden.
            if conn.execute("SELECT 1 FROM am_redactions WHERE user_id = %s AND record IS NOT DISTINCT FROM "
                            "%s::jsonb AND raw IS NOT DISTINCT FROM %s LIMIT 1", (user_id, record, raw)).fetchone():
                continue
            done = conn.execute("INSERT INTO am_redactions (user_id, redaction_id, record, raw) VALUES "
                                "(%s, %s, %s::jsonb, %s) ON CONFLICT (user_id, redaction_id) DO NOTHING",
                                (user_id, rid, record, raw))
            if not done.rowcount:
                conn.execute("INSERT INTO am_redactions (user_id, redaction_id, record, raw) SELECT %s, "
                             "next_redaction_id, %s::jsonb, %s FROM am_users WHERE user_id = %s",
                             (user_id, record, raw, user_id))
                conn.execute("UPDATE am_users SET next_redaction_id = next_redaction_id + 1 WHERE user_id = %s",
                             (user_id,))
                renumbered += 1
            copied += 1
    report.add("redactions", copied)
    if renumbered:
        report.skipped.append(f"{user.user_id}: {renumbered} redaction(s) kept under new ids (their ids were taken "
                              "by the database's own redactions)")


def _copy_conversations(user: UserMemory, target: PostgresStore, report: TransferReport) -> None:
    now = to_zone(system_clock(), target.zone)
    with target.db.transaction(f"copy the conversations of {user.user_id!r}") as conn:
        for conversation in user.conversations.list():
            created = conversation.created_at or conversation.updated_at or now
            updated = conversation.updated_at or created
            done = conn.execute("INSERT INTO am_conversations (user_id, session_id, title, created_at, updated_at) "
                                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                (user.user_id, conversation.session_id, conversation.title, created, updated))
            report.add("conversations", done.rowcount)


def _copy_facts(user: UserMemory, target: PostgresStore, report: TransferReport, batch: int,
                progress: Progress | None) -> None:
    """Copy ``facts.jsonl`` as a layer is copied: each readable event at its position with its id (resumable, checked
    against what the database holds). An ``event_key`` met twice (a hand-edited file) is kept on the first only:
    the database's index allows one, and the fold skips a known key's later assertion the same way either way."""
    log = user.facts.log
    total = log.scan().stop
    name = f"{user.user_id}/facts.jsonl"
    if not total:
        return
    with target.db.transaction(f"copy {name}") as conn:
        conn.execute("INSERT INTO am_fact_logs (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user.user_id,))
        row = conn.execute("SELECT rows FROM am_fact_logs WHERE user_id = %s FOR UPDATE", (user.user_id,)).fetchone()
        assert row is not None  # inserted above if missing
        have = int(row[0])
        if have:
            check = min(have, total) - 1
            theirs = conn.execute("SELECT event_id, record, raw FROM am_fact_events WHERE user_id = %s AND "
                                  "position = %s", (user.user_id, check)).fetchone()
            ours = log.read_records(check, check + 1)
            if not ours or theirs is None or (theirs[0], from_columns(theirs[1], theirs[2])) != (
                    ours[0][0], _strip_id(ours[0][1])):
                report.skipped.append(f"{name}: the database already holds other fact events (not merged)")
                return
        keys = {str(key) for (key,) in conn.execute("SELECT event_key FROM am_fact_events WHERE user_id = %s AND "
                                                    "event_key IS NOT NULL", (user.user_id,))}
    copied = 0
    for start in range(have, total, batch):
        records = log.read_records(start, min(total, start + batch))
        rows = []
        for offset, (event_id, record) in enumerate(records):
            kept = _strip_id(record)
            key = key_column(kept.get("event_key"))
            key = key if key not in keys else None
            if key is not None:
                keys.add(key)
            rows.append((user.user_id, start + offset, event_id, *to_columns(kept), key))
        with target.db.transaction(f"copy {name}") as conn:
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO am_fact_events (user_id, position, event_id, record, raw, event_key) "
                                "VALUES (%s, %s, %s, %s::jsonb, %s, %s)", rows)
            conn.execute("UPDATE am_fact_logs SET rows = %s, next_event = greatest(next_event, %s) WHERE user_id = %s",
                         (start + len(rows), max(event_id for event_id, _ in records) + 1, user.user_id))
        copied += len(rows)
        if progress is not None:
            progress(name, have + copied)
    report.add("fact events", copied)


def _copy_fact_queue(user: UserMemory, target: PostgresStore, report: TransferReport) -> None:
    """Copy ``facts.queue.jsonl`` (messages waiting for extraction, and what became of them) into a user's empty
    queue; a queue already there is kept (the same one: nothing to do; another: reported, not merged)."""
    lines = [_strip_id(record) for _, record in user.fact_queue.iter_records()]
    if not lines:
        return
    with target.db.transaction(f"copy the facts queue of {user.user_id!r}") as conn:
        conn.execute("SELECT 1 FROM am_users WHERE user_id = %s FOR UPDATE", (user.user_id,))
        row = conn.execute("SELECT count(*) FROM am_fact_queue WHERE user_id = %s", (user.user_id,)).fetchone()
        have = int(row[0]) if row else 0
        if have:
            if have != len(lines):
                report.skipped.append(f"{user.user_id}/facts.queue.jsonl: the database already holds another "
                                      "queue (not merged)")
            return
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO am_fact_queue (user_id, record, raw) VALUES (%s, %s::jsonb, %s)",
                            [(user.user_id, *to_columns(line)) for line in lines])
    report.add("queued facts lines", len(lines))


# ---------------------------------------------------------------------- export


def _line(record: dict[str, Any]) -> bytes:
    """One JSONL line as the file store writes it (UTF-8; a lone surrogate as its JSON escape)."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record) + "\n").encode("ascii")


def export_database(source: PostgresStore, out: str | os.PathLike[str], *,
                    progress: Progress | None = None, users: Sequence[str] | None = None) -> TransferReport:
    """Write every user of ``source`` (or only ``users``) as a memory folder under ``out`` (which must not hold them
    yet)."""
    root = Path(out)
    report = TransferReport()
    users = source.users() if users is None else [u for u in source.users() if u in set(users)]
    taken = [user_id for user_id in users if os.path.lexists(root / user_id)]
    if taken:
        raise StoreError(f"{str(root)!r} already holds {', '.join(map(repr, taken[:5]))}: export into an empty "
                         "folder (nothing is overwritten)")
    for user_id in users:
        folder = root / user_id
        folder.mkdir(parents=True)
        with source.db.reading(f"export {user_id!r}") as conn:
            _export_layers(conn, user_id, folder, report, progress)
            _export_long_term(conn, user_id, folder, report)
            _export_long_term(conn, user_id, folder, report, table="am_instructions")
            _export_log(conn, user_id, folder, report)
            _export_redactions(conn, user_id, folder, report)
            _export_conversations(conn, user_id, folder, source, report)
            _export_facts(conn, user_id, folder, report)
    return report


def _export_layers(conn: psycopg.Connection[Any], user_id: str, folder: Path, report: TransferReport,
                   progress: Progress | None) -> None:
    layers = conn.execute("SELECT layer_id, kind, key FROM am_layers WHERE user_id = %s ORDER BY layer_id",
                          (user_id,)).fetchall()
    for layer_id, kind, key in layers:
        path = folder / ("sessions" if kind == "session" else "daily") / f"{key}.jsonl"
        path.parent.mkdir(exist_ok=True)
        count = 0
        with open(path, "wb") as handle, conn.cursor() as cur:
            cur.execute("SELECT message_id, record, raw FROM am_messages WHERE layer_id = %s AND readable "
                        "ORDER BY position", (layer_id,))
            for message_id, record, raw in cur:
                line = _stored(record, raw, "message_id", message_id)
                if line is not None:  # readable rows are objects; checked all the same
                    handle.write(_line(line))
                    count += 1
        report.add("messages", count)
        if progress is not None:
            progress(f"{user_id}/{path.parent.name}/{key}", count)


def _export_long_term(conn: psycopg.Connection[Any], user_id: str, folder: Path, report: TransferReport, *,
                      table: str = "am_longterm") -> None:
    """A versioned document (:data:`~agentmem_nb.store.postgres.longterm.DOCUMENTS`) and its history records."""
    name = DOCUMENTS[table]
    row = conn.execute(f"SELECT text, version FROM {table} WHERE user_id = %s", (user_id,)).fetchone()
    if row is None:
        return
    (folder / name).write_bytes(str(row[0]).encode("utf-8"))
    rows = conn.execute(f"SELECT version, record, raw FROM {table}_history WHERE user_id = %s ORDER BY version",
                        (user_id,)).fetchall()
    if rows:
        with open(folder / name.replace(".md", ".history.jsonl"), "wb") as handle:
            for version, record, raw in rows:
                line = _stored(record, raw, "message_id", version)
                if line is not None:
                    handle.write(_line(line))
    report.add("long-term versions" if table == "am_longterm" else "instruction versions", len(rows))


def _export_facts(conn: psycopg.Connection[Any], user_id: str, folder: Path, report: TransferReport) -> None:
    """``facts.jsonl`` (events with their ids, in order) and ``facts.queue.jsonl`` (its lines numbered 1, 2, 3…)."""
    rows = conn.execute("SELECT event_id, record, raw FROM am_fact_events WHERE user_id = %s ORDER BY position",
                        (user_id,)).fetchall()
    lines = [line for event_id, record, raw in rows if (line := _stored(record, raw, "message_id", event_id))]
    if lines:
        (folder / "facts.jsonl").write_bytes(b"".join(_line(line) for line in lines))
    report.add("fact events", len(lines))
    rows = conn.execute("SELECT record, raw FROM am_fact_queue WHERE user_id = %s ORDER BY entry_id",
                        (user_id,)).fetchall()
    queued = [value for record, raw in rows if isinstance(value := from_columns(record, raw), dict)]
    if queued:
        (folder / "facts.queue.jsonl").write_bytes(b"".join(_line({**line, "message_id": number})
                                                            for number, line in enumerate(queued, 1)))
    report.add("queued facts lines", len(queued))


def _export_log(conn: psycopg.Connection[Any], user_id: str, folder: Path, report: TransferReport) -> None:
    rows = conn.execute("SELECT entry_id, record, raw FROM am_dialogue WHERE user_id = %s ORDER BY entry_id",
                        (user_id,)).fetchall()
    if rows:
        (folder / "logs").mkdir()
        with open(folder / "logs" / "llm_dialogue.jsonl", "wb") as handle:
            for entry_id, record, raw in rows:
                line = _stored(record, raw, "message_id", entry_id)
                if line is not None:
                    handle.write(_line(line))
    report.add("log entries", len(rows))


def _export_redactions(conn: psycopg.Connection[Any], user_id: str, folder: Path, report: TransferReport) -> None:
    rows = conn.execute("SELECT redaction_id, record, raw FROM am_redactions WHERE user_id = %s ORDER BY redaction_id",
                        (user_id,)).fetchall()
    if rows:
        with open(folder / "redactions.jsonl", "wb") as handle:
            for redaction_id, record, raw in rows:
                line = _stored(record, raw, "message_id", redaction_id)
                if line is not None:
                    handle.write(_line(line))
    report.add("redactions", len(rows))


def _export_conversations(conn: psycopg.Connection[Any], user_id: str, folder: Path, source: PostgresStore,
                          report: TransferReport) -> None:
    rows = conn.execute("SELECT session_id, title, created_at, updated_at FROM am_conversations WHERE user_id = %s "
                        'ORDER BY session_id COLLATE "C"', (user_id,)).fetchall()
    if not rows:
        return
    data = {session_id: {"title": title, "created_at": format_ts(to_zone(created, source.zone)),
                         "updated_at": format_ts(to_zone(updated, source.zone))}
            for session_id, title, created, updated in rows}
    try:
        text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        (folder / "conversations.json").write_bytes(text.encode("utf-8"))
    except UnicodeEncodeError:
        (folder / "conversations.json").write_bytes((json.dumps(data, indent=2) + "\n").encode("ascii"))
    report.add("conversations", len(rows))
