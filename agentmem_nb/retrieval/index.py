"""Term indexes that follow the store's message files as they grow.

One :class:`KindIndex` holds every message of one kind of file of a user — all the session files, or all the day
files — in a single :class:`~agentmem_nb.retrieval.bm25.TermIndex`, documents numbered in the order they were
indexed ("global ids"). A search over everything therefore costs one vectorised expression per query term, however
many files there are (a year of day files is 365 files); a search over one session or one day is the same search
with a mask.

Each file is followed by a :class:`FileFollower` through the store's scan: on every query the follower passes its
cursor to ``MessageFile.scan``, which reads nothing when the file is unchanged and otherwise names the new positions
(reading only bytes appended since the last look); the follower tokenises those records (``read_records``).
Appending a message never rebuilds anything. A file the scan calls rewritten or truncated (an external edit, a
replaced file) makes its kind index start over.

A fresh process first looks for the index persisted by an earlier one (:mod:`agentmem_nb.retrieval.persist`, checked
against every file it covers) and tokenises only what was appended since. Without a valid one, the index is built
from the files on first use: one sequential read, records taken 8,192 at a time, each block tokenised by
:class:`~agentmem_nb.retrieval.encode.BlockEncoder` (Python work per distinct chunk of text, not per word) and
tallied by :meth:`TermIndex.add_block` (see the figures in ``agentmem_nb/retrieval/README.md``).

:func:`user_index` gives the shared :class:`UserIndex` of a ``UserMemory`` (kept as long as that object lives), so
every search in a process reuses the same postings.
"""

from __future__ import annotations

import datetime as _dt
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import getitem, itemgetter, or_
from typing import Any

import numpy as np

from agentmem_nb.items import LayerKind
from agentmem_nb.retrieval import persist
from agentmem_nb.retrieval.bm25 import Column, ColumnView, TermIndex
from agentmem_nb.retrieval.encode import BlockEncoder
from agentmem_nb.retrieval.tokenize import Tokenizer, TokenizerConfig
from agentmem_nb.store import Cursor, MessageFile, UserMemory

__all__ = ["IndexConfig", "FileFollower", "KindIndex", "ScopeView", "UserIndex", "user_index", "document_text",
           "document_texts"]

Kind = LayerKind  # an index covers the session files or the day files (the one layer name, items.LayerKind)
_READ_STEP = 8192  # records per read and per encoded block: large enough that per-block costs vanish
# Term occurrences tallied into the term index at once: enough to gather the many small files of a "days" index
# into one tally, few enough that the tally's arrays stay in the CPU caches (larger tallies measured slower).
_TALLY_TERMS = 250_000
_KEEP_CHUNKS = 20_000  # chunk tables up to this size (about 2 MB) outlive a refresh


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
            name = _role_name(record.get("role"))
        if name:
            text = f"{name}: {text}"
    return text


def document_texts(records: Sequence[dict[str, Any]], *, speaker: bool) -> list[str]:
    """:func:`document_text` of each record. A block of ordinary records (text content; a ``meta`` object; the
    speaker named in every record's meta or in none) is done with C-level passes; any other block record by record."""
    texts = _ordinary_document_texts(records, speaker=speaker)
    return texts if texts is not None else [document_text(record, speaker=speaker) for record in records]


def _ordinary_document_texts(records: Sequence[dict[str, Any]], *, speaker: bool) -> list[str] | None:
    """:func:`document_texts` of a block of ordinary records, or ``None`` if the block is not one."""
    contents: list[Any] = list(map(dict.get, records, repeat("content")))  # JSON values: strs once checked
    if not set(map(type, contents)) <= {str}:
        return None
    if not speaker:
        return contents
    metas: list[Any] = list(map(dict.get, records, repeat("meta")))  # JSON values: dicts once checked
    if not set(map(type, metas)) <= {dict}:
        return None
    names: list[Any] = list(map(dict.get, metas, repeat("speaker")))  # JSON values, checked below
    kinds = set(map(type, names))
    if kinds <= {str}:
        pass  # every record names its speaker
    elif str not in kinds:  # no record does: the role may name one
        roles = list(map(dict.get, records, repeat("role")))
        try:
            named = {role: _role_name(role) for role in set(roles)}
        except TypeError:  # an unhashable role (a list, an object): leave it to the record-by-record rules
            return None
        names = list(map(named.__getitem__, roles))
    else:
        return None
    if not any(names):
        return contents
    if all(names):
        return list(map("{}: {}".format, names, contents))
    return [f"{name}: {text}" if name else text for name, text in zip(names, contents, strict=True)]


