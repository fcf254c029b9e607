"""The conversation list in PostgreSQL (``am_conversations``): one row per session, upserted in one statement.

The rules are the file backend's (:mod:`agentmem_nb.store.conversations`): created when asked (not at the first
message), ``touch`` moves ``updated_at`` and sets a title only when there is none, listed newest ``updated_at``
first with ties broken by ``created_at`` then session id (code-point order, as Python sorts). One difference: a
title keeps no lone surrogate or NUL (shown as U+FFFD), which the files keep as JSON escapes.
"""

from __future__ import annotations

import builtins
import datetime as _dt
import secrets
from typing import TYPE_CHECKING, Any

from agentmem_nb.identifiers import check_session_id
from agentmem_nb.store.conversations import Conversation
from agentmem_nb.store.problems import Problem
from agentmem_nb.textutil import displayable
from agentmem_nb.timeutil import to_zone

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["PostgresConversations"]

_COLUMNS = "session_id, title, created_at, updated_at"


class PostgresConversations:
    """The conversations of one user (the contract's ``ConversationList``)."""

    def __init__(self, user: PostgresUser) -> None:
        self._user = user
        self._db = user.store.db

    def __repr__(self) -> str:
        return f"PostgresConversations(user={self._user.user_id!r})"

    def _now(self) -> _dt.datetime:
        return to_zone(self._user.store.clock(), self._user.store.zone)

    def _upsert(self, session_id: str, title: str, on_conflict: str, doing: str) -> Conversation:
        user_id = self._user.user_id
        now = self._now()
        # A title is display text (the first words of a message): a lone surrogate or a NUL, which a text column
        # cannot hold, is shown as U+FFFD rather than failing the turn that names the conversation.
        title = displayable(title).replace("\x00", "\ufffd")
        (row,) = self._db.write(
            f"WITH u AS (INSERT INTO am_users (user_id) VALUES (%(user)s) ON CONFLICT DO NOTHING) "
            f"INSERT INTO am_conversations (user_id, session_id, title, created_at, updated_at) "
            f"VALUES (%(user)s, %(session)s, %(title)s, %(now)s, %(now)s) "
            f"ON CONFLICT (user_id, session_id) DO UPDATE SET {on_conflict} RETURNING {_COLUMNS}",
            {"user": user_id, "session": session_id, "title": title, "now": now},
            doing=f"{doing} conversation {session_id!r} of {user_id!r}")
        return self._entry(row)

    def create(self, session_id: str | None = None, *, title: str = "") -> Conversation:
        """Register a conversation now; a new random id when ``session_id`` is None. An existing one keeps its
        times, and gets ``title`` only if it has none."""
        session_id = check_session_id(session_id) if session_id is not None else secrets.token_hex(6)
        return self._upsert(session_id, title, "title = CASE WHEN am_conversations.title = '' THEN EXCLUDED.title "
                                               "ELSE am_conversations.title END", "create")

    def touch(self, session_id: str, *, title: str | None = None) -> Conversation:
        """Set ``updated_at`` to now (creating the entry if missing) and the title if it has none yet."""
        check_session_id(session_id)
        return self._upsert(session_id, title or "", "updated_at = EXCLUDED.updated_at, title = CASE WHEN "
                            "am_conversations.title = '' THEN EXCLUDED.title ELSE am_conversations.title END", "touch")

    def rename(self, session_id: str, title: str) -> Conversation:
        """Set a conversation's title."""
        check_session_id(session_id)
        return self._upsert(session_id, title, "title = EXCLUDED.title", "rename")

    def get(self, session_id: str) -> Conversation | None:
        """One entry, or ``None``."""
        rows = self._db.fetch(f"SELECT {_COLUMNS} FROM am_conversations WHERE user_id = %s AND session_id = %s",
                              (self._user.user_id, session_id))
        return self._entry(rows[0]) if rows else None

    def list(self) -> builtins.list[Conversation]:
        """Newest ``updated_at`` first; ties by ``created_at``, then session id."""
        rows = self._db.fetch(f"SELECT {_COLUMNS} FROM am_conversations WHERE user_id = %s "
                              'ORDER BY updated_at DESC, created_at, session_id COLLATE "C"', (self._user.user_id,))
        return [self._entry(row) for row in rows]

    def problems(self) -> builtins.list[Problem]:
        """Nothing can be malformed here (the columns are typed): always empty."""
        return []

    def _entry(self, row: tuple[Any, ...]) -> Conversation:
        session_id, title, created, updated = row
        zone = self._user.store.zone
        return Conversation(str(session_id), str(title), to_zone(created, zone), to_zone(updated, zone))
