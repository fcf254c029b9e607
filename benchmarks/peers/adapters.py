"""One adapter per store under test, each using its store the way a user of that library naturally would.

Every adapter answers the same four questions about the same conversation (see :mod:`benchmarks.peers.data`) and
returns message *contents*, so the runner can check that every peer returned exactly the same messages before any
timing is believed. Libraries are imported inside the adapters: a worker process imports only the store it measures.

How each peer models a conversation, and why that is the fair reading of its API:

* ``FileChatMessageHistory`` (langchain-community): one JSON file per conversation; ``add_message`` per message; a
  window is ``history.messages[i-2:i+3]`` and a keyword lookup scans ``history.messages`` — the class has no other read
  path (every read parses the whole file, every append rewrites it).
* LangGraph ``InMemoryStore`` / ``SqliteStore``: namespace ``(user, session)``, key = the message id, value =
  ``{"role", "content", "ts"}``; a window is five ``store.get`` calls by key. The Store API's ``filter`` only does
  equality/comparisons on whole values and ``query=`` needs an embedding index (semantic, not keyword), so a keyword
  lookup lists the namespace with one ``store.search(ns, limit=n)`` (the count is known, which spares the peer any
  paging) and filters in Python. A second SqliteStore row bypasses the Store API with a ``LIKE`` query on its table:
  the best a user could do without leaving SQLite.
* agentmem_nb: ``UserMemory.append`` (writes the session line *and* the day line — two files, as the agent does);
  ``session.window(id, 2, 2)``; ``session.search(term, limit=20)``.

Keyword semantics for all: the last 20 messages whose content contains the term (casefolded), oldest first — what the
agent's ``search_session`` tool asks for.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.peers.data import SESSION_ID, USER_ID, SynthMessage

__all__ = ["Peer", "PEERS", "KEYWORD_LIMIT", "peer_class"]

KEYWORD_LIMIT = 20
"""Hits a keyword lookup returns (the agent tool's default)."""


class Peer(ABC):
    """A store opened (or created) in ``root``, holding one conversation of ``n`` messages once filled."""

    key: ClassVar[str]
    """Command-line name (``--peers``)."""
    label: ClassVar[str]
    """Row label in the tables."""
    persistent: ClassVar[bool] = True
    """False for in-memory stores: nothing to reopen, so no cold-open figure."""
    rewrites_history: ClassVar[bool] = False
    """True when one append costs O(messages so far): the runner then measures the ends and estimates the middle."""
    workloads: ClassVar[frozenset[str]] = frozenset({"append", "window", "keyword", "cold"})
    may_extrapolate: ClassVar[bool] = True
    """False for agentmem_nb itself: its append runs are always timed in full."""
    extra_keyword_rows: ClassVar[tuple[str, ...]] = ()
    """Labels of additional keyword strategies (``keyword_variant(label, ...)``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @staticmethod
    def import_library() -> None:
        """Import the peer's library (timed separately in the cold-open figure)."""

    @abstractmethod
    def append(self, message: SynthMessage) -> None:
        """Add one message to the conversation."""

    def bulk_load(self, messages: Sequence[SynthMessage]) -> None:
        """Add many messages at once, not timed (only needed by peers that rewrite their history)."""
        for message in messages:
            self.append(message)

    @abstractmethod
    def window(self, anchor: int, n: int) -> list[str]:
        """Contents of messages ``anchor-2 .. anchor+2`` (clamped to ``1..n``)."""

    @abstractmethod
    def keyword(self, term: str, n: int) -> list[str]:
        """Contents of the last :data:`KEYWORD_LIMIT` messages containing ``term`` (casefolded), oldest first."""

    def keyword_variant(self, label: str, term: str, n: int) -> list[str]:
        """An alternative keyword strategy named in :attr:`extra_keyword_rows`."""
        raise KeyError(label)

    def close(self) -> None:
        """Release files and connections."""


def _bounds(anchor: int, n: int) -> range:
    return range(max(1, anchor - 2), min(n, anchor + 2) + 1)


# ---------------------------------------------------------------------------------------------------- agentmem_nb


class AgentmemPeer(Peer):
    key = "agentmem"
    label = "agentmem_nb"
    durability = "flush"
    may_extrapolate = False

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        from agentmem_nb.store import MemoryStore

        self.store = MemoryStore(root, zone="UTC", durability=self.durability)  # type: ignore[arg-type]
        self.user = self.store.user(USER_ID)
        self.thread = self.user.session(SESSION_ID)

    @staticmethod
    def import_library() -> None:
        import agentmem_nb.store  # noqa: F401

    def append(self, message: SynthMessage) -> None:
        self.user.append(SESSION_ID, message.role, message.content, ts=message.ts)

    def window(self, anchor: int, n: int) -> list[str]:
        return [m.content for m in self.thread.window(anchor, 2, 2).messages]

    def keyword(self, term: str, n: int) -> list[str]:
        return [m.content for m in self.thread.search(term, limit=KEYWORD_LIMIT)]


class AgentmemFsyncPeer(AgentmemPeer):
    """The same store with ``durability="fsync"``: compare with SqliteStore, whose default commit also fsyncs."""

    key = "agentmem-fsync"
    label = "agentmem_nb (durability='fsync')"
    durability = "fsync"
    workloads = frozenset({"append"})
    may_extrapolate = True  # fsync-bound, like SqliteStore: on a busy disk a 100k run may be cut short

    def bulk_load(self, messages: Sequence[SynthMessage]) -> None:
        # Untimed filler: the same lines written without fsync (the bytes on disk are identical), then the layer
        # indexes are brought up to date here so the timed appends that follow do not pay for reading them.
        from agentmem_nb.store import MemoryStore

        filler = MemoryStore(self.root, zone="UTC").user(USER_ID)
        for message in messages:
            filler.append(SESSION_ID, message.role, message.content, ts=message.ts)
        self.thread.sync()
        for day in self.user.days():
            self.user.daily(day).sync()


# ---------------------------------------------------------------------------------------------------- LangChain


class FileChatHistoryPeer(Peer):
    key = "filechat"
    label = "FileChatMessageHistory"
    rewrites_history = True

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # langchain-community's "being sunset" notice on import
            from langchain_community.chat_message_histories import FileChatMessageHistory
        from langchain_core.messages import AIMessage, HumanMessage

        root.mkdir(parents=True, exist_ok=True)
        self._types = {"user": HumanMessage, "assistant": AIMessage}
        self.history = FileChatMessageHistory(str(root / f"{USER_ID}.{SESSION_ID}.json"))

    @staticmethod
    def import_library() -> None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # The package resolves its classes lazily: touching the class is what really imports it.
            from langchain_community.chat_message_histories import FileChatMessageHistory  # noqa: F401
        import langchain_core.messages  # noqa: F401

    def _convert(self, message: SynthMessage) -> Any:
        return self._types[message.role](content=message.content)

    def append(self, message: SynthMessage) -> None:
        self.history.add_message(self._convert(message))

    def bulk_load(self, messages: Sequence[SynthMessage]) -> None:
        # Exactly what add_message writes (messages_to_dict, json.dumps with ensure_ascii), in one rewrite.
        from langchain_core.messages import messages_to_dict

        path = self.history.file_path
        stored = json.loads(path.read_text())
        stored += messages_to_dict([self._convert(m) for m in messages])
        path.write_text(json.dumps(stored, ensure_ascii=self.history.ensure_ascii))

    def window(self, anchor: int, n: int) -> list[str]:
        span = _bounds(anchor, n)
        return [m.content for m in self.history.messages[span.start - 1 : span.stop - 1]]

    def keyword(self, term: str, n: int) -> list[str]:
        needle = term.casefold()
        hits = [m.content for m in self.history.messages if needle in m.content.casefold()]
        return hits[-KEYWORD_LIMIT:]


# ---------------------------------------------------------------------------------------------------- LangGraph


class _LangGraphStorePeer(Peer):
    namespace = (USER_ID, SESSION_ID)
    store: Any

    def append(self, message: SynthMessage) -> None:
        self.store.put(self.namespace, str(message.message_id),
                       {"role": message.role, "content": message.content, "ts": message.ts_iso})

    def bulk_load(self, messages: Sequence[SynthMessage]) -> None:
        from langgraph.store.base import PutOp

        self.store.batch([PutOp(self.namespace, str(m.message_id), {"role": m.role, "content": m.content,
                                                                    "ts": m.ts_iso}) for m in messages])

    def window(self, anchor: int, n: int) -> list[str]:
        items = (self.store.get(self.namespace, str(i)) for i in _bounds(anchor, n))
        return [item.value["content"] for item in items if item is not None]

    def keyword(self, term: str, n: int) -> list[str]:
        needle = term.casefold()
        items = self.store.search(self.namespace, limit=n)
        hits = sorted((int(item.key), item.value["content"]) for item in items
                      if needle in item.value["content"].casefold())
        return [content for _, content in hits[-KEYWORD_LIMIT:]]


class InMemoryStorePeer(_LangGraphStorePeer):
    key = "inmemory"
    label = "LangGraph InMemoryStore"
    persistent = False
    workloads = frozenset({"append", "window", "keyword"})

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        from langgraph.store.memory import InMemoryStore

        self.store = InMemoryStore()

    @staticmethod
    def import_library() -> None:
        import langgraph.store.memory  # noqa: F401


class SqliteStorePeer(_LangGraphStorePeer):
    key = "sqlite"
    label = "LangGraph SqliteStore"
    extra_keyword_rows = ("LangGraph SqliteStore, raw SQL LIKE",)

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        from langgraph.store.sqlite import SqliteStore

        root.mkdir(parents=True, exist_ok=True)
        # What SqliteStore.from_conn_string does (autocommit connection), without the context manager, so the
        # store can live across calls. Journal mode and synchronous stay at SQLite's defaults, as users get them.
        self.conn = sqlite3.connect(str(root / "store.sqlite"), check_same_thread=False, isolation_level=None)
        self.store = SqliteStore(self.conn)
        self.store.setup()

    @staticmethod
    def import_library() -> None:
        import langgraph.store.sqlite  # noqa: F401

    def keyword_variant(self, label: str, term: str, n: int) -> list[str]:
        if label != self.extra_keyword_rows[0]:
            raise KeyError(label)
        # LIKE is case-insensitive for ASCII only, which suffices for the ASCII benchmark term; newest first by rowid
        # (insertion order) so SQLite can stop after the last 20 hits, as agentmem_nb does.
        rows = self.conn.execute(
            "SELECT value FROM store WHERE prefix = ? AND json_extract(value, '$.content') LIKE ? "
            "ORDER BY rowid DESC LIMIT ?",
            (".".join(self.namespace), f"%{term}%", KEYWORD_LIMIT),
        ).fetchall()
        return [json.loads(value)["content"] for (value,) in reversed(rows)]

    def close(self) -> None:
        self.conn.close()


PEERS: dict[str, type[Peer]] = {
    cls.key: cls for cls in (AgentmemPeer, AgentmemFsyncPeer, FileChatHistoryPeer, InMemoryStorePeer, SqliteStorePeer)
}
"""Every adapter by command-line name, in table order."""


def peer_class(key: str) -> type[Peer]:
    """The adapter named ``key``; the error lists the valid names."""
    try:
        return PEERS[key]
    except KeyError:
        raise ValueError(f"unknown peer {key!r}: choose from {', '.join(PEERS)}") from None


def remove_tree(path: Path) -> None:
    """Delete a benchmark data folder (ignores one that is already gone)."""
    shutil.rmtree(path, ignore_errors=True)
