"""Term indexes that follow the store's message files as they grow.

A :class:`LayerIndex` mirrors one :class:`~agentmem_nb.store.MessageFile`: on every query it asks the file how many
records it has (``len()``, which reads only bytes appended since the last look) and tokenises only the new records
(``read_records(start, stop)``). Appending a message therefore never rebuilds anything.

Nothing is persisted: after a restart an index is rebuilt from the files on first use. That costs one sequential read
and one tokenisation per message (≈0.1 s for a LoCoMo conversation of 600 turns; see the benchmark figures in the
package README/report), which is cheaper to keep correct than a cache file that must be invalidated.

:class:`UserIndex` holds the layer indexes of one user; :func:`user_index` gives the shared one for a ``UserMemory``
(kept alive as long as that object), so every search of a process reuses the same postings.
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
import weakref
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentmem_nb.retrieval.bm25 import TermIndex
from agentmem_nb.retrieval.tokenize import Tokenizer, TokenizerConfig
from agentmem_nb.store import MessageFile, UserMemory

__all__ = ["IndexConfig", "LayerIndex", "UserIndex", "user_index", "document_text"]

_READ_STEP = 2048


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """What goes into the index for each message.

    Attributes:
        tokenizer: how text becomes terms.
        speaker: also index who spoke (``meta["speaker"]``, else the role when it is not plain ``user``/``assistant``),
            so "what did Caroline say about X" prefers Caroline's own turns. A name said in every other line of a
            two-person chat has a low IDF, so this nudges rather than dominates.
    """

    tokenizer: TokenizerConfig = TokenizerConfig()
    speaker: bool = True


_GENERIC_ROLES = frozenset({"user", "assistant", "system", "tool", "unknown"})


def document_text(record: dict[str, Any], *, speaker: bool) -> str:
    """The text indexed for one on-disk message record."""
    content = record.get("content")
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    if speaker:
        meta = record.get("meta")
        name = meta.get("speaker") if isinstance(meta, dict) else None
        if not isinstance(name, str):
            role = record.get("role")
            name = role if isinstance(role, str) and role.casefold() not in _GENERIC_ROLES else None
        if name:
            text = f"{name}: {text}"
    return text


class LayerIndex:
    """The term index of one message file, kept in step with it by :meth:`refresh`."""

    def __init__(self, layer: MessageFile, config: IndexConfig, tokenizer: Tokenizer) -> None:
        self.layer = layer
        self.config = config
        self.tokenizer = tokenizer
        self._reset()
        self._snapshot: tuple[int, int, int] | None = None
        self.rebuilds = 0  # how many times the file changed under us and the index started over
        self.records_read = 0  # records tokenised so far (tests assert appends read only the new ones)
        self._lock = threading.Lock()
        self._file_day = _dt.date.fromisoformat(layer.key).toordinal() if layer.kind == "daily" else 0

    @property
    def kind(self) -> str:
        """``"session"`` or ``"daily"``."""
        return self.layer.kind

    @property
    def key(self) -> str:
        """The session id or the day."""
        return self.layer.key

    def __len__(self) -> int:
        return len(self.terms)

    def snapshot(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lengths, days)`` of every indexed message, consistent with each other (numpy copies)."""
        with self._lock:
            return self.terms.lengths(), np.array(self.days, dtype=np.int64)

    def _day_of(self, record: dict[str, Any]) -> int:
        if self.layer.kind == "daily":
            return self._file_day
        ts = record.get("ts")
        try:
            # The first ten characters of an ISO timestamp are its local date as written (the user's zone).
            return _dt.date.fromisoformat(ts[:10]).toordinal() if isinstance(ts, str) else 0
        except ValueError:
            return 0

    def texts(self, start: int, stop: int) -> list[str]:
        """The indexed text of positions ``start <= i < stop`` (read from the file; for embedders)."""
        records = self.layer.read_records(start, stop)
        return [document_text(record, speaker=self.config.speaker) for _, record in records]

    def refresh(self) -> None:
        """Index the records appended since the last call.

        When the file's size and inode are what they were, nothing else is done (one ``stat``): a query over a
        user's thirty day files stays cheap.
        """
        with self._lock:
            try:
                st = os.stat(self.layer.path)
                snapshot: tuple[int, int, int] | None = (st.st_dev, st.st_ino, st.st_size)
            except FileNotFoundError:
                snapshot = None
            if snapshot is not None and snapshot == self._snapshot:
                return
            total = len(self.layer)
            done = len(self.terms)
            replaced = self._snapshot is not None and (snapshot is None or snapshot[:2] != self._snapshot[:2])
            if replaced or total < done or (done and self.layer.position_of(self.message_ids[done - 1]) != done - 1):
                # The file was replaced, shrank, or its ids moved: what we indexed is not this file any more.
                self._reset()
                self.rebuilds += 1
                done = 0
            for start in range(done, total, _READ_STEP):
                for message_id, record in self.layer.read_records(start, min(total, start + _READ_STEP)):
                    text = document_text(record, speaker=self.config.speaker)
                    self.terms.add(self.tokenizer.terms(text))
                    self.message_ids.append(message_id)
                    self.days.append(self._day_of(record))
                    self.asks.append(1 if ("?" in text or "\uff1f" in text) else 0)
                    self.records_read += 1
            # The stat was taken before reading: if the file grew meanwhile, the next call sees a new size and
            # looks again. (A torn last line counts in the size but is not a record until it is completed, which
            # changes the size.)
            self._snapshot = snapshot

    def _reset(self) -> None:
        self.terms = TermIndex()
        self.message_ids = array("q")
        self.days = array("i")  # proleptic ordinal of each message's day (0: unknown), for dates named in queries
        self.asks = bytearray()  # 1 where the message asks a question: its answer is likely the next turn


class UserIndex:
    """The layer indexes of one user, created on first use and refreshed before each query."""

    def __init__(self, user: UserMemory, config: IndexConfig | None = None) -> None:
        self.user = user
        self.config = config or IndexConfig()
        self.tokenizer = Tokenizer(self.config.tokenizer)
        self._layers: dict[tuple[str, str], LayerIndex] = {}
        self._lock = threading.Lock()

    def layer(self, kind: str, key: str) -> LayerIndex:
        """The up-to-date index of ``sessions/{key}`` (kind ``"session"``) or ``daily/{key}`` (kind ``"daily"``)."""
        source = self.user.session(key) if kind == "session" else self.user.daily(key)
        with self._lock:
            found = self._layers.get((kind, key))
            if found is None or found.layer is not source:
                found = self._layers[(kind, key)] = LayerIndex(source, self.config, self.tokenizer)
        found.refresh()
        return found

    def layers(self, kind: str) -> Iterator[LayerIndex]:
        """Every non-empty session (or day) of the user, indexed, in id (or date) order."""
        keys = self.user.session_ids() if kind == "session" else self.user.days()
        for key in keys:
            found = self.layer(kind, key)
            if len(found):
                yield found


_SHARED: weakref.WeakKeyDictionary[UserMemory, dict[IndexConfig, UserIndex]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def user_index(user: UserMemory, config: IndexConfig | None = None) -> UserIndex:
    """The process-wide :class:`UserIndex` of ``user`` for ``config`` (created on first call)."""
    config = config or IndexConfig()
    with _SHARED_LOCK:
        per_config = _SHARED.setdefault(user, {})
        found = per_config.get(config)
        if found is None:
            found = per_config[config] = UserIndex(user, config)
        return found
