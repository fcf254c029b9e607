"""What the model server sends that is not a finished, well-formed answer, against the real client on the loopback
server: a cut stream, empty ``choices``, tool arguments that are not a JSON object, keep-alives that never end, and
text the client cannot encode (a lone surrogate the store kept)."""

from __future__ import annotations

import json
import threading

import pytest
from agentmem_nb.testing.fake_openai import Cut, Drip, EmptyChoices, FakeOpenAI, Reply, Stall, memory_policy, real_config

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, TurnResult

FACT = "My sister Chloé lives in Lyon."
QUESTION = "What did I tell you about my sister?"
STREAM = pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])


def _run(svc: ChatService, sid: str, text: str, *, stream: bool) -> TurnResult:
    if not stream:
        return svc.turn("u1", sid, text)
    events = list(svc.stream_turn("u1", sid, text))
    assert events[-1].kind == "done" and events[-1].result is not None
    return events[-1].result


def _seeded(store: MemoryStore, server: FakeOpenAI, **config: float) -> tuple[ChatService, str]:
    server.policy = memory_policy("sister")
    svc = ChatService(store, config=real_config(server, **config))
    sid = svc.new_conversation("u1")
    assert svc.turn("u1", sid, FACT).error is None
    return svc, sid


def _assert_failed(store: MemoryStore, sid: str, result: TurnResult, expected: str) -> None:
    """A failed turn: error recorded and shown, the user message kept, no assistant message, one log line."""
    mem = store.user("u1")
    assert result.error is not None and expected in result.error, result.error
    assert result.reply == f"⚠️ {result.error}" and result.assistant_message is None
    session = mem.session(sid).messages()
    assert [m.role for m in session] == ["user", "assistant", "user"], "only the user message of the turn was kept"
    assert session[-1].content == QUESTION
    entry = mem.log.tail(1)[0]
    assert entry.error == result.error and entry.assistant_message_id is None
    assert entry.assistant_reply.startswith(result.reply)


def _recovers(svc: ChatService, store: MemoryStore, sid: str, *, stream: bool) -> None:
    after = _run(svc, sid, QUESTION, stream=stream)
    assert after.error is None and "Lyon" in after.reply, after.reply


# ---------------------------------------------------------------------------------------------- unfinished answers


@STREAM
def test_a_cut_answer_is_a_failed_turn_and_its_partial_text_only_logged(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                                        stream: bool) -> None:
    svc, sid = _seeded(store, fake_openai)
    fake_openai.overrides.append(Cut("Your sister lives in"))

    result = _run(svc, sid, QUESTION, stream=stream)

    _assert_failed(store, sid, result, "The model's answer did not finish")
    if not stream:  # the HTTP library's own words, not "could not reach the server"
        assert "closed the connection before the whole answer arrived (received " in result.error
    assert "Your sister lives in" not in result.reply
    assert all("Your sister lives in" not in m.content for m in store.user("u1").session(sid).messages())
    if stream:  # the text that did arrive is kept for the record, marked as unfinished
        logged = store.user("u1").log.tail(1)[0].assistant_reply
        assert logged.endswith("[partial: the model's unfinished output] Your sister lives in")
    _recovers(svc, store, sid, stream=stream)


@STREAM
def test_empty_choices_is_a_failed_turn_said_in_one_line(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                         stream: bool) -> None:
    svc, sid = _seeded(store, fake_openai)
    fake_openai.overrides.append(EmptyChoices())

    result = _run(svc, sid, QUESTION, stream=stream)

    _assert_failed(store, sid, result, "empty `choices`")
    assert "IndexError" not in result.error and "\n" not in result.error
    _recovers(svc, store, sid, stream=stream)


# ---------------------------------------------------------------------------------------------- tool arguments


@STREAM
@pytest.mark.parametrize(("raw", "kind"), [('["sister"]', "a JSON array"), ('"sister"', "a JSON string"),
                                           ("42", "a JSON number")], ids=["array", "string", "number"])
def test_tool_arguments_that_are_not_an_object_are_told_to_the_model(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                                     stream: bool, raw: str, kind: str) -> None:
    svc, sid = _seeded(store, fake_openai)
    fake_openai.overrides.extend([Reply(tool_calls=(("search_session", raw),)),
                                  Reply(tool_calls=(("search_session", json.dumps({"keyword": "sister"})),))])

    result = _run(svc, sid, QUESTION, stream=stream)

    assert result.error is None, result.error
    bad, good = result.tool_calls[:2]
    expected = f"Error: the arguments of search_session must be a JSON object of named values ({{\"name\": value, " \
               f"...}}), not {kind}: {raw}."
    assert (bad.name, bad.input, bad.status, bad.output) == ("search_session", {"_raw": raw}, "error", expected)
    assert "validation error" not in bad.output and "\n" not in bad.output
    assert good.input == {"keyword": "sister"} and good.status == "success"
    assert "Lyon" in result.reply
    # the model was told, and shown the call as it sent it
    second = fake_openai.requests[-3]["messages"]
    assert (second[-1]["role"], second[-1]["content"], second[-1]["tool_call_id"]) == ("tool", expected, bad.id)
    assert second[-2]["tool_calls"][0]["function"]["arguments"] == raw
    assert store.user("u1").log.tail(1)[0].tool_calls == result.tool_calls