def _role_name(role: object) -> str | None:
    """The speaker a role names (``None`` for the generic roles), as :func:`document_text` reads it."""
    return role if isinstance(role, str) and role.casefold() not in _GENERIC_ROLES else None


def _ordinal(date: str) -> int:
    """Proleptic ordinal of an ISO date, 0 if it is not one."""
    try:
        return _dt.date.fromisoformat(date).toordinal()
    except ValueError:
        return 0


def _asks(texts: Sequence[str]) -> bytearray:
    """Per text, 1 if the message asks a question (its answer is likely the next turn), else 0."""
    latin, fullwidth = map(str.__contains__, texts, repeat("?")), map(str.__contains__, texts, repeat("\uff1f"))
    return bytearray(map(or_, latin, fullwidth))


class FileFollower:
    """What the index knows about one message file: how far it has read it and where each message went."""

    def __init__(self, layer: MessageFile, file_id: int) -> None:
        self.layer = layer
        self.file_id = file_id
        # Per position in the file (bm25.Column: mapped from the persisted index where there is one): the message id,
        # the global id in the kind index, and 1 if the message asks a question.
        self.message_ids = Column("q")
        self.gids = Column("q")
        self.asks = Column("B")
        self.records_read = 0  # records tokenised so far (tests assert appends read only the new ones)
        self.cursor: Cursor | None = None  # the store's scan cursor after what was indexed
        self.day = _dt.date.fromisoformat(layer.key).toordinal() if layer.kind == "daily" else 0

    @property
    def kind(self) -> LayerKind:
        """``"session"`` or ``"daily"``."""
        return self.layer.kind

    @property
    def key(self) -> str:
        """The session id or the day."""
        return self.layer.key

    def __len__(self) -> int:
        return len(self.message_ids)

    def day_of(self, record: dict[str, Any]) -> int:
        """Proleptic ordinal of a record's day (0 if unknown)."""
        if self.day:
            return self.day
        ts = record.get("ts")
        # The first ten characters of an ISO timestamp are its local date as written (the user's zone).
        return _ordinal(ts[:10]) if isinstance(ts, str) else 0

    def days_of(self, records: Sequence[dict[str, Any]]) -> list[int]:
        """:meth:`day_of` of each record; a date is parsed once per block, not once per message."""
        if self.day:
            return [self.day] * len(records)
        stamps: list[Any] = list(map(dict.get, records, repeat("ts")))  # JSON values: strs once checked
        if set(map(type, stamps)) <= {str}:  # the usual case: every record has a timestamp
            dates: list[str] = list(map(getitem, stamps, repeat(slice(0, 10))))
            ordinals = {date: _ordinal(date) for date in set(dates)}
            return list(map(ordinals.__getitem__, dates))
        seen: dict[str, int] = {}
        out = []
        for record in records:
            ts = record.get("ts")
            if not isinstance(ts, str):
                out.append(0)
                continue
            date = ts[:10]
            day = seen.get(date)
            if day is None:
                day = seen[date] = _ordinal(date)
            out.append(day)
        return out


