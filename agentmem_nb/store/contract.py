"""The store contract: what a memory backend offers, whatever keeps the bytes.

The files (:class:`~agentmem_nb.store.MemoryStore` and what hangs off it) are one implementation; PostgreSQL
(``store/postgres/``) is the second: it implements the same protocols and runs the same conformance suite,
``tests/contract/`` — one fixture parametrized over backends, so adding a backend is adding one entry there.
Structured memory (facts, standing instructions, the queue of messages waiting for extraction) is a capability,
:class:`KeepsFacts`, that both backends have (a backend may leave it out: the agent then runs without it). The
protocols are
``runtime_checkable``: ``isinstance(store.user("u").session("s"), MessageLayer)`` checks the names are there, the
suite checks what they do. Semantics, in short (``docs/ARCHITECTURE.md`` has the map):

* **append** — a session layer appends a *message* (role, text, tags, meta, tool calls), never a raw record: the
  backend stamps the time (the store's clock, in the user's zone), gives the next id of that layer (strictly
  increasing from 1) and writes the day copy (``meta.session_id`` set) to the day the time falls on, or the pinned
  ``day``. It returns both as read back (:class:`~agentmem_nb.store.Appended`).
* **get / window** — by ``message_id``; a window is positional, anchor included, ``before``/``after`` clamped to
  ``0..MAX_WINDOW_SIDE`` and to the layer's edges; an unknown anchor gives an empty window with a ``reason``.
* **search** (exact) — the keyword, stripped and casefolded, as a substring of the casefolded content (CJK too);
  the **last** ``limit`` hits in chronological order, one per message; an empty keyword gives the last ``limit``.
* **scan** — what changed since a :class:`~agentmem_nb.store.Cursor` (opaque to callers; a backend puts its own
  position in it): ``"unchanged"``, ``"appended"`` (the new records are positions ``start..stop``),
  ``"rewritten"`` or ``"truncated"`` (everything is new again, from 0). Bulk readers (frames, the follower, the
  retrieval index) follow a layer through it and nothing else.
* **long-term** — the whole text replaced atomically; every change kept in a history any version of which can be
  restored; a write can demand the version it read (``expected_version``).
* **conversations** — listed newest ``updated_at`` first, ties broken by session id.
* **dialogue log** — one entry per turn, appended with the next ``entry_id``, read back equal.
* **facts** — append-only events (assert, resolve, delete); the view is their fold (one fold, ``store/facts.py``):
  ``current()`` (active and held conflicts), ``history(subject, attribute)`` oldest first, ``conflicts()``; an
  assertion already recorded from the same source message is not recorded twice; a decision (supersede / conflict)
  is made at write time and kept.
* **redactions** — append-only events that hide a message (one layer's line) from every view without changing it:
  never a search hit, ``[redacted: reason]`` in place in windows and tails (``store/redactions.py`` has the rule,
  :class:`~agentmem_nb.store.redactions.Redactions`; each backend keeps the events its own way).
* **problems** — reading never raises on bad data; what was wrong is listed by ``problems()``.
* **transaction** — ``with user.transaction():`` groups a turn's writes: one transaction on a database (all or
  none, then an error), each write on its own on files.
"""

from __future__ import annotations

import builtins
import datetime as _dt
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentmem_nb.messages import Message, ToolCall
    from agentmem_nb.store.conversations import Conversation
    from agentmem_nb.store.dialogue_log import DialogueEntry
    from agentmem_nb.store.facts import Fact, FactEvent, FactSource, Statement
    from agentmem_nb.store.scan import Cursor, Scan
    from agentmem_nb.store.layer import Appended, Window
    from agentmem_nb.store.longterm import MemoryHistory, MemorySnapshot, MemoryVersion
    from agentmem_nb.store.memory_store import MemoryStore
    from agentmem_nb.store.problems import Problem
    from agentmem_nb.store.redactions import Redactions

__all__ = ["MessageLayer", "LongTerm", "ConversationList", "DialogueRecord", "FactRecord", "UserStore", "KeepsFacts",
           "RecordQueue", "Store"]


@runtime_checkable
class MessageLayer(Protocol):
    """One session thread or one day of a user: ``kind`` is ``"session"`` or ``"daily"``, ``key`` the session id
    or the day."""

    @property
    def kind(self) -> str: ...

    @property
    def key(self) -> str: ...

    def __len__(self) -> int: ...

    def append(self, role: str, content: str = "", *, tags: Iterable[str] = (), meta: Mapping[str, Any] | None = None,
               tool_calls: Sequence[ToolCall] = (), ts: _dt.datetime | None = None,
               day: str | None = None) -> Appended:
        """Append a message to a session with its time and its day copy (a day layer refuses: ``TypeError``)."""
        ...

    def get(self, message_id: int) -> Message | None: ...

    def window(self, message_id: int, before: int = 2, after: int = 2) -> Window: ...

    def search(self, keyword: str, *, limit: int = 20) -> list[Message]: ...

    def messages(self) -> list[Message]: ...

    def head(self, count: int) -> list[Message]: ...

    def tail(self, count: int) -> list[Message]: ...

    def recent(self, rounds: int = 3) -> list[Message]: ...

    def first_and_last(self) -> tuple[Message, Message] | None: ...

    def position_of(self, message_id: int) -> int | None: ...

    def scan(self, since: Cursor | None = None) -> Scan: ...

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, stored record)`` at positions ``start <= i < stop`` (what ``scan`` names)."""
        ...

    def problems(self) -> list[Problem]: ...


@runtime_checkable
class LongTerm(Protocol):
    """The user's long-term memory text and its history."""

    def read(self) -> str: ...

    def current(self) -> MemorySnapshot: ...

    def write(self, text: str, *, source: str = "user",
              expected_version: int | None = None) -> MemoryVersion | None: ...

    def edit(self, change: Callable[[str], str], *, source: str = "user") -> MemoryVersion | None: ...

    def add_note(self, note: str, *, source: str = "remember_note") -> MemoryVersion | None: ...

    def history(self) -> MemoryHistory: ...

    def version(self, version: int) -> MemoryVersion: ...

    def text_at(self, version: int) -> str: ...

    def restore(self, version: int, *, which: str = "after") -> MemoryVersion | None: ...

    def problems(self) -> list[Problem]: ...


