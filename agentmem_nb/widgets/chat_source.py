"""Where the chat's conversations come from: :class:`ChatSource`, and :class:`StoreSource` for our store.

The chat shows conversations written by the service it drives. For our :class:`~agentmem_nb.agent.ChatService`
they are the sessions of a :class:`~agentmem_nb.store.MemoryStore` (:class:`StoreSource`); for a user's own LangGraph
graph driven through :class:`~agentmem_nb.agent.graph_chat.GraphChat` they are the threads of *their* checkpointer
(:class:`~agentmem_nb.agent.graph_chat.GraphSource`). The widget reads through this one seam, so history paging,
switching and the tool panels are the same code for both; what only our store has (users, the turn trace, memory
editing) is switched off by the source's flags, with the reason it gives (:attr:`ChatSource.limits`).

The protocol is structural: ``agentmem_nb.agent`` implements it without importing the widgets (the dependency runs
agent ← widgets).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Protocol

from agentmem_nb.identifiers import check_session_id
from agentmem_nb.messages import Message
from agentmem_nb.store.redactions import redaction_stamp, shown

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore
    from agentmem_nb.store.conversations import Conversation

__all__ = ["ChatSource", "StoreSource"]


class ChatSource(Protocol):
    """What the chat reads its conversations from (see the module docstring)."""

    @property
    def zone(self) -> _dt.tzinfo | None:
        """The zone times are shown in (``None``: the machine's)."""

    @property
    def has_users(self) -> bool:
        """Whether conversations belong to users (a user box is shown, users can be switched)."""

    @property
    def has_traces(self) -> bool:
        """Whether a reply has a turn trace (the "trace" link)."""

    @property
    def limits(self) -> str:
        """Why features of our store are off for this source ("" when none is): shown in the chat's status line."""

    def users(self) -> list[str]:
        """The users with conversations (empty without :attr:`has_users`)."""

    def is_new_user(self, user_id: str) -> bool:
        """True while ``user_id`` has nothing saved yet."""

    def check_session(self, session_id: object) -> str:
        """``session_id`` if it names a conversation this source can hold, else a clear error."""

    def latest_session(self, user_id: str) -> str | None:
        """The conversation spoken in last, or ``None``."""

    def conversations(self, user_id: str) -> list[Conversation]:
        """The conversation list, newest first."""

    def count(self, user_id: str, session_id: str) -> int:
        """How many messages the conversation shows."""

    def tail(self, user_id: str, session_id: str, count: int) -> list[Message]:
        """The last ``count`` messages as the reader sees them, oldest first."""

    def stamp(self, user_id: str, session_id: str) -> object:
        """A value that changes when messages already shown may have changed (then the tail is read afresh)."""

    def reload(self) -> None:
        """Forget what is cached about the list of conversations (``ChatWidget.refresh``)."""


class StoreSource:
    """The sessions of a :class:`~agentmem_nb.store.MemoryStore` (what :class:`~agentmem_nb.agent.ChatService`
    writes): redacted messages are shown as their reason."""

    has_users = True
    has_traces = True
    limits = ""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    @property
    def zone(self) -> _dt.tzinfo | None:
        """The store's zone."""
        return self.store.zone

    def users(self) -> list[str]:
        """The store's users."""
        return self.store.users()

    def is_new_user(self, user_id: str) -> bool:
        """True while the user has no folder on disk."""
        return user_id not in self.store.users()

    def check_session(self, session_id: object) -> str:
        """Our session id rule (:func:`~agentmem_nb.identifiers.check_session_id`)."""
        return check_session_id(session_id)

    def latest_session(self, user_id: str) -> str | None:
        """The first of the conversation index, or the thread spoken in last when there is no index."""
        if self.is_new_user(user_id):
            return None  # reading an absent user's files would find nothing (and must create nothing)
        mem = self.store.user(user_id)
        listed = mem.conversations.list()
        if listed:
            return listed[0].session_id
        # threads written without a conversation index (older tools, hand-made files): the one spoken in last
        ends = [(pair[1].ts, sid) for sid in mem.session_ids() if (pair := mem.session(sid).first_and_last())]
        return max(ends)[1] if ends else None

    def conversations(self, user_id: str) -> list[Conversation]:
        """The user's conversation index (empty for a new user: nothing is read or created)."""
        return [] if self.is_new_user(user_id) else self.store.user(user_id).conversations.list()

    def count(self, user_id: str, session_id: str) -> int:
        """Lines of the session file."""
        return len(self.store.user(user_id).session(session_id))

    def tail(self, user_id: str, session_id: str, count: int) -> list[Message]:
        """The last ``count`` lines, redacted ones shown as their reason."""
        user = self.store.user(user_id)
        return shown(user, user.session(session_id).tail(count), "session")

    def stamp(self, user_id: str, session_id: str) -> object:
        """The user's redaction stamp: a message shown may have been redacted since."""
        return redaction_stamp(self.store.user(user_id))

    def reload(self) -> None:
        """Nothing to forget: the store is read afresh each time."""
