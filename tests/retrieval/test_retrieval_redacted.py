"""The one search never returns a redacted message — as an exact hit, a ranked hit or a ranked hit's neighbour —
and a store window shows it in place as ``[redacted: reason]`` (:mod:`agentmem_nb.store.redactions`)."""

from __future__ import annotations

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.items import ItemKey
from agentmem_nb.retrieval import Retriever, Scope


@pytest.fixture
def mem(store: MemoryStore):  # noqa: ANN201
    mem = store.user("alice")
    mem.append("s1", "user", "Where does my sister live these days?")
    mem.append("s1", "assistant", "Your sister lives in Lyon, near the river.")  # #2: redacted below
    mem.append("s1", "user", "And my brother lives in Lyon too")
    mem.redactions.add(ItemKey("session", "s1", 2), reason="private")
    mem.redactions.add(ItemKey("daily", mem.days()[0], 2), reason="private")
    return mem


def _ids(result) -> list[tuple[str, int]]:  # noqa: ANN001
    return [(m.layer, m.message.message_id) for m in result.messages]


@pytest.mark.parametrize("scope", [Scope.session("s1"), Scope.everything()])
@pytest.mark.parametrize("query", ["Lyon", "river", "where does my sister live"])
def test_a_search_never_returns_a_redacted_message(mem, scope: Scope, query: str) -> None:  # noqa: ANN001
    result = Retriever().search(mem, query, scope=scope, before=1, after=1, window="fixed")
    assert 2 not in [m.message.message_id for m in result.messages], _ids(result)
    assert not any("river" in m.message.content for m in result.messages)
    assert not any("redacted" in m.message.content for m in result.messages)  # omitted, not shown, in a search


def test_exact_search_keeps_its_limit_of_visible_hits(mem) -> None:  # noqa: ANN001
    found = mem.search_session("s1", "lyon", limit=1)
    assert [m.message_id for m in found] == [3]
    assert [m.message_id for m in mem.search_daily("lyon", limit=5)] == [3]


def test_a_window_shows_the_reason_in_place_and_the_line_is_kept(mem) -> None:  # noqa: ANN001
    before = mem.session("s1").path.read_bytes()
    window = mem.session_window("s1", 1, 0, 2)
    assert [(m.message_id, m.content) for m in window.messages][1] == (2, "[redacted: private]")
    assert window.messages[2].content == "And my brother lives in Lyon too"
    assert mem.daily_window(mem.days()[0], 2, 0, 0).messages[0].content == "[redacted: private]"
    assert [m.content for m in mem.recent("s1", 2)][1] == "[redacted: private]"
    assert mem.session("s1").path.read_bytes() == before
    assert mem.session("s1").get(2).content == "Your sister lives in Lyon, near the river."  # the raw layer keeps it


@pytest.mark.parametrize("scope", [Scope.session("s1"), Scope.everything()])
def test_the_count_of_matches_leaves_a_redacted_message_out(mem, scope: Scope) -> None:  # noqa: ANN001
    # "lyon" is in message 2 (redacted) and message 3 of the thread (the whole-memory scope reads the day copies)
    assert Retriever().count_matches(mem, "lyon brother", scope=scope) == 1
