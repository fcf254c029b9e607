"""BM25 over the incremental term index: computed expectations, ranking sanity, explanations."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb.retrieval.bm25 import (
    BM25Params,
    CorpusStats,
    TermIndex,
    explain_terms,
    idf,
    score_query,
)


def _index(*docs: list[str]) -> TermIndex:
    ix = TermIndex()
    for doc in docs:
        ix.add(doc)
    return ix


def test_idf_matches_the_formula_and_is_never_negative() -> None:
    assert idf(10, 1) == pytest.approx(math.log(1 + 9.5 / 1.5))
    assert idf(10, 10) > 0  # a term in every document still counts a little (Lucene's shifted IDF)
    assert idf(0, 0) == 0.0 and idf(5, 0) == 0.0


def test_score_is_the_hand_computed_bm25_value() -> None:
    ix = _index(["cat", "cat", "sat"], ["dog"], ["cat", "dog", "run", "far"])
    stats = CorpusStats.of([ix], ["cat"])
    k1, b = 1.2, 0.75
    avgdl = (3 + 1 + 4) / 3
    w = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expected0 = w * 2 * (k1 + 1) / (2 + k1 * (1 - b + b * 3 / avgdl))
    expected2 = w * 1 * (k1 + 1) / (1 + k1 * (1 - b + b * 4 / avgdl))
    scores = score_query(ix, {"cat": 1.0}, stats, BM25Params(k1, b))
    assert scores == {0: pytest.approx(expected0), 2: pytest.approx(expected2)}


def test_a_more_relevant_document_ranks_higher() -> None:
    ix = _index(["beagle", "puppy", "adopt"], ["puppy", "weather"], ["weather", "rain", "cold"], ["beagle", "walk"])
    stats = CorpusStats.of([ix], ["beagle", "puppy"])
    scores = score_query(ix, {"beagle": 1.0, "puppy": 1.0}, stats)
    assert 2 not in scores  # shares no term
    assert scores[0] > scores[3] and scores[0] > scores[1]  # both terms beat one


def test_rarer_terms_weigh_more_and_longer_documents_less() -> None:
    ix = _index(["common", "rare"], ["common"], ["common"], ["common", "x", "y", "z", "w"])
    stats = CorpusStats.of([ix], ["common", "rare"])
    scores = score_query(ix, {"common": 1.0, "rare": 1.0}, stats)
    assert explain_terms(ix, 0, {"common": 1.0, "rare": 1.0}, stats)["rare"] > scores[1]
    assert scores[1] > scores[3]  # same tf, longer document


def test_query_weight_scales_contributions_linearly() -> None:
    ix = _index(["a", "b"], ["b"])
    stats = CorpusStats.of([ix], ["a"])
    one = score_query(ix, {"a": 1.0}, stats)[0]
    assert score_query(ix, {"a": 0.25}, stats)[0] == pytest.approx(0.25 * one)


def test_stats_over_several_files_add_up() -> None:
    first, second = _index(["a"], ["b"]), _index(["a", "c"])
    stats = CorpusStats.of([first, second], ["a", "c"])
    assert stats.n_docs == 3 and stats.df == {"a": 2, "c": 1}
    assert stats.avg_length == pytest.approx(4 / 3)


def test_invalid_parameters_are_rejected() -> None:
    with pytest.raises(ValueError, match="0 <= b <= 1"):
        BM25Params(b=1.5)


docs_strategy = st.lists(st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=8), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, query=st.lists(st.sampled_from("abcdefghz"), min_size=1, max_size=4))
def test_explanations_sum_to_the_score(docs: list[list[str]], query: list[str]) -> None:
    ix = _index(*docs)
    weights = {t: float(query.count(t)) for t in query}
    stats = CorpusStats.of([ix], weights)
    for position, score in score_query(ix, weights, stats).items():
        assert sum(explain_terms(ix, position, weights, stats).values()) == pytest.approx(score)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy, split=st.integers(min_value=0, max_value=25))
def test_growing_an_index_equals_building_it_at_once(docs: list[list[str]], split: int) -> None:
    grown = _index(*docs[:split])
    for doc in docs[split:]:
        grown.add(doc)
    whole = _index(*docs)
    assert grown.same_as(whole)
    assert grown.total_length == whole.total_length == sum(map(len, docs))
    for term in "abcdefgh":
        assert grown.df(term) == sum(1 for d in docs if term in d)
        assert grown.cf(term) == sum(d.count(term) for d in docs)