class KindIndex:
    """Every message of one kind of file (sessions or days) of a user, in one term index. Thread-safe."""

    def __init__(self, kind: Kind, config: IndexConfig, tokenizer: Tokenizer) -> None:
        self.kind = kind
        self.config = config
        self.tokenizer = tokenizer
        self.rebuilds = 0  # times a file changed under us (replaced, shrunk) and the index started over
        self.restore_tried = False  # a persisted copy is looked for once, before the first refresh (persist.py)
        self.lock = threading.RLock()  # public: persist.py restores and saves the index under it too
        self._reset()

    def _reset(self) -> None:
        self.persisted = 0  # messages of this index known to be in its persisted copy
        self.terms = TermIndex()
        self.encoder = BlockEncoder(self.tokenizer, self.terms)
        self.files: list[FileFollower] = []
        self._by_key: dict[str, FileFollower] = {}
        # Per global id (bm25.Column: a fresh process maps them from the persisted index, one copy, and appends on top)
        self.file_of = Column("i")
        self.position_of = Column("q")
        self.days = Column("i")
        self.prev = Column("q")  # global id of the previous message of the same file, or -1
        self.next = Column("q")  # global id of the next message of the same file, or -1
        # Encoded blocks not yet in the term index: tallying many blocks at once (up to _TALLY_TERMS occurrences)
        # takes the per-term Python step once per distinct term instead of once per term and block.
        self._untallied: list[tuple[np.ndarray, np.ndarray]] = []
        self._untallied_terms = 0

    def __len__(self) -> int:
        return len(self.file_of)

    def follower(self, key: str) -> FileFollower | None:
        """The follower of file ``key``, if it was indexed."""
        return self._by_key.get(key)

    def refresh(self, layers: Sequence[MessageFile]) -> list[FileFollower]:
        """Bring the given files up to date (reading only what was appended); returns their followers."""
        with self.lock:
            for _attempt in range(2):
                try:
                    followers = [self._follow(layer) for layer in layers]
                except _StartOver:
                    self.rebuilds += 1
                    rebuilds = self.rebuilds
                    self._reset()
                    self.rebuilds = rebuilds
                    continue
                except BaseException:
                    self._tally()  # what was read in full stays indexed, the arrays in step with the terms
                    raise
                finally:
                    # A large chunk table pays off within a large read; between queries it would only hold memory
                    # (appended messages are looked up through the tokenizer's own memo nearly as fast). A small one
                    # is kept: it makes the next append cheaper.
                    self.encoder.clear(keep=_KEEP_CHUNKS)
                self._tally()
                return followers
            raise RuntimeError("the memory files kept changing while they were being indexed; try again")

    def _follow(self, layer: MessageFile) -> FileFollower:
        follower = self._by_key.get(layer.key)
        if follower is None or follower.layer is not layer:
            if follower is not None:
                raise _StartOver  # a different MessageFile object for a known key: re-read from scratch
            follower = FileFollower(layer, len(self.files))
            self.files.append(follower)
            self._by_key[layer.key] = follower
        scanned = layer.scan(follower.cursor)
        if scanned.change == "unchanged":
            return follower  # nothing read
        if scanned.change != "appended" or scanned.start != len(follower):
            raise _StartOver  # the file was rewritten, replaced or cut: what we indexed is gone
        for start in range(scanned.start, scanned.stop, _READ_STEP):
            self._add_block(follower, layer.read_records(start, min(scanned.stop, start + _READ_STEP)))
        follower.cursor = scanned.cursor  # positions up to scanned.stop are indexed; later appends come next time
        return follower

    def _add_block(self, follower: FileFollower, pairs: list[tuple[int, dict[str, Any]]]) -> None:
        """Index consecutive records of ``follower``'s file (``(message_id, record)`` in file order) in one block:
        tokenised by the block encoder, tallied by one :meth:`TermIndex.add_block`, per-message arrays extended."""
        if not pairs:
            return
        records = list(map(itemgetter(1), pairs))
        texts = document_texts(records, speaker=self.config.speaker)
        encoded, lengths = self.encoder.encode(texts)
        term_ids = encoded.astype(np.int32)
        del encoded  # the 64-bit copy goes now, not after a tally below (a long text's ids are most of its memory)
        first = len(self.file_of)  # the global id the term index will give the block's first message
        self._untallied.append((term_ids, lengths))
        self._untallied_terms += len(term_ids)
        del term_ids
        count = len(pairs)
        previous = follower.gids[-1] if follower.gids else -1
        start = len(follower)
        follower.message_ids.extend(map(itemgetter(0), pairs))
        follower.gids.extend(range(first, first + count))
        follower.asks.extend(_asks(texts))
        follower.records_read += count
        self.file_of.extend(repeat(follower.file_id, count))
        self.position_of.extend(range(start, start + count))
        self.days.extend(follower.days_of(records))
        # Neighbours within the file: the block's messages follow each other and the file's previous last one.
        self.prev.append(previous)
        self.prev.extend(range(first, first + count - 1))
        self.next.extend(range(first + 1, first + count))
        self.next.append(-1)
        if previous >= 0:
            self.next[previous] = first
        if self._untallied_terms >= _TALLY_TERMS:
            self._tally()

    def _tally(self) -> None:
        """Add the encoded blocks waiting in ``_untallied`` to the term index, in one :meth:`TermIndex.add_block`."""
        if not self._untallied:
            return
        blocks, self._untallied, self._untallied_terms = self._untallied, [], 0
        if len(blocks) == 1:  # no copy of one block's ids
            first = self.terms.add_block(*blocks[0])
        else:
            first = self.terms.add_block(np.concatenate([ids for ids, _ in blocks]),
                                         np.concatenate([lengths for _, lengths in blocks]))
        if first + sum(len(lengths) for _, lengths in blocks) != len(self.file_of):
            raise RuntimeError(f"{self.kind} index out of step: {len(self.terms)} documents for "
                               f"{len(self.file_of)} messages")

    def texts(self, gids: Sequence[int]) -> list[str]:
        """The indexed text of the given global ids (read from the files; for embedders)."""
        out: dict[int, str] = {}
        by_file: dict[int, list[int]] = {}
        for gid in gids:
            by_file.setdefault(self.file_of[gid], []).append(gid)
        for file_id, members in by_file.items():
            follower = self.files[file_id]
            positions = sorted(self.position_of[g] for g in members)
            records = dict(zip(positions, follower.layer.read_at(positions), strict=True))
            for gid in members:
                out[gid] = document_text(records[self.position_of[gid]][1], speaker=self.config.speaker)
        return [out[g] for g in gids]

    def arrays(self) -> IndexArrays:
        """The per-message arrays as they are now, for one query: views, not copies (a fresh process's arrays are
        the mapped persisted index; only what was appended since is copied, and a query reads only the values it
        looks up — at 1M messages the copies this used to take were 45 MiB)."""
        with self.lock:
            lengths, total_length = self.terms.length_view()
            return IndexArrays(
                lengths=lengths,
                file_of=self.file_of.snapshot(),
                position_of=self.position_of.snapshot(),
                days=self.days.snapshot(),
                prev=self.prev.snapshot(),
                next=self.next.snapshot(),
                files=len(self.files),
                total_length=total_length,
            )