@runtime_checkable
class ConversationList(Protocol):
    """The user's conversations (title, created and updated times per session)."""

    def create(self, session_id: str | None = None, *, title: str = "") -> Conversation: ...

    def touch(self, session_id: str, *, title: str | None = None) -> Conversation: ...

    def rename(self, session_id: str, title: str) -> Conversation: ...

    def get(self, session_id: str) -> Conversation | None: ...

    def list(self) -> builtins.list[Conversation]: ...

    def problems(self) -> builtins.list[Problem]: ...


@runtime_checkable
class DialogueRecord(Protocol):
    """The dialogue log: one entry per turn; ``len(log)`` counts the readable ones (a follower's poll)."""

    def __len__(self) -> int: ...

    def append(self, entry: DialogueEntry) -> DialogueEntry: ...

    def entries(self) -> list[DialogueEntry]: ...

    def tail(self, count: int) -> list[DialogueEntry]: ...

    def problems(self) -> list[Problem]: ...


@runtime_checkable
class FactRecord(Protocol):
    """The user's facts: events appended, the current view and each key's history read back."""

    def record(self, statements: Iterable[Statement], *, source: FactSource | None = None,
               extracted_by: str = "user", valid_from: _dt.datetime | None = None) -> list[Fact]: ...

    def resolve(self, fact_id: int, *, accept: bool, by: str = "user") -> Fact: ...

    def delete(self, fact_id: int, *, by: str = "user") -> Fact: ...

    def all(self) -> list[Fact]: ...

    def current(self) -> list[Fact]: ...

    def get(self, subject: str, attribute: str) -> list[Fact]: ...

    def history(self, subject: str, attribute: str) -> list[Fact]: ...

    def conflicts(self) -> list[Fact]: ...

    def events(self) -> list[FactEvent]: ...

    def has_source(self, session_id: str, message_id: int) -> bool: ...

    def problems(self) -> list[Problem]: ...


@runtime_checkable
class UserStore(Protocol):
    """Everything one user has."""

    @property
    def user_id(self) -> str: ...

    @property
    def long_term(self) -> LongTerm: ...

    @property
    def conversations(self) -> ConversationList: ...

    @property
    def log(self) -> DialogueRecord: ...

    @property
    def redactions(self) -> Redactions: ...

    def session(self, session_id: str) -> MessageLayer: ...

    def daily(self, day: str | _dt.date) -> MessageLayer: ...

    def session_ids(self) -> list[str]: ...

    def days(self) -> list[str]: ...

    def day_for(self, moment: _dt.datetime) -> str: ...

    def append(self, session_id: str, role: str, content: str, *, tags: Iterable[str] = (),
               meta: Mapping[str, Any] | None = None, tool_calls: Sequence[ToolCall] = (),
               ts: _dt.datetime | None = None, day: str | None = None) -> Appended: ...

    def problems(self) -> list[Problem]: ...

    def transaction(self) -> AbstractContextManager[None]:
        """The writes inside the block belong together (a chat turn's): a backend with transactions commits them at
        once or none of them (and raises); on files each stands alone."""
        ...


@runtime_checkable
class RecordQueue(Protocol):
    """A durable, append-only list of JSON records with ids (the facts queue: ``queued``/``done``/``failed`` lines,
    :mod:`agentmem_nb.agent.facts_queue`). What is appended is kept before ``append`` returns."""

    def append(self, record: dict[str, Any]) -> dict[str, Any]: ...

    def iter_records(self) -> Iterator[tuple[int, dict[str, Any]]]: ...


@runtime_checkable
class KeepsFacts(Protocol):
    """A user store that also keeps structured memory: facts (:class:`FactRecord`), the agent's standing
    instructions (a :class:`LongTerm` document) and the queue of messages waiting for extraction. Both backends do;
    one that does not runs the agent without them (``isinstance(user, KeepsFacts)`` is the one test, see
    ``agent/``)."""

    @property
    def facts(self) -> FactRecord: ...

    @property
    def instructions(self) -> LongTerm: ...

    @property
    def fact_queue(self) -> RecordQueue: ...


@runtime_checkable
class Store(Protocol):
    """A memory store: users by id, one zone and one clock for all of them."""

    @property
    def zone(self) -> _dt.tzinfo | None: ...

    @property
    def clock(self) -> Callable[[], _dt.datetime]: ...

    def user(self, user_id: str) -> UserStore: ...

    def users(self) -> list[str]: ...


if TYPE_CHECKING:  # the type checker proves the files implement the contract (tests/contract proves the behaviour)

    def _files_implement_the_contract(store: MemoryStore) -> tuple[Store, UserStore, MessageLayer, LongTerm,
                                                                   ConversationList, DialogueRecord, KeepsFacts]:
        user = store.user("u")
        return store, user, user.session("s"), user.long_term, user.conversations, user.log, user

    from agentmem_nb.store.postgres import PostgresStore

    def _postgres_implements_the_contract(store: PostgresStore) -> tuple[Store, UserStore, MessageLayer, LongTerm,
                                                                         ConversationList, DialogueRecord, KeepsFacts]:
        user = store.user("u")
        return store, user, user.session("s"), user.long_term, user.conversations, user.log, user
