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
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["BM25Params", "TermIndex", "CorpusStats", "idf", "score_into", "score_query", "explain_terms"]

_EMPTY = np.zeros(0, dtype=np.int64)


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
    """Postings for one sequence of documents that only grows (one message file).

    Documents are numbered by position, 0, 1, 2, … in the order they were added.
    """

    __slots__ = ("_postings", "_tfs", "_doc_terms", "_lengths", "_total_length", "_cf", "_lock")

    def __init__(self) -> None:
        self._postings: dict[str, array] = {}  # term -> positions of the documents containing it, ascending
        self._tfs: dict[str, array] = {}  # term -> its frequency in each of those documents (parallel array)
        self._lock = threading.Lock()  # appends vs. the copies scoring takes (arrays cannot grow while exported)
        self._cf: dict[str, int] = {}  # collection frequency: occurrences of each term in all documents
        self._doc_terms: list[dict[str, int]] = []
        self._lengths = array("i")
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._lengths)

    @property
    def total_length(self) -> int:
        """Sum of every document's length in terms."""
        return self._total_length

    def add(self, terms: Iterable[str]) -> int:
        """Index one document given its terms (repeats count); returns its position."""
        counts = Counter(terms)
        with self._lock:
            position = len(self._lengths)
            for term, n in counts.items():
                self._cf[term] = self._cf.get(term, 0) + n
                postings = self._postings.get(term)
                if postings is None:
                    postings = self._postings[term] = array("i")
                    self._tfs[term] = array("i")
                postings.append(position)
                self._tfs[term].append(n)
            self._doc_terms.append(dict(counts))
            length = sum(counts.values())
            self._lengths.append(length)
            self._total_length += length
        return position

    def df(self, term: str) -> int:
        """Number of documents that contain ``term``."""
        postings = self._postings.get(term)
        return len(postings) if postings is not None else 0

    def cf(self, term: str) -> int:
        """Occurrences of ``term`` over all documents (its term frequency if the file were one document)."""
        return self._cf.get(term, 0)

    def postings(self, term: str) -> Sequence[int]:
        """Positions of the documents containing ``term``, ascending."""
        return self._postings.get(term, ())

    def tf(self, position: int, term: str) -> int:
        """How many times ``term`` occurs in document ``position``."""
        return self._doc_terms[position].get(term, 0)

    def doc_terms(self, position: int) -> Mapping[str, int]:
        """Term frequencies of document ``position`` (read-only view; do not mutate)."""
        return self._doc_terms[position]

    def length(self, position: int) -> int:
        """Length in terms of document ``position``."""
        return self._lengths[position]

    def arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, term frequencies)`` of ``term`` as numpy copies (safe while other threads append)."""
        with self._lock:
            postings = self._postings.get(term)
            if postings is None:
                return _EMPTY, _EMPTY
            return np.array(postings, dtype=np.int64), np.array(self._tfs[term], dtype=np.float64)

    def lengths(self) -> np.ndarray:
        """Length of every document, as a numpy copy."""
        with self._lock:
            return np.array(self._lengths, dtype=np.float64)

    def vocabulary_size(self) -> int:
        """Number of distinct terms."""
        return len(self._postings)

    def same_as(self, other: TermIndex) -> bool:
        """Same documents with the same terms in the same order (for incremental-vs-rebuilt checks)."""
        return self._doc_terms == other._doc_terms and self._lengths == other._lengths and {
            k: list(v) for k, v in self._postings.items()
        } == {k: list(v) for k, v in other._postings.items()}


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
    k1, b = params.k1, params.b
    norm = k1 * (1.0 - b)
    per_length = k1 * b / stats.avg_length if stats.avg_length else 0.0
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
        factor = weight * stats.idf(term) * (k1 + 1.0)
        # Positions are unique within one term's postings, so a fancy-indexed += is exact here.
        out[positions + offset] += factor * tf / (tf + norm + per_length * doc_lengths[positions])


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
