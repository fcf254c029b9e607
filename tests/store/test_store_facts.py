"""The facts layer (store/facts.py): events on disk, the folded view, policies, accumulating values, bad lines."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store import FactSource, Statement
from agentmem_nb.store.facts import fact_key
from agentmem_nb.store.problems import ProblemKind


def _src(n: int) -> FactSource:
    return FactSource("s1", n)


def test_facts_live_beside_memory_md_which_stays_untouched(store: MemoryStore) -> None:
    user = store.user("alice")
    user.long_term.add_note("free note")
    user.facts.add("user", "lives_in", "Paris", source=_src(1))
    assert user.long_term.read() == "- free note\n"
    lines = (user.directory / "facts.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["value"] == "Paris" and json.loads(lines[0])["source"] == {"session_id": "s1",
                                                                                         "message_id": 1}


@pytest.mark.parametrize(("subject", "attribute", "expected"), [
    ("", "lives in", ("user", "lives_in")), ("我", "Lives_In", ("user", "lives_in")),
    (" Sister ", "name", ("sister", "name")), ("ＭＥ", "likes", ("user", "likes")),
])
def test_keys_are_normalised(subject: str, attribute: str, expected: tuple[str, str]) -> None:
    key = fact_key(subject, attribute)
    assert (key.subject, key.attribute) == expected


def test_accumulating_values_add_and_end_one_by_one(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "likes", "tea", "add"), Statement("user", "likes", "jazz", "add")],
                 source=_src(1))
    facts.record([Statement("user", "likes", "tea", "end")], source=_src(2))
    assert [f.value for f in facts.get("user", "likes")] == ["jazz"]
    tea = [f for f in facts.history("user", "likes") if f.value == "tea"][0]
    assert tea.status == "superseded" and tea.ended_by == "negation" and tea.valid_to is not None


def test_liking_what_was_disliked_ends_the_dislike(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "dislikes", "coffee", "add")], source=_src(1))
    facts.record([Statement("user", "likes", "Coffee", "add")], source=_src(2))
    assert facts.get("user", "dislikes") == [] and facts.history("user", "dislikes")[0].ended_by == "opposite"


def test_an_end_without_value_ends_the_single_value(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.add("user", "works_at", "Google", source=_src(1))
    facts.record([Statement("user", "works_at", "", "end")], source=_src(2))
    assert facts.get("user", "works_at") == [] and facts.history("user", "works_at")[0].status == "superseded"


def test_a_correction_supersedes_even_a_stable_attribute(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.add("user", "birthday", "May 3", source=_src(1))
    facts.record([Statement("user", "birthday", "May 4", "correct")], source=_src(2))
    old, new = facts.history("user", "birthday")
    assert (old.status, old.ended_by, new.status) == ("superseded", "correction", "active")


@pytest.mark.parametrize(("policy", "certain", "expected"), [
    ("supersede", True, ("Lyon", [])), ("supersede", False, ("Paris", ["Lyon"])),
    ("review", True, ("Paris", ["Lyon"])), ("latest", False, ("Lyon", [])),
])
def test_the_merge_policy_decides_a_change(tmp_path: Path, clock, policy: str, certain: bool,
                                           expected: tuple[str, list[str]]) -> None:
    facts = MemoryStore(tmp_path, clock=clock, fact_policy=policy).user("u").facts  # type: ignore[arg-type]
    facts.add("user", "lives_in", "Paris", source=_src(1))
    facts.add("user", "lives_in", "Lyon", source=_src(2), certain=certain)
    assert (facts.get("user", "lives_in")[0].value, [f.value for f in facts.conflicts()]) == expected


def test_a_decision_is_kept_when_the_policy_changes_later(tmp_path: Path, clock) -> None:
    MemoryStore(tmp_path, clock=clock, fact_policy="review").user("u").facts.add("user", "lives_in", "Paris")
    MemoryStore(tmp_path, clock=clock, fact_policy="review").user("u").facts.add("user", "lives_in", "Lyon")
    later = MemoryStore(tmp_path, clock=clock, fact_policy="latest").user("u").facts
    assert [f.value for f in later.conflicts()] == ["Lyon"] and later.get("user", "lives_in")[0].value == "Paris"


def test_rejecting_a_conflict_deletes_it_and_keeps_the_value(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.add("user", "name", "Alice", source=_src(1))
    held = facts.add("user", "name", "Alicia", source=_src(2))[0]
    rejected = facts.resolve(held.fact_id, accept=False)
    assert rejected.status == "deleted" and rejected.ended_by == "rejected"
    assert facts.get("user", "name")[0].value == "Alice"
    with pytest.raises(InvalidArgument, match="not a conflict"):
        facts.resolve(held.fact_id, accept=True)


def test_delete_is_an_event_and_the_fact_stays_in_the_history(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    fact = facts.add("user", "likes", "tea")[0]
    facts.delete(fact.fact_id)
    assert facts.current() == [] and facts.history("user", "likes")[0].status == "deleted"
    with pytest.raises(InvalidArgument, match="already deleted"):
        facts.delete(fact.fact_id)


@pytest.mark.parametrize("bad", [Statement("user", "", "x"), Statement("user", "likes", "  "),
                                 Statement("user", "likes", "x", "maybe")])  # type: ignore[arg-type]
def test_a_bad_statement_is_refused_before_anything_is_written(store: MemoryStore, bad: Statement) -> None:
    facts = store.user("alice").facts
    with pytest.raises(InvalidArgument):
        facts.record([Statement("user", "likes", "tea", "add"), bad])
    assert facts.events() == []


def test_a_second_process_sees_the_events_and_its_view_follows(tmp_path: Path, clock) -> None:
    first = MemoryStore(tmp_path, clock=clock).user("u").facts
    first.add("user", "lives_in", "Paris")
    second = MemoryStore(tmp_path, clock=clock).user("u").facts
    assert second.get("user", "lives_in")[0].value == "Paris"
    first.add("user", "lives_in", "Lyon")
    assert second.get("user", "lives_in")[0].value == "Lyon"


def test_corrupt_lines_are_skipped_and_reported(store: MemoryStore) -> None:
    user = store.user("alice")
    user.facts.add("user", "likes", "tea")
    with open(user.directory / "facts.jsonl", "a") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"event": "resolve", "fact_id": 99}) + "\n")
        handle.write(json.dumps({"event": "assert", "subject": "user"}) + "\n")
    fresh = MemoryStore(store.root, clock=store.clock).user("alice")
    with pytest.warns(Warning):
        assert [f.value for f in fresh.facts.current()] == ["tea"]
    kinds = [p.kind for p in fresh.problems()]
    assert ProblemKind.MALFORMED_JSON in kinds and kinds.count(ProblemKind.INVALID_FACT_EVENT) == 2


def _writer(root: str, n: int, go) -> None:  # type: ignore[no-untyped-def]
    facts = MemoryStore(root).user("u").facts
    go.wait()  # every writer starts together, so their decisions overlap
    for i in range(100):
        facts.add("user", "lives_in", f"city{n}-{i}", source=FactSource(f"s{n}", i + 1))


def test_concurrent_writers_never_leave_two_active_values(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    go = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), n, go)) for n in range(3)]
    for proc in procs:
        proc.start()
    go.set()
    for proc in procs:
        proc.join()
        assert proc.exitcode == 0
    facts = MemoryStore(tmp_path).user("u").facts
    assert len(facts.get("user", "lives_in")) == 1 and len(facts.all()) == 300
    assert sum(f.status == "superseded" for f in facts.all()) == 299


def test_a_correction_of_an_accumulating_value_replaces_the_last_one(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "likes", "tea", "add")], source=_src(1))
    facts.record([Statement("user", "likes", "blue", "add")], source=_src(2))
    facts.record([Statement("user", "likes", "green", "correct")], source=_src(3))
    assert [f.value for f in facts.get("user", "likes")] == ["tea", "green"]
    assert [f.ended_by for f in facts.history("user", "likes") if f.value == "blue"] == ["correction"]


def test_a_facts_file_replaced_by_as_many_lines_is_folded_again(tmp_path) -> None:  # noqa: ANN001
    from agentmem_nb import MemoryStore
    from agentmem_nb.store import FactSource, Statement

    store = MemoryStore(tmp_path / "m")
    facts = store.user("alice").facts
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    facts.record([Statement("user", "likes", "tea", "add")], source=FactSource("s1", 2))
    assert sorted(f.value for f in facts.current()) == ["Paris", "tea"]
    other = MemoryStore(tmp_path / "n").user("alice").facts  # the same two kinds of event, other values
    other.record([Statement("user", "name", "Ana")], source=FactSource("s1", 1))
    other.record([Statement("user", "likes", "jazz", "add")], source=FactSource("s1", 2))
    facts.path.write_bytes(other.path.read_bytes())  # replaced by hand with as many lines
    assert sorted(f.value for f in facts.current()) == ["Ana", "jazz"]
