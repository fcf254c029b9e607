"""Multi-turn recall: a fact stated in turn 1 falls out of the 3-round context and is found again with tools.

Run with the offline model (English and Chinese) and with ChatOpenAI against the loopback fake server
(non-streaming and SSE streaming).
"""

from __future__ import annotations

import pytest
from agentmem_nb.testing.fake_openai import memory_policy, real_config

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel, TurnResult

EN_FACT = "My sister Chloé lives in Lyon and works as a pilot."
EN_FILLERS = [f"Tell me something fun about topic number {i}." for i in range(11)]
EN_RECALL = "What did I tell you about my sister?"

ZH_FACT = "我的猫叫年糕，今年三岁了。"
ZH_FILLERS = [f"第{i}个话题：聊聊电影和音乐。" for i in range(11)]
ZH_RECALL = "你还记得我的猫叫什么吗？"


@pytest.fixture
def svc(store: MemoryStore) -> ChatService:
    """The agent without structured facts or standing instructions: these scenarios pin recall through the session and daily tools (with
    facts on, the fact would be in the context and there would be nothing to recall; tests/agent/test_agent_facts.py
    covers that path)."""
    return ChatService(store, model=OfflineChatModel(), facts="off", procedural=False)


def _chat(svc: ChatService, sid: str, fact: str, fillers: list[str], *, stream: bool = False) -> list[TurnResult]:
    results = []
    for text in [fact, *fillers]:
        results.append(_run(svc, sid, text, stream=stream))
    return results


def _run(svc: ChatService, sid: str, text: str, *, stream: bool) -> TurnResult:
    if not stream:
        return svc.turn("u1", sid, text)
    events = list(svc.stream_turn("u1", sid, text))
    assert events[-1].kind == "done" and events[-1].result is not None
    result = events[-1].result
    tokens = "".join(e.text for e in events if e.kind == "token")
    assert tokens == result.reply, "the streamed tokens are the reply"
    return result