class _StartOver(Exception):
    """Internal: a followed file no longer holds what was indexed from it."""


@dataclass(frozen=True, slots=True)
class IndexArrays:
    """Per-message arrays of a :class:`KindIndex` taken together, indexed by global id (read with ``take``)."""

    lengths: ColumnView
    file_of: ColumnView
    position_of: ColumnView
    days: ColumnView
    prev: ColumnView
    next: ColumnView
    files: int
    total_length: int  # the sum of ``lengths``


@dataclass(frozen=True, slots=True)
class ScopeView:
    """The part of a :class:`KindIndex` a search covers: some of its files (all of them for "everything")."""

    index: KindIndex
    followers: tuple[FileFollower, ...]
    whole: bool  # True when every file of the kind index is in scope (no mask needed)

    @property
    def size(self) -> int:
        """Number of messages in scope."""
        return sum(len(f) for f in self.followers)


class UserIndex:
    """The two kind indexes (sessions, days) of one user, created on first use and refreshed before each query."""

    def __init__(self, user: UserMemory, config: IndexConfig | None = None) -> None:
        self.user = user
        self.config = config or IndexConfig()
        self.tokenizer = Tokenizer(self.config.tokenizer)
        self.kinds: dict[str, KindIndex] = {
            "session": KindIndex("session", self.config, self.tokenizer),
            "daily": KindIndex("daily", self.config, self.tokenizer),
        }

    def view(self, kind: Kind, key: str | None = None) -> ScopeView:
        """An up-to-date view of one file (``key``) or of every file of ``kind`` (``key=None``)."""
        index = self.kinds[kind]
        persist.restore(index, self.user)  # once: a valid persisted index, then the refresh reads what is new
        view = self._view(index, kind, key)
        persist.keep(index, self.user)  # when it grew enough since it was persisted
        return view

    def _view(self, index: KindIndex, kind: Kind, key: str | None) -> ScopeView:
        if key is not None:
            layer = self.user.session(key) if kind == "session" else self.user.daily(key)
            followers = index.refresh([layer])
            return ScopeView(index, tuple(followers), whole=len(index.files) == 1)
        keys = self.user.session_ids() if kind == "session" else self.user.days()
        layers = [self.user.session(k) if kind == "session" else self.user.daily(k) for k in keys]
        followers = index.refresh(layers)
        return ScopeView(index, tuple(f for f in followers if len(f)), whole=len(followers) == len(index.files))


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
