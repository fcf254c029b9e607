"""What names one stored message across a user's layers: :class:`ItemKey` ``(layer, key, message_id)``.

A ``message_id`` is unique only within its file, so a message is named by the layer kind, the file's key (the session
id or the day) and the id. Search hits, the question a turn excludes from its own searches, the items a turn
retrieved (``TurnResult.memory_items``) and the inspector's chosen hit are all this one type. It is a ``NamedTuple``,
so it compares equal to the plain ``("session", "s1", 12)`` tuples that older code builds.

This module imports nothing of the package: the store, retrieval, the agent and the widgets all import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from agentmem_nb.messages import Message

__all__ = ["ItemKey", "LayerKind"]

LayerKind = Literal["session", "daily"]
"""The two message layers: a thread (``sessions/{id}.jsonl``) or a day (``daily/{day}.jsonl``)."""


class ItemKey(NamedTuple):
    """One stored message: ``ItemKey("session", "s1", 12)`` or ``ItemKey("daily", "2026-04-08", 31)``.

    >>> ItemKey("session", "s1", 12) == ("session", "s1", 12)
    True
    """

    layer: LayerKind
    key: str
    """The session id (``layer="session"``) or the day ``YYYY-MM-DD`` (``layer="daily"``)."""
    message_id: int

    @classmethod
    def of(cls, message: Message, layer: LayerKind) -> ItemKey:
        """The key of ``message`` as read from ``layer`` (a session line and its daily copy have different keys)."""
        key = message.session_id if layer == "session" else message.day
        return cls(layer, key or "", message.message_id)
