"""The chat's observer seam: ``ChatWidget.on_turn(callback)`` and what a callback receives.

After every turn the chat ran (completed, failed inside the service, or raised by it — in each case the service may
already have written the user's message and the log line) and after every switch of user or conversation, the chat
calls each subscribed callback with a :class:`ChatEvent`, in subscription order, once its own history is up to date.
A callback that raises does not stop the others or the chat: its error is shown in the chat's error area.

:meth:`ChatWidget.on_turn` returns a :class:`TurnSubscription`; ``close()`` it (or use it as a context manager) to
stop. With ``weak=True`` the chat holds the callback weakly (a bound method: weakly its object), so a subscriber that
is gone is dropped rather than kept alive by the chat — :meth:`MemoryInspector.follow` subscribes that way.

::

    seen = []
    handle = chat.on_turn(seen.append)       # seen[-1].user_id, .session_id, .result, .error
    chat.send("hello")
    handle.close()
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Self

from agentmem_nb.turns import TurnResult

__all__ = ["ChatEvent", "ChatEventKind", "TurnSubscription", "TurnObservers", "TurnCallback", "callback_name"]

ChatEventKind = Literal["turn", "switch"]

TurnCallback = Callable[["ChatEvent"], object]


@dataclass(frozen=True, slots=True)
class ChatEvent:
    """What the chat just did.

    ``kind``: ``"turn"`` after a turn (``error`` says why it failed, ``""`` if it did not; ``result`` is the
    service's ``TurnResult``, ``None`` when the service raised) or ``"switch"`` after the chat opened another
    conversation or user (``previous_user_id``/``previous_session_id`` say what it showed before). ``user_id`` and
    ``session_id`` are where the chat is now — for a turn, where it was written.
    """

    kind: ChatEventKind
    user_id: str
    session_id: str
    result: TurnResult | None = field(default=None, compare=False, repr=False)
    error: str = ""
    previous_user_id: str | None = None
    previous_session_id: str | None = None

    @property
    def failed(self) -> bool:
        """True for a turn that did not end with a reply (the user's message and log line may still be written)."""
        return bool(self.error)

    @property
    def user_changed(self) -> bool:
        """True for a switch to another user."""
        return self.previous_user_id is not None and self.previous_user_id != self.user_id


class TurnObservers:
    """The callbacks subscribed to one chat, in subscription order (weak ones dropped once their target is gone)."""

    def __init__(self) -> None:
        # token -> a function returning the callback, or None once a weakly held one died
        self._entries: dict[int, Callable[[], TurnCallback | None]] = {}
        self._next_token = 0

    def __len__(self) -> int:
        return len(self.callbacks())

    def add(self, callback: TurnCallback, *, weak: bool = False) -> TurnSubscription:
        """Subscribe ``callback``; see :meth:`ChatWidget.on_turn`."""
        if not callable(callback):
            raise TypeError(f"on_turn needs a callable taking a ChatEvent, got {type(callback).__name__} "
                            f"{callback!r:.60}")
        getter: Callable[[], TurnCallback | None]
        if not weak:
            getter = _strong(callback)
        elif hasattr(callback, "__self__") and hasattr(callback, "__func__"):
            getter = weakref.WeakMethod(callback)  # a bound method dies with its object, not with this temporary
        elif not isinstance(getattr(callback, "__self__", None), (types.ModuleType, type(None))):
            # a builtin's bound method ([].append): a fresh object on every attribute access, dead at once
            raise TypeError(f"on_turn(weak=True) cannot hold {callback_name(callback)} weakly (a bound method of a "
                            "builtin object dies at once): pass a function or a method of your own class, or "
                            "subscribe with weak=False")
        else:
            try:
                getter = weakref.ref(callback)
            except TypeError:
                raise TypeError(f"on_turn(weak=True) cannot hold {type(callback).__name__} weakly: pass a function "
                                "or a bound method, or subscribe with weak=False") from None
        token = self._next_token
        self._next_token += 1
        self._entries[token] = getter
        return TurnSubscription(self, token)

    def remove(self, token: int) -> None:
        """Unsubscribe (nothing happens if it already was)."""
        self._entries.pop(token, None)

    def contains(self, token: int) -> bool:
        """True while ``token``'s callback is subscribed and alive."""
        getter = self._entries.get(token)
        return getter is not None and getter() is not None

    def callbacks(self) -> list[TurnCallback]:
        """A snapshot of the live callbacks (so a callback may unsubscribe while they run)."""
        alive: list[TurnCallback] = []
        for token, getter in list(self._entries.items()):
            callback = getter()
            if callback is None:
                del self._entries[token]
            else:
                alive.append(callback)
        return alive

    def clear(self) -> None:
        """Unsubscribe everyone (the chat was closed)."""
        self._entries.clear()


class TurnSubscription:
    """A subscription to a chat's turns: :meth:`close` ends it (idempotent); a context manager closes on exit."""

    __slots__ = ("__weakref__", "_observers", "_token")

    def __init__(self, observers: TurnObservers, token: int) -> None:
        self._observers = observers
        self._token = token

    def __repr__(self) -> str:
        return f"TurnSubscription(active={self.active})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def active(self) -> bool:
        """True until closed, the chat closed, or (``weak=True``) the callback's object was collected."""
        return self._observers.contains(self._token)

    def close(self) -> None:
        """Stop receiving events."""
        self._observers.remove(self._token)


def _strong(callback: TurnCallback) -> Callable[[], TurnCallback]:
    return lambda: callback


def callback_name(callback: object) -> str:
    """A readable name for an error message: ``MemoryInspector._on_chat_event``, ``list.append``, ``<lambda>``."""
    name = getattr(callback, "__qualname__", None) or getattr(callback, "__name__", None)
    return str(name) if name else type(callback).__name__
