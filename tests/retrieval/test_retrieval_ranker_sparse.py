"""The ranker scores only its candidates; its answers are exactly those of the full-length ranking it replaced.

``full_array_ranker`` is the ranker as it was before (every signal a float64 array over the whole kind index); it
lives here only as the reference. On random small users — several sessions over several days, words from a small
vocabulary so postings overlap, neighbours and expansion terms matter — every view and option is ranked both ways
and compared hit for hit: the same messages in the same order with the same scores, signals and per-term
breakdowns (exact float equality, not approximate).
"""

from __future__ import annotations

import datetime as _dt
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import UserIndex
from agentmem_nb.retrieval.dense import DenseIndex
from agentmem_nb.retrieval.ranker import Candidate, RankerConfig, rank
from agentmem_nb.retrieval.tokenize import Tokenizer
import full_array_ranker

ZONE = _dt.timezone(_dt.timedelta(hours=2))
WORDS = ("lake", "coffee", "budget", "meeting", "lyon", "puppy", "risotto", "race", "bowl", "pottery", "train",
         "paris", "garden", "piano", "rain")
QUERIES = ("coffee at the lake", "budget meeting in Lyon", "puppy puppy risotto", "what did we say on 3 May 2026",
           "rain in May 2026", "piano garden train paris", "nothing matches zzz")


class WordEmbedder:
    """Deterministic vectors: one dimension per vocabulary word (dense similarity without a model)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(text.lower().count(w)) for w in WORDS] for text in texts]


def _key(c: Candidate) -> tuple[object, ...]:
    return (c.layer, c.position, c.score, c.signals, c.terms)


conversations = st.lists(  # sessions: (day offset, turns as word lists)
    st.tuples(st.integers(0, 4), st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=6), min_size=1,
                                          max_size=8)),
    min_size=1, max_size=5)

CONFIGS = [
    RankerConfig(),
    RankerConfig(context_span=2, context_weight=0.5),
    RankerConfig(expansion_weight=0.0, thread_weight=0.0),
    RankerConfig(context_weight=0.0, date_boost=0.0),
    RankerConfig(expansion_docs=1, expansion_terms=2, context_span=3),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions=conversations, config_at=st.integers(0, len(CONFIGS) - 1), exclude_at=st.integers(0, 30),
       limit=st.sampled_from([1, 3, 100]))
def test_candidate_ranking_equals_the_full_array_ranking(
    sessions: list[tuple[int, list[list[str]]]], config_at: int, exclude_at: int, limit: int
) -> None:
    config = CONFIGS[config_at]
    with tempfile.TemporaryDirectory() as tmp:
        user = MemoryStore(Path(tmp), zone=ZONE).user("u")
        for n, (day, turns) in enumerate(sessions):
            start = _dt.datetime(2026, 5, 1 + day, 9, tzinfo=ZONE)
            for i, words in enumerate(turns):
                user.append(f"s{n}", "user" if i % 2 == 0 else "assistant", " ".join(words) or "ok",
                            ts=start + _dt.timedelta(minutes=i))
        index = UserIndex(user)
        tokenizer = index.tokenizer
        views = [index.view("session"), index.view("daily"), index.view("session", "s0")]
        dense = DenseIndex(WordEmbedder(), top_k=5)
        for view in views:
            exclude = [exclude_at % max(1, len(view.index)), exclude_at]
            for query in QUERIES:
                for options in ({}, {"exclude": exclude}, {"dense": dense}):
                    dense_config = config if "dense" not in options else RankerConfig(
                        context_span=config.context_span, date_boost=config.date_boost, dense_weight=0.7)
                    got = rank(view, query, tokenizer, dense_config, limit=limit, **options)  # type: ignore[arg-type]
                    want = full_array_ranker.rank(view, query, tokenizer, dense_config, limit=limit,
                                                  **options)  # type: ignore[arg-type]
                    assert [_key(c) for c in got] == [_key(c) for c in want], (view.followers, query, options)


BROAD_WORDS = ("coffee", "budget", "meeting", "lyon", "rain")
BROAD_QUERIES = ("coffee budget meeting in Lyon", "coffee", "rain in Lyon on 2 May 2026", "budget budget rain")
BROAD_CONFIGS = [
    RankerConfig(),
    RankerConfig(context_span=3, context_weight=0.9),
    RankerConfig(context_span=2, context_weight=2.0, expansion_weight=0.0),  # neighbours outscore matches
    RankerConfig(context_weight=0.5, date_boost=3.0, thread_weight=0.0),
]
broad_conversations = st.lists(  # few words, long sessions: every query term in most turns, neighbours everywhere
    st.tuples(st.integers(0, 3), st.lists(st.lists(st.sampled_from(BROAD_WORDS + ("ok", "yes")), min_size=0,
                                                   max_size=4), min_size=1, max_size=40)),
    min_size=1, max_size=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions=broad_conversations, config_at=st.integers(0, len(BROAD_CONFIGS) - 1),
       limit=st.sampled_from([1, 2, 5, 30]))
def test_broad_queries_rank_exactly_as_the_full_array_ranking(
    sessions: list[tuple[int, list[list[str]]]], config_at: int, limit: int
) -> None:
    """Queries whose terms are in most messages, so the neighbours of the matches cover nearly everything: the
    candidates the ranker leaves out (neighbours that cannot reach the top ``limit``) change nothing."""
    config = BROAD_CONFIGS[config_at]
    with tempfile.TemporaryDirectory() as tmp:
        user = MemoryStore(Path(tmp), zone=ZONE).user("u")
        for n, (day, turns) in enumerate(sessions):
            start = _dt.datetime(2026, 5, 1 + day, 9, tzinfo=ZONE)
            for i, words in enumerate(turns):
                user.append(f"s{n}", "user" if i % 2 == 0 else "assistant", " ".join(words) or "ok",
                            ts=start + _dt.timedelta(minutes=i))
        index = UserIndex(user)
        for view in (index.view("session"), index.view("daily"), index.view("session", "s0")):
            for query in BROAD_QUERIES:
                got = rank(view, query, index.tokenizer, config, limit=limit)
                want = full_array_ranker.rank(view, query, index.tokenizer, config, limit=limit)
                assert [_key(c) for c in got] == [_key(c) for c in want], (view.followers, query)


def test_a_broad_query_materialises_only_the_neighbours_that_can_reach_the_top(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One turn in four mentions the query and every turn neighbours one that does: the candidates were all the
    messages (at 1M, 715k of them for the benchmark's query). Now only the matches are scored in full, and of
    their neighbours only those next to a match strong enough to lift them into the top ``limit``."""
    import numpy as np

    from agentmem_nb.retrieval import ranker

    with tempfile.TemporaryDirectory() as tmp:
        user = MemoryStore(Path(tmp), zone=ZONE).user("u")
        start = _dt.datetime(2026, 5, 1, 9, tzinfo=ZONE)
        for i in range(800):
            # A few strong matches (the query's words, twice), many weak ones (one word in a long turn), filler.
            if i % 200 == 7:
                text = "coffee budget coffee budget"
            elif i % 4 == 0:
                text = "coffee and then a very long turn about nothing much at all really " + f"n{i}"
            else:
                text = f"filler turn number {i}"
            user.append(f"s{i // 200}", "user", text, ts=start + _dt.timedelta(minutes=i))
        index = UserIndex(user)
        view = index.view("session")
        matches = len(index.kinds["session"].terms.postings("coffe"))
        sizes: list[int] = []
        real_zeros = np.zeros

        def counting_zeros(shape: object, *args: object, **kwargs: object) -> np.ndarray:
            out = real_zeros(shape, *args, **kwargs)  # type: ignore[call-overload]
            if out.dtype.kind == "f":  # score arrays: one element per candidate scored
                sizes.append(out.size)
            return out  # type: ignore[no-any-return]

        monkeypatch.setattr(ranker.np, "zeros", counting_zeros)
        config = RankerConfig(expansion_weight=0.0)
        hits = rank(view, "coffee budget", index.tokenizer, config, limit=5)
        monkeypatch.undo()
        want = full_array_ranker.rank(view, "coffee budget", index.tokenizer, config, limit=5)
        assert [_key(c) for c in hits] == [_key(c) for c in want]
        assert {h.position for h in hits} & {6, 8}  # a neighbour of the strong match made the top 5
        # Every candidate array is no larger than the matches plus the strong matches' few neighbours (the
        # neighbours of all 200 matches would make it 600).
        assert sizes and max(sizes) <= matches + 4 * 2, (sizes, matches)


