"""``follow(chat)``: a memory view (inspector, timeline) that refreshes itself after each of the chat's turns.

The view subscribes to the chat's :meth:`~agentmem_nb.widgets.ChatWidget.on_turn` with ``weak=True``: the chat does
not keep a view alive (a closed view is collected and drops out of the chat's list by itself), and the view holds
only the subscription handle, so the chat never keeps a view alive. (The view and its link do form a cycle: a view
dropped without ``close()`` or ``unfollow()`` goes on refreshing until the garbage collector's next pass; close it
to stop at once.) Each refresh is the view's own
:meth:`refresh` — incremental through its :class:`~agentmem_nb.frames.LayerFollower`, so it reads the lines the turn
appended, not the history — and keeps what the person chose: layer, scope, filters, search, the chosen hit or call,
the window's sides.

Whose memory a followed view shows is the view's choice, never silently the chat's:

- ``follow(chat)`` (``follow_user=False``): the view keeps its user. A turn by another user (the chat switched
  users) changes nothing the view shows, so it is not even read; a switch of conversation within the view's user
  refreshes it (a new conversation appears in the conversations layer). A view that has no user yet (the store was
  empty when it was made) takes the chat's user at the first event.
- ``follow(chat, follow_user=True)``: the view also switches to whatever user the chat talks as, with
  ``select_user``'s usual effects (the inspector drops a session/day scope and its search; the timeline drops a
  session filter).

The view never follows the chat's *conversation*: a session scope or filter stays what the person picked.

**From a hit to the conversation.** Following a chat that has ``open_message(session_id, message_id)`` (a
:class:`~agentmem_nb.widgets.ChatWidget`) also wires the view's ``on_open_message`` hook to it when the view has no
hook yet, so in a notebook ``inspector.follow(chat)`` is enough for "Open in chat" to work. The message opened is
the view's user's: when the chat talks as someone else, it is switched to the view's user first (as its user box
would), never left showing a same-named conversation of its own user. The link reaches the chat
weakly (following never keeps a chat alive), and ``unfollow`` unwires it (handing the hook to another chat the view
still follows, if any). A hook the person set with ``on_open_message`` is never replaced.

Anything with ``on_turn(callback, *, weak=True)`` returning a handle with ``close()`` and ``active`` can be followed;
its events are the chat's :class:`~agentmem_nb.widgets.ChatEvent` or a :class:`~agentmem_nb.turns.TurnResult` (both
carry the ``user_id`` whose memory changed), so a service that hands its results to its observers works unchanged.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from agentmem_nb import frames
from agentmem_nb.turns import TurnResult
from agentmem_nb.widgets._callbacks import CallbackErrors
from agentmem_nb.widgets._open import OpensMessages
from agentmem_nb.widgets._turns import ChatEvent

if TYPE_CHECKING:
    from agentmem_nb.store import UserMemory

__all__ = ["FollowsChat", "TurnSource", "Subscription", "TurnNotice"]

TurnNotice = ChatEvent | TurnResult
"""What a followed source hands its callbacks: a chat's event, or a service's result of one turn."""

_ACTION = "refreshing after a chat turn"


class Subscription(Protocol):
    """What ``on_turn`` returns (:class:`~agentmem_nb.widgets.TurnSubscription` for a chat)."""

    @property
    def active(self) -> bool: ...

    def close(self) -> None: ...


class TurnSource(Protocol):
    """What :meth:`FollowsChat.follow` needs: a :class:`~agentmem_nb.widgets.ChatWidget`, or anything with the same
    ``on_turn``."""

    def on_turn(self, callback: Callable[[TurnNotice], object], *, weak: bool = False) -> Subscription: ...


class _Link:
    """One followed source: the handler the source holds (weakly) and the handle the view holds."""

    def __init__(self, view: FollowsChat, source: TurnSource, follow_user: bool) -> None:
        self.view = view
        self.source = weakref.ref(source)
        self.follow_user = follow_user
        self.handle: Subscription = source.on_turn(self.on_event, weak=True)

    def on_event(self, event: TurnNotice) -> None:
        self.view._on_chat_event(event, follow_user=self.follow_user)

    def wire_open(self) -> bool:
        """Make this chat the view's "open in chat" when the view has no hook and the chat can open messages."""
        view, source = self.view, self.source()
        if not isinstance(view, OpensMessages) or view._open_callbacks or source is None:
            return False
        if not callable(getattr(source, "open_message", None)):
            return False  # a service or any other turn source: nothing to open a message in
        view._open_callbacks.append(self.open_message)
        return True

    def unwire_open(self) -> None:
        view = self.view
        if isinstance(view, OpensMessages) and self.open_message in view._open_callbacks:
            view._open_callbacks.remove(self.open_message)

    def open_message(self, session_id: str, message_id: int) -> None:
        """The view's hook: open the message in the followed chat (reached weakly)."""
        chat = self.source()
        if chat is None or not self.handle.active:
            self.view._live_links()  # let this link go (and its hook with it)
            raise ValueError("the chat this view followed is gone or no longer followed: follow a chat again, or "
                             "wire one with on_open_message(chat.open_message)")
        view_user = self.view.user_id if self.view._shows_users() else None
        if view_user is not None and getattr(chat, "user_id", view_user) != view_user:
            # the message is the view's user's: the chat shows that user's conversation, never the same-named one
            # of the user it talks as (a view that kept its user while the chat switched)
            chat.switch_user(view_user, session_id)  # type: ignore[attr-defined]  # a chat with users has it
        chat.open_message(session_id, message_id)  # type: ignore[attr-defined]  # wire_open checked it has one


