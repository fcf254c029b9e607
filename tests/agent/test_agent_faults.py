"""The fault table: every failure ends the turn with a visible error reply, keeps the user message, logs the error,
writes no assistant message, and the next turn works."""

from __future__ import annotations

import json

import pytest
from agentmem_nb.testing.fake_openai import Fault, Reply, Stall, memory_policy, real_config

import agentmem_nb.agent.turn as agent_turn
from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel, TurnResult
from agentmem_nb.errors import StoreError
from agentmem_nb.retrieval import Retriever, SearchResult

QUESTION = "What did I tell you about my sister?"


def _run(svc: ChatService, sid: str, text: str, *, stream: bool) -> TurnResult:
    if not stream:
        return svc.turn("u1", sid, text)
    events = list(svc.stream_turn("u1", sid, text))
    kinds = [e.kind for e in events]
    assert kinds[-1] == "done"
    result = events[-1].result
    if result.error is not None:
        assert kinds[-2] == "error" and events[-2].text == result.error
    return result


def _run_while_raising(svc: ChatService, sid: str, monkeypatch: pytest.MonkeyPatch, target: object, name: str,
                       error: Exception, *, stream: bool) -> TurnResult:
    """Ask QUESTION while ``target.name`` raises ``error`` (the patch is undone before the result is checked)."""
    def raising(*args: object, **kwargs: object) -> None:
        raise error

    with monkeypatch.context() as patch:
        patch.setattr(target, name, raising)
        return _run(svc, sid, QUESTION, stream=stream)


def _assert_failed_turn_persisted(store: MemoryStore, sid: str, result: TurnResult, sessions_before: int,
                                  expected: str) -> None:
    mem = store.user("u1")
    assert result.reply.startswith("⚠️ ") and expected in result.reply
    assert result.error is not None and expected in result.error
    assert result.assistant_message is None
    session = mem.session(sid).messages()
    assert len(session) == sessions_before + 1, "only the user message was written"
    assert session[-1].role == "user" and session[-1].content == QUESTION
    daily = mem.daily(result.user_message.day).messages()
    assert daily[-1].role == "user" and daily[-1].content == QUESTION
    entry = mem.log.tail(1)[0]
    assert entry.error == result.error and entry.assistant_reply == result.reply
    assert entry.user_message == QUESTION and entry.assistant_message_id is None
    assert entry.tool_calls == result.tool_calls
    assert mem.conversations.get(sid).title == "My sister Chloé lives in Lyon."
    assert mem.long_term.read() == ""
    assert mem.problems() == []


def _seed(svc: ChatService) -> tuple[str, int]:
    sid = svc.new_conversation("u1")
    svc.turn("u1", sid, "My sister Chloé lives in Lyon.")
    return sid, 2


def _recovers(svc: ChatService, store: MemoryStore, sid: str, stream: bool) -> None:
    before = len(store.user("u1").session(sid))
    after = _run(svc, sid, QUESTION, stream=stream)
    assert after.error is None, after.error
    assert "Lyon" in after.reply
    assert len(store.user("u1").session(sid)) == before + 2


MALFORMED = Reply(tool_calls=(("search_session", '{"keyword": "sis'),))

SERVER_FAULTS = [
    pytest.param([Fault(500, "upstream exploded")], "HTTP 500", id="http-500"),
    pytest.param([Fault(401, "bad key")], "HTTP 401 (the server refused the API key", id="http-401"),
    pytest.param([Stall(3.0)], "timed out after 0.5 s", id="timeout"),
    pytest.param([MALFORMED], "malformed arguments", id="malformed-tool-json"),
    pytest.param([Reply(tool_calls=(("search_session", '{"keyword": "sister"}'),)), Fault(500, "second call")],
                 "HTTP 500", id="500-after-a-tool-ran"),
]


