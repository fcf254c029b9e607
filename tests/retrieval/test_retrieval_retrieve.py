"""Ranked search, anchor + window retrieval under a budget, and the one search every caller runs."""

from __future__ import annotations

import datetime as _dt
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.retrieval import (
    RankerConfig,
    Retriever,
    Scope,
    is_keyword,
    rank_hits,
    retrieve,
    search,
)
from agentmem_nb.retrieval.hits import Hit, RetrievedMessage


def contents(messages: Sequence[RetrievedMessage | Hit]) -> list[str]:
    return [m.message.content for m in messages]


def _check_explanation(hit: Hit) -> None:
    assert hit.score == pytest.approx(sum(s.value for s in hit.signals))
    for name in ("bm25", "expansion"):
        terms = [m.contribution for m in hit.matched_terms if m.signal == name]
        assert hit.signal(name) == pytest.approx(sum(terms))
    assert hit.score > 0


def test_the_relevant_message_ranks_first_with_its_reasons(memory: UserMemory) -> None:
    hits = rank_hits(memory, "what breed of dog did I adopt?", limit=5)
    assert hits[0].message.content == "Hi! I adopted a beagle puppy last weekend."
    assert hits[0].rank == 1 and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert {m.term for m in hits[0].matched_terms} >= {"adopt"}
    assert hits[0].layer == "daily" and hits[0].key == "2026-04-06"
    assert "bm25" in hits[0].explain()
    for hit in hits:
        _check_explanation(hit)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_session_scope_returns_only_that_thread(memory: UserMemory) -> None:
    hits = rank_hits(memory, "Biscuit", scope=Scope.session("s3"), limit=10)
    assert hits and all(h.layer == "session" and h.key == "s3" for h in hits)
    assert all(h.message.session_id == "s3" for h in hits)


def test_day_scope_and_all_sessions_scope(memory: UserMemory) -> None:
    day = rank_hits(memory, "Biscuit shoe", scope=Scope.day("2026-04-06"), limit=10)
    assert day and {h.message.day for h in day} == {"2026-04-06"}
    threads = rank_hits(memory, "Biscuit shoe", scope=Scope.everything(layer="session"), limit=10)
    assert {h.key for h in threads} == {"s1", "s3"}


def test_chinese_query_finds_chinese_message_without_shared_whitespace_tokens(memory: UserMemory) -> None:
    hits = rank_hits(memory, "谁在杭州做程序员？", limit=3)
    assert hits[0].message.content.startswith("我上个月搬到杭州了")
    assert {"杭州", "程序"} <= {m.term for m in hits[0].matched_terms}


def test_a_date_in_the_query_prefers_that_day(store: MemoryStore) -> None:
    user = store.user("bob")
    for day in ("2026-03-01", "2026-03-02"):
        user.append(f"s-{day}", "user", "We talked about the garden today.",
                    ts=_dt.datetime.fromisoformat(day + "T10:00:00+08:00"))
    hits = rank_hits(user, "garden talk on 2 March, 2026", limit=2)
    assert hits[0].message.day == "2026-03-02" and hits[0].signal("date") > 0
    assert hits[1].signal("date") == 0
    _check_explanation(hits[0])
    undated = Retriever(ranker=RankerConfig(date_boost=0)).rank_hits(user, "garden talk on 2 March, 2026", limit=2)
    assert all(h.signal("date") == 0 for h in undated)


def test_thread_and_context_signals_appear_across_files(memory: UserMemory) -> None:
    hits = rank_hits(memory, "Biscuit chew shoe", limit=10)
    assert any(h.signal("thread") > 0 for h in hits)
    assert any(h.signal("context") > 0 for h in hits)
    for hit in hits:
        _check_explanation(hit)


