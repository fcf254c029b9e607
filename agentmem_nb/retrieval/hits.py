"""Value objects of a search: where it looks (:class:`Scope`), why each message was found (:class:`Hit`), and what it
brought back (:class:`SearchResult`). :func:`agentmem_nb.retrieval.search` takes the one and returns the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.identifiers import check_day, check_session_id
from agentmem_nb.items import ItemKey, LayerKind
from agentmem_nb.messages import Message

__all__ = ["Scope", "Signal", "TermMatch", "Hit", "RetrievedMessage", "SearchResult", "SearchMode"]

SearchMode = Literal["exact", "ranked"]
"""How a search ran: ``exact`` (casefolded substring, the store's primitive) or ``ranked`` (scored, explained)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Where to search: one session, one day, or all of a user's memory (the one scope type of every search).

    ``Scope.everything()`` searches the day files (what the agent's ``search_daily`` tool covers, and the files whose
    anchors ``get_daily_window`` understands); ``Scope.everything(layer="session")`` searches every thread instead.

    >>> Scope.session("s1")
    Scope(kind='session', key='s1', layer='session')
    >>> Scope.everything()
    Scope(kind='all', key=None, layer='daily')
    """

    kind: Literal["session", "day", "all"]
    key: str | None = None
    layer: LayerKind = "daily"

    def __post_init__(self) -> None:
        if self.kind == "session":
            check_session_id(self.key)
            object.__setattr__(self, "layer", "session")
        elif self.kind == "day":
            object.__setattr__(self, "key", check_day(self.key))
            object.__setattr__(self, "layer", "daily")
        elif self.kind == "all":
            if self.key is not None:
                raise InvalidArgument(f"Scope(kind='all') takes no key, got {self.key!r}: use Scope.session or Scope.day")
            if self.layer not in ("session", "daily"):
                raise InvalidArgument(f"unknown layer {self.layer!r}: use 'session' or 'daily'")
        else:
            raise InvalidArgument(f"unknown scope kind {self.kind!r}: use 'session', 'day' or 'all'")

    @classmethod
    def session(cls, session_id: str) -> Scope:
        """One thread."""
        return cls("session", session_id)

    @classmethod
    def day(cls, day: str) -> Scope:
        """One day file (``YYYY-MM-DD``)."""
        return cls("day", day)

    @classmethod
    def everything(cls, *, layer: LayerKind = "daily") -> Scope:
        """All of the user's memory, through its day files (default) or its session files."""
        return cls("all", None, layer)


@dataclass(frozen=True, slots=True)
class Signal:
    """One additive part of a hit's score.

    Names: ``bm25`` (the query's own words), ``expansion`` (words borrowed from the best first-pass hits),
    ``context`` (the lexical score of the neighbouring turns), ``dense`` (embedding similarity), ``keyword``
    (exact substring search: 1.0 when the keyword occurs).
    """

    name: str
    value: float


@dataclass(frozen=True, slots=True)
class TermMatch:
    """A term found in the message and what it added to the score (under ``signal``)."""

    term: str
    contribution: float
    signal: str = "bm25"


@dataclass(frozen=True, slots=True)
class Hit:
    """A message a search found, with its place in the store (:attr:`item`), how it matched (``mode``) and the
    explanation of its score.

    ``mode="exact"``: the keyword occurs in the message (one ``keyword`` signal of 1.0). ``mode="ranked"``:
    ``score == sum(s.value for s in signals)``; the ``bm25`` and ``expansion`` signals each equal the sum of their
    ``matched_terms`` contributions.
    """

    message: Message
    layer: LayerKind
    key: str
    rank: int
    score: float
    signals: tuple[Signal, ...] = ()
    matched_terms: tuple[TermMatch, ...] = ()
    mode: SearchMode = "ranked"
    part: str = ""
    """The part of the question that found this message, when the question was retrieved part by part
    (:mod:`agentmem_nb.retrieval.parts`); empty when the question as a whole found it."""

    @property
    def item(self) -> ItemKey:
        """Which stored message this is: ``(layer, key, message_id)``."""
        return ItemKey(self.layer, self.key, self.message.message_id)

    def signal(self, name: str) -> float:
        """The value of one signal (0.0 if absent)."""
        return sum(s.value for s in self.signals if s.name == name)

    def explain(self) -> str:
        """One line for a person: ``score 7.31 = bm25 5.20 + context 2.11; terms: paint 3.1, sunris 2.1`` (and
        ``; found by the part 'What do Jon like?'`` for a hit that a part of the question found)."""
        parts = " + ".join(f"{s.name} {s.value:.2f}" for s in self.signals) or "no signal"
        terms = ", ".join(f"{m.term} {m.contribution:.2f}" for m in self.matched_terms[:8])
        found = f"; found by the part {self.part!r}" if self.part else ""
        return f"score {self.score:.2f} = {parts}" + (f"; terms: {terms}" if terms else "") + found


@dataclass(frozen=True, slots=True)
class RetrievedMessage:
    """A message in a retrieval result: an anchor (``hit`` set) or a neighbour brought by the anchor ``anchor_id``."""

    message: Message
    layer: LayerKind
    key: str
    anchor_id: int
    hit: Hit | None = None

    @property
    def item(self) -> ItemKey:
        """Which stored message this is: ``(layer, key, message_id)``."""
        return ItemKey(self.layer, self.key, self.message.message_id)

    @property
    def is_anchor(self) -> bool:
        """True if the search itself found this message (not only its neighbour)."""
        return self.hit is not None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What :func:`~agentmem_nb.retrieval.search` (and its ranked path :func:`~agentmem_nb.retrieval.retrieve`)
    returns.

    ``mode="exact"``: ``hits`` are the last ``budget`` messages containing the keyword, oldest first, and
    ``messages`` are those same messages (no window). ``mode="ranked"``: ``hits`` are the anchors in rank order and
    ``messages`` holds at most ``budget`` messages, anchors and their neighbours, no duplicates, grouped by thread
    (the thread of the best hit first) and chronological within a thread.
    """

    query: str
    scope: Scope
    mode: SearchMode
    budget: int
    hits: tuple[Hit, ...]
    messages: tuple[RetrievedMessage, ...]

    def __len__(self) -> int:
        return len(self.messages)