class FollowsChat(CallbackErrors):
    """Mixin for a memory view: ``follow``, ``unfollow``, ``following``, on top of :class:`CallbackErrors`. The view
    provides ``user_id``, ``select_user`` and ``refresh``, and calls :meth:`_init_follow` in its constructor."""

    user_id: str | None
    _followers: dict[str, frames.LayerFollower]
    auto_refreshes: int
    """How many times the view refreshed itself after a followed chat's event (a test and a person can check it)."""
    _links: list[_Link]

    def _init_follow(self) -> None:
        self._links = []
        self._followers = {}
        self.auto_refreshes = 0

    def _follower(self) -> frames.LayerFollower:
        """The current user's incremental reader, made at the first look (one per user: switching back resumes)."""
        assert self.user_id is not None
        follower = self._followers.get(self.user_id)
        if follower is None:
            follower = self._followers[self.user_id] = frames.LayerFollower(self.mem)
        return follower

    def follow(self, chat: TurnSource, *, follow_user: bool = False) -> Subscription:
        """Refresh this view after every turn (and switch) of ``chat``; returns the subscription (``close()`` it, or
        call :meth:`unfollow`, to stop).

        ``follow_user=False`` keeps this view's user whatever the chat does (a view with no user takes the chat's);
        ``True`` also switches it to the chat's user. Following a chat again only changes ``follow_user``. Errors
        while refreshing appear in this view's error area, never in the chat's. A view with no ``on_open_message``
        hook gets one that opens messages in ``chat`` (when it has ``open_message``); :meth:`unfollow` removes it.
        """
        if not callable(getattr(chat, "on_turn", None)):
            raise TypeError(f"follow() needs a ChatWidget (or an object with on_turn(callback, weak=...)), got "
                            f"{type(chat).__name__}")
        for link in self._live_links():
            if link.source() is chat:
                link.follow_user = bool(follow_user)
                return link.handle
        link = _Link(self, chat, bool(follow_user))
        self._links.append(link)
        link.wire_open()
        return link.handle

    def unfollow(self, chat: TurnSource | None = None) -> int:
        """Stop following ``chat`` (``None``: every chat), and unwire the "open in chat" hook that following it set;
        returns how many subscriptions were closed."""
        closed = 0
        for link in list(self._links):
            if chat is None or link.source() is chat:
                if link.handle.active:
                    closed += 1
                link.handle.close()
                link.unwire_open()
                self._links.remove(link)
        self._rewire_open()
        return closed

    def _rewire_open(self) -> None:
        """After a chat is let go: hand "open in chat" to the first chat still followed, if the view has no hook."""
        for link in self._live_links():
            if link.wire_open():
                return

    @property
    def following(self) -> tuple[TurnSource, ...]:
        """The chats this view currently follows."""
        return tuple(source for link in self._live_links() if (source := link.source()) is not None)

    @property
    def read_stats(self) -> frames.ReadStats:
        """What this view's incremental reads cost for the current user so far: bytes and records of the message
        files' bulk reads (its :class:`~agentmem_nb.frames.LayerFollower`'s ``stats``; the dialogue log and the
        store's index count their reads in each store file's own ``stats``)."""
        follower = self._followers.get(self.user_id) if self.user_id is not None else None
        return follower.stats if follower is not None else frames.ReadStats()

    def _live_links(self) -> list[_Link]:
        live = []
        for link in self._links:
            if link.handle.active and link.source() is not None:
                live.append(link)
            else:
                link.unwire_open()  # the subscription was closed directly, or the chat is gone
        self._links = live
        return self._links

    def _shows_users(self) -> bool:
        """Whether the view shows one user's memory; a view of a LangGraph graph's memory has no users, so every
        followed turn refreshes it (the view overrides this)."""
        return True

    def _on_chat_event(self, event: TurnNotice, *, follow_user: bool) -> None:
        user_id = event.user_id
        users = self._shows_users()
        if users and not user_id:
            return  # nothing says whose memory changed; the Refresh button still works
        shown = self.user_id
        if users and shown is not None and user_id != shown and not follow_user:
            return  # another user's turn or switch: nothing this view shows has changed, so read nothing
        # a previous automatic refresh's error is stale once another one runs; an error from the person's own
        # action stays until their next action
        if self.last_error is not None and self.last_error.action == _ACTION:
            self.clear_error()
        try:
            if users and shown != user_id:
                self.select_user(user_id)  # a view with no user yet, or follow_user=True
            else:
                self.refresh()
            self.auto_refreshes += 1
        except Exception as exc:  # noqa: BLE001 - shown in this view; the chat and the other views carry on
            self._show_error(_ACTION, exc)

    @property
    def mem(self) -> UserMemory:
        """The current user's memory (the view's own property)."""
        raise NotImplementedError(f"{type(self).__name__} must define mem")

    def select_user(self, user_id: str) -> None:
        """Show ``user_id``'s memory (the view's own method)."""
        raise NotImplementedError(f"{type(self).__name__} must define select_user")

    def refresh(self) -> None:
        """Read what was appended since the last look (the view's own method)."""
        raise NotImplementedError(f"{type(self).__name__} must define refresh")

    def close(self) -> None:
        """Stop following every chat, then close the widget and its parts."""
        self.unfollow()
        super().close()
