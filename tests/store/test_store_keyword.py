"""Whitespace around a keyword is not part of it (the original demo strips it): one rule, in
``MessageFile.search``, that every keyword search goes through — the store API, the agent's tool, retrieval."""

from __future__ import annotations

import pytest

from agentmem_nb import MemoryStore, UserMemory


@pytest.fixture
def mem(store: MemoryStore) -> UserMemory:
    user = store.user("u1")
    user.append("s1", "user", "我想找工作，在杭州")
    user.append("s1", "assistant", "好的")
    user.append("s1", "user", "the job hunt goes on")
    return user


@pytest.mark.parametrize("keyword", [" 找工作 ", "找工作\n", "\t找工作", "\u3000找工作\u3000", "  JOB hunt "])
def test_spaces_around_a_keyword_are_stripped_by_the_store(mem: UserMemory, keyword: str) -> None:
    expected = [1] if "找" in keyword else [3]
    assert [m.message_id for m in mem.search_session("s1", keyword)] == expected
    assert [m.message_id for m in mem.session("s1").search(keyword)] == expected
    day = mem.days()[0]
    assert [m.content for m in mem.search_daily(keyword)] == [m.content for m in mem.search_daily(keyword, day=day)]
    assert len(mem.search_daily(keyword)) == 1


def test_inner_spaces_still_count_and_a_blank_keyword_is_the_last_messages(mem: UserMemory) -> None:
    assert mem.search_session("s1", " job  hunt ") == []  # only the ends are stripped, as in the original
    assert [m.message_id for m in mem.search_session("s1", "   ", limit=2)] == [2, 3]


def test_the_agent_tool_and_retrieval_find_it_too(mem: UserMemory) -> None:
    from agentmem_nb.agent import MemoryTools
    from agentmem_nb.agent.tools import TurnScope
    from agentmem_nb.retrieval import Scope, search

    bound = MemoryTools(mem, "s1")
    found = bound.search_session({"keyword": " 找工作 "}, scope=TurnScope(day=mem.days()[0]))
    assert "#1 " in found and "我想找工作" in found
    assert [m.message.message_id for m in search(mem, " 找工作 ", scope=Scope.session("s1")).messages][:1] == [1]