def test_replies_window_brings_the_answer_after_a_question(memory: UserMemory) -> None:
    result = retrieve(memory, "what should I cook tonight", budget=2, window="replies")
    assert contents(result.messages) == ["What should I cook tonight?", "How about a mushroom risotto?"]
    assert result.messages[0].is_anchor and not result.messages[1].is_anchor
    assert result.messages[1].anchor_id == result.messages[0].message.message_id


def test_fixed_window_brings_both_sides_and_dialogue_window_brings_the_question(memory: UserMemory) -> None:
    fixed = retrieve(memory, "lopsided blue bowl", budget=3, window="fixed", before=1, after=1)
    assert contents(fixed.messages) == ["Nice. What did you make first?", "A lopsided blue bowl, but I love it.",
                                        "Handmade bowls have character."]
    dialogue = retrieve(memory, "lopsided blue bowl", budget=3, window="dialogue")
    assert contents(dialogue.messages)[:2] == ["Nice. What did you make first?", "A lopsided blue bowl, but I love it."]


def test_unknown_window_mode_is_rejected(memory: UserMemory) -> None:
    with pytest.raises(ValueError, match="dialogue, replies, fixed"):
        retrieve(memory, "bowl race", window="wide")  # type: ignore[arg-type]


def test_search_keeps_exact_semantics_for_one_keyword(memory: UserMemory) -> None:
    result = search(memory, "Biscuit", budget=2)
    assert result.mode == "exact"
    assert contents(result.messages) == [m.content for m in memory.search_daily("Biscuit", limit=2)]
    assert all(h.signals[0].name == "keyword" and h.score == 1.0 for h in result.hits)
    assert all(h.mode == "exact" and h.item == (h.layer, h.key, h.message.message_id) for h in result.hits)
    in_session = search(memory, "bowl", scope=Scope.session("s2"))
    assert in_session.mode == "exact" and contents(in_session.messages) == [
        "A lopsided blue bowl, but I love it.", "Handmade bowls have character."]


def test_search_ranks_several_words_and_unmatched_keywords(memory: UserMemory) -> None:
    ranked = search(memory, "beagle puppy adopted", budget=4)
    assert ranked.mode == "ranked" and len(ranked.messages) <= 4
    assert ranked.hits and all(h.mode == "ranked" and h.explain().startswith("score") for h in ranked.hits)
    assert "Hi! I adopted a beagle puppy last weekend." in contents(ranked.messages)
    fallback = search(memory, "adopting", budget=3)  # no substring match; the stem still matches
    assert fallback.mode == "ranked"
    assert "Hi! I adopted a beagle puppy last weekend." in contents(fallback.messages)
    day = search(memory, "blue bowl", scope=Scope.day("2026-04-07"))
    assert {m.message.day for m in day.messages} == {"2026-04-07"}


def test_search_can_be_forced_to_one_mode(memory: UserMemory) -> None:
    exact = search(memory, "lopsided blue", how="exact")  # several words, one substring (the CLI's search)
    assert exact.mode == "exact" and contents(exact.messages) == ["A lopsided blue bowl, but I love it."]
    assert search(memory, "nowhere-at-all", how="exact").hits == ()  # exact: no ranked fallback
    ranked = search(memory, "Biscuit", how="ranked", before=0, after=0, budget=3)
    assert ranked.mode == "ranked" and [h.item for h in ranked.hits] == [h.item for h in rank_hits(memory, "Biscuit",
                                                                                                    limit=3)]
    with pytest.raises(ValueError, match="auto, exact, ranked"):
        search(memory, "bowl", how="fuzzy")  # type: ignore[arg-type]


def test_a_new_message_is_found_without_rebuilding(memory: UserMemory) -> None:
    assert not rank_hits(memory, "saxophone lessons")
    memory.append("s3", "user", "I signed up for saxophone lessons.")
    hits = rank_hits(memory, "saxophone lessons")
    assert hits[0].message.content == "I signed up for saxophone lessons."


