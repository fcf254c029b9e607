"""Assertions for your own Python tests of a memory: the checks of a recall case, one call each.

::

    from agentmem_nb.testing.assertions import assert_recalls, assert_not_recalled

    def test_sister(store):
        store.user("alice").append("s1", "user", "My sister Ana lives in Porto.")
        assert_recalls(store, "Where does my sister live?", ["Ana lives in Porto"], user="alice", budget=5)

A failure is an ``AssertionError`` with the same explanation as a failing case of a ``*.memcases.yaml`` file: what
was retrieved instead, and where the evidence was when it lay beyond the budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import CaseResult, check_recall
from agentmem_nb.retrieval import Retriever, Scope
from agentmem_nb.retrieval.retriever import SearchHow
from agentmem_nb.store import MemoryStore, UserMemory

__all__ = ["assert_recalls", "assert_not_recalled"]


def _user(store_or_user: MemoryStore | UserMemory, user: str | None) -> UserMemory:
    if isinstance(store_or_user, UserMemory):
        return store_or_user
    if user is not None:
        return store_or_user.user(user)
    users = store_or_user.users()
    if len(users) != 1:
        raise InvalidArgument(f"{store_or_user!r} holds {len(users)} users ({', '.join(map(repr, users[:5]))}): "
                              "say which with user=...")
    return store_or_user.user(users[0])


def assert_recalls(store_or_user: MemoryStore | UserMemory, question: str, expected: str | Sequence[str], *,
                   budget: int = 10, user: str | None = None, scope: Scope | None = None, how: SearchHow = "auto",
                   retriever: Retriever | None = None) -> CaseResult:
    """Assert that searching for ``question`` retrieves, within ``budget`` messages, a message containing each
    text of ``expected`` (casefolded). Returns the result (what was retrieved) for further checks."""
    texts = [expected] if isinstance(expected, str) else list(expected)
    result = check_recall(_user(store_or_user, user), question, expected=texts, budget=budget, scope=scope, how=how,
                          retriever=retriever, name="assert_recalls")
    if not result.passed:
        raise AssertionError(result.explain())
    return result


def assert_not_recalled(store_or_user: MemoryStore | UserMemory, question: str, unexpected: str | Sequence[str], *,
                        budget: int = 10, user: str | None = None, scope: Scope | None = None,
                        how: SearchHow = "auto", retriever: Retriever | None = None) -> CaseResult:
    """Assert that searching for ``question`` retrieves no message containing any text of ``unexpected``."""
    texts = [unexpected] if isinstance(unexpected, str) else list(unexpected)
    result = check_recall(_user(store_or_user, user), question, not_expected=texts, budget=budget, scope=scope,
                          how=how, retriever=retriever, name="assert_not_recalled")
    if not result.passed:
        raise AssertionError(result.explain())
    return result
