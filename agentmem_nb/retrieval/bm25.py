"""A small incremental inverted index and Okapi BM25 over it.

Why hand-written rather than ``bm25s``: ``bm25s`` builds an immutable sparse matrix from the whole corpus, so adding
one message means re-indexing everything, and its scores come without per-term contributions. Here a message is one
``add`` (postings lists grow in place), the corpus statistics (N, document frequency, average length) are read at
query time so they are always current, and scoring a query touches only the postings of its terms — a few thousand
integers for a conversation, each term one vectorised numpy expression. Each score is returned with its
per-term breakdown, so a hit can say *why* it was found.

BM25 as in Lucene (Robertson/Spärck Jones IDF shifted to stay positive)::

    idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
    score(d, q) = Σ_t  w_q(t) · idf(t) · tf·(k1 + 1) / (tf + k1·(1 - b + b·|d|/avgdl))

``k1 = 1.2, b = 0.75`` are the textbook defaults; see :class:`BM25Params` for why they are kept for chat turns.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import filterfalse, repeat
from typing import Any

import numpy as np

from agentmem_nb.errors import StoreError

__all__ = ["BM25Params", "Column", "ColumnView", "FrozenTerms", "MappedFile", "TermIndex", "CorpusStats", "idf",
           "score_into", "score_docs", "score_query", "explain_terms"]

_EMPTY = np.zeros(0, dtype=np.int64)
# Up to this many documents, add_block counts (and BlockEncoder.encode tokenises) in plain Python: numpy's fixed
# cost per call would dominate.
SMALL_BLOCK = 16
# A few documents of many terms (one long pasted text) go the numpy way too: the plain-Python way would hold every
# term occurrence as a Python int (about 36 bytes each) in a list and a Counter.
_FEW_TERMS = 1 << 14


_DTYPES: dict[str, np.dtype[Any]] = {"i": np.dtype("<i4"), "q": np.dtype("<i8"), "B": np.dtype("u1")}
# A snapshot folds the tail into the base when the tail holds more than this many values and more than an eighth of
# the base: the snapshot's copy of the tail stays small, and values are copied a bounded number of times overall.
_FOLD_MIN = 1 << 12


class MappedFile:
    """A file whose arrays are numpy views of a read-only mapping, with a way to read a few values without the
    mapping.

    Why both: numpy needs the mapping for the bulk lookups of a query (every candidate's length and neighbours), but
    one value read through it makes the whole page-cache folio around it resident in this process — on a current
    kernel (large folios, mapped whole on fault) up to 2 MB per value. A query also reads a few dozen scattered
    values (the returned messages' positions and ids, the feedback and explained documents' terms, each query
    term's postings); at 1M messages, read through the mapping they made 60–80 MB of the cache resident.
    :meth:`read` takes them with ``pread`` instead. The mapping starts at offset 0, so an array's place in the file
    is its address minus the mapping's.
    """

    __slots__ = ("fd", "path", "_address", "__weakref__")

    def __init__(self, fd: int, mapped: Any, path: str) -> None:
        self.fd = fd  # owned: closed when this object goes (the mapping needs no descriptor)
        self.path = path  # for errors only
        self._address = np.frombuffer(mapped, dtype=np.uint8, count=0).ctypes.data
        weakref.finalize(self, os.close, fd)

    def read(self, values: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """``values[lo:hi]`` of an array mapped from this file, as a fresh array read with ``pread``."""
        hi = max(lo, min(hi, len(values)))
        out = np.empty(hi - lo, dtype=values.dtype)
        if hi > lo:
            size = out.nbytes
            offset = values.ctypes.data - self._address + lo * values.itemsize
            if os.preadv(self.fd, [out.data.cast("B")], offset) != size:
                # Our writers replace a cache whole (atomic rename) and never shorten one in place.
                raise StoreError(f"the retrieval cache {self.path} was cut short while in use; delete it (it is "
                                 "rebuilt from the memory files) and run the query again")
        return out


class Column:
    """A per-document integer array that only grows (lengths, file of, neighbours, message ids, ...).

    Why not one ``array.array``: the persisted index (``retrieval/persist.py``) gives a fresh process these arrays as
    numpy views of the mapped cache file — one copy, in the page cache, of which a query touches only the pages it
    reads — and a process must still append to them. So a column is a read-only numpy ``base`` (mapped, or folded
    from earlier appends), the values appended since in a small ``array.array`` tail, and the few base values
    changed since (``next`` of a file's last message when the file grows). Readers take a :class:`ColumnView`
    (:meth:`snapshot`): the base as it is (no copy) and a copy of the small tail. A single value of a mapped base is
    read with ``pread`` (:class:`MappedFile`).

    Appends, changes and snapshots need the owner's lock; reading one value does not (the parts are replaced
    together, as one tuple, when a snapshot folds the tail into a new base).
    """

    __slots__ = ("typecode", "_parts")

    def __init__(self, typecode: str, base: np.ndarray | None = None, file: MappedFile | None = None) -> None:
        self.typecode = typecode
        dtype = _DTYPES[typecode]
        if base is not None and base.dtype != dtype:
            raise ValueError(f"a {typecode!r} column needs a {dtype} base, got {base.dtype}")
        # (base, tail, {base position: its value now}, the file the base is mapped from)
        self._parts: tuple[np.ndarray, array[int], dict[int, int], MappedFile | None] = (
            np.zeros(0, dtype=dtype) if base is None else base, array(typecode), {}, file if base is not None else None)

    @property
    def base(self) -> np.ndarray:
        """The read-only numpy part (mapped from a persisted index, or folded from earlier appends)."""
        return self._parts[0]

    def __len__(self) -> int:
        base, tail, _, _ = self._parts
        return len(base) + len(tail)

    def __getitem__(self, position: int) -> int:
        base, tail, patched, file = self._parts
        nb = len(base)
        size = nb + len(tail)
        if position < 0:
            position += size
        if not 0 <= position < size:
            raise IndexError(f"position {position} out of range (0..{size - 1})")
        if position >= nb:
            return tail[position - nb]
        found = patched.get(position)
        if found is not None:
            return found
        return int(base[position] if file is None else file.read(base, position, position + 1)[0])

    def __setitem__(self, position: int, value: int) -> None:
        base, tail, patched, _ = self._parts
        nb = len(base)
        if position < 0:
            position += nb + len(tail)
        if not 0 <= position < nb + len(tail):
            raise IndexError(f"position {position} out of range (0..{nb + len(tail) - 1})")
        if position >= nb:
            tail[position - nb] = value
        else:
            patched[position] = value

    def __iter__(self) -> Iterator[int]:
        return iter(self.whole().tolist())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self.whole()
        return out if dtype is None else out.astype(dtype, copy=False)

    def append(self, value: int) -> None:
        """Add one value at the end."""
        self._parts[1].append(value)

    def extend(self, values: Iterable[int]) -> None:
        """Add values at the end."""
        self._parts[1].extend(values)

    def frombytes(self, raw: bytes) -> None:
        """Add values at the end, given as machine values (as ``array.frombytes``)."""
        self._parts[1].frombytes(raw)

    def whole(self) -> np.ndarray:
        """Every value as one numpy array (the base itself, not a copy, when nothing was appended or changed)."""
        return self._view(*self._parts).whole()

    def snapshot(self) -> ColumnView:
        """The column as it is now, for a reader: the base (not copied), a copy of the tail, the changed values.
        A tail grown past an eighth of the base is folded into a new base first (one copy of the column), so the
        copy a snapshot takes stays small and each value is copied a bounded number of times."""
        base, tail, patched, file = self._parts
        if len(tail) > max(_FOLD_MIN, len(base) >> 3) or len(patched) > _FOLD_MIN:
            folded = self._view(base, tail, patched, file).whole()
            folded.flags.writeable = False
            self._parts = base, tail, patched, file = folded, array(self.typecode), {}, None
        return self._view(base, tail, patched, file)

    @staticmethod
    def _view(base: np.ndarray, tail: array[int], patched: dict[int, int], file: MappedFile | None) -> ColumnView:
        keys = np.fromiter(sorted(patched), dtype=np.int64, count=len(patched))
        values = np.fromiter(map(patched.__getitem__, keys.tolist()), dtype=base.dtype, count=len(keys))
        return ColumnView(base, np.array(tail, dtype=base.dtype), keys, values, file)


@dataclass(frozen=True, slots=True, eq=False)  # no == of the arrays: compare whole() explicitly
class ColumnView:
    """A :class:`Column` as it was at one moment; unchanged by later appends. ``take`` reads values by position,
    so a reader needs arrays the size of what it looks up, never a copy of the column."""

    base: np.ndarray
    tail: np.ndarray
    patch_keys: np.ndarray  # ascending base positions whose value changed since the base was made
    patch_values: np.ndarray
    file: MappedFile | None = None  # where ``base`` is mapped from (single values are read from it, see MappedFile)

    def __len__(self) -> int:
        return len(self.base) + len(self.tail)

    def take(self, positions: np.ndarray) -> np.ndarray:
        """The values at ``positions`` (non-negative, below ``len(self)``), in the column's dtype."""
        positions = np.asarray(positions)
        nb = len(self.base)
        if not len(self.tail):
            out: np.ndarray = self.base[positions]
        else:
            out = np.empty(positions.shape, dtype=self.base.dtype)
            low = positions < nb
            out[low] = self.base[positions[low]]
            high = ~low
            out[high] = self.tail[positions[high] - nb]
        if len(self.patch_keys):
            at = np.searchsorted(self.patch_keys, positions)
            hit = at < len(self.patch_keys)
            hit[hit] = self.patch_keys[at[hit]] == positions[hit]
            out[hit] = self.patch_values[at[hit]]  # fancy indexing gave a fresh array: writable
        return out

    def item(self, position: int) -> int:
        """The value at one position (non-negative, below ``len(self)``)."""
        nb = len(self.base)
        if position >= nb:
            return int(self.tail[position - nb])
        at = int(np.searchsorted(self.patch_keys, position))
        if at < len(self.patch_keys) and self.patch_keys[at] == position:
            return int(self.patch_values[at])
        if self.file is not None:
            return int(self.file.read(self.base, position, position + 1)[0])
        return int(self.base[position])

    def whole(self) -> np.ndarray:
        """Every value as one numpy array (the base itself when nothing was appended or changed)."""
        if not len(self.tail) and not len(self.patch_keys):
            return self.base
        out = np.concatenate([self.base, self.tail])
        out[self.patch_keys] = self.patch_values
        return out


@dataclass(frozen=True, slots=True)
class BM25Params:
    """BM25 saturation ``k1`` and length normalisation ``b``.

    The defaults are the values that have worked across TREC-style collections for decades; they were not fitted to
    any evaluation set here. Chat turns are short and vary less in length than web pages, so ``b`` matters little.
    """

    k1: float = 1.2
    b: float = 0.75

    def __post_init__(self) -> None:
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1!r}, b={self.b!r}")


def idf(n_docs: int, df: int) -> float:
    """Inverse document frequency (never negative, 0 when nothing is indexed)."""
    if n_docs <= 0 or df <= 0:
        return 0.0
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class TermIndex:
    """Postings for one sequence of documents that only grows.

    Documents are numbered by position, 0, 1, 2, … in the order they were added. Terms get an integer id on first
    sight. A term's postings are one array of ``(position, term frequency)`` pairs, positions ascending; each
    document's term counts live in two flat arrays (term id, frequency) rather than in a dict per document, which
    would cost about a kilobyte per message.

    Documents come in blocks (:meth:`add_block`): a block is tallied with a few numpy passes (one stable sort of its
    term occurrences), and the Python work per block is one step per distinct term, not per occurrence. That is what
    makes a cold build of a large session affordable; :meth:`add` is the same path for one document.
    """

    __slots__ = ("_ids", "_names", "_postings", "_pair_terms", "_pair_tfs", "_doc_starts", "_lengths",
                 "_total_length", "_lock", "_base")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}  # term -> its id
        self._names: list[str] = []  # id -> term
        self._postings: list[array[int]] = []  # id -> position, tf, position, tf, … (positions ascending)
        # Document d's distinct terms, in order of first appearance, are _pair_terms[_doc_starts[d]:_doc_starts[d+1]]
        # with their frequencies in _pair_tfs (the order matters: feedback terms break ties by it).
        self._pair_terms = array("i")
        self._pair_tfs = array("i")
        self._doc_starts = array("q", [0])
        self._lengths = Column("i")  # per document; mapped from a persisted index where there is one
        self._total_length = 0
        self._lock = threading.Lock()  # appends vs. the copies scoring takes (arrays cannot grow while exported)
        # The documents loaded from a persisted index (retrieval/persist.py), read-only and mapped from the cache
        # file; documents added since live in the arrays above (postings and pairs of those documents only).
        self._base: FrozenTerms | None = None

    @classmethod
    def from_frozen(cls, names: list[str], lengths: np.ndarray, total_length: int, base: FrozenTerms,
                    file: MappedFile | None = None) -> TermIndex:
        """An index holding ``base`` (every term's postings and every document's pairs, mapped) and the documents'
        ``lengths`` (int32, mapped too: used as they are, not copied), ready to grow."""
        index = cls()
        index._names = names
        index._ids = dict(zip(names, range(len(names))))
        index._postings = [array("i") for _ in names]
        index._lengths = Column("i", lengths, file)
        index._total_length = total_length
        index._base = base
        return index

    def frozen(self) -> FrozenTerms:
        """Every term's postings and every document's pairs as flat arrays (for persisting the index)."""
        with self._lock:
            tail_pairs = [np.frombuffer(p, dtype=np.int32) for p in self._postings]
            base = self._base
            if base is None:
                pairs = np.concatenate(tail_pairs) if tail_pairs else np.zeros(0, dtype=np.int32)
                sizes = np.fromiter(map(len, tail_pairs), dtype=np.int64, count=len(tail_pairs))
                pair_terms = np.frombuffer(self._pair_terms, dtype=np.int32).copy()
                pair_tfs = np.frombuffer(self._pair_tfs, dtype=np.int32).copy()
                doc_starts = np.frombuffer(self._doc_starts, dtype=np.int64).copy()
            else:
                pieces, sizes_list = [], []
                for term, tail in enumerate(tail_pairs):
                    head = base.postings(term)
                    pieces += [head, tail]
                    sizes_list.append(len(head) + len(tail))
                pairs = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
                sizes = np.array(sizes_list, dtype=np.int64)
                pair_terms = np.concatenate([base.pair_terms, np.frombuffer(self._pair_terms, dtype=np.int32)])
                pair_tfs = np.concatenate([base.pair_tfs, np.frombuffer(self._pair_tfs, dtype=np.int32)])
                doc_starts = np.concatenate([base.doc_starts,
                                             np.frombuffer(self._doc_starts, dtype=np.int64)[1:] + base.doc_starts[-1]])
            starts = np.zeros(len(sizes) + 1, dtype=np.int64)
            np.cumsum(sizes, out=starts[1:])
            return FrozenTerms(len(self._lengths), starts, pairs, pair_terms, pair_tfs, doc_starts)

    def __len__(self) -> int:
        return len(self._lengths)

    @property
    def total_length(self) -> int:
        """Sum of every document's length in terms."""
        return self._total_length

    def term_ids(self, terms: Sequence[str]) -> list[int]:
        """The id of each term, given on first sight (ids are dense: 0, 1, 2, …)."""
        ids = self._ids
        new = list(dict.fromkeys(filterfalse(ids.__contains__, terms)))
        if new:
            with self._lock:
                new = list(filterfalse(ids.__contains__, new))  # another thread may have added some meanwhile
                ids.update(zip(new, range(len(self._names), len(self._names) + len(new))))
                self._names.extend(new)
                self._postings.extend(map(array, repeat("i", len(new))))
        return list(map(ids.__getitem__, terms))

    def add(self, terms: Iterable[str]) -> int:
        """Index one document given its terms (repeats count); returns its position."""
        ids = np.array(self.term_ids(list(terms)), dtype=np.int64)
        return self.add_block(ids, np.array([len(ids)], dtype=np.int64))

    def add_block(self, term_ids: np.ndarray, doc_lengths: np.ndarray) -> int:
        """Index several documents at once; returns the position of the first.

        ``term_ids`` holds the ids (:meth:`term_ids`) of every term occurrence of the documents, one document after
        the other in text order; ``doc_lengths[i]`` is how many of them belong to document ``i``. The result is the
        same as adding the documents one by one.
        """
        term_ids = np.asarray(term_ids)
        doc_lengths = np.asarray(doc_lengths, dtype=np.int64)
        n_docs, n_terms = len(doc_lengths), len(term_ids)
        if int(doc_lengths.sum()) != n_terms or (n_docs and int(doc_lengths.min()) < 0):
            raise ValueError(f"doc_lengths sum to {int(doc_lengths.sum())} but {n_terms} term ids were given")
        if n_terms and (int(term_ids.min()) < 0 or int(term_ids.max()) >= len(self._names)):
            raise ValueError("term_ids must come from TermIndex.term_ids of this index")
        if n_docs <= SMALL_BLOCK:
            if n_terms <= _FEW_TERMS:
                return self._add_few(term_ids.tolist(), doc_lengths.tolist())
            return self._add_long(term_ids, doc_lengths)
        return self._add_many(term_ids, doc_lengths)

    def _add_many(self, term_ids: np.ndarray, doc_lengths: np.ndarray) -> int:
        """:meth:`add_block` with numpy: a few passes over the block's term occurrences."""
        n_docs, n_terms = len(doc_lengths), len(term_ids)
        term_ids = term_ids.astype(np.int32, copy=False)  # ids and positions are int32 here, as in the arrays
        doc_of = np.repeat(np.arange(n_docs, dtype=np.int32), doc_lengths)
        # One stable sort by term groups every (term, document) pair, documents ascending (the occurrences come
        # document after document); a group's size is the pair's term frequency and, the sort being stable, its
        # first member is where the term first appears in the document. The sort key is the term's rank among the
        # block's distinct terms: when there are at most 65,536 of them it fits 16 bits, where numpy's stable sort
        # is a radix sort, several times faster than the merge sort it uses on wider keys.
        local = _dense_ranks(term_ids, len(self._names))
        order = np.argsort(local.astype(np.uint16) if n_terms and int(local.max()) < 1 << 16 else local, kind="stable")
        ordered_term, ordered_doc = local[order], doc_of[order]
        del local
        first = np.ones(n_terms, dtype=bool)
        first[1:] = (ordered_term[1:] != ordered_term[:-1]) | (ordered_doc[1:] != ordered_doc[:-1])
        del ordered_term, ordered_doc
        group_starts = np.flatnonzero(first)
        del first
        group_tf = np.diff(np.append(group_starts, n_terms)).astype(np.int32)
        group_first = order[group_starts]  # where each (term, document) pair first occurs
        del order, group_starts
        group_term = term_ids[group_first]
        # The same pairs in document order, each document's terms in order of first appearance (as a Counter of
        # the document's terms would list them): mark each pair at its first occurrence and read the marks in order.
        tf_at = np.zeros(n_terms, dtype=np.int32)
        tf_at[group_first] = group_tf
        at = np.flatnonzero(tf_at)
        pairs_per_doc = np.bincount(doc_of[at], minlength=n_docs)
        # Per distinct term of the block: where its pairs start and end among the groups (sorted by term).
        term_starts = np.flatnonzero(np.diff(group_term, prepend=-1))
        bounds = (np.append(term_starts, len(group_term)) * 8).tolist()  # in bytes: a pair is two int32
        terms = group_term[term_starts].tolist()
        with self._lock:
            base = len(self._lengths)
            pairs = np.empty((len(group_term), 2), dtype=np.int32)
            pairs[:, 0] = doc_of[group_first] + base
            pairs[:, 1] = group_tf
            view = memoryview(pairs.tobytes())
            postings = self._postings
            for term, lo, hi in zip(terms, bounds, bounds[1:]):
                postings[term].frombytes(view[lo:hi])
            self._pair_terms.frombytes(term_ids[at].tobytes())
            self._pair_tfs.frombytes(tf_at[at].tobytes())
            self._doc_starts.frombytes((np.cumsum(pairs_per_doc) + self._doc_starts[-1]).astype(np.int64).tobytes())
            self._lengths.frombytes(doc_lengths.astype(np.int32).tobytes())
            self._total_length += n_terms
        return base

    def _add_long(self, term_ids: np.ndarray, doc_lengths: np.ndarray) -> int:
        """:meth:`add_block` for a few long documents (a pasted text of millions of characters): each is counted
        with a table over the vocabulary, about 8 bytes per term occurrence at most (the stable sort of
        :meth:`_add_many` takes about 30), and the Python work is one step per distinct term."""
        with self._lock:
            base = len(self._lengths)
            postings = self._postings
            start = 0
            for offset, length in enumerate(doc_lengths.tolist()):
                terms, tfs = _first_appearance_counts(term_ids[start : start + length], len(self._names))
                start += length
                for term, n in zip(terms.tolist(), tfs.tolist()):
                    postings[term].extend((base + offset, n))
                self._pair_terms.frombytes(terms.astype(np.int32).tobytes())
                self._pair_tfs.frombytes(tfs.astype(np.int32).tobytes())
                self._doc_starts.append(self._doc_starts[-1] + len(terms))
                self._lengths.append(length)
                self._total_length += length
        return base

    def _add_few(self, term_ids: list[int], doc_lengths: list[int]) -> int:
        """:meth:`add_block` for a few documents, document by document in plain Python (numpy's fixed cost per call
        would dominate)."""
        with self._lock:
            base = len(self._lengths)
            postings = self._postings
            start = 0
            for offset, length in enumerate(doc_lengths):
                counts = Counter(term_ids[start : start + length])  # insertion order: first appearance
                start += length
                for term, n in counts.items():
                    postings[term].extend((base + offset, n))
                self._pair_terms.extend(counts.keys())
                self._pair_tfs.extend(counts.values())
                self._doc_starts.append(self._doc_starts[-1] + len(counts))
                self._lengths.append(length)
                self._total_length += length
        return base

    def df(self, term: str) -> int:
        """Number of documents that contain ``term``."""
        found = self._ids.get(term)
        if found is None:
            return 0
        return (len(self._postings[found]) + (self._base.size(found) if self._base is not None else 0)) // 2

    def _pairs(self, found: int) -> np.ndarray:
        """Term ``found``'s postings, position, tf, position, tf, … (not to be modified; caller holds the lock)."""
        tail = np.array(self._postings[found], dtype=np.int32)
        if self._base is None:
            return tail
        head = self._base.postings(found)
        return np.concatenate([head, tail]) if len(tail) else head

    def cf(self, term: str) -> int:
        """Occurrences of ``term`` over all documents (its term frequency if the file were one document)."""
        found = self._ids.get(term)
        if found is None:
            return 0
        with self._lock:
            return int(self._pairs(found)[1::2].sum())

    def postings(self, term: str) -> Sequence[int]:
        """Positions of the documents containing ``term``, ascending (a copy)."""
        found = self._ids.get(term)
        if found is None:
            return ()
        with self._lock:
            positions: list[int] = self._pairs(found)[0::2].tolist()
        return positions

    def tf(self, position: int, term: str) -> int:
        """How many times ``term`` occurs in document ``position``."""
        return self.doc_terms(position).get(term, 0)

    def doc_terms(self, position: int) -> dict[str, int]:
        """Term frequencies of document ``position``, in order of first appearance (a fresh dict)."""
        with self._lock:
            if not 0 <= position < len(self._lengths):
                raise IndexError(f"document position {position} out of range (0..{len(self._lengths) - 1})")
            names = self._names
            base = self._base
            if base is not None and position < base.n_docs:
                terms, tfs = base.doc(position)
                return {names[t]: n for t, n in zip(terms.tolist(), tfs.tolist())}
            if base is not None:
                position -= base.n_docs
            lo, hi = self._doc_starts[position], self._doc_starts[position + 1]
            return {names[t]: n for t, n in zip(self._pair_terms[lo:hi], self._pair_tfs[lo:hi])}

    def length(self, position: int) -> int:
        """Length in terms of document ``position``."""
        with self._lock:  # a snapshot may fold the column meanwhile
            return self._lengths[position]

    def arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, term frequencies)`` of ``term`` as numpy copies (safe while other threads append)."""
        with self._lock:
            found = self._ids.get(term)
            if found is None:
                return _EMPTY, _EMPTY
            if self._base is None:  # the usual in-memory index: one conversion, as before persistence existed
                pairs = np.array(self._postings[found], dtype=np.int64).reshape(-1, 2)
            else:
                pairs = self._pairs(found).astype(np.int64).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1].astype(np.float64)

    def lengths(self) -> np.ndarray:
        """Length of every document, as a numpy copy."""
        with self._lock:
            return self._lengths.whole().astype(np.float64)

    def length_view(self) -> tuple[ColumnView, int]:
        """Every document's length as a :class:`ColumnView` (no copy of the persisted part) and their sum, taken
        together."""
        with self._lock:
            return self._lengths.snapshot(), self._total_length

    def vocabulary_size(self) -> int:
        """Number of distinct terms."""
        return len(self._names)

    def same_as(self, other: TermIndex) -> bool:
        """Same documents with the same terms in the same order (for incremental-vs-rebuilt checks)."""
        if len(self) != len(other) or not np.array_equal(self._lengths.whole(), other._lengths.whole()):
            return False
        if any(list(self.doc_terms(p).items()) != list(other.doc_terms(p).items()) for p in range(len(self))):
            return False
        mine = {t: self._pairs(i).tolist() for t, i in self._ids.items() if self.df(t)}
        theirs = {t: other._pairs(i).tolist() for t, i in other._ids.items() if other.df(t)}
        return mine == theirs


@dataclass(frozen=True, slots=True)
class FrozenTerms:
    """A term index's documents as flat arrays (persisted, then mapped read-only by the next process).

    Term ``t``'s postings are ``pairs[starts[t]:starts[t + 1]]`` (position, tf, position, tf, …); document ``d``'s
    distinct terms are ``pair_terms[doc_starts[d]:doc_starts[d + 1]]`` with their frequencies in ``pair_tfs``.
    """

    n_docs: int
    starts: np.ndarray
    pairs: np.ndarray
    pair_terms: np.ndarray
    pair_tfs: np.ndarray
    doc_starts: np.ndarray
    file: MappedFile | None = None  # where the arrays are mapped from: a term's or a document's part is read from it

    def size(self, term: int) -> int:
        """Number of int32 in term ``term``'s postings (0 for a term added after these documents)."""
        return int(self.starts[term + 1] - self.starts[term]) if term + 1 < len(self.starts) else 0

    def postings(self, term: int) -> np.ndarray:
        """Term ``term``'s postings (empty for a term added after these documents): read from the file when the
        arrays are mapped (see :class:`MappedFile`), else a view."""
        if term + 1 >= len(self.starts):
            return np.zeros(0, dtype=np.int32)
        return self._part(self.pairs, int(self.starts[term]), int(self.starts[term + 1]))

    def doc(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        """Document ``position``'s distinct terms (ids, in order of first appearance) and their frequencies."""
        lo, hi = self._part(self.doc_starts, position, position + 2).tolist()
        return self._part(self.pair_terms, lo, hi), self._part(self.pair_tfs, lo, hi)

    def _part(self, values: np.ndarray, lo: int, hi: int) -> np.ndarray:
        return values[lo:hi] if self.file is None else self.file.read(values, lo, hi)


def _first_appearance_counts(ids: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``ids`` (all in ``0..bound-1``) in order of first appearance, and how often each occurs: what
    ``Counter(ids)`` gives, without a Python object per occurrence."""
    if not len(ids):
        return _EMPTY, _EMPTY
    counts = np.bincount(ids, minlength=bound)
    position = np.int32 if len(ids) < 2**31 else np.int64  # 4 bytes per occurrence where that suffices
    first = np.full(bound, len(ids), dtype=position)
    np.minimum.at(first, ids, np.arange(len(ids), dtype=position))  # unbuffered: the smallest position wins
    present = np.flatnonzero(counts)
    order = present[np.argsort(first[present], kind="stable")]
    return order, counts[order]


def _dense_ranks(values: np.ndarray, bound: int) -> np.ndarray:
    """Each value's rank among the distinct ``values`` (all in ``0..bound-1``), in the same order as the values."""
    if len(values) * 4 >= bound:  # a table over the whole range costs less than sorting the values
        present = np.zeros(bound, dtype=bool)
        present[values] = True
        ranks: np.ndarray = (np.cumsum(present) - 1)[values]  # fancy indexing is typed Any in numpy's stubs
        return ranks
    return np.unique(values, return_inverse=True)[1].reshape(-1)


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """What BM25 needs from the whole search scope (several files may form one scope)."""

    n_docs: int
    avg_length: float
    df: Mapping[str, int]

    @classmethod
    def of(cls, indexes: Sequence[TermIndex], terms: Iterable[str]) -> CorpusStats:
        """Statistics over ``indexes`` taken together, document frequencies only for ``terms``."""
        n_docs = sum(len(ix) for ix in indexes)
        total = sum(ix.total_length for ix in indexes)
        df = {t: sum(ix.df(t) for ix in indexes) for t in set(terms)}
        return cls(n_docs, total / n_docs if n_docs else 0.0, df)

    def idf(self, term: str) -> float:
        """IDF of ``term`` in this scope."""
        return idf(self.n_docs, self.df.get(term, 0))


def _length_terms(stats: CorpusStats, params: BM25Params) -> tuple[float, float]:
    """``(norm, per_length)`` of the BM25 denominator ``tf + norm + per_length * doc_length``."""
    norm = params.k1 * (1.0 - params.b)
    per_length = params.k1 * params.b / stats.avg_length if stats.avg_length else 0.0
    return norm, per_length


def _term_scores(tf: np.ndarray, doc_lengths: np.ndarray, factor: float, norm: float,
                 per_length: float) -> np.ndarray:
    """One term's BM25 contribution to the documents whose term frequencies are ``tf`` (the one expression both
    :func:`score_into` and :func:`score_docs` use, so their scores agree bit for bit)."""
    return factor * tf / (tf + norm + per_length * doc_lengths)


def score_into(
    out: np.ndarray,
    index: TermIndex,
    weights: Mapping[str, float],
    stats: CorpusStats,
    params: BM25Params = BM25Params(),
    *,
    offset: int = 0,
    lengths: np.ndarray | None = None,
) -> None:
    """Add the BM25 score of every document of ``index`` to ``out[offset + position]`` (vectorised).

    ``weights`` maps query terms to their query weight (1.0 per occurrence of a user's word; less for expansion
    terms). ``lengths`` may pass ``index.lengths()`` when the caller already has it.
    """
    if not stats.n_docs or not weights or not len(index):
        return
    norm, per_length = _length_terms(stats, params)
    doc_lengths = index.lengths() if lengths is None else lengths
    size = len(doc_lengths)
    for term, weight in weights.items():
        if not weight:
            continue
        positions, tf = index.arrays(term)
        if len(positions) and positions[-1] >= size:  # appended by another thread since `lengths` was taken
            keep = positions < size
            positions, tf = positions[keep], tf[keep]
        if not len(positions):
            continue
        factor = weight * stats.idf(term) * (params.k1 + 1.0)
        # Positions are unique within one term's postings, so a fancy-indexed += is exact here.
        out[positions + offset] += _term_scores(tf, doc_lengths[positions], factor, norm, per_length)


def score_docs(
    docs: np.ndarray,
    index: TermIndex,
    weights: Mapping[str, float],
    stats: CorpusStats,
    params: BM25Params = BM25Params(),
    *,
    lengths: ColumnView,
) -> np.ndarray:
    """The BM25 scores of the documents ``docs`` only (ascending positions), as :func:`score_into` would give them.

    The same expression, term by term in the same order, so every score is bit-for-bit the full array's value at
    that position; postings outside ``docs`` are skipped. The ranker uses it so a query at 1M messages allocates
    arrays the size of its candidates, not of the corpus.
    """
    out = np.zeros(len(docs))
    if not stats.n_docs or not weights or not len(index) or not len(docs):
        return out
    norm, per_length = _length_terms(stats, params)
    size = len(lengths)
    for term, weight in weights.items():
        if not weight:
            continue
        positions, tf = index.arrays(term)
        at = np.searchsorted(docs, positions)
        keep = (positions < size) & (at < len(docs))
        keep[keep] = docs[at[keep]] == positions[keep]
        positions, tf, at = positions[keep], tf[keep], at[keep]
        if not len(positions):
            continue
        factor = weight * stats.idf(term) * (params.k1 + 1.0)
        out[at] += _term_scores(tf, lengths.take(positions), factor, norm, per_length)
    return out


def score_query(
    index: TermIndex,
    weights: Mapping[str, float],
    stats: CorpusStats,
    params: BM25Params = BM25Params(),
) -> dict[int, float]:
    """BM25 score ``{position: score}`` of every document of ``index`` that contains a query term.

    :func:`explain_terms` splits one document's score into per-term contributions.
    """
    scores = np.zeros(len(index))
    score_into(scores, index, weights, stats, params)
    matched = np.zeros(len(index), dtype=bool)
    for term in weights:
        if weights[term]:
            matched[index.arrays(term)[0]] = True
    return {int(p): float(scores[p]) for p in np.flatnonzero(matched)}


def explain_terms(
    index: TermIndex,
    position: int,
    weights: Mapping[str, float],
    stats: CorpusStats,
    params: BM25Params = BM25Params(),
) -> dict[str, float]:
    """Per-term BM25 contributions of one document (they sum to its :func:`score_query` score)."""
    out: dict[str, float] = {}
    if not stats.n_docs:
        return out
    k1, b = params.k1, params.b
    norm = k1 * (1.0 - b)
    per_length = k1 * b / stats.avg_length if stats.avg_length else 0.0
    denominator_extra = norm + per_length * index.length(position)  # same expression as score_query
    doc = index.doc_terms(position)
    for term, weight in weights.items():
        tf = doc.get(term, 0)
        if tf and weight:
            out[term] = weight * stats.idf(term) * (k1 + 1.0) * tf / (tf + denominator_extra)
    return out
