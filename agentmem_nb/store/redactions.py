"""``redactions.jsonl``: redaction events — a stored message hidden from view without rewriting its line.

A message file is append-only (its ids are retrieval anchors, and the store never rewrites a line), so redacting a
message is itself an event: one line here per redaction, naming the message (:class:`~agentmem_nb.items.ItemKey`:
the session line, or its daily copy), when, by whom (``source``) and why. The message line stays on disk, byte for
byte; the history of redactions is this file.

THE rule for every read that hands message text to someone (written here once, applied where messages leave the
store for a reader):

* **a search never returns a redacted message** — not as a hit, not as a neighbour of a hit (a hit would also say
  that the hidden text holds the keyword): :meth:`Redactions.visible`, and the items of :func:`redacted_items` in
  the ``exclude`` of :func:`agentmem_nb.retrieval.search`;
* **a window, a thread's tail or the agent's context shows it in place as** ``[redacted: reason]`` (:meth:`Redactions.shown`,
  :attr:`Redaction.note`): the ids stay contiguous, so the reader (the model above all) knows a message was there and
  why it is hidden, and nothing of its text or tool calls.

Applied by every user class through :class:`RedactedReads` (``search_session``, ``session_window``/``daily_window``, ``recent``; each backend's ``search_daily`` too), the
one search (:mod:`agentmem_nb.retrieval.retriever`), the agent's context and ``get_recent_session`` tool, the
inspector, the chat widget (when it reads a conversation) and the API's thread endpoint, and so by everything built
on them: the agent's tools, the CLI's ``search``/``window`` and the REST API's read endpoints. (The raw layer,
``MessageFile``, and the DataFrames of :mod:`agentmem_nb.frames` keep the text: they are the data, not a view.) A redaction names one line: the inspector's ``redact_message`` records one event for the session line
and one for its daily copy (an event written by hand for the session line alone leaves the copy visible).
Both backends keep the events: :class:`Redactions` is the rule, over where the events live — :class:`FileRedactions`
(this file) or the PostgreSQL backend's table (``store/postgres/redactions.py``). A backend without redaction events
would hide nothing (:func:`redactions_of` is ``None``).
"""

from __future__ import annotations

import datetime as _dt
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentmem_nb.errors import StoreError
from agentmem_nb.identifiers import check_day, check_session_id
from agentmem_nb.items import ItemKey, LayerKind
from agentmem_nb.messages import Message
from agentmem_nb.store.jsonl import Durability, JsonlFile
from agentmem_nb.store.layer import MAX_SEARCH_LIMIT, Window
from agentmem_nb.store.problems import Problem
from agentmem_nb.store.scan import Cursor
from agentmem_nb.timeutil import Clock, format_ts, parse_ts

if TYPE_CHECKING:
    from agentmem_nb.store.contract import MessageLayer

