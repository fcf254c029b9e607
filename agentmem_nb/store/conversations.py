"""``conversations.json``: ``{session_id: {title, created_at, updated_at}}``.

Written atomically under the user's directory lock. A corrupt file is kept as ``conversations.json.bak`` and the
index is rebuilt from ``sessions/`` (first and last message of each thread), so a damaged index never hides a thread.
A key that is not a valid session id (a hand edit, another tool) is kept in the file but not listed, and
:meth:`Conversations.problems` reports it: whoever lists conversations opens what it gets, and must get only ids.
"""

from __future__ import annotations

import builtins
import datetime as _dt
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem_nb.errors import InvalidIdentifier, StoreError
from agentmem_nb.identifiers import check_session_id
from agentmem_nb.store._fs import atomic_write, directory_lock, read_file
from agentmem_nb.store.problems import Problem, ProblemKind, problem_for_error
from agentmem_nb.timeutil import Clock, format_ts, parse_ts

__all__ = ["Conversation", "Conversations", "title_from"]


@dataclass(frozen=True, slots=True)
class Conversation:
    """One entry of the conversation list."""

    session_id: str
    title: str
    created_at: _dt.datetime | None
    updated_at: _dt.datetime | None


class Conversations:
    """The conversation index of one user. ``rebuild_source`` yields ``(session_id, first_ts, last_ts, first_user_text)``."""

    def __init__(
        self,
        directory: Path,
        *,
        clock: Clock,
        zone: _dt.tzinfo | None,
        fsync: bool,
        rebuild_source: Callable[[], list[tuple[str, _dt.datetime | None, _dt.datetime | None, str]]],
    ) -> None:
        self.directory = directory
        self.path = directory / "conversations.json"
        self._base = directory.parent  # the user folder and everything in it is opened without following links
        self._clock = clock
        self._zone = zone
        self._fsync = fsync
        self._rebuild_source = rebuild_source
        self._problems: list[Problem] = []

    # ------------------------------------------------------------------ raw document

    def _now(self) -> str:
        now = self._clock()
        return format_ts(now.astimezone(self._zone) if self._zone else now.astimezone())

    def _read(self) -> tuple[bytes, dict[str, dict[str, Any]] | str]:
        """The raw bytes and either the parsed document or why it is unreadable."""
        try:
            raw = read_file(self.path, base=self._base)
        except FileNotFoundError:
            return b"", {}
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"top level is a JSON {type(data).__name__}, not an object")
            return raw, {k: (v if isinstance(v, dict) else {}) for k, v in data.items() if isinstance(k, str)}
        except ValueError as exc:
            return raw, str(exc)

    def _load(self) -> dict[str, dict[str, Any]]:
        """Read the document; on corruption keep it as a backup and rebuild it from ``sessions/``."""
        _raw, data = self._read()
        if not isinstance(data, str):
            return data
        with directory_lock(self.directory):
            # Re-read under the lock: another process may have rebuilt (or rewritten) it meanwhile.
            raw, data = self._read()
            return data if not isinstance(data, str) else self._rebuild(raw, data)

    def _backup_path(self) -> Path:
        """``conversations.json.bak``, or ``.bak.2``, ``.bak.3``... so an earlier backup is never overwritten."""
        backup = self.path.with_name("conversations.json.bak")
        n = 2
        while os.path.lexists(backup):  # a dangling link counts as taken too
            backup = self.path.with_name(f"conversations.json.bak.{n}")
            n += 1
        return backup

    def _rebuild(self, raw: bytes, why: str) -> dict[str, dict[str, Any]]:
        with directory_lock(self.directory):
            data = {}
            # Gathered before anything is written: if sessions/ cannot be read (a link), no backup piles up.
            for session_id, first, last, first_text in self._rebuild_source():
                data[session_id] = {
                    "title": title_from(first_text),
                    "created_at": format_ts(first) if first else self._now(),
                    "updated_at": format_ts(last) if last else self._now(),
                }
            backup = self._backup_path()
            atomic_write(backup, raw, fsync=self._fsync, base=self._base)
            atomic_write(self.path, _dump(data), fsync=self._fsync, base=self._base)
        self._problems.append(Problem(str(self.path), ProblemKind.CORRUPT_DOCUMENT_REBUILT, 0,
                                      f"unreadable ({why}); kept as {backup.name} and rebuilt from sessions/ "
                                      f"({len(data)} conversations)"))
        return data

    def _update(self, change: Callable[[dict[str, dict[str, Any]]], None]) -> None:
        with directory_lock(self.directory):
            data = self._load()
            change(data)
            atomic_write(self.path, _dump(data), fsync=self._fsync, base=self._base)

    # ------------------------------------------------------------------ API

    def create(self, session_id: str | None = None, *, title: str = "") -> Conversation:
        """Register a conversation now (not at its first message); a new random id when ``session_id`` is None."""
        session_id = check_session_id(session_id) if session_id is not None else secrets.token_hex(6)
        now = self._now()

        def change(data: dict[str, dict[str, Any]]) -> None:
            entry = data.setdefault(session_id, {"title": title, "created_at": now, "updated_at": now})
            if title and not entry.get("title"):
                entry["title"] = title

        self._update(change)
        return self.get(session_id)  # type: ignore[return-value]  # just written

    def touch(self, session_id: str, *, title: str | None = None) -> Conversation:
        """Set ``updated_at`` to now (creating the entry if missing) and set the title if it has none yet."""
        check_session_id(session_id)
        now = self._now()

        def change(data: dict[str, dict[str, Any]]) -> None:
            entry = data.setdefault(session_id, {"title": "", "created_at": now})
            entry["updated_at"] = now
            if title and not entry.get("title"):
                entry["title"] = title

        self._update(change)
        return self.get(session_id)  # type: ignore[return-value]  # just written

    def rename(self, session_id: str, title: str) -> Conversation:
        """Set a conversation's title."""
        check_session_id(session_id)

        def change(data: dict[str, dict[str, Any]]) -> None:
            data.setdefault(session_id, {"created_at": self._now(), "updated_at": self._now()})["title"] = title

        self._update(change)
        return self.get(session_id)  # type: ignore[return-value]  # just written

    def get(self, session_id: str) -> Conversation | None:
        """One entry, or ``None``."""
        entry = self._load().get(session_id)
        return None if entry is None else self._entry(session_id, entry)

    def list(self) -> list[Conversation]:
        """Newest ``updated_at`` first; ties broken by ``created_at`` then ``session_id`` so the order is stable.
        Keys that are not valid session ids are left out (see :meth:`problems`)."""
        items = [self._entry(k, v) for k, v in self._load().items() if _key_problem(k) is None]
        epoch = _dt.datetime.min.replace(tzinfo=_dt.timezone.utc)
        items.sort(key=lambda c: (c.created_at or epoch, c.session_id), reverse=False)
        items.sort(key=lambda c: c.updated_at or epoch, reverse=True)
        return items

    def problems(self) -> builtins.list[Problem]:  # `list` here is the method above
        """Rebuilds that happened through this object, and keys of the file that are not valid session ids.
        Never raises: a file that cannot be read at all is itself the finding."""
        try:
            data = self._load()
        except (StoreError, OSError) as exc:  # UnsafeFileError, PermissionError, EIO: reported, as promised
            return [*self._problems, problem_for_error(self.path, exc)]
        found = list(self._problems)
        for key in data:
            why = _key_problem(key)
            if why is not None:
                found.append(Problem(str(self.path), ProblemKind.INVALID_CONVERSATION_KEY, 0,
                                     f"key {key!r} is not a session id ({why}); it is kept in the file but not "
                                     "listed: rename it to a valid id (and its sessions/ file) or remove it"))
        return found

    def _entry(self, session_id: str, entry: dict[str, Any]) -> Conversation:
        created, _ = parse_ts(entry.get("created_at"), self._zone)
        updated, _ = parse_ts(entry.get("updated_at"), self._zone)
        title = entry.get("title")
        return Conversation(session_id, title if isinstance(title, str) else "", created or updated, updated or created)


def _key_problem(key: str) -> str | None:
    """Why ``key`` cannot be listed as a conversation (``None`` when it is a session id as the store writes it)."""
    try:
        checked = check_session_id(key)
    except InvalidIdentifier as exc:
        return str(exc)
    # An id the check would rewrite (another normal form) names another file than the key says.
    return None if checked == key else f"the store spells it {checked!r}"


def _dump(data: dict[str, Any]) -> bytes:
    try:
        return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A title with a lone surrogate (a str may hold one, e.g. from a JSON "\ud800" escape) has no UTF-8 form:
        # write \u escapes instead, still valid JSON that reads back as the same str (as JsonlFile.append does).
        return (json.dumps(data, indent=2) + "\n").encode("ascii")


def title_from(text: str, *, limit: int = 30) -> str:
    """A conversation title from its first message: whitespace folded, cut at ``limit`` characters (the one rule,
    used for a rebuilt index and by the agent's first turn).

    >>> title_from("  My sister\\nlives in Lyon  ")
    'My sister lives in Lyon'
    """
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