@pytest.mark.parametrize(("fact", "fillers", "question", "expected"), [
    (EN_FACT, EN_FILLERS, EN_RECALL, "Lyon"),
    (ZH_FACT, ZH_FILLERS, ZH_RECALL, "年糕"),
], ids=["english", "chinese"])
@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_offline_model_recalls_a_fact_from_beyond_the_context(
    svc: ChatService, fact: str, fillers: list[str], question: str, expected: str, stream: bool
) -> None:
    sid = svc.new_conversation("u1")
    first = _chat(svc, sid, fact, fillers, stream=stream)[0]
    fact_id = first.user_message.message_id

    result = _run(svc, sid, question, stream=stream)

    assert result.error is None
    assert expected not in result.memory_context, "the fact must have fallen out of the 3-round context"
    names = [call.name for call in result.tool_calls]
    assert names[:2] == ["search_session", "get_session_window"]
    assert f"#{fact_id} " in result.tool_calls[0].output
    assert result.tool_calls[1].input["message_id"] == fact_id
    assert all(call.status == "success" and call.duration_ms is not None for call in result.tool_calls)
    assert expected in result.reply
    assert result.memory_hits >= 1
    assert ("session", sid, fact_id) in result.memory_items


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_real_client_against_fake_server_recalls_the_fact(store: MemoryStore, fake_openai, stream: bool) -> None:  # noqa: ANN001
    fake_openai.policy = memory_policy("sister")
    svc = ChatService(store, config=real_config(fake_openai), facts="off", procedural=False)  # as the svc fixture
    assert not svc.offline and svc.model_name == "fake-model"
    sid = svc.new_conversation("u1")
    fact_id = _chat(svc, sid, EN_FACT, EN_FILLERS, stream=stream)[0].user_message.message_id
    before = len(fake_openai.requests)

    result = _run(svc, sid, EN_RECALL, stream=stream)

    assert result.error is None, result.error
    assert [c.name for c in result.tool_calls] == ["search_session", "get_session_window"]
    assert result.tool_calls[1].input["message_id"] == fact_id
    assert all(c.id and c.id.startswith("call_") for c in result.tool_calls), "ids come from the server"
    assert "Lyon" in result.reply and f"#{fact_id}" in result.reply

    sent = fake_openai.requests[before:]
    assert len(sent) == 3, "tool call, tool call, final answer"
    assert all(bool(body.get("stream")) is stream for body in sent)
    first = sent[0]
    assert sorted(t["function"]["name"] for t in first["tools"]) == sorted(
        ["search_session", "get_session_window", "search_daily", "get_daily_window", "get_recent_session",
         "remember_note"])
    roles = [m["role"] for m in first["messages"]]
    assert roles[0] == "system" and roles.count("system") == 1
    assert roles[1:] == ["user", "assistant"] * 3 + ["user"], "3 rounds of history + the current message once"
    assert [m["content"] for m in first["messages"]].count(EN_RECALL) == 1
    assert "<long_term_memory>" not in first["messages"][0]["content"], "memory.md is empty: no section for it"
    assert not any("Lyon" in str(m["content"]) for m in first["messages"][1:])
    # the tool results went back matched by tool_call_id
    tool_msgs = [m for m in sent[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == [c.id for c in result.tool_calls]


def test_recall_across_sessions_falls_back_to_the_daily_logs(svc: ChatService) -> None:
    other = svc.new_conversation("u1")
    fact = svc.turn("u1", other, "My dentist appointment is on Friday at nine.")
    sid = svc.new_conversation("u1")

    result = svc.turn("u1", sid, "Do you remember when my dentist appointment is?")

    names = [c.name for c in result.tool_calls]
    assert names[0] == "search_session" and "search_daily" in names and names[-1] == "get_daily_window"
    window = result.tool_calls[-1]
    assert window.input["day"] == fact.user_message.day
    assert "Friday" in result.reply and fact.user_message.day in result.reply


def test_nothing_found_is_said_plainly(svc: ChatService) -> None:
    sid = svc.new_conversation("u1")
    svc.turn("u1", sid, "Hello there.")

    result = svc.turn("u1", sid, "What did I tell you about my grandmother?")

    assert result.error is None
    assert {c.name for c in result.tool_calls} == {"search_session", "search_daily"}
    assert "found nothing" in result.reply
    assert result.memory_hits == 0


def test_a_stated_preference_is_saved_with_remember_note(svc: ChatService, store: MemoryStore) -> None:
    sid = svc.new_conversation("u1")

    result = svc.turn("u1", sid, "Please remember that I prefer green tea over coffee.")
    again = svc.turn("u1", sid, "I prefer green tea over coffee.")

    assert [c.name for c in result.tool_calls] == ["remember_note"]
    assert result.tool_calls[0].input == {"note": "User prefers green tea over coffee"}
    assert store.user("u1").long_term.lines() == ["- User prefers green tea over coffee"]
    assert "remember" in result.reply
    assert "already" in again.reply
    assert len(store.user("u1").long_term.history()) == 1


def test_chinese_preference_is_saved(svc: ChatService, store: MemoryStore) -> None:
    sid = svc.new_conversation("u1")
    result = svc.turn("u1", sid, "记住：我喜欢游泳")
    assert result.tool_calls[0].input == {"note": "用户喜欢游泳"}
    assert store.user("u1").long_term.lines() == ["- 用户喜欢游泳"]
    assert "记住" in result.reply


def test_long_term_memory_answers_when_no_message_does(svc: ChatService, store: MemoryStore) -> None:
    store.user("u1").long_term.write("## About the user\n- Favourite colour is teal\n- Lives near the sea\n")
    sid = svc.new_conversation("u1")

    result = svc.turn("u1", sid, "What's my favourite colour?")

    assert "teal" in result.reply
    assert result.long_term_lines == ("- Favourite colour is teal",)
    assert result.memory_hits == 1, "one long-term line, no message retrieved"


def test_memory_hits_count_distinct_items_not_calls(svc: ChatService) -> None:
    sid = svc.new_conversation("u1")
    svc.turn("u1", sid, "My sister Chloé lives in Lyon.")
    for i in range(4):
        svc.turn("u1", sid, f"Filler {i}.")
    svc.turn("u1", sid, "Remind me about my sister?")  # a second hit for "sister" (plus its reply)

    result = svc.turn("u1", sid, "What did I say about my sister?")

    # search: #1, #11 (the earlier question), #12 (its answer quotes the fact); window around #1: #1..#3.
    assert set(result.memory_items) == {("session", sid, i) for i in (1, 2, 3, 11, 12)}
    assert result.memory_hits == 5


def test_a_statement_elsewhere_beats_an_echo_here(svc: ChatService, store: MemoryStore) -> None:
    svc.turn("u1", "gym", "My locker code is 4711.")
    store.user("u1").append("here", "assistant", "Your locker? I don't know anything about it yet.")

    result = svc.turn("u1", "here", "What did I say about my locker?")

    names = [c.name for c in result.tool_calls]
    assert names == ["search_session", "search_daily", "get_daily_window"]
    assert "Your locker?" in result.tool_calls[0].output, "the echo was found first, and passed over"
    assert "4711" in result.reply


def test_matching_long_term_lines_are_added_and_counted(svc: ChatService, store: MemoryStore) -> None:
    store.user("u1").long_term.write("- Sister Chloé is a pilot\n- Likes tea\n")
    svc.turn("u1", "s1", "My sister Chloé lives in Lyon.")

    result = svc.turn("u1", "s1", "Where does my sister live?")

    assert "Lyon" in result.reply and "Long-term memory also has: Sister Chloé is a pilot" in result.reply
    assert result.long_term_lines == ("- Sister Chloé is a pilot",)
    assert result.memory_hits == len(result.memory_items) + 1