def test_the_ranker_allocates_nothing_the_size_of_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 1M messages every full-length float64 score array was 8 MB; the ranker's score arrays now follow the
    candidates (a byte-per-message mask of the candidates remains)."""
    import numpy as np

    from agentmem_nb.retrieval import ranker

    with tempfile.TemporaryDirectory() as tmp:
        user = MemoryStore(Path(tmp), zone=ZONE).user("u")
        start = _dt.datetime(2026, 5, 1, 9, tzinfo=ZONE)
        for i in range(400):  # 400 filler turns, two of them about the query
            text = "coffee at the lake" if i in (100, 300) else f"filler turn number {i}"
            user.append(f"s{i // 100}", "user", text, ts=start + _dt.timedelta(minutes=i))
        index = UserIndex(user)
        view = index.view("session")
        total = len(view.index)
        sizes: list[int] = []
        real_zeros = np.zeros

        def counting_zeros(shape: object, *args: object, **kwargs: object) -> np.ndarray:
            out = real_zeros(shape, *args, **kwargs)  # type: ignore[call-overload]
            if out.dtype.kind == "f":  # score arrays (masks of one byte per message are allowed)
                sizes.append(out.size)
            return out  # type: ignore[no-any-return]

        monkeypatch.setattr(ranker.np, "zeros", counting_zeros)
        hits = rank(view, "coffee lake", index.tokenizer, RankerConfig(), limit=10)
        assert [(h.layer, h.position) for h in hits][:2] in ([(1, 0), (3, 0)], [(3, 0), (1, 0)])
        assert sizes and max(sizes) < total // 10, (sizes, total)
