"""Message texts → term ids, a block at a time, for :meth:`~agentmem_nb.retrieval.bm25.TermIndex.add_block`.

A fresh process that searches a large session first builds its index: every message is tokenised once. Doing that
one word at a time in Python (regex match, stop-word test, stem lookup, counter update, postings append) cost about
100 µs per message. Here the Python work is per *distinct chunk* instead (a chunk is a whitespace-separated piece of
the normalised text, such as ``holiday,``): the first time a chunk is seen, :meth:`Tokenizer.chunk_terms_many` turns it
into terms and each term into its id; after that the chunk costs one dict lookup inside a C-level ``map``. A
conversation repeats the same few thousand chunks, so the per-word work is a handful of C-level passes
(``str.split``, ``map``, ``numpy``) over the block.

The terms are exactly :meth:`Tokenizer.terms` of each text: no term spans whitespace, so a text's terms are its
chunks' terms one after the other (the tests check this on arbitrary text).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import accumulate, chain, islice

import numpy as np

from agentmem_nb.retrieval.bm25 import SMALL_BLOCK, TermIndex
from agentmem_nb.retrieval.tokenize import LONG_CHUNK, Tokenizer

__all__ = ["BlockEncoder"]

# Distinct chunks remembered by one encoder before its table starts afresh (about 100 bytes each): this bounds the
# memory of an index over a huge, varied history; starting afresh only costs re-learning the chunks seen next.
MAX_CHUNKS = 500_000
# Terms of a long chunk are turned into ids this many at a time (under a megabyte of Python strings).
_TERM_BATCH = 1 << 13


_SEPARATOR = "\x00"
_JOIN = f" {_SEPARATOR} "
_SEPARATOR_ID = 0


class _ChunkIds(dict[str, int]):
    """chunk → chunk id. A chunk not seen yet gets the next id on lookup and waits in ``pending`` for its terms, so
    that a block's new chunks are worked out together and the lookups of known chunks stay C-level."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[str] = []

    def __missing__(self, chunk: str) -> int:
        chunk_id = len(self)
        self[chunk] = chunk_id
        self.pending.append(chunk)
        return chunk_id


