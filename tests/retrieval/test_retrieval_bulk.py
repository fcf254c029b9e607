"""The bulk indexing path gives exactly what the per-text definitions give.

A cold index is built a block at a time: texts are split into whitespace chunks, each distinct chunk is tokenised
once (:meth:`Tokenizer.chunk_terms_many`), and a block of documents is tallied by :meth:`TermIndex.add_block`. These
tests hold that path to the simple definitions it replaces: :meth:`Tokenizer.terms` of each text, and
:meth:`TermIndex.add` of one document after another (checked against a plain-Python model of postings).
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb.retrieval.bm25 import TermIndex, _dense_ranks
from agentmem_nb.retrieval.encode import BlockEncoder
from agentmem_nb.retrieval.tokenize import _TOKEN_RE, Tokenizer, TokenizerConfig

# Pieces chosen to hit every branch of the tokenizer and of the chunk fast path: stop words, plurals, possessives
# (plain and typographic apostrophes), contractions, inner apostrophes, digits, mixed tokens, punctuation glued to
# words, accents (precomposed and combining), NFKC-changed forms (fullwidth, ligature, circled digit, a spacing
# diaeresis that becomes space + combining mark), CJK runs and mixed scripts, underscores, and NUL (the separator
# the encoder joins texts with).
PIECES = [
    "the", "The", "and", "painting", "Paintings", "painted", "Caroline's", "Caroline\u2019s", "don't", "DON`T",
    "o'brien", "rock'n'roll", "'", "''s", "'s", "it's", "2023", "3pm", "b2b", "holiday,", "holiday.", "(holiday)",
    "why?", "ok!", "café", "cafe\u0301", "naïve", "Straße", "ΣΑΣ", "西湖旅行", "我的", "的确", "杭州2023", "abc西湖",
    "カタカナ", "한국어", "ｆｕｌｌ", "ﬁne", "①", "a¨b", "\u0301", "a_b", "_", "—", "…", "\x00", "x\x00y", "e-mail",
]
SEPARATORS = [" ", "  ", "\n", "\t", "\u00a0", "\u3000", "\x1c", "\u2028", ""]

composed = st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), max_size=12).map(
    lambda parts: "".join(p + s for p, s in parts))
texts_strategy = st.lists(st.one_of(composed, st.text(max_size=30)), min_size=0, max_size=8)

CONFIGS = [
    TokenizerConfig(),
    TokenizerConfig(stem=False),
    TokenizerConfig(cjk_unigrams=False),
    TokenizerConfig(stop_words=frozenset()),
]


def _decoded(index: TermIndex, term_ids: np.ndarray, lengths: np.ndarray) -> list[list[str]]:
    names = [index._names[i] for i in term_ids.tolist()]
    ends = np.cumsum(lengths).tolist()
    return [names[start:end] for start, end in zip([0, *ends[:-1]], ends)]


@settings(max_examples=150, deadline=None)
@given(blocks=st.lists(texts_strategy, min_size=1, max_size=3), config=st.sampled_from(CONFIGS),
       path=st.sampled_from(["_encode_few", "_encode_many", "encode"]))
def test_encoded_blocks_hold_exactly_the_terms_of_each_text(blocks: list[list[str]], config: TokenizerConfig,
                                                           path: str) -> None:
    tokenizer = Tokenizer(config)
    index = TermIndex()
    encoder = BlockEncoder(tokenizer, index)
    for texts in blocks:  # successive blocks: the chunk table and the caches carry over
        term_ids, lengths = getattr(encoder, path)(texts)  # the plain-Python and the numpy path, whatever the size
        assert len(lengths) == len(texts)
        assert _decoded(index, term_ids, lengths) == [Tokenizer(config).terms(t) for t in texts]


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(st.one_of(st.sampled_from(PIECES), st.text(min_size=1, max_size=12)), max_size=20))
def test_chunks_learnt_together_equal_each_chunk_tokenised_alone(chunks: list[str]) -> None:
    chunks = [c for c in (Tokenizer.normalize(c) for c in chunks) if c and not any(x.isspace() for x in c)]
    together = Tokenizer().chunk_terms_many(chunks)
    assert together == [tuple(Tokenizer().terms(c)) for c in chunks]
    again = Tokenizer()
    assert [again.chunk_terms_many([c])[0] for c in chunks] == together


def test_no_character_is_both_whitespace_and_part_of_a_token() -> None:
    # Why splitting on whitespace first cannot change the terms: no token can contain a whitespace character.
    spaces = [c for c in map(chr, range(0x110000)) if c.isspace()]
    assert len(spaces) > 20
    assert [c for c in spaces if _TOKEN_RE.search(c) or c == "'"] == []


def test_a_text_holding_the_separator_is_encoded_text_by_text() -> None:
    texts = ["puppy \x00 walks", "\x00", "painting \x00", "西湖"]
    index = TermIndex()
    term_ids, lengths = BlockEncoder(Tokenizer(), index).encode(texts)
    assert _decoded(index, term_ids, lengths) == [["puppi", "walk"], [], ["paint"], ["西", "湖", "西湖"]]


def test_a_small_chunk_table_starts_afresh_and_encodes_the_same() -> None:
    # Each block of 10 brings words of its own, so a table that was never emptied would hold them all.
    texts = [f"walk {i % 7} beagle{i // 10} puppy{i // 10}, the park" for i in range(50)]
    small_index, big_index = TermIndex(), TermIndex()
    small = BlockEncoder(Tokenizer(), small_index, max_chunks=3)
    big = BlockEncoder(Tokenizer(), big_index)
    for start in range(0, 50, 10):
        assert _decoded(small_index, *small.encode(texts[start:start + 10])) == _decoded(
            big_index, *big.encode(texts[start:start + 10]))
    last_block = {c for t in texts[40:] for c in Tokenizer.chunks(t)}
    assert len(last_block) < len({c for t in texts for c in Tokenizer.chunks(t)})
    assert small.chunks_known == len(last_block) + 1  # emptied before the last block (+1: the separator chunk)
    assert _decoded(small_index, *small._encode_many(texts)) == _decoded(big_index, *big._encode_many(texts))


def test_an_interrupted_encode_leaves_no_half_learnt_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = Tokenizer()
    index = TermIndex()
    encoder = BlockEncoder(tokenizer, index)
    encoder.encode(["beagle puppy"])
    real = tokenizer.chunk_terms_many

    def fail(chunks: list[str]) -> list[tuple[str, ...]]:
        raise KeyboardInterrupt

    monkeypatch.setattr(tokenizer, "chunk_terms_many", fail)
    with pytest.raises(KeyboardInterrupt):
        encoder.encode(["a brand new walk"])
    monkeypatch.setattr(tokenizer, "chunk_terms_many", real)
    assert _decoded(index, *encoder.encode(["a brand new walk", "beagle"])) == [["brand", "new", "walk"], ["beagl"]]


def test_max_chunks_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_chunks must be at least 1, got 0"):
        BlockEncoder(Tokenizer(), TermIndex(), max_chunks=0)


# ---------------------------------------------------------------------------------------------- TermIndex.add_block


def _model(docs: list[list[str]]) -> dict[str, object]:
    """What the index must hold, computed the obvious way."""
    postings: dict[str, list[tuple[int, int]]] = {}
    doc_terms = []
    for position, doc in enumerate(docs):
        counts = Counter(doc)  # insertion order = first appearance
        doc_terms.append(list(counts.items()))
        for term, n in counts.items():
            postings.setdefault(term, []).append((position, n))
    return {"postings": postings, "doc_terms": doc_terms, "lengths": [len(d) for d in docs]}


def _held(index: TermIndex, terms: set[str]) -> dict[str, object]:
    postings = {}
    for term in terms:
        positions, tfs = index.arrays(term)
        postings[term] = list(zip(positions.tolist(), tfs.astype(int).tolist()))
        assert index.df(term) == len(positions) and index.cf(term) == int(tfs.sum())
        assert list(index.postings(term)) == positions.tolist()
    return {"postings": postings, "doc_terms": [list(index.doc_terms(p).items()) for p in range(len(index))],
            "lengths": [index.length(p) for p in range(len(index))]}


docs_strategy = st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=9), max_size=30)


@settings(max_examples=100, deadline=None)
@given(docs=docs_strategy, cuts=st.lists(st.integers(min_value=0, max_value=30), max_size=4),
       path=st.sampled_from(["_add_many", "_add_long", "add_block"]))
def test_blocks_of_documents_equal_documents_added_one_by_one(docs: list[list[str]], cuts: list[int],
                                                              path: str) -> None:
    blocks = TermIndex()
    bounds = sorted({0, len(docs), *(min(c, len(docs)) for c in cuts)})
    for start, stop in pairwise(bounds):
        part = docs[start:stop]
        ids = blocks.term_ids([t for doc in part for t in doc])
        # The numpy path whatever the block's size, or add_block's own choice (plain Python for a few documents).
        first = getattr(blocks, path)(np.array(ids, dtype=np.int64), np.array([len(d) for d in part], dtype=np.int64))
        assert first == start
    single = TermIndex()
    for doc in docs:
        single.add(doc)  # one document: the plain-Python path
    assert blocks.same_as(single)
    terms = {t for doc in docs for t in doc}
    assert _held(blocks, terms) == _held(single, terms) == _model(docs)
    assert blocks.total_length == sum(map(len, docs))


def test_a_block_with_more_distinct_terms_than_a_16_bit_sort_key() -> None:
    # 70,000 distinct terms in one block: the sort key no longer fits 16 bits and the wide-key sort is used.
    rng = np.random.default_rng(3)
    docs = [[f"w{int(x)}" for x in rng.integers(0, 70_000, size=9_000)] for _ in range(10)]
    docs.append([f"w{i}" for i in range(70_000)])
    index = TermIndex()
    index.add_block(np.array(index.term_ids([t for d in docs for t in d])), np.array([len(d) for d in docs]))
    sample = {f"w{i}" for i in range(0, 70_000, 997)}
    model = _model(docs)
    held = _held(index, sample)
    assert held["doc_terms"] == model["doc_terms"] and held["lengths"] == model["lengths"]
    assert held["postings"] == {t: model["postings"][t] for t in sample}  # type: ignore[index]


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(min_value=0, max_value=40), max_size=30), extra=st.integers(0, 200))
def test_dense_ranks_are_the_same_either_way(values: list[int], extra: int) -> None:
    array = np.array(values, dtype=np.int64)
    expected = [sorted(set(values)).index(v) for v in values]  # each value's rank among the distinct values
    assert _dense_ranks(array, 41).tolist() == expected  # small range: table
    assert _dense_ranks(array, 41 + 4 * len(values) + extra).tolist() == expected  # wide range: unique


def test_add_block_rejects_lengths_that_do_not_add_up() -> None:
    index = TermIndex()
    ids = index.term_ids(["a", "b"])
    with pytest.raises(ValueError, match="doc_lengths sum to 3 but 2 term ids were given"):
        index.add_block(np.array(ids), np.array([1, 2]))
    with pytest.raises(ValueError, match="term_ids must come from TermIndex.term_ids"):
        index.add_block(np.array([5]), np.array([1]))
    assert len(index) == 0
