"""Redactions are honoured by the agent (issue 19, editing memory): a redacted message is never a hit of its search
tools, shows as ``[redacted: reason]`` in their windows and in the recent rounds, and is not in the turn's prompt —
so an agent turn cannot quote it. The message's line on disk is unchanged."""

from __future__ import annotations

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.agent.context import build_context
from agentmem_nb.agent.tools import MemoryTools
from agentmem_nb.items import ItemKey
from agentmem_nb.store import Appended, UserMemory

EVIDENCE = "My sister Chloé lives in Lyon."
QUESTION = "What did I say about my sister?"


def _redact(mem: UserMemory, written: Appended, reason: str = "private") -> None:
    """Both lines of a message, as the inspector's ``redact_message`` records them."""
    mem.redactions.add(ItemKey("session", written.session.session_id or "", written.session.message_id), reason=reason)
    mem.redactions.add(ItemKey("daily", written.daily.day or "", written.daily.message_id), reason=reason)


def _seeded(store: MemoryStore) -> tuple[UserMemory, Appended]:
    mem = store.user("u1")
    written = mem.append("s1", "user", EVIDENCE)
    mem.append("s1", "assistant", "Noted.")
    return mem, written


@pytest.mark.parametrize("redacted", [False, True])
def test_an_agent_turn_does_not_quote_redacted_evidence(store: MemoryStore, redacted: bool) -> None:
    mem, written = _seeded(store)
    session_bytes, daily_bytes = mem.session("s1").path.read_bytes(), mem.daily(written.daily.day or "").path.read_bytes()
    if redacted:
        _redact(mem, written)
    result = ChatService(store, model=OfflineChatModel()).turn("u1", "s2", QUESTION)
    said = [result.reply, *(call.output for call in result.tool_calls)]
    if not redacted:  # the same turn without the redaction quotes it: the check below can fail
        assert "Lyon" in result.reply
        return
    assert not any("Lyon" in text or "Chloé" in text for text in said), said
    assert mem.session("s1").path.read_bytes() == session_bytes  # the line is hidden, never rewritten
    assert mem.daily(written.daily.day or "").path.read_bytes().startswith(daily_bytes)


def test_tool_windows_and_recent_rounds_show_the_reason_in_place(store: MemoryStore) -> None:
    mem, written = _seeded(store)
    _redact(mem, written, reason="asked to forget")
    tools = MemoryTools(mem, "s1")
    day = written.daily.day or ""
    outputs = [
        tools.get_session_window({"message_id": 2, "before": 1}),
        tools.get_daily_window({"message_id": 2, "before": 1, "day": day}),
        tools.get_recent_session({"rounds": 1}),
    ]
    for text in outputs:
        assert "Lyon" not in text
        assert "user: [redacted: asked to forget]" in text and "assistant: Noted." in text
    for search in (tools.search_session({"keyword": "Lyon"}), tools.search_daily({"keyword": "Lyon"}),
                   tools.search_daily({"keyword": "where does my sister live"})):
        assert "Chloé" not in search and "#1 " not in search and "no message" in search.casefold()


def test_the_prompt_of_a_turn_holds_the_reason_not_the_text(store: MemoryStore) -> None:
    mem, written = _seeded(store)
    _redact(mem, written)
    other = mem.append("s2", "user", "Hello")  # the daily section of s2's prompt shows s1's messages of today
    context = build_context(mem, "s1", mem.append("s1", "user", QUESTION), recent_rounds=3, daily_limit=10)
    assert [m.content for m in context.history] == ["[redacted: private]", "Noted."]
    context = build_context(mem, "s2", other, recent_rounds=0, daily_limit=10)
    assert "[redacted: private]" in [m.content for m in context.daily]
    assert not any("Lyon" in m.content for m in (*context.history, *context.daily))