@pytest.mark.parametrize(("query", "expected"), [("lyon", True), ("  lyon ", True), ("moved to lyon", False),
                                                  ("西湖", True), ("", False)])
def test_is_keyword(query: str, expected: bool) -> None:
    assert is_keyword(query) is expected


def test_empty_query_and_zero_budget_return_nothing(memory: UserMemory) -> None:
    assert retrieve(memory, "the and of", budget=10).messages == ()
    assert retrieve(memory, "beagle puppy", budget=0).messages == ()


# --------------------------------------------------------------------------- properties of the budget

VOCAB = ["beagle", "bowl", "race", "garden", "cook", "why?", "杭州", "西湖", "lake", "shoe"]


@settings(max_examples=30, deadline=None)
@given(
    threads=st.lists(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4), min_size=1, max_size=12),
                     min_size=1, max_size=3),
    query=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3),
    budget=st.integers(min_value=0, max_value=15),
    before=st.integers(min_value=0, max_value=3),
    after=st.integers(min_value=0, max_value=3),
    window=st.sampled_from(["replies", "dialogue", "fixed"]),
    layer=st.sampled_from(["daily", "session"]),
)
def test_budget_window_dedup_and_order(threads, query, budget, before, after, window, layer) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        user = MemoryStore(Path(tmp), zone="UTC").user("u")
        for t, turns in enumerate(threads):
            start = _dt.datetime(2026, 1, 1 + t, 12, tzinfo=_dt.timezone.utc)
            for i, words in enumerate(turns):
                user.append(f"t{t}", "user" if i % 2 == 0 else "assistant", " ".join(words),
                            ts=start + _dt.timedelta(minutes=i))
        text = " ".join(query)
        result = retrieve(user, text, scope=Scope.everything(layer=layer), budget=budget, before=before,
                          after=after, window=window)
        messages = result.messages
        assert len(messages) <= budget
        keys = [(m.layer, m.key, m.message.message_id) for m in messages]
        assert len(keys) == len(set(keys))  # no duplicates
        # grouped by thread, chronological inside each thread
        order = [m.key for m in messages]
        assert order == sorted(order, key=order.index)
        for key in set(order):
            ids = [m.message.message_id for m in messages if m.key == key]
            assert ids == sorted(ids)
        # each neighbour lies within the window of the anchor that brought it
        position = {(m.key, m.message.message_id): m for m in messages}
        for m in messages:
            if m.is_anchor:
                assert m.anchor_id == m.message.message_id
            else:
                offset = m.message.message_id - m.anchor_id
                assert -before <= offset <= after and offset != 0
                assert (m.key, m.anchor_id) in position  # its anchor was returned too
        for hit in result.hits:
            assert (hit.key, hit.message.message_id) in position
        # the budget is used up whenever enough was found
        ranked = rank_hits(user, text, scope=Scope.everything(layer=layer), limit=500)
        if len(messages) < budget:
            assert {(h.key, h.message.message_id) for h in ranked} <= set(position)


def test_excluded_items_are_never_returned(memory: UserMemory) -> None:
    question = "what breed of dog did I adopt?"
    asked = memory.append("s3", "user", question)  # the agent persists the question before it searches
    excluded = {("daily", asked.daily.day or "", asked.daily.message_id),
                ("session", "s3", asked.session.message_id)}
    plain = search(memory, question, budget=5)
    assert any((m.layer, m.key, m.message.message_id) in excluded for m in plain.messages)
    result = search(memory, question, budget=5, exclude=excluded)
    assert result.messages and all((m.layer, m.key, m.message.message_id) not in excluded for m in result.messages)
    assert result.hits[0].message.content == "Hi! I adopted a beagle puppy last weekend."
    in_thread = search(memory, "breed", scope=Scope.session("s3"), exclude=excluded)  # exact mode, then nothing left
    assert all(m.message.content != question for m in in_thread.messages)
    assert all(h.message.content != question for h in rank_hits(memory, question, exclude=excluded))