@pytest.mark.parametrize(("overrides", "expected"), SERVER_FAULTS)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_server_faults_end_the_turn_cleanly(store: MemoryStore, fake_openai, overrides: list, expected: str,  # noqa: ANN001
                                            stream: bool) -> None:
    fake_openai.policy = memory_policy("sister")
    svc = ChatService(store, config=real_config(fake_openai, timeout=0.5))
    sid, before = _seed(svc)
    fake_openai.overrides.extend(overrides)

    result = _run(svc, sid, QUESTION, stream=stream)

    _assert_failed_turn_persisted(store, sid, result, before, expected)
    if overrides[0] is MALFORMED:
        (bad,) = result.tool_calls
        assert bad.status == "error" and bad.input == {"_raw": '{"keyword": "sis'}
        # One line saying what the model did wrong (not langchain's several lines and troubleshooting link).
        assert "\n" not in result.error and "not valid JSON" in result.error and "http" not in result.error
    if len(overrides) == 2:
        (ran,) = result.tool_calls
        assert ran.name == "search_session" and ran.status == "success" and "#1 " in ran.output
        entry = store.user("u1").log.tail(1)[0]
        assert json.dumps(entry.tool_calls[0].to_dict()) == json.dumps(ran.to_dict())
    _recovers(svc, store, sid, stream)


