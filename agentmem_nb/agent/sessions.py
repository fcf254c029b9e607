"""One turn at a time per ``(user, session)``: the session slots, their locks, and :class:`SessionBusy`.

Turns of one session share its files and its agent graph, so they run one after another; turns of different
sessions run in parallel. A turn holds its session from its first event to its last, and a stream that the caller
stops reading still holds it, so waiting can deadlock in two ways this module refuses at once instead of hanging:
the holder is a stream paused in the calling thread, or the caller is a tool of the running turn (langgraph runs
tools in a pool thread, so "the same thread" is not enough: the holder lists its tools' threads in ``helpers``).
Otherwise a turn waits ``lock_timeout`` seconds (default 120, two default model timeouts) and then raises.

A slot exists only while a turn runs, waits or is paused on it: the registry holds slots weakly and each turn holds
a strong reference, so a long-lived kernel serving many sessions keeps no lock per session it ever saw.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

from agentmem_nb.errors import SessionBusy

__all__ = ["SessionBusy", "SessionLocks", "SessionSlot", "Holder", "DEFAULT_LOCK_TIMEOUT"]

DEFAULT_LOCK_TIMEOUT = 120.0
"""Seconds a turn waits for another turn of its session (two default model timeouts) before :class:`SessionBusy`."""


@dataclass(slots=True)
class Holder:
    """The turn that holds a session: whether it is a stream, the thread that last advanced it, and whether it is
    running or paused at an event (what :class:`SessionBusy` tells the caller)."""

    streaming: bool
    thread: int
    since: float
    running: bool = True
    events: int = 0
    helpers: set[int] = field(default_factory=set)
    """Threads running one of its tools now (langgraph runs tools in a pool): the turn's own threads too."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Set by :meth:`SessionLocks.cancel`: the turn stops at its next check and is recorded as cancelled."""


@dataclass(eq=False, slots=True, weakref_slot=True)
class SessionSlot:
    """What serialises the turns of one ``(user, session)``.

    ``lock`` is a plain Lock, not an RLock: an abandoned stream may be finalised (and release it) in another thread.
    """

    lock: threading.Lock = field(default_factory=threading.Lock)
    holder: Holder | None = None


class SessionLocks:
    """The slots of the sessions with a turn running, waiting or paused, and the rule for taking one.

    ``lock_timeout``: seconds to wait for a session another thread holds (``None``: as long as it takes).
    """

    def __init__(self, *, lock_timeout: float | None) -> None:
        self.lock_timeout = lock_timeout
        self._slots: weakref.WeakValueDictionary[tuple[str, str], SessionSlot] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._slots)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """The ``(user, session)`` keys with a slot now."""
        return iter(list(self._slots))

    def slot(self, user_id: str, session_id: str) -> SessionSlot:
        """The slot of one session; keep the reference for as long as the turn needs it (it keeps the slot alive)."""
        with self._lock:
            slot = self._slots.get((user_id, session_id))
            if slot is None:
                slot = self._slots[(user_id, session_id)] = SessionSlot()
            return slot

    def claim(self, slot: SessionSlot, user_id: str, session_id: str, *, streaming: bool) -> Holder:
        """Take the session's lock for one turn, or raise :class:`SessionBusy` (see there) without writing."""
        me = threading.get_ident()
        if not slot.lock.acquire(blocking=False):
            holder = slot.holder
            if holder is not None and (holder.thread == me or me in holder.helpers):  # waiting on ourselves
                raise SessionBusy(_busy_message(user_id, session_id, holder, waited=None),
                                  user_id=user_id, session_id=session_id)
            if not slot.lock.acquire(timeout=-1 if self.lock_timeout is None else self.lock_timeout):
                raise SessionBusy(_busy_message(user_id, session_id, slot.holder, waited=self.lock_timeout),
                                  user_id=user_id, session_id=session_id)
        holder = Holder(streaming=streaming, thread=me, since=time.monotonic())
        slot.holder = holder
        return holder

    def cancel(self, user_id: str, session_id: str) -> bool:
        """Ask the turn holding ``(user_id, session_id)`` to stop; False when no turn holds it."""
        with self._lock:
            slot = self._slots.get((user_id, session_id))
        holder = slot.holder if slot is not None else None
        if holder is None:
            return False
        holder.stop.set()
        return True

    @staticmethod
    def release(slot: SessionSlot) -> None:
        """Free the session for the next turn."""
        slot.holder = None
        slot.lock.release()


def _busy_message(user_id: str, session_id: str, holder: Holder | None, *, waited: float | None) -> str:
    where = f"session {session_id!r} of user {user_id!r} is busy"
    close = ("close that stream (events.close(), or iterate it inside `with contextlib.closing(svc.stream_turn("
             "...)) as events:`) or read it to the end, then send again; closing records its turn as abandoned")
    if holder is None:  # released just as the wait ran out
        return f"{where}: another turn of it held it for {waited:g} s; try again."
    age = time.monotonic() - holder.since
    if holder.streaming and not holder.running:
        paused = (f"a stream_turn of it stopped after {holder.events} event(s) without being read to the end or "
                  f"closed, so its turn is still open ({age:.0f} s)")
        if waited is None:
            return f"{where}: in this thread, {paused}. To go on, {close}."
        return f"{where}: waited {waited:g} s; {paused}. Whoever holds it should {close} (or raise lock_timeout)."
    if waited is None:
        return (f"{where}: this thread is already running a turn of it (or one of its tools); a turn cannot start "
                "another turn of the same session from inside itself (use another session, or wait for it to end).")
    return (f"{where}: waited {waited:g} s for another turn of it that is still running ({age:.0f} s so far); try "
            "again when it ends, or give ChatService a larger lock_timeout (None waits as long as it takes).")
