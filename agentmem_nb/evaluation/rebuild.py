"""A user's memory as it was at a moment, rebuilt into another store: what replay and ``as_of`` cases run against.

Why rebuild through the store's ``append`` rather than copy and cut files: the store owns its file format (ids,
day copies, the index beside the data), and a message written again through ``append`` in the original order gets
the same id in its session and in its day file as long as the original was written the same way (every file this
store writes is). :func:`rebuild_until` checks that afterwards and lists every difference in
:attr:`Rebuilt.notes` (a legacy file with gaps in its ids, a day pinned by a turn that crossed midnight), so a
replay that cannot be exact says so instead of pretending.

The source is only read. Reading a memory folder writes its index cache (``{user}/.index``), so a folder that is not
yours to write is copied first: :func:`copy_memory_folder`.
"""

from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message
from agentmem_nb.store import UserMemory

__all__ = ["Rebuilt", "rebuild_until", "copy_memory_folder", "long_term_at"]

_LAYER_TAGS = ("session", "daily")


@dataclass(frozen=True, slots=True)
class Rebuilt:
    """What :func:`rebuild_until` wrote: message count, sessions, and every way the copy differs from the source
    (empty ``notes``: the same ids in every session and day file)."""

    messages: int
    sessions: tuple[str, ...]
    long_term: bool
    notes: tuple[str, ...] = ()

    @property
    def exact(self) -> bool:
        """True when every rebuilt message kept its id, in its session and in its day file."""
        return not self.notes


def copy_memory_folder(folder: Path, dest_root: Path, user_id: str) -> Path:
    """Copy the memory of ``user_id`` from ``folder`` into ``dest_root`` (created) and return ``dest_root``.

    ``folder`` is either a memory root (holding ``{user_id}/``) or that user's own folder (holding ``sessions/`` or
    ``daily/``). The index cache is left behind (it would not match the copies anyway); links are copied as links,
    which the store then refuses to open, as it would in the original.
    """
    if (folder / user_id).is_dir():
        source = folder / user_id
    elif (folder / "sessions").is_dir() or (folder / "daily").is_dir():
        source = folder
    else:
        present = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        raise InvalidArgument(f"no memory of user {user_id!r} in {str(folder)!r} (it holds "
                              f"{', '.join(map(repr, present[:10])) or 'no user folder'}): name one of those users "
                              "(`user:`) or give the memory folder that holds this user")
    dest_root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, dest_root / user_id, symlinks=True, ignore=shutil.ignore_patterns(".index"))
    return dest_root


def copy_database_user(url: str, dest_root: Path, user_id: str) -> Path:
    """Export the memory of ``user_id`` from the PostgreSQL store at ``url`` into ``dest_root`` as a memory folder
    (the store's own ``export``: the same files a file store would hold); the database is only read."""
    from agentmem_nb.store import MemoryStore
    from agentmem_nb.store.postgres import PostgresStore
    from agentmem_nb.store.postgres.transfer import export_database

    store = MemoryStore(url)
    assert isinstance(store, PostgresStore)  # a database URL opens the database store
    try:
        if user_id not in store.users():
            known = store.users()
            raise InvalidArgument(f"no memory of user {user_id!r} in {store!r} (it holds "
                                  f"{', '.join(map(repr, known[:10])) or 'no user'}): name one of those users "
                                  "(`user:`)")
        dest_root.mkdir(parents=True, exist_ok=True)
        export_database(store, dest_root, users=[user_id])
    finally:
        store.close()
    return dest_root


def long_term_at(user: UserMemory, moment: _dt.datetime | None) -> tuple[str, str | None]:
    """The text of ``memory.md`` at ``moment`` (``None``: now), from its history; with a note when that cannot be
    known (a change made outside the store has no time)."""
    if moment is None:
        return user.long_term.read(), None
    history = list(user.long_term.history())
    if not history:
        text = user.long_term.read()
        note = "memory.md has no recorded history: its current text was used" if text.strip() else None
        return text, note
    before = [version for version in history if version.ts is not None and version.ts < moment]
    if before:
        return before[-1].after, None
    return history[0].before, None


def rebuild_until(source: UserMemory, dest: UserMemory, *, before: _dt.datetime | None = None,
                  stop_at: ItemKey | None = None) -> Rebuilt:
    """Write into ``dest`` every message of ``source`` written before ``before`` (every message when ``None``),
    in time order, and ``memory.md`` as it was then.

    ``stop_at`` (a session item, e.g. a logged turn's question) also cuts its session just before that message,
    whatever the clock said: a replayed turn sees its own thread exactly as the original did.
    """
    if stop_at is not None and stop_at.layer != "session":
        raise InvalidArgument(f"stop_at must name a session message, got {stop_at!r}")
    kept: list[tuple[_dt.datetime, int, str, Message]] = []
    for order, session_id in enumerate(source.session_ids()):
        for message in source.session(session_id).messages():
            if stop_at is not None and session_id == stop_at.key and message.message_id >= stop_at.message_id:
                break
            if before is not None and message.ts >= before:
                continue
            kept.append((message.ts, order, session_id, message))
    kept.sort(key=lambda row: (row[0], row[1], row[3].message_id))
    notes: list[str] = []
    written_days: dict[str, list[int]] = {}
    for _, _, session_id, message in kept:
        meta = {k: v for k, v in message.meta.items() if k != "session_id"}
        appended = dest.append(session_id, message.role, message.content,
                               tags=[t for t in message.tags if t not in _LAYER_TAGS], meta=meta, ts=message.ts)
        if appended.session.message_id != message.message_id:
            notes.append(f"session {session_id!r}: message #{message.message_id} was rebuilt as "
                         f"#{appended.session.message_id}")
        written_days.setdefault(appended.daily.day or "", []).append(appended.daily.message_id)
    notes += _day_differences(source, written_days)
    text, note = long_term_at(source, before)
    if note:
        notes.append(note)
    if text.strip():
        dest.long_term.write(text, source="rebuild")
    return Rebuilt(messages=len(kept), sessions=tuple(dict.fromkeys(row[2] for row in kept)),
                   long_term=bool(text.strip()), notes=tuple(notes[:20]) + (
                       (f"... and {len(notes) - 20} more",) if len(notes) > 20 else ()))


def _day_differences(source: UserMemory, written: dict[str, list[int]]) -> list[str]:
    """Where the rebuilt day files' ids differ from the source's first lines of the same days."""
    notes = []
    days = set(source.days())
    for day, ids in written.items():
        if day not in days:
            notes.append(f"day {day}: not a day file of the source (a message's day was pinned elsewhere)")
            continue
        original = [m.message_id for m in source.daily(day).head(len(ids))]
        if original != ids:
            notes.append(f"day {day}: ids {_span(ids)} rebuilt where the source has {_span(original)}")
    return notes


def _span(ids: list[int]) -> str:
    return f"#{ids[0]}..#{ids[-1]} ({len(ids)})" if ids else "none"
