"""Facts: structured long-term memory as append-only events in ``{user}/facts.jsonl``, a typed current view on read.

``memory.md`` stays what it was (free notes, untouched by this module). Beside it, each thing the agent learns
about the user ("lives in Lyon", "likes green tea", "my sister Ana") is a :class:`Fact`: a normalised key
(subject + attribute), a value, the message it came from, when it became true and when it stopped, who extracted it
and a status — ``active``, ``superseded``, ``conflict`` or ``deleted``.

Why it looks like this:

* **Events, never edits.** A line is appended for every assertion, resolution and deletion (the store's one JSONL
  machinery, :class:`~agentmem_nb.store.jsonl.JsonlFile`: anchors, torn-tail quarantine, bad lines skipped and
  reported). The view is a fold of the events, kept incrementally (only lines appended since the last read are
  folded), so the history of an attribute ("moved from Paris to Lyon on …") is never lost and reads as a timeline.
* **One fold for every backend.** Where the events are kept is a :class:`FactEventLog` (here :class:`FileEventLog`,
  ``facts.jsonl``; in PostgreSQL ``store/postgres/facts.py``, a table): it scans by the store's cursor rule, reads
  records by position, appends one event and holds the writers' lock. Everything else — deciding, folding, reading —
  is :class:`FactsLayer`, written once.
* **The decision is made once, at write time, and recorded.** Whether a new value supersedes the old one, is held
  as a conflict or changes nothing depends on what was known then and on the merge policy; the event stores its
  outcome (``effect`` and the facts it ``ends``), so the fold is a plain replay and changing the policy later never
  rewrites the past. Deciding and appending happen under the user's directory lock (the one ``memory.md`` and
  ``conversations.json`` use; a row lock in the database), so two writers never both "supersede" the same fact.
* **Replays are idempotent.** An assertion that comes from a message carries an ``event_key`` made of its source
  (thread, message id) and what it says; recording the same extraction again (a queue replayed after a crash, a
  model extractor run twice) finds the key and appends nothing.
* **Single-valued versus accumulating.** ``lives_in`` has one value at a time: a new one supersedes. ``likes`` keeps
  every value, each ended on its own ("no longer likes …"); ``likes``/``dislikes`` are opposites, so adding one ends
  the same value in the other.
* **A value said to be over is history even when it is news.** "I used to live in Sydney", said before any value of
  ``lives_in`` was known, records Sydney as superseded (effect ``past``: it ended by the time it was said; when it
  began is unknown), so the key's timeline shows it.
* **Unsure contradictions wait for a person.** A different value that the extractor is not sure of (a hedge, or a
  bare restatement of an attribute that does not change by itself, such as a name or a birthday) is held as a
  ``conflict`` beside the active value until :meth:`FactsLayer.resolve` records a decision. The merge policy
  (:data:`MergePolicy`) is a setting: ``"supersede"`` (default: sure changes win, unsure ones wait), ``"review"``
  (every change of a single value waits), ``"latest"`` (the newest value always wins).

An event line (``message_id`` is the fact id of an assertion)::

    {"event": "assert", "subject": "user", "attribute": "lives_in", "value": "Lyon", "op": "set", "certain": true,
     "source": {"session_id": "s1", "message_id": 12}, "valid_from": "…", "extracted_by": "offline",
     "effect": "active", "ends": [3], "ended_by": "change", "event_key": "…", "ts": "…", "message_id": 7}
    {"event": "resolve", "fact_id": 9, "decision": "accept", "ends": [7], "by": "user", "ts": "…"}
    {"event": "delete", "fact_id": 9, "by": "user", "ts": "…"}
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store._fs import directory_lock
from agentmem_nb.store.jsonl import Durability, JsonlFile
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.store.scan import Cursor, Scan
from agentmem_nb.timeutil import Clock, format_ts, parse_ts, to_zone

__all__ = [
    "FactsLayer", "FactEventLog", "FileEventLog", "Fact", "FactKey", "FactSource", "Statement", "FactEvent",
    "FactStatus", "FactOp", "MergePolicy", "fact_key", "normalise_value", "sources_of", "ACCUMULATING", "STABLE",
    "OPPOSITES", "USER",
]

FactStatus = Literal["active", "superseded", "conflict", "deleted"]
FactOp = Literal["set", "add", "end", "correct"]
"""What a statement does: ``set`` a single value, ``add`` one value of an accumulating attribute, ``end`` a value
("no longer …"), ``correct`` the last value (it was wrong, not changed)."""
MergePolicy = Literal["supersede", "review", "latest"]

USER = "user"
"""The subject of statements about the user themself."""

ACCUMULATING = frozenset({"likes", "dislikes", "speaks", "allergic_to", "has_pet", "hobby"})
"""Attributes that keep every value (the rest hold one value at a time)."""
STABLE = frozenset({"name", "birthday", "hometown"})
"""Single-valued attributes that do not change by themselves: a different value without a correction is unsure."""
OPPOSITES = {"likes": "dislikes", "dislikes": "likes"}

_USER_WORDS = frozenset({"", "user", "i", "me", "myself", "self", "我", "我自己"})
_POLICIES = ("supersede", "review", "latest")


def _clean(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", str(text)).split())


def normalise_value(value: str) -> str:
    """The form two values are compared in: NFKC, casefolded, spaces collapsed, edge punctuation dropped."""
    return _clean(value).casefold().strip(" .,;:!?'\"“”‘’。，；：！？、")


@dataclass(frozen=True, slots=True, order=True)
class FactKey:
    """What a fact is about: ``subject`` (``"user"`` or a relation such as ``"sister"``) and ``attribute``
    (``"lives_in"``), both normalised by :func:`fact_key`."""

    subject: str
    attribute: str

    def __str__(self) -> str:
        return f"{self.subject}.{self.attribute}"


def _part_of(short: str, long: str) -> bool:
    """Whether ``short`` is a word or words of ``long`` ("rider" of "delivery rider", not "art" of "martial artist");
    in Chinese, which writes no spaces, any part ("骑手" of "外卖骑手")."""
    if not short:
        return False
    if re.search(r"[\u3400-\u9fff]", short):
        return short in long
    return re.search(r"(?<!\w)" + re.escape(short) + r"(?!\w)", long) is not None


@functools.lru_cache(maxsize=4096)  # (pure, and asked again and again: every Statement.key, every scan of statements)
def fact_key(subject: str, attribute: str) -> FactKey:
    """The normalised key: NFKC, casefolded, spaces collapsed (``_`` inside an attribute); the user under any of
    its names ("", "me", "我") is ``"user"``. Raises :class:`~agentmem_nb.errors.InvalidArgument` for an empty
    attribute."""
    who = _clean(subject).casefold()
    what = _clean(attribute).casefold().replace(" ", "_")
    if not what:
        raise InvalidArgument(f"fact attribute {attribute!r} is empty: name what the fact is about, e.g. 'lives_in'")
    return FactKey(USER if who in _USER_WORDS else who, what)


@dataclass(frozen=True, slots=True)
class FactSource:
    """The message a fact came from: a thread and its ``message_id`` (the inspector opens its window)."""

    session_id: str
    message_id: int

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "message_id": self.message_id}

    @staticmethod
    def from_raw(raw: object) -> FactSource | None:
        if not isinstance(raw, dict):
            return None
        sid, mid = raw.get("session_id"), raw.get("message_id")
        if isinstance(sid, str) and type(mid) is int:
            return FactSource(sid, mid)
        return None

    def __str__(self) -> str:
        return f"{self.session_id}#{self.message_id}"


@dataclass(frozen=True, slots=True)
class Statement:
    """What an extractor read in one message, before the store decides what it does to the facts.

    ``value`` may be empty only for ``op="end"`` (end whatever value is active). ``certain=False`` marks a hedge:
    a contradiction it brings is held as a conflict."""

    subject: str
    attribute: str
    value: str
    op: FactOp = "set"
    certain: bool = True

    @property
    def key(self) -> FactKey:
        return fact_key(self.subject, self.attribute)


@dataclass(frozen=True, slots=True)
class Fact:
    """One value of one key as the events made it. ``fact_id`` is the id of the event that asserted it;
    ``valid_to`` is set once it stopped being true (``ended_by`` says how: ``change``, ``correction``,
    ``negation``, ``opposite``, ``resolution``, ``rejected`` or ``deleted``)."""

    fact_id: int
    key: FactKey
    value: str
    status: FactStatus
    source: FactSource | None
    valid_from: _dt.datetime | None
    valid_to: _dt.datetime | None
    extracted_by: str
    certain: bool = True
    ended_by: str | None = None

    @property
    def subject(self) -> str:
        return self.key.subject

    @property
    def attribute(self) -> str:
        return self.key.attribute

    def as_row(self) -> dict[str, Any]:
        """This fact as JSON-ready values (``agentmem-nb facts --json``, ``GET /api/facts``): key, value, status,
        source, valid from/to (ISO 8601), who extracted it."""
        return {
            "fact_id": self.fact_id, "key": str(self.key), "value": self.value, "status": self.status,
            "source": str(self.source) if self.source else None,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "extracted_by": self.extracted_by, "certain": self.certain, "ended_by": self.ended_by,
        }

    def describe(self) -> str:
        """One line for a prompt or a listing: ``user.lives_in = Lyon``."""
        return f"{self.key} = {self.value}"


@dataclass(frozen=True, slots=True)
class FactEvent:
    """One line of ``facts.jsonl`` as read (``kind``: ``assert``, ``resolve`` or ``delete``)."""

    event_id: int
    kind: str
    ts: _dt.datetime | None
    fact_id: int
    detail: dict[str, Any] = field(hash=False, compare=False)


class _View:
    """The fold of the events so far (mutable; guarded by the layer's lock)."""

    def __init__(self) -> None:
        self.folded = 0  # events folded
        self.cursor = Cursor()  # the facts file as last folded (store.scan's change rule)
        self.facts: dict[int, Fact] = {}
        self.order: list[int] = []  # fact ids in the order recorded (append-only)
        self.by_key: dict[FactKey, list[int]] = {}
        self.event_keys: set[str] = set()
        self.sources: set[tuple[str, int]] = set()
        self.events: list[FactEvent] = []
        self.bad: list[tuple[int, str]] = []  # (event id, why) of events that could not be applied


class FactEventLog(Protocol):
    """Where a user's fact events are kept (the one thing a backend supplies; the rules are :class:`FactsLayer`'s).

    Events have ids (an assertion's id is its fact's) and positions ``0..n-1``; ``scan`` follows them by the store's
    cursor rule (:mod:`agentmem_nb.store.scan`): appended, or rewritten/truncated (fold everything again)."""

    @property
    def path(self) -> Path | str:
        """Where the events live, for messages and problems (a file, or ``<database>#<user>/facts.jsonl``)."""
        ...

    def scan(self, since: Cursor | None = None) -> Scan: ...

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        """``(event id, record)`` of the readable events at positions ``start <= i < stop``."""
        ...

    def append(self, record: dict[str, Any]) -> int:
        """Append one event with the next id; returns the id. Called inside :meth:`writing`."""
        ...

    def writing(self) -> AbstractContextManager[None]:
        """The writers' lock: a decision and the event recording it are made inside it, so two writers never decide
        on the same view. Reads inside it see every event written before it was taken."""
        ...

    def problems(self) -> list[Problem]: ...


class FileEventLog:
    """The events in ``{directory}/facts.jsonl`` (:class:`~agentmem_nb.store.jsonl.JsonlFile`), written under the
    user's directory lock."""

    def __init__(self, directory: Path, *, durability: Durability, base: Path) -> None:
        self.directory = directory
        self.path: Path = directory / "facts.jsonl"
        self.file = JsonlFile(self.path, durability=durability, base=base)
        self._base = base

    def __repr__(self) -> str:
        return f"FileEventLog({str(self.path)!r})"

    def scan(self, since: Cursor | None = None) -> Scan:
        return self.file.scan(since)

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        return self.file.read_records(start, stop)

    def append(self, record: dict[str, Any]) -> int:
        return int(self.file.append(record)["message_id"])

    @contextmanager
    def writing(self) -> Iterator[None]:
        with directory_lock(self.directory, base=self._base):
            yield

    def problems(self) -> list[Problem]:
        return list(self.file.problems())


class FactsLayer:
    """The facts of one user (``user.facts``), kept in a :class:`FactEventLog` (``facts.jsonl`` for the files, see
    :meth:`in_folder`; a table in PostgreSQL).

    >>> # facts = store.user("alice").facts
    >>> # facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    >>> # facts.current(), facts.history("user", "lives_in"), facts.conflicts()
    """

    def __init__(self, log: FactEventLog, *, clock: Clock, zone: _dt.tzinfo | None,
                 policy: MergePolicy = "supersede") -> None:
        if policy not in _POLICIES:
            raise InvalidArgument(f"merge policy {policy!r}: use one of {', '.join(_POLICIES)}")
        self.log = log
        self.path = log.path
        self.policy: MergePolicy = policy
        self._clock = clock
        self._zone = zone
        self._lock = threading.RLock()
        self._view = _View()

    @classmethod
    def in_folder(cls, directory: Path, *, clock: Clock, zone: _dt.tzinfo | None, durability: Durability,
                  base: Path, policy: MergePolicy = "supersede") -> FactsLayer:
        """The facts of the user folder ``directory`` (``facts.jsonl``)."""
        return cls(FileEventLog(directory, durability=durability, base=base), clock=clock, zone=zone, policy=policy)

    def __repr__(self) -> str:
        return f"FactsLayer({str(self.path)!r}, policy={self.policy!r})"

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """This object's lock and the log's writers' lock. A write that fails, or whose commit fails, may leave the
        view holding an event that was never kept: the view is dropped and folded again on the next read. (An outer
        ``user.transaction()`` rolled back after this returned is seen by the log's cursor rule instead: on
        PostgreSQL the cursor names the transaction that wrote the last event it covers.)"""
        try:
            # the log's lock first, then this object's (a reader in another thread of an open transaction that holds
            # the log's lock must still get this one); a commit that fails on leaving the log's drops the view too
            with self.log.writing(), self._lock:
                yield
        except BaseException:
            with self._lock:
                self._view = _View()
            raise

    # ------------------------------------------------------------------ reading

    def _fresh(self) -> _View:
        """The view with every event on disk folded (reads only lines appended since the last call)."""
        with self._lock:
            # the store's one change rule: a file cut, replaced or edited in place is folded again from the start
            # (comparing counts alone kept a replaced file's old view when it had as many lines)
            scanned = self.log.scan(self._view.cursor)
            if scanned.change in ("rewritten", "truncated"):
                self._view = _View()
            if scanned.stop > self._view.folded:
                for event_id, record in self.log.read_records(self._view.folded, scanned.stop):
                    self._fold(self._view, event_id, record)
                self._view.folded = scanned.stop
            self._view.cursor = scanned.cursor
            return self._view

    def all(self) -> list[Fact]:
        """Every fact ever asserted, whatever its status, in the order they were recorded."""
        with self._lock:
            return list(self._fresh().facts.values())

    def current(self) -> list[Fact]:
        """The active facts and the conflicts waiting for review, in the order they were recorded."""
        return [f for f in self.all() if f.status in ("active", "conflict")]

    def active(self) -> list[Fact]:
        """The facts true now."""
        return [f for f in self.all() if f.status == "active"]

    def get(self, subject: str, attribute: str) -> list[Fact]:
        """The active values of one key (one for a single-valued attribute, any number for an accumulating one)."""
        key = fact_key(subject, attribute)
        with self._lock:
            view = self._fresh()
            return [view.facts[i] for i in view.by_key.get(key, []) if view.facts[i].status == "active"]

    def get_many(self, subject: str, attributes: Sequence[str]) -> list[Fact]:
        """The active values of several attributes of one subject, in the order of ``attributes`` (one read of the
        file's tail for all of them: the context's profile asks for five)."""
        with self._lock:
            view = self._fresh()
            out: list[Fact] = []
            for attribute in attributes:
                key = fact_key(subject, attribute)
                out += [view.facts[i] for i in view.by_key.get(key, []) if view.facts[i].status == "active"]
            return out

    def history(self, subject: str, attribute: str) -> list[Fact]:
        """Every value one key ever had, as a timeline: oldest ``valid_from`` first (ties in recorded order). A value
        known only to have ended ("I used to live in Sydney": no ``valid_from``) stands where it ended, before what
        began then; one with no time at all stands last."""
        key = fact_key(subject, attribute)
        with self._lock:
            view = self._fresh()
            found = [view.facts[i] for i in view.by_key.get(key, [])]
        never = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc)
        return sorted(found, key=lambda f: (f.valid_from or f.valid_to or never, f.valid_from is not None, f.fact_id))

    def conflicts(self) -> list[Fact]:
        """Values held for review (see :meth:`resolve`)."""
        return [f for f in self.all() if f.status == "conflict"]

    def fact(self, fact_id: int) -> Fact:
        """The fact asserted by event ``fact_id``; :class:`~agentmem_nb.errors.InvalidArgument` if there is none."""
        with self._lock:
            found = self._fresh().facts.get(fact_id)
        if found is None:
            raise InvalidArgument(f"no fact {fact_id!r} in {self.path}: list them with facts.all()")
        return found

    def recorded(self, start: int = 0) -> list[Fact]:
        """The facts recorded after the first ``start`` (in recorded order, as they are now): a reader that keeps
        its own count reads only what is new (see :class:`~agentmem_nb.facts.rank.FactRanker`)."""
        with self._lock:
            view = self._fresh()
            return [view.facts[i] for i in view.order[start:]]

    def events(self) -> list[FactEvent]:
        """Every readable event, oldest first."""
        with self._lock:
            return list(self._fresh().events)

    def keys(self) -> list[FactKey]:
        """Every key that has had a value."""
        with self._lock:
            return list(self._fresh().by_key)

    def has_source(self, session_id: str, message_id: int) -> bool:
        """Whether any assertion came from this message (an extraction of it was written)."""
        with self._lock:
            return (session_id, message_id) in self._fresh().sources

    def __len__(self) -> int:
        with self._lock:
            return len(self._fresh().facts)

    def problems(self) -> list[Problem]:
        """Bad lines of ``facts.jsonl`` and events that could not be applied (never raises on bad data)."""
        found = list(self.log.problems())
        with self._lock:
            bad = list(self._fresh().bad)
        for event_id, why in bad:
            found.append(Problem(str(self.path), ProblemKind.INVALID_FACT_EVENT, 0,
                                 f"event {event_id} skipped: {why}"))
        return found

    # ------------------------------------------------------------------ writing

    def record(self, statements: Iterable[Statement], *, source: FactSource | None = None,
               extracted_by: str = "user", valid_from: _dt.datetime | None = None,
               recorded_at: _dt.datetime | None = None) -> list[Fact]:
        """Apply what an extractor read in one message; returns the facts it asserted (new active or conflict
        facts, and those it ended). ``valid_from`` is when the statements became true (default: now; pass the
        message's time). ``recorded_at`` is the events' ``ts`` (default: the store's clock).

        A statement already recorded from the same ``source`` is skipped (replays are idempotent); a value the key
        already has changes nothing."""
        statements = list(statements)
        for each in statements:
            _check_statement(each)
        moment = to_zone(valid_from, self._zone) if valid_from is not None else self._now()
        stamp = format_ts(to_zone(recorded_at, self._zone)) if recorded_at is not None else None
        changed: list[Fact] = []
        with self._writing():
            for each in statements:
                view = self._fresh()
                event_key = _event_key(source, each)
                if event_key is not None and event_key in view.event_keys:
                    continue
                record = self._decide(view, each, moment)
                if record is None:
                    continue
                record.update(event="assert", subject=each.key.subject, attribute=each.key.attribute,
                              value=_clean(each.value), op=each.op, certain=each.certain,
                              source=source.to_dict() if source else None, valid_from=format_ts(moment),
                              extracted_by=extracted_by, ts=stamp or format_ts(self._now()))
                if event_key is not None:
                    record["event_key"] = event_key
                written = self.log.append(record)
                view = self._fresh()
                changed += [view.facts[i] for i in [written, *record.get("ends", [])]
                            if i in view.facts]
        return changed

    def add(self, subject: str, attribute: str, value: str, *, source: FactSource | None = None,
            extracted_by: str = "user", valid_from: _dt.datetime | None = None, certain: bool = True) -> list[Fact]:
        """Record one value (``set`` or ``add`` by the attribute's kind), as :meth:`record`."""
        op: FactOp = "add" if fact_key(subject, attribute).attribute in ACCUMULATING else "set"
        return self.record([Statement(subject, attribute, value, op, certain)], source=source,
                           extracted_by=extracted_by, valid_from=valid_from)

    def resolve(self, fact_id: int, *, accept: bool, by: str = "user") -> Fact:
        """Decide a conflict: ``accept=True`` makes its value the active one (the old one is superseded),
        ``accept=False`` drops it (status ``deleted``). The decision is an event; returns the fact after it."""
        with self._writing():
            view = self._fresh()
            fact = view.facts.get(fact_id)
            if fact is None or fact.status != "conflict":
                state = "no such fact" if fact is None else f"its status is {fact.status!r}"
                raise InvalidArgument(f"fact {fact_id!r} is not a conflict to resolve ({state}); list the open ones "
                                      "with facts.conflicts()")
            ends = [i for i in view.by_key.get(fact.key, []) if view.facts[i].status == "active"
                    and (fact.key.attribute not in ACCUMULATING
                         or normalise_value(view.facts[i].value) == normalise_value(fact.value))] if accept else []
            self.log.append({"event": "resolve", "fact_id": fact_id, "decision": "accept" if accept else "reject",
                               "ends": ends, "by": by, "ts": format_ts(self._now())})
            return self._fresh().facts[fact_id]

    def delete(self, fact_id: int, *, by: str = "user") -> Fact:
        """Mark a fact deleted (it stays in the history, with the deletion as an event)."""
        with self._writing():
            fact = self._fresh().facts.get(fact_id)
            if fact is None or fact.status == "deleted":
                raise InvalidArgument(f"fact {fact_id!r} cannot be deleted "
                                      f"({'no such fact' if fact is None else 'already deleted'})")
            self.log.append({"event": "delete", "fact_id": fact_id, "by": by, "ts": format_ts(self._now())})
            return self._fresh().facts[fact_id]

    # ------------------------------------------------------------------ the rules

    def _decide(self, view: _View, statement: Statement, moment: _dt.datetime) -> dict[str, Any] | None:
        """The outcome of ``statement`` given what is known (``None``: it changes nothing)."""
        key = statement.key
        value = normalise_value(statement.value)
        ids = view.by_key.get(key, [])
        active = [view.facts[i] for i in ids if view.facts[i].status == "active"]
        pending = [view.facts[i] for i in ids if view.facts[i].status == "conflict"]
        if statement.op == "end":
            ends = [f.fact_id for f in active if not value or normalise_value(f.value) == value]
            if not ends and key.attribute not in ACCUMULATING:  # "no longer a rider" of the one value "delivery
                # rider": said shorter or longer, it names the value the key has (a list's items are told apart)
                ends = [f.fact_id for f in active if _part_of(value, normalise_value(f.value))
                        or _part_of(normalise_value(f.value), value)]
            if ends:
                return {"effect": "end", "ends": ends, "ended_by": "negation"}
            if not value or any(normalise_value(view.facts[i].value) == value for i in ids):
                return None  # nothing named, or that value is known already (ended, or waiting for review)
            # "I used to live in Sydney", said first: a value that was true and stopped, kept in the key's history
            # (when it began is unknown; it ended by the time it was said)
            return {"effect": "past", "ends": [], "ended_by": "negation"}
        if any(normalise_value(f.value) == value for f in active):
            return None  # already known
        if any(normalise_value(f.value) == value for f in pending) and statement.op != "correct":
            return None  # already waiting for review
        if key.attribute in ACCUMULATING and statement.op == "correct":
            # "no wait, it's green": the value said last was wrong; it makes way for this one
            latest = max(active, key=lambda f: f.fact_id, default=None)
            return {"effect": "active", "ends": [latest.fact_id] if latest else [], "ended_by": "correction"}
        if key.attribute in ACCUMULATING:
            opposite = OPPOSITES.get(key.attribute)
            ends = [i for i in view.by_key.get(FactKey(key.subject, opposite), []) if view.facts[i].status == "active"
                    and normalise_value(view.facts[i].value) == value] if opposite else []
            return {"effect": "active", "ends": ends, "ended_by": "opposite"}
        if not active:
            return {"effect": "active", "ends": []}
        sure = statement.certain and (statement.op == "correct" or key.attribute not in STABLE)
        if self.policy == "latest" or (self.policy == "supersede" and sure):
            return {"effect": "active", "ends": [f.fact_id for f in active],
                    "ended_by": "correction" if statement.op == "correct" else "change"}
        return {"effect": "conflict", "ends": []}

    def _fold(self, view: _View, event_id: int, record: dict[str, Any]) -> None:
        kind = record.get("event")
        ts, _ = parse_ts(record.get("ts"), self._zone)
        if kind == "assert":
            fact = self._fact_of(event_id, record)
            if fact is None:
                view.bad.append((event_id, "an assertion without a subject, attribute or value"))
                return
            self._end(view, record.get("ends"), fact.valid_from, str(record.get("ended_by") or "change"))
            if record.get("effect") == "past":
                fact = replace(fact, status="superseded", valid_from=None, valid_to=fact.valid_from,
                               ended_by=str(record.get("ended_by") or "negation"))
            if record.get("effect") in ("active", "conflict", "past"):
                view.facts[event_id] = fact
                view.order.append(event_id)
                view.by_key.setdefault(fact.key, []).append(event_id)
            if isinstance(record.get("event_key"), str):
                view.event_keys.add(record["event_key"])
            if fact.source is not None:
                view.sources.add((fact.source.session_id, fact.source.message_id))
            view.events.append(FactEvent(event_id, "assert", ts, event_id, record))
            return
        target = record.get("fact_id")
        fact = view.facts.get(target) if type(target) is int else None
        if kind not in ("resolve", "delete") or fact is None:
            view.bad.append((event_id, f"unknown event {kind!r}" if kind not in ("resolve", "delete")
                             else f"{kind} of an unknown fact {target!r}"))
            return
        assert type(target) is int
        if kind == "resolve" and record.get("decision") == "accept":
            self._end(view, record.get("ends"), ts, "resolution")
            view.facts[target] = replace(fact, status="active")
        else:
            view.facts[target] = replace(fact, status="deleted", valid_to=fact.valid_to or ts,
                                         ended_by=fact.ended_by or ("rejected" if kind == "resolve" else "deleted"))
        view.events.append(FactEvent(event_id, str(kind), ts, target, record))

    @staticmethod
    def _end(view: _View, ends: object, moment: _dt.datetime | None, how: str) -> None:
        for i in ends if isinstance(ends, list) else []:
            old = view.facts.get(i) if type(i) is int else None
            if old is not None and old.status == "active":
                view.facts[i] = replace(old, status="superseded", valid_to=moment, ended_by=how)

    def _fact_of(self, event_id: int, record: dict[str, Any]) -> Fact | None:
        subject, attribute, value = record.get("subject"), record.get("attribute"), record.get("value")
        if not (isinstance(subject, str) and isinstance(attribute, str) and isinstance(value, str)):
            return None
        try:
            key = fact_key(subject, attribute)
        except InvalidArgument:
            return None
        valid_from, _ = parse_ts(record.get("valid_from"), self._zone)
        return Fact(event_id, key, value, "conflict" if record.get("effect") == "conflict" else "active",
                    FactSource.from_raw(record.get("source")), valid_from, None,
                    str(record.get("extracted_by", "")), record.get("certain") is not False)

    def _now(self) -> _dt.datetime:
        return to_zone(self._clock(), self._zone)


def _check_statement(statement: Statement) -> None:
    if not isinstance(statement, Statement):
        raise InvalidArgument(f"expected a Statement, got {type(statement).__name__}: build one with "
                              "Statement(subject, attribute, value, op)")
    if statement.op not in ("set", "add", "end", "correct"):
        raise InvalidArgument(f"statement op {statement.op!r}: use 'set', 'add', 'end' or 'correct'")
    if not _clean(statement.value) and statement.op != "end":
        raise InvalidArgument(f"statement {statement.key} has an empty value: only op='end' may leave it out")
    statement.key  # noqa: B018 - validates subject and attribute (raises InvalidArgument)


def _event_key(source: FactSource | None, statement: Statement) -> str | None:
    if source is None:
        return None
    key = statement.key
    return f"{source.session_id}#{source.message_id}#{key}#{statement.op}#{normalise_value(statement.value)}"


def sources_of(facts: Sequence[Fact]) -> list[FactSource]:
    """The distinct sources of ``facts``, in order (for opening their windows)."""
    seen: list[FactSource] = []
    for each in facts:
        if each.source is not None and each.source not in seen:
            seen.append(each.source)
    return seen
