"""The offline model's policy (intent, keywords, notes) and the streamed event sequence of a turn."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.agent.offline import classify, keyword_candidates, note_from
from agentmem_nb.agent.tools import TOOL_NAMES


@pytest.mark.parametrize(("text", "intent"), [
    ("What did I say about my sister?", "recall"),
    ("Do you remember where I parked?", "recall"),
    ("Where does my sister live?", "recall"),
    ("what's my favourite colour", "recall"),
    ("Did I mention my dentist appointment earlier?", "recall"),
    ("I prefer green tea over coffee.", "remember"),
    ("My name is Ada.", "remember"),
    ("Remember that my flight is on Monday.", "remember"),
    ("Please note: I'm allergic to peanuts", "remember"),
    ("Hello!", "chat"),
    ("How are you today?", "chat"),
    ("Can you suggest a good book?", "chat"),
    ("我之前说过我姐姐住在哪里？", "recall"),
    ("上次我们聊到哪了", "recall"),
    ("你还记得我的猫叫什么吗？", "recall"),
    ("我的生日是哪天？", "recall"),
    ("记住：我喜欢游泳", "remember"),
    ("我喜欢吃人参果", "remember"),
    ("我叫小明", "remember"),
    ("今天天气不错。", "chat"),
    ("推荐一本书吧", "chat"),
])
def test_intent(text: str, intent: str) -> None:
    assert classify(text) == intent


@pytest.mark.parametrize(("question", "first"), [
    ("What did I tell you about my sister?", "sister"),
    ("Where does my sister's husband work?", "husband"),
    ("Do you remember the name of my dentist?", "dentist"),
    ("What's my favourite colour?", "favourite"),
    ("你还记得我的猫叫什么吗？", "猫"),
    ("我之前说过我的生日是哪一天？", "生日"),
    ("上次我提到的Java项目叫什么名字？", "项目"),
])
def test_keyword_candidates(question: str, first: str) -> None:
    candidates = keyword_candidates(question)
    assert candidates[0] == first
    assert all(word not in candidates for word in ("what", "did", "you", "my", "什么", "之前", "还记得", "我"))


def test_keyword_candidates_offer_fallbacks() -> None:
    assert keyword_candidates("What's my favourite colour?")[:2] == ["favourite", "colour"]
    assert "姐姐" in keyword_candidates("我之前说过我姐姐住在哪里？")
    assert keyword_candidates("What was it?") == []


@pytest.mark.parametrize(("text", "note"), [
    ("I prefer green tea over coffee.", "User prefers green tea over coffee"),
    ("Please remember that I live in Lyon with my sister.", "User lives in Lyon with their sister"),
    ("My name is Ada.", "User's name is Ada"),
    ("I'm allergic to peanuts!", "User is allergic to peanuts"),
    ("记住：我喜欢游泳", "用户喜欢游泳"),
    ("请帮我记住我的生日是10月5日。", "用户的生日是10月5日"),
    ("Hi! My name is Maya and I just moved to Lyon.", "User's name is Maya and they just moved to Lyon"),
    ("Hello there, I prefer short answers with bullet points, please.", "User prefers short answers with bullet points"),
])
def test_notes_are_third_person(text: str, note: str) -> None:
    assert note_from(text) == note


def _model() -> OfflineChatModel:
    return OfflineChatModel().bind_tools([type("T", (), {"name": n})() for n in TOOL_NAMES])


def test_bind_tools_is_cheap_and_only_copies_on_change() -> None:
    model = _model()
    assert model.tool_names == TOOL_NAMES
    assert model.bind_tools([type("T", (), {"name": n})() for n in TOOL_NAMES]) is model
    assert OfflineChatModel().tool_names == ()


def test_the_policy_steps_through_search_window_answer() -> None:
    model = _model()
    question = HumanMessage("What did I say about my sister?")
    first = model.respond([SystemMessage("rules"), question])
    (call,) = first.tool_calls
    assert (call["name"], call["args"]) == ("search_session", {"keyword": "sister"})
    hit = ToolMessage('1 message(s) ...:\n#4 [2026-04-08 10:00] assistant: Your sister? Nice.\n'
                      '#3 [2026-04-08 10:00] user: My sister lives in Lyon.', tool_call_id=call["id"])
    second = model.respond([question, first, hit])
    assert second.tool_calls[0]["name"] == "get_session_window"
    assert second.tool_calls[0]["args"]["message_id"] == 3, "the user's statement beats the assistant's echo"
    window = ToolMessage("Messages #1-#5 ...:\n#3 [2026-04-08 10:00] user: My sister lives in Lyon.",
                         tool_call_id=second.tool_calls[0]["id"])
    third = model.respond([question, first, hit, second, window])
    assert not third.tool_calls and "My sister lives in Lyon." in third.text
    assert len({first.tool_calls[0]["id"], second.tool_calls[0]["id"]}) == 2


def test_the_policy_falls_back_to_other_keywords_then_days_then_long_term() -> None:
    model = _model()
    system = SystemMessage("rules\n<long_term_memory>\n## Prefs\n- Favourite colour is teal\n</long_term_memory>")
    question = HumanMessage("What's my favourite colour?")
    messages: list = [system, question]
    names = []
    for _ in range(6):
        reply = model.respond(messages)
        if not reply.tool_calls:
            break
        call = reply.tool_calls[0]
        names.append((call["name"], call["args"]["keyword"]))
        messages += [reply, ToolMessage("No message contains it.", tool_call_id=call["id"])]
    assert names == [("search_session", "favourite"), ("search_session", "colour"),
                     ("search_daily", "favourite"), ("search_daily", "colour")]
    assert reply.text == "From long-term memory: Favourite colour is teal"


def test_without_tools_the_model_just_replies() -> None:
    reply = OfflineChatModel().respond([HumanMessage("What did I say about my sister?")])
    assert not reply.tool_calls and reply.text


def test_stream_events_arrive_in_order(svc: ChatService) -> None:
    svc.turn("u1", "s1", "My sister Chloé lives in Lyon.")
    events = list(svc.stream_turn("u1", "s1", "What did I say about my sister?"))
    kinds = [e.kind for e in events]
    assert kinds[:4] == ["tool_started", "tool_finished", "tool_started", "tool_finished"]
    assert set(kinds[4:-1]) == {"token"} and kinds[-1] == "done"
    started, finished = events[0].tool_call, events[1].tool_call
    assert started.status == "running" and finished.status == "success" and started.id == finished.id
    assert finished.output.startswith("1 message(s)") and finished.duration_ms is not None
    result = events[-1].result
    assert result.tool_calls == (events[1].tool_call, events[3].tool_call)
    assert "".join(e.text for e in events if e.kind == "token") == result.reply == events[-1].text


def test_streaming_a_plain_chinese_reply(svc: ChatService) -> None:
    events = list(svc.stream_turn("u1", "s1", "今天天气不错。"))
    tokens = [e.text for e in events if e.kind == "token"]
    assert len(tokens) > 3 and all(len(t) <= 8 for t in tokens)
    assert "".join(tokens) == events[-1].result.reply and "离线模型" in events[-1].result.reply


def test_service_reports_offline_model(svc: ChatService) -> None:
    assert svc.offline and svc.model_name == "offline"
    assert "offline=True" in repr(svc)


def test_a_scripted_model_can_be_injected(store) -> None:  # noqa: ANN001
    class Scripted(OfflineChatModel):
        def respond(self, messages: list) -> AIMessage:  # type: ignore[override]
            return AIMessage(content="scripted answer")

    svc = ChatService(store, model=Scripted(model_name="scripted"))
    result = svc.turn("u1", "s1", "anything")
    assert result.reply == "scripted answer" and result.model == "scripted"
