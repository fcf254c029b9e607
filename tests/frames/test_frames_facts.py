"""frames.facts: every fact as a row (current and history), aware times, one key's timeline."""

from __future__ import annotations

from agentmem_nb import MemoryStore, frames
from agentmem_nb.store import FactSource, Statement


def test_facts_frame_has_current_and_history(store: MemoryStore) -> None:
    mem = store.user("alice")
    mem.facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    mem.facts.record([Statement("user", "lives_in", "Lyon"), Statement("user", "likes", "tea", "add")],
                     source=FactSource("s1", 3))
    every = frames.facts(mem)
    assert tuple(every.columns) == frames.FACT_COLUMNS
    assert list(zip(every["value"], every["status"])) == [("Paris", "superseded"), ("Lyon", "active"),
                                                          ("tea", "active")]
    assert every.loc[0, "valid_to"] == every.loc[1, "valid_from"] and str(every["valid_from"].dt.tz) == "Asia/Shanghai"
    assert list(every["source"]) == ["s1#1", "s1#3", "s1#3"] and list(every["message_id"]) == [1, 3, 3]
    assert list(frames.facts(mem, current=True)["value"]) == ["Lyon", "tea"]
    assert list(frames.facts(mem, key="user.lives_in")["value"]) == ["Paris", "Lyon"]


def test_no_facts_is_an_empty_frame_with_the_columns(store: MemoryStore) -> None:
    empty = frames.facts(store.user("bob"))
    assert empty.empty and tuple(empty.columns) == frames.FACT_COLUMNS