class BlockEncoder:
    """Turns blocks of texts into the term ids of one :class:`TermIndex` (not thread-safe: its owner locks)."""

    def __init__(self, tokenizer: Tokenizer, index: TermIndex, *, max_chunks: int = MAX_CHUNKS) -> None:
        if max_chunks < 1:
            raise ValueError(f"max_chunks must be at least 1, got {max_chunks!r}")
        self.tokenizer = tokenizer
        self.index = index
        self.max_chunks = max_chunks
        self._start_afresh()

    def clear(self, *, keep: int) -> None:
        """Forget the chunk table if it holds more than ``keep`` chunks (its memory goes; the tokenizer still
        remembers the chunks' terms)."""
        if len(self._ids) > keep:
            self._start_afresh()

    def _start_afresh(self) -> None:
        self._ids = _ChunkIds()
        # Chunk c's term ids are _flat[_starts[c] : _starts[c] + _counts[c]] (a chunk has 0, 1 or several terms).
        # Chunk 0 is the separator the encoder puts between texts; it has no terms (nor would the tokenizer give
        # it any: NUL is not a letter).
        self._ids[_SEPARATOR] = _SEPARATOR_ID
        self._starts = array("q", [0])
        self._counts = array("q", [0])
        # Term ids as 32-bit integers, as the term index keeps them (a long text's ids are most of its memory).
        self._flat = array("i")

    @property
    def chunks_known(self) -> int:
        """Distinct chunks in the table."""
        return len(self._ids)

    def _learn_pending(self) -> None:
        """Work out the terms of the chunks met for the first time (in id order) and append them to the table."""
        pending = self._ids.pending
        if not pending:
            return
        if max(map(len, pending)) <= LONG_CHUNK:  # the usual case: every chunk a word or a short phrase
            self._learn(pending)
        else:
            short: list[str] = []
            for chunk in pending:
                if len(chunk) <= LONG_CHUNK:
                    short.append(chunk)
                    continue
                self._learn(short)
                short.clear()
                self._learn_long(chunk)
            self._learn(short)
        pending.clear()

    def _learn(self, chunks: list[str]) -> None:
        if not chunks:
            return
        terms = self.tokenizer.chunk_terms_many(chunks)
        counts = list(map(len, terms))
        self._starts.extend(accumulate(counts[:-1], initial=len(self._flat)))
        self._counts.extend(counts)
        self._flat.extend(self.index.term_ids(list(chain.from_iterable(terms))))

    def _learn_long(self, chunk: str) -> None:
        """One long chunk, its terms streamed into ids a batch at a time: the table grows by 8 bytes per term, and
        no list of the chunk's terms (tens of bytes each) ever exists."""
        start = len(self._flat)
        terms = self.tokenizer.iter_chunk_terms(chunk)
        while batch := list(islice(terms, _TERM_BATCH)):
            self._flat.extend(self.index.term_ids(batch))
        self._starts.append(start)
        self._counts.append(len(self._flat) - start)
        self.tokenizer.chunks_learnt += 1

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(term_ids, doc_lengths)`` of ``texts``, ready for :meth:`TermIndex.add_block`: the ids of every term
        occurrence (32-bit), text after text, and how many belong to each text."""
        if len(self._ids) > self.max_chunks:
            self._start_afresh()
        try:
            return self._encode_few(texts) if len(texts) <= SMALL_BLOCK else self._encode_many(texts)
        except BaseException:
            self._start_afresh()  # chunks given ids but not learnt would otherwise point past the table
            raise

    def _encode_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The block path: a few C-level passes over all the texts' chunks."""
        # One split of the whole block rather than one per text: the texts are joined around a separator chunk
        # (NUL, which has no terms); where the separators fall gives each text's chunks. A text that itself holds a
        # NUL would move the boundaries, so such a block goes the text-by-text way of _encode_few.
        joined = _JOIN.join(map(Tokenizer.normalize, texts))
        if joined.count(_SEPARATOR) != len(texts) - 1:
            return self._encode_few(texts)
        chunk_ids = np.fromiter(map(self._ids.__getitem__, joined.split()), dtype=np.int64)
        is_separator = chunk_ids == _SEPARATOR_ID
        per_text = np.diff(np.flatnonzero(is_separator), prepend=-1, append=len(chunk_ids)) - 1
        chunk_ids = chunk_ids[~is_separator]
        self._learn_pending()
        total = len(chunk_ids)
        if not total:
            return np.zeros(0, dtype=np.int32), per_text
        # Views, not copies, of the table (copying it would cost as much as the table is large); they are released
        # when this returns, before the table next grows (an array cannot grow while a view of it exists).
        counts = np.frombuffer(self._counts, dtype=np.int64)[chunk_ids]
        firsts = np.frombuffer(self._starts, dtype=np.int64)[chunk_ids]
        flat = np.frombuffer(self._flat, dtype=np.int32)
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

    def _encode_few(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The same for a few texts (an append between two queries), where numpy's cost per call would dominate."""
        lookup = self._ids.__getitem__
        chunk_lists = [list(map(lookup, Tokenizer.chunks(text))) for text in texts]
        self._learn_pending()
        starts, counts, flat = self._starts, self._counts, self._flat
        # An array, not a list: a long text's ids are copied as machine integers (4 bytes each), never as Python ints.
        term_ids = array("i")
        lengths = []
        for chunk_ids in chunk_lists:
            before = len(term_ids)
            for chunk in chunk_ids:
                term_ids.extend(flat[starts[chunk] : starts[chunk] + counts[chunk]])
            lengths.append(len(term_ids) - before)
        return np.frombuffer(term_ids, dtype=np.int32) if term_ids else np.zeros(0, dtype=np.int32), np.array(
            lengths, dtype=np.int64)