__all__ = ["Redaction", "Redactions", "FileRedactions", "RedactedReads", "redactions_of", "redacted_items", "shown", "redaction_stamp"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """One redaction event: ``item`` is hidden from view since ``ts`` because ``reason`` (said by ``source``).
    ``redaction_id`` numbers the events of a user, from 1."""

    redaction_id: int
    item: ItemKey
    ts: _dt.datetime | None
    reason: str
    source: str

    @property
    def note(self) -> str:
        """What every view shows instead of the message's text: ``[redacted: reason]``."""
        return f"[redacted: {self.reason}]"


class Redactions(ABC):
    """Append-only redaction events of one user, and the rule every view applies (the module docstring); where
    the events are kept is the subclass's: :meth:`_write` one, :meth:`_read` them all, :meth:`stamp`,
    :meth:`problems`."""

    def __init__(self, *, clock: Clock, zone: _dt.tzinfo | None) -> None:
        self._clock = clock
        self._zone = zone

    @abstractmethod
    def _write(self, record: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Append one event record; returns its ``redaction_id`` (1, 2, 3… per user) and the record as stored."""

    @abstractmethod
    def _read(self) -> Iterable[tuple[int, dict[str, Any]]]:
        """``(redaction_id, record)`` of every readable event, oldest first."""

    @abstractmethod
    def stamp(self) -> int:
        """A number that grows with every event (0 without one): a view that shows messages tells from it, without
        reading the events, that something was redacted since it last looked."""

    @abstractmethod
    def problems(self) -> list[Problem]:
        """Events that cannot be read."""

    def add(self, item: ItemKey, *, reason: str, source: str = "user") -> Redaction:
        """Record that ``item`` is redacted, and why; returns the event. The message itself is not touched.

        Raises:
            StoreError: an empty reason (a redaction says why), or an item whose layer is not a message layer.
            InvalidIdentifier: a malformed session id or day.
        """
        reason = " ".join(str(reason).split())
        if not reason:
            raise StoreError(f"redacting {tuple(item)!r}: give a reason (it is kept with the event)")
        if item.layer == "session":
            check_session_id(item.key)
        elif item.layer == "daily":
            check_day(item.key)
        else:
            raise StoreError(f"cannot redact {tuple(item)!r}: the layer must be 'session' or 'daily'")
        if type(item.message_id) is not int or item.message_id < 1:
            raise StoreError(f"cannot redact {tuple(item)!r}: message ids are integers from 1")
        record = {"ts": format_ts(self._clock()), "layer": item.layer, "key": item.key,
                  "target_id": item.message_id, "reason": reason, "source": str(source)}
        event = self._event(*self._write(record))
        assert event is not None  # the record written above names a message
        return event

    def events(self) -> list[Redaction]:
        """Every redaction event, oldest first (unreadable ones are skipped and listed by :meth:`problems`)."""
        found = (self._event(rid, rec) for rid, rec in self._read())
        return [event for event in found if event is not None]

    def active(self) -> dict[ItemKey, Redaction]:
        """The redacted messages and the (latest) event that redacted each."""
        return {event.item: event for event in self.events()}

    def hidden(self, layer: LayerKind, key: str) -> dict[int, Redaction]:
        """The redacted messages of one file (``layer``, ``key``): ``message_id`` -> its event."""
        return {item.message_id: event for item, event in self.active().items()
                if item.layer == layer and item.key == key}

    def visible(self, messages: Iterable[Message], layer: LayerKind) -> list[Message]:
        """``messages`` (read from ``layer``) without the redacted ones: what a search may return."""
        active = self.active()
        return [m for m in messages if ItemKey.of(m, layer) not in active] if active else list(messages)

    def shown(self, messages: Iterable[Message], layer: LayerKind) -> list[Message]:
        """``messages`` (read from ``layer``) as a reader sees them: each redacted one keeps its place, id, time and
        role, its text becomes :attr:`Redaction.note` and its tool calls are dropped (their output may quote it)."""
        active = self.active()
        if not active:
            return list(messages)
        out = []
        for message in messages:
            event = active.get(ItemKey.of(message, layer))
            if event is not None:
                meta = {k: v for k, v in message.meta.items() if k != "tool_calls"}
                message = replace(message, content=event.note, meta=meta)
            out.append(message)
        return out

    def _event(self, redaction_id: int, rec: dict[str, Any]) -> Redaction | None:
        layer, key, target = rec.get("layer"), rec.get("key"), rec.get("target_id")
        if layer not in ("session", "daily") or not isinstance(key, str) or type(target) is not int:
            return None  # a line that names no message redacts nothing
        ts, _ = parse_ts(rec.get("ts"), self._zone)
        return Redaction(redaction_id, ItemKey(layer, key, target), ts, str(rec.get("reason", "")),
                         str(rec.get("source", "")))


class FileRedactions(Redactions):
    """The events of one user in ``memory/{user_id}/redactions.jsonl`` (one JSON line each)."""

    def __init__(self, path: Path, *, clock: Clock, zone: _dt.tzinfo | None, durability: Durability,
                 base: Path | None = None) -> None:
        super().__init__(clock=clock, zone=zone)
        self.file = JsonlFile(path, durability=durability, base=base)
        # the events folded so far, followed by the store's change rule (store.scan): every search and window asks
        # for them, so they are read once and then only what was appended (re-reading the file on every read made
        # each search cost a pass over every redaction ever recorded)
        self._lock = threading.Lock()
        self._cursor = Cursor()
        self._folded = 0
        self._active: dict[ItemKey, Redaction] = {}

    def active(self) -> dict[ItemKey, Redaction]:
        """The redacted messages and the (latest) event that redacted each (a copy: reads only the events appended
        since the last call; a file cut, replaced or edited in place is read again from the start)."""
        with self._lock:
            scanned = self.file.scan(self._cursor)
            if scanned.change in ("rewritten", "truncated"):
                self._folded, self._active = 0, {}
            if scanned.stop > self._folded:
                for rid, rec in self.file.read_records(self._folded, scanned.stop):
                    event = self._event(rid, rec)
                    if event is not None:
                        self._active[event.item] = event
                self._folded = scanned.stop
            self._cursor = scanned.cursor
            return dict(self._active)

    def _write(self, record: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        written = self.file.append(record)
        return written["message_id"], written

    def _read(self) -> Iterable[tuple[int, dict[str, Any]]]:
        return self.file.iter_records() if self.file.path.exists() else ()

    def stamp(self) -> int:
        """The file's size (0 without one)."""
        try:
            return self.file.path.stat().st_size
        except FileNotFoundError:
            return 0

    def problems(self) -> list[Problem]:
        """Unreadable lines of the file."""
        return self.file.problems()


R = TypeVar("R", bound="Redactions")


class RedactedReads(Generic[R]):
    """A user's reads that hand message text on, with the rule above applied — written once, for every backend's
    user class (``UserMemory``, ``PostgresUser``), which provides ``redactions``, ``session`` and ``daily``."""

    redactions: R  # each backend's own keeper of the events

    if TYPE_CHECKING:  # what the user class provides
        def session(self, session_id: str) -> MessageLayer: ...

        def daily(self, day: str) -> MessageLayer: ...

    def search_session(self, session_id: str, keyword: str, *, limit: int = 20) -> list[Message]:
        """Keyword search in one thread (the layer's exact search); redacted messages are never hits."""
        return self._search(self.session(session_id), keyword, limit)

    def session_window(self, session_id: str, message_id: int, before: int = 2, after: int = 2) -> Window:
        """Messages around an anchor of a thread (a redacted one shows ``[redacted: reason]``)."""
        return self._shown(self.session(session_id).window(message_id, before, after), "session")

    def daily_window(self, day: str, message_id: int, before: int = 2, after: int = 2) -> Window:
        """Messages around an anchor of a day (a redacted one shows ``[redacted: reason]``)."""
        return self._shown(self.daily(day).window(message_id, before, after), "daily")

    def recent(self, session_id: str, rounds: int = 3) -> list[Message]:
        """The last ``rounds`` rounds of a thread (a redacted message shows ``[redacted: reason]``)."""
        return self.redactions.shown(self.session(session_id).recent(rounds), "session")

    def _shown(self, window: Window, layer: LayerKind) -> Window:
        return replace(window, messages=tuple(self.redactions.shown(window.messages, layer)))

    def _search(self, layer: MessageLayer, keyword: str, limit: int) -> list[Message]:
        """One layer's hits without its redacted messages: as many more are asked for as are hidden, so that hiding
        them does not shorten the list."""
        hidden = self.redactions.hidden("session" if layer.kind == "session" else "daily", layer.key)
        if not hidden:
            return layer.search(keyword, limit=limit)
        wanted = max(0, min(int(limit), MAX_SEARCH_LIMIT))
        found = [m for m in layer.search(keyword, limit=wanted + len(hidden)) if m.message_id not in hidden]
        return found[-wanted:] if wanted else []


def redactions_of(user: object) -> Redactions | None:
    """The redaction events of a user of any backend, or ``None`` for a backend that records none: the one place
    that tells them apart, so every reader applies the rule the same way."""
    found = getattr(user, "redactions", None)
    return found if isinstance(found, Redactions) else None


def redacted_items(user: object) -> dict[ItemKey, Redaction]:
    """Every redacted message of ``user`` and its event (empty for a backend without redactions): what a search
    adds to its ``exclude``."""
    red = redactions_of(user)
    return red.active() if red is not None else {}


def shown(user: object, messages: Iterable[Message], layer: LayerKind) -> list[Message]:
    """``messages`` of ``user`` (read from ``layer``) as a reader sees them (see :meth:`Redactions.shown`), for a
    read that does not go through ``UserMemory``'s own (a tail the agent puts in its prompt)."""
    red = redactions_of(user)
    return red.shown(messages, layer) if red is not None else list(messages)


def redaction_stamp(user: object) -> int:
    """:meth:`Redactions.stamp` of ``user`` (0 for a backend without redactions)."""
    red = redactions_of(user)
    return red.stamp() if red is not None else 0