class _FailingRetriever(Retriever):
    """Searches as usual, except while ``failure`` is set: then every search raises it (the disk failing)."""

    failure: BaseException | None = None

    def search(self, *args: object, **kwargs: object) -> SearchResult:  # type: ignore[override]
        if self.failure is not None:
            raise self.failure
        return super().search(*args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("offline", [True, False], ids=["offline", "real-client"])
def test_a_tool_raising_ends_the_turn_cleanly(store: MemoryStore, fake_openai,  # noqa: ANN001
                                              offline: bool, stream: bool) -> None:
    fake_openai.policy = memory_policy("sister")
    retriever = _FailingRetriever()
    svc = (ChatService(store, model=OfflineChatModel(), retriever=retriever) if offline
           else ChatService(store, config=real_config(fake_openai), retriever=retriever))
    sid, before = _seed(svc)

    retriever.failure = OSError("disk on fire")
    result = _run(svc, sid, QUESTION, stream=stream)
    retriever.failure = None

    _assert_failed_turn_persisted(store, sid, result, before, "The tool search_session failed: OSError: disk on fire")
    (call,) = result.tool_calls
    assert call.status == "error" and "disk on fire" in call.output and call.duration_ms is not None
    _recovers(svc, store, sid, stream)


def test_a_runaway_tool_loop_is_stopped(store: MemoryStore, fake_openai) -> None:  # noqa: ANN001
    svc = ChatService(store, config=real_config(fake_openai), max_steps=6)
    sid, before = _seed(svc)
    fake_openai.policy = lambda body: Reply(tool_calls=(("get_recent_session", "{}"),))
    result = svc.turn("u1", sid, QUESTION)
    _assert_failed_turn_persisted(store, sid, result, before, "did not finish within 6 steps")
    assert all(c.name == "get_recent_session" for c in result.tool_calls)


def test_bad_arguments_from_the_model_are_answered_not_raised(store: MemoryStore, fake_openai) -> None:  # noqa: ANN001
    script = iter([
        Reply(tool_calls=(("get_session_window", json.dumps({"message_id": "abc"})),
                          ("search_daily", json.dumps({"keyword": "x", "day": "../../etc/passwd"})),
                          ("no_such_tool", "{}"))),
        Reply(content="Sorry, let me answer without tools."),
    ])
    fake_openai.policy = lambda body: next(script)
    svc = ChatService(store, config=real_config(fake_openai))
    result = svc.turn("u1", "s1", "hi")
    assert result.error is None and result.reply == "Sorry, let me answer without tools."
    assert [c.status for c in result.tool_calls] == ["error", "error", "error"]
    assert "message_id must be a positive whole number" in result.tool_calls[0].output
    assert "invalid day" in result.tool_calls[1].output
    assert "no_such_tool" in result.tool_calls[2].output
    assert not (store.root / "u1" / "etc").exists()


def test_an_abandoned_stream_is_closed_as_failed(svc: ChatService, store: MemoryStore) -> None:
    sid, before = _seed(svc)
    events = svc.stream_turn("u1", sid, QUESTION)
    first = next(events)
    assert first.kind == "tool_started"
    events.close()

    entry = store.user("u1").log.tail(1)[0]
    assert entry.error is not None and "abandoned" in entry.error
    assert len(store.user("u1").session(sid)) == before + 1
    _recovers(svc, store, sid, stream=False)


def test_parallel_calls_of_one_tool_are_matched_by_id(store: MemoryStore, fake_openai) -> None:  # noqa: ANN001
    script = iter([
        Reply(tool_calls=(("search_session", json.dumps({"keyword": "sister"})),
                          ("search_session", json.dumps({"keyword": "nothing-like-this"})),
                          ("search_daily", json.dumps({"keyword": "Lyon"})))),
        Reply(content="Done."),
    ])
    svc = ChatService(store, config=real_config(fake_openai))
    svc.turn("u1", "s1", "My sister Chloé lives in Lyon.")
    fake_openai.policy = lambda body: next(script)
    result = svc.turn("u1", "s1", "Search please.")
    first, second, third = result.tool_calls
    assert len({first.id, second.id, third.id}) == 3
    assert first.input == {"keyword": "sister"} and "#1 " in first.output
    assert second.input == {"keyword": "nothing-like-this"} and second.output.startswith("No message")
    assert third.name == "search_daily" and "day=" in third.output
    sent = [m for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == [first.id, second.id, third.id]


class _InterruptedOnSecondCall(OfflineChatModel):
    """Raises ``KeyboardInterrupt`` (Ctrl-C, Jupyter's "interrupt kernel") on the model call after a tool ran."""

    def _generate(self, messages, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if any(m.type == "tool" for m in messages):
            raise KeyboardInterrupt
        return super()._generate(messages, *args, **kwargs)

    def _stream(self, messages, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if any(m.type == "tool" for m in messages):
            raise KeyboardInterrupt
        return super()._stream(messages, *args, **kwargs)


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_an_interrupt_is_logged_as_failed_and_re_raised(store: MemoryStore, stream: bool) -> None:
    svc = ChatService(store, model=_InterruptedOnSecondCall())
    sid, before = _seed(svc)

    with pytest.raises(KeyboardInterrupt):
        if stream:
            list(svc.stream_turn("u1", sid, QUESTION))
        else:
            svc.turn("u1", sid, QUESTION)

    mem = store.user("u1")
    session = mem.session(sid).messages()
    assert len(session) == before + 1, "no assistant message for an interrupted turn"
    assert session[-1].role == "user" and session[-1].content == QUESTION
    entry = mem.log.tail(1)[0]
    assert entry.user_message == QUESTION and entry.assistant_message_id is None
    assert entry.error is not None and "interrupted (KeyboardInterrupt)" in entry.error
    assert entry.assistant_reply == f"⚠️ {entry.error}"
    assert [c.name for c in entry.tool_calls] == ["search_session"]
    assert mem.problems() == []
    _recovers(ChatService(store, model=OfflineChatModel()), store, sid, stream)


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_a_store_failure_while_building_the_context_ends_the_turn_cleanly(
        svc: ChatService, store: MemoryStore, monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    sid, before = _seed(svc)

    result = _run_while_raising(svc, sid, monkeypatch, agent_turn, "build_context",
                                StoreError("session file changed in place"), stream=stream)

    _assert_failed_turn_persisted(store, sid, result, before,
                                  "could not read the memory for this turn: StoreError: session file changed in place")
    assert result.tool_calls == () and result.memory_context == "", "no empty sections"
    assert store.user("u1").log.tail(1)[0].memory_context == result.memory_context
    _recovers(svc, store, sid, stream)
