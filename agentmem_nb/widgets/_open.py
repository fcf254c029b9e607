"""``on_open_message``: a view hands "open this message in the chat" to whoever wired it (``view.follow(chat)`` wires
it to that chat's ``ChatWidget.open_message`` when nothing else is, see :mod:`agentmem_nb.widgets._follow`), as
``callback(session_id, message_id)``.

The view knows which message a hit or a call is, not which chat shows it: a callback keeps the two apart, and a
notebook can pass any callable (print, a logger, another chat). A callback's error shows in the view's error area.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["OpenMessage", "OpensMessages"]

OpenMessage = Callable[[str, int], Any]
"""``callback(session_id, message_id)``."""


class OpensMessages:
    """Mixin: ``on_open_message(callback)`` and ``_open_message(session_id, message_id)``."""

    _open_callbacks: list[OpenMessage]

    def _init_open(self, callback: OpenMessage | None) -> None:
        self._open_callbacks = []
        if callback is not None:
            self.on_open_message(callback)

    def on_open_message(self, callback: OpenMessage) -> OpenMessage:
        """Call ``callback(session_id, message_id)`` when the person asks to open a message in the chat; returns
        the callback (usable as a decorator)."""
        if not callable(callback):
            raise TypeError(f"on_open_message needs a callable(session_id, message_id), got {callback!r}")
        self._open_callbacks.append(callback)
        return callback

    def _open_message(self, session_id: str | None, message_id: int | None) -> None:
        if not session_id or message_id is None:
            raise ValueError("this row names no stored message of a conversation, so it cannot be opened in the chat "
                             "(choose a message hit, or a call made in a session)")
        if not self._open_callbacks:
            raise ValueError("no chat is wired to open messages: follow(chat), or call on_open_message(chat.open_message)")
        for callback in list(self._open_callbacks):
            callback(str(session_id), int(message_id))
