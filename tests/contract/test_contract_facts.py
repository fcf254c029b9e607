"""Conformance: facts as append-only events — supersession, conflicts held and resolved, idempotent replays."""

from __future__ import annotations

import pytest

from agentmem_nb.store import FactSource, Statement
from agentmem_nb.store.contract import FactRecord, KeepsFacts, Store


@pytest.fixture(autouse=True)
def _keeps_facts(store: Store) -> None:
    if not isinstance(store.user("alice"), KeepsFacts):
        pytest.skip("this backend keeps no structured facts yet (the agent runs there without them)")


def test_a_new_value_supersedes_and_the_history_keeps_both(store: Store) -> None:
    facts = store.user("alice").facts
    assert isinstance(facts, FactRecord)
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3))
    assert [f.value for f in facts.get("user", "lives_in")] == ["Lyon"]
    timeline = facts.history("me", "Lives In")
    assert [(f.value, f.status) for f in timeline] == [("Paris", "superseded"), ("Lyon", "active")]
    assert timeline[0].valid_to == timeline[1].valid_from and timeline[0].source == FactSource("s1", 1)


def test_an_unsure_contradiction_waits_and_its_resolution_is_an_event(store: Store) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 1))
    held = facts.record([Statement("user", "name", "Alicia")], source=FactSource("s1", 2))
    assert [f.status for f in held] == ["conflict"] and facts.get("user", "name")[0].value == "Alice"
    facts.resolve(held[0].fact_id, accept=True)
    assert facts.get("user", "name")[0].value == "Alicia" and facts.conflicts() == []
    assert [e.kind for e in facts.events()] == ["assert", "assert", "resolve"]


def test_recording_the_same_message_twice_appends_nothing(store: Store) -> None:
    facts = store.user("alice").facts
    first = [Statement("user", "lives_in", "Paris"), Statement("user", "likes", "jazz", "add")]
    facts.record(first, source=FactSource("s1", 4))
    facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 6))
    facts.record(first, source=FactSource("s1", 4))  # a queue replayed after a crash: message 4 comes again
    assert len(facts.events()) == 3 and [f.value for f in facts.get("user", "lives_in")] == ["Lyon"]
    assert facts.has_source("s1", 4) and not facts.has_source("s1", 5)


def test_a_value_said_to_be_over_is_kept_as_history_when_nothing_was_known(store: Store) -> None:
    facts = store.user("alice").facts
    assert isinstance(facts, FactRecord)
    # "I used to live in Sydney. Now I live in Melbourne.": Sydney was never active here, yet it is the key's past
    ended = facts.record([Statement("user", "lives_in", "Sydney", "end")], source=FactSource("s1", 1))
    assert [(f.value, f.status, f.ended_by) for f in ended] == [("Sydney", "superseded", "negation")]
    assert ended[0].valid_from is None and ended[0].valid_to is not None
    facts.record([Statement("user", "lives_in", "Melbourne")], source=FactSource("s1", 2))
    assert [(f.value, f.status) for f in facts.history("user", "lives_in")] == [("Sydney", "superseded"),
                                                                              ("Melbourne", "active")]
    # said over again, from another message: the history has it once; an end naming nothing records nothing
    assert facts.record([Statement("user", "lives_in", "sydney", "end")], source=FactSource("s1", 3)) == []
    assert facts.record([Statement("user", "works_at", "", "end")], source=FactSource("s1", 4)) == []
    assert [f.value for f in facts.history("user", "lives_in")] == ["Sydney", "Melbourne"]


def test_an_end_said_shorter_ends_the_one_value_of_a_single_valued_key(store: Store) -> None:
    facts = store.user("alice").facts
    assert isinstance(facts, FactRecord)
    facts.record([Statement("user", "job", "delivery rider")], source=FactSource("s1", 1))
    ended = facts.record([Statement("user", "job", "rider", "end")], source=FactSource("s1", 2))
    assert [(f.value, f.status) for f in ended] == [("delivery rider", "superseded")] and facts.get("user", "job") == []
    # a list keeps its items apart: "tea" ended is not "green tea"
    facts.record([Statement("user", "likes", "green tea", "add")], source=FactSource("s1", 3))
    facts.record([Statement("user", "likes", "tea", "end")], source=FactSource("s1", 4))
    assert [f.value for f in facts.get("user", "likes")] == ["green tea"]


def test_an_end_said_shorter_names_words_of_the_value_not_letters(store: Store) -> None:
    facts = store.user("alice").facts
    assert isinstance(facts, FactRecord)
    facts.record([Statement("user", "job", "martial artist")], source=FactSource("s1", 1))
    facts.record([Statement("user", "job", "art", "end")], source=FactSource("s1", 2))
    assert [f.value for f in facts.get("user", "job")] == ["martial artist"]
    facts.record([Statement("user", "job", "外卖骑手")], source=FactSource("s1", 3))
    facts.record([Statement("user", "job", "骑手", "end")], source=FactSource("s1", 4))
    assert facts.get("user", "job") == []
