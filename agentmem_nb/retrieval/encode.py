"""Message texts → term ids, a block at a time, for :meth:`~agentmem_nb.retrieval.bm25.TermIndex.add_block`.

A fresh process that searches a large session first builds its index: every message is tokenised once. Doing that
one word at a time in Python (regex match, stop-word test, stem lookup, counter update, postings append) cost about
100 µs per message. Here the Python work is per *distinct chunk* instead (a chunk is a whitespace-separated piece of
the normalised text, such as ``holiday,``): the first time a chunk is seen, :meth:`Tokenizer.chunk_terms` turns it
into terms and each term into its id; after that the chunk costs one dict lookup inside a C-level ``map``. A
conversation repeats the same few thousand chunks, so the per-word work is a handful of C-level passes
(``str.split``, ``map``, ``numpy``) over the block.

The terms are exactly :meth:`Tokenizer.terms` of each text: no term spans whitespace, so a text's terms are its
chunks' terms one after the other (the tests check this on arbitrary text).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain

import numpy as np

from agentmem_nb.retrieval.bm25 import TermIndex
from agentmem_nb.retrieval.tokenize import Tokenizer

__all__ = ["BlockEncoder"]

# Distinct chunks remembered by one encoder before its table starts afresh (about 100 bytes each): this bounds the
# memory of an index over a huge, varied history; starting afresh only costs re-learning the chunks seen next.
MAX_CHUNKS = 500_000


class _ChunkIds(dict[str, int]):
    """chunk → chunk id; a chunk not seen yet is learnt on lookup, so hits stay C-level dict lookups."""

    __slots__ = ("_learn",)

    def __init__(self, learn: object) -> None:
        super().__init__()
        self._learn = learn

    def __missing__(self, chunk: str) -> int:
        return self._learn(chunk)  # type: ignore[operator]


class BlockEncoder:
    """Turns blocks of texts into the term ids of one :class:`TermIndex` (not thread-safe: its owner locks)."""

    def __init__(self, tokenizer: Tokenizer, index: TermIndex, *, max_chunks: int = MAX_CHUNKS) -> None:
        if max_chunks < 1:
            raise ValueError(f"max_chunks must be at least 1, got {max_chunks!r}")
        self.tokenizer = tokenizer
        self.index = index
        self.max_chunks = max_chunks
        self._start_afresh()

    def _start_afresh(self) -> None:
        self._ids = _ChunkIds(self._learn)
        # Chunk c's term ids are _flat[_starts[c] : _starts[c] + _counts[c]] (a chunk has 0, 1 or several terms).
        self._starts = array("q")
        self._counts = array("q")
        self._flat = array("q")

    @property
    def chunks_known(self) -> int:
        """Distinct chunks in the table."""
        return len(self._ids)

    def _learn(self, chunk: str) -> int:
        terms = self.tokenizer.chunk_terms(chunk)
        chunk_id = len(self._starts)
        self._starts.append(len(self._flat))
        self._counts.append(len(terms))
        self._flat.extend([self.index.term_id(t) for t in terms])
        dict.__setitem__(self._ids, chunk, chunk_id)
        return chunk_id

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(term_ids, doc_lengths)`` of ``texts``, ready for :meth:`TermIndex.add_block`: the ids of every term
        occurrence, text after text, and how many belong to each text."""
        if len(self._ids) > self.max_chunks:
            self._start_afresh()
        pieces = list(map(Tokenizer.chunks, texts))
        per_text = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        total = int(per_text.sum())
        chunk_ids = np.fromiter(map(self._ids.__getitem__, chain.from_iterable(pieces)), dtype=np.int64, count=total)
        if not total:
            return np.zeros(0, dtype=np.int64), per_text
        counts = np.array(self._counts, dtype=np.int64)[chunk_ids]
        firsts = np.array(self._starts, dtype=np.int64)[chunk_ids]
        flat = np.array(self._flat, dtype=np.int64)
        if int(counts.min()) == 1 == int(counts.max()):  # every chunk one term: the common case
            return flat[firsts], per_text
        # Expand each chunk occurrence into its terms (0, 1 or more): occurrence k of the output is term
        # (k - where this chunk's terms begin in the output) of its chunk.
        ends = np.cumsum(counts)
        term_ids = flat[np.repeat(firsts - (ends - counts), counts) + np.arange(int(ends[-1]))]
        # A text's length in terms is the sum of its chunks' term counts.
        cumulative = np.concatenate(([0], ends))
        text_ends = np.cumsum(per_text)
        return term_ids, cumulative[text_ends] - cumulative[text_ends - per_text]
