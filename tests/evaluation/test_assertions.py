"""``assert_recalls`` / ``assert_not_recalled`` for Python tests."""

from __future__ import annotations

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.retrieval import Scope
from agentmem_nb.testing.assertions import assert_not_recalled, assert_recalls


@pytest.fixture
def filled(store: MemoryStore) -> MemoryStore:
    user = store.user("alice")
    user.append("s1", "user", "My sister Ana lives in Porto.")
    user.append("s1", "assistant", "Noted.")
    for n in range(6):
        user.append("s2", "user", f"My sister called again about the weather, time {n}.")
    return store


def test_assert_recalls_passes_and_returns_what_was_retrieved(filled: MemoryStore) -> None:
    result = assert_recalls(filled, "Where does my sister live?", "Ana lives in Porto", budget=10)
    assert result.passed and any("Porto" in m.content for m in result.retrieved)
    assert_recalls(filled.user("alice"), "sister", ["Porto"], scope=Scope.session("s1"))


def test_assert_recalls_fails_with_the_explanation(filled: MemoryStore) -> None:
    with pytest.raises(AssertionError) as caught:
        assert_recalls(filled, "sister called weather", "Ana lives in Porto", budget=1, user="alice")
    text = str(caught.value)
    assert "'Ana lives in Porto' not retrieved within the budget of 1 message(s)" in text
    assert "top hits (ranked, budget 1" in text and "weather" in text


def test_assert_not_recalled(filled: MemoryStore) -> None:
    assert_not_recalled(filled, "Where does my sister live?", "Lisbon")
    with pytest.raises(AssertionError, match="'Porto' must not be retrieved, but #1"):
        assert_not_recalled(filled, "Where does my sister live?", "Porto", budget=3)


def test_a_store_of_several_users_needs_a_name(filled: MemoryStore) -> None:
    filled.user("bob").append("s1", "user", "hello")
    with pytest.raises(InvalidArgument, match="holds 2 users .*user="):
        assert_recalls(filled, "sister", "Porto")
