"""A text whose chunks are very long (Chinese has no spaces: a pasted document is one chunk) is indexed as a stream,
and gives exactly the terms and counts of the ordinary path (the memory it saves is measured in
``test_retrieval_memory.py``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb.retrieval.bm25 import TermIndex
from agentmem_nb.retrieval.encode import BlockEncoder
from agentmem_nb.retrieval.tokenize import LONG_CHUNK, Tokenizer, TokenizerConfig

CONFIGS = [TokenizerConfig(), TokenizerConfig(stem=False), TokenizerConfig(cjk_unigrams=False)]
# Pieces with no whitespace, so that repeating them makes one long chunk: CJK runs with stop characters, words glued
# by punctuation (stemmed, stop words, possessives, apostrophes), digits, mixed scripts.
PIECES = ["西湖旅行", "我的", "的确", "杭州2023", "paintings,", "the.", "caroline's", "don't", "o'brien", "3pm",
          "abc西湖", "한국어", "—", "a", "了"]

long_chunks = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).flatmap(
    lambda parts: st.integers(LONG_CHUNK // max(1, len("".join(parts))) + 1, 3000 // max(1, len("".join(parts))) + 2)
    .map(lambda k: "".join(parts) * k))


def _decoded(index: TermIndex, term_ids: np.ndarray, lengths: np.ndarray) -> list[list[str]]:
    names = [index._names[i] for i in term_ids.tolist()]
    ends = np.cumsum(lengths).tolist()
    return [names[start:end] for start, end in zip([0, *ends[:-1]], ends)]


@settings(max_examples=60, deadline=None)
@given(chunk=st.one_of(long_chunks, st.text(min_size=1, max_size=40)), config=st.sampled_from(CONFIGS))
def test_streamed_terms_of_a_chunk_equal_its_terms(chunk: str, config: TokenizerConfig) -> None:
    chunk = Tokenizer.normalize(chunk)
    tokenizer = Tokenizer(config)
    assert list(tokenizer.iter_chunk_terms(chunk)) == tokenizer.terms(chunk)


@settings(max_examples=40, deadline=None)
@given(long=long_chunks, short=st.lists(st.sampled_from(PIECES), max_size=4), config=st.sampled_from(CONFIGS),
       path=st.sampled_from(["_encode_few", "_encode_many", "encode"]))
def test_texts_with_long_chunks_encode_to_their_terms(long: str, short: list[str], config: TokenizerConfig,
                                                     path: str) -> None:
    texts = [" ".join(short), f"{short[0] if short else 'x'} {long} tail", long, " ".join(short) + " " + long]
    index = TermIndex()
    encoder = BlockEncoder(Tokenizer(config), index)
    for _ in range(2):  # the second time the long chunk is known: looked up, not learnt again
        term_ids, lengths = getattr(encoder, path)(texts)
        assert _decoded(index, term_ids, lengths) == [Tokenizer(config).terms(t) for t in texts]


def test_a_long_chunk_is_not_memoised_by_the_tokenizer() -> None:
    tokenizer = Tokenizer()
    encoder = BlockEncoder(tokenizer, TermIndex())
    encoder.encode(["西湖旅行" * 1000 + " 杭州"])
    assert "杭州" in tokenizer._chunk_cache and all(len(chunk) <= LONG_CHUNK for chunk in tokenizer._chunk_cache)


def test_one_long_document_is_counted_as_documents_added_one_by_one() -> None:
    rng = np.random.default_rng(5)
    docs = [[f"t{int(x)}" for x in rng.integers(0, 3000, size=size)] for size in (40_000, 0, 3, 25_000)]
    long, single = TermIndex(), TermIndex()
    long.add_block(np.array(long.term_ids([t for d in docs for t in d])), np.array([len(d) for d in docs]))
    for doc in docs:
        single._add_few(single.term_ids(doc), [len(doc)])  # the plain-Python definition, whatever the length
    assert long.same_as(single)
    assert [list(long.doc_terms(p).items()) for p in range(4)] == [list(single.doc_terms(p).items()) for p in range(4)]