# ---------------------------------------------------------------------------------------------- the turn's deadline


@STREAM
@pytest.mark.parametrize("answer", [Drip(seconds=120.0, every=0.05), Stall(seconds=120.0)], ids=["drip", "stall"])
def test_a_server_holding_the_answer_is_stopped_by_the_turn_deadline(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                                     stream: bool, answer: Drip | Stall) -> None:
    """Dripping keep-alives, every read gets a byte well within ``timeout``; stalled, the deadline comes first."""
    svc, sid = _seeded(store, fake_openai, timeout=20.0, turn_timeout=1.0)
    fake_openai.overrides.append(answer)
    results: list[TurnResult] = []

    worker = threading.Thread(target=lambda: results.append(_run(svc, sid, QUESTION, stream=stream)), daemon=True)
    worker.start()
    worker.join(timeout=15.0)  # a loose bound: 15x the deadline, below the read timeout and far below the drip

    assert not worker.is_alive(), "the turn was still held by the dripping server"
    (result,) = results
    _assert_failed(store, sid, result, "took longer than its 1 s limit")
    assert "llm.turn_timeout" in result.error
    fake_openai.stop.set()  # stop dripping to the abandoned connection


def test_turn_timeout_is_read_from_the_config_file_and_the_environment(tmp_path) -> None:  # noqa: ANN001
    from agentmem_nb.agent import load_config
    from agentmem_nb.errors import ConfigError

    path = tmp_path / "llm.yaml"
    path.write_text("llm:\n  turn_timeout: 42\n", encoding="utf-8")
    assert load_config(path, environ={}).turn_timeout == 42.0
    assert load_config(path, environ={"AGENTMEM_TURN_TIMEOUT": "7.5"}).turn_timeout == 7.5
    with pytest.raises(ConfigError, match="turn_timeout"):
        load_config(path, environ={"AGENTMEM_TURN_TIMEOUT": "-1"})


# ---------------------------------------------------------------------------------------------- lone surrogates


@STREAM
def test_a_lone_surrogate_in_the_memory_does_not_break_real_model_turns(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                                        stream: bool) -> None:
    fake_openai.policy = memory_policy("sister")
    svc = ChatService(store, config=real_config(fake_openai))
    sid = svc.new_conversation("u1")

    first = _run(svc, sid, "My sister \ud83d lives in Lyon.", stream=stream)
    assert first.error is None, first.error
    for n in range(3):  # the stored message is in the recent context of the next turns
        later = _run(svc, sid, f"Another thing, number {n}.", stream=stream)
        assert later.error is None, later.error
    recall = _run(ChatService(store, config=real_config(fake_openai), recent_rounds=0), sid, QUESTION,
                  stream=stream)  # no recent context: only the search can find it

    assert recall.error is None, recall.error
    assert [c.name for c in recall.tool_calls] == ["search_session", "get_session_window"]
    assert "\ud83d" in recall.tool_calls[0].output, "the trace keeps the text as stored"
    assert "Lyon" in recall.reply
    stored = store.user("u1").session(sid).messages()[0].content
    assert stored == "My sister \ud83d lives in Lyon.", "the store keeps the text as given"
    sent = json.dumps(fake_openai.requests, ensure_ascii=False)
    assert "My sister \ufffd lives in Lyon." in sent, "the model was given valid text"


@STREAM
def test_a_bad_and_a_good_call_in_one_step_each_get_their_answer(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                                 stream: bool) -> None:
    svc, sid = _seeded(store, fake_openai)
    fake_openai.overrides.extend([Reply(tool_calls=(("search_session", '["sister"]'),
                                                    ("search_session", json.dumps({"keyword": "sister"})))),
                                  Reply(content="Done.")])

    result = _run(svc, sid, QUESTION, stream=stream)

    assert result.error is None and result.reply == "Done.", result.error
    good, bad = result.tool_calls  # the call that ran, then the one answered without running
    assert good.input == {"keyword": "sister"} and good.status == "success" and "Lyon" in good.output
    assert bad.input == {"_raw": '["sister"]'} and bad.status == "error" and "not a JSON array" in bad.output
    answered = {m["tool_call_id"]: m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"}
    assert answered == {good.id: good.output, bad.id: bad.output}
