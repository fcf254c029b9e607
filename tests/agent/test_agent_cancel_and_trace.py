"""``ChatService.cancel`` (a turn stopped on request) and the per-step trace the recorder writes to the log."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.messages import AIMessage

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.testing import fake_openai as fake


class _LongAnswer(OfflineChatModel):
    """Answers every question with a long reply, streamed in many pieces."""

    def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
        return AIMessage(content=" ".join(f"word{i}" for i in range(200)))


def test_cancel_stops_a_streaming_turn_records_it_and_frees_the_session(store: MemoryStore) -> None:
    svc = ChatService(store, model=_LongAnswer(model_name="long"))
    sid = svc.new_conversation("alice")
    assert svc.cancel("alice", sid) is False  # nothing runs yet
    events = svc.stream_turn("alice", sid, "tell me a long story")
    kinds: list[str] = []
    result = None
    for event in events:
        kinds.append(event.kind)
        if event.kind == "token" and kinds.count("token") == 3:
            assert svc.cancel("alice", sid) is True
        if event.kind == "done":
            result = event.result
    assert result is not None and result.cancelled and result.error and "Stopped on request" in result.error
    assert kinds.count("token") == 3  # nothing more was taken from the model once stopped
    assert result.assistant_message is None
    thread = store.user("alice").session(sid)
    assert [m.role for m in thread.tail(10)] == ["user"]  # nothing half-written
    entry = store.user("alice").log.tail(1)[0]
    assert entry.trace["cancelled"] is True and entry.assistant_message_id is None
    assert "[partial: the model's unfinished output] word0 word1" in entry.assistant_reply
    # the session is free at once: the next turn runs (a held session would raise SessionBusy)
    after = svc.turn("alice", sid, "hello again")
    assert not after.cancelled and after.assistant_message is not None


def test_cancel_from_another_thread_before_the_next_model_call(store: MemoryStore) -> None:
    # a turn that calls a tool: cancelled while the tool runs, the next model call never starts
    svc = ChatService(store, model=OfflineChatModel())
    sid = svc.new_conversation("alice")
    svc.turn("alice", sid, "I moved to Lyon in 2024.")
    events = svc.stream_turn("alice", sid, "Where did I move?")
    seen = []
    for event in events:
        seen.append(event)
        if event.kind == "tool_started":
            stopper = threading.Thread(target=svc.cancel, args=("alice", sid))
            stopper.start()
            stopper.join()
    result = seen[-1].result
    assert result is not None and result.cancelled
    entry = store.user("alice").log.tail(1)[0]
    assert entry.trace["cancelled"] is True
    assert len(entry.trace["steps"]) == 1  # the model was called once, not again after the stop


def test_the_log_records_each_model_step_with_times_input_and_tool_starts(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel())
    sid = svc.new_conversation("alice")
    svc.turn("alice", sid, "I moved to Lyon in 2024.")
    result = svc.turn("alice", sid, "Where did I move?")
    entry = store.user("alice").log.tail(1)[0]
    trace = entry.trace
    steps = trace["steps"]
    assert [s["step"] for s in steps] == [1, 2, 3]  # search_session, get_session_window, the answer
    assert trace["user_message_id"] == result.user_message.message_id
    first = steps[0]["given"]
    assert first[0]["role"] == "system"
    assert first[-1] == {"role": "human", "content": "Where did I move?"}
    # later steps are given only what is new: the previous answer (its tool call) and the tool's result
    assert [m["role"] for m in steps[1]["given"]] == ["ai", "tool"]
    assert steps[1]["given"][0]["tool_calls"][0]["name"] == "search_session"
    starts = trace["tool_starts"]
    assert len(starts) == len(entry.tool_calls) == 2
    # each tool starts after the model step that asked for it ended, and before the next step starts
    for start, before, after in zip(starts, steps, steps[1:], strict=False):
        assert before["start_ms"] + before["ms"] <= start <= after["start_ms"]
    assert all(s["input_tokens"] is None for s in steps)  # the offline model reports no usage


def test_token_counts_come_from_the_servers_usage(store: MemoryStore) -> None:
    server = fake.FakeOpenAI(policy=fake.memory_policy("Lyon"))
    httpd = fake.start(server)
    try:
        svc = ChatService(store, config=fake.real_config(server))
        sid = svc.new_conversation("alice")
        svc.turn("alice", sid, "Where did I move to Lyon?")
    finally:
        server.stop.set()
        httpd.shutdown()
        httpd.server_close()
    steps = store.user("alice").log.tail(1)[0].trace["steps"]
    assert steps and all((s["input_tokens"], s["output_tokens"]) == (10, 5) for s in steps)


class _Counted(OfflineChatModel):
    """A long streamed answer that pauses at its third piece until the test opens ``gate``; counts its pieces."""

    gate: Any = None
    pieces: Any = None

    def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
        return AIMessage(content=" ".join(f"word{i}" for i in range(300)))

    def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        for index, piece in enumerate(super()._stream(messages, stop, run_manager, **kwargs)):
            if index == 2:
                assert self.gate.wait(10)
            self.pieces.append(index)
            yield piece


def test_cancel_ends_the_model_call_itself_not_only_the_reading_of_it(store: MemoryStore) -> None:
    # the model streams in langgraph's worker thread: closing the graph waits for it, so a stop that only stopped
    # reading would hold the session until the whole answer had been generated
    gate, pieces = threading.Event(), []
    svc = ChatService(store, model=_Counted(gate=gate, pieces=pieces))
    events = svc.stream_turn("alice", "s1", "talk")
    for event in events:
        if event.kind == "token" and not gate.is_set():
            svc.cancel("alice", "s1")
            gate.set()
    assert len(pieces) < 10, len(pieces)  # not 300: the model's own loop ended at its next piece
    assert store.user("alice").log.tail(1)[0].trace["cancelled"] is True


def test_a_stop_after_the_whole_answer_was_streamed_keeps_the_answer(store: MemoryStore) -> None:
    """The stop lands after the model's last piece, while the graph still hands over the finished answer: that
    answer is the reply (saved, logged, not marked cancelled), not thrown away as if it had been cut."""
    model = _LongAnswer(model_name="long")
    whole = " ".join(f"word{i}" for i in range(200))
    svc = ChatService(store, model=model)
    sid = svc.new_conversation("alice")
    streamed = ""
    result = None
    for event in svc.stream_turn("alice", sid, "tell me a long story"):
        if event.kind == "token":
            streamed += event.text
            if streamed == whole:  # every piece of the answer is in: stop now
                assert svc.cancel("alice", sid) is True
        if event.kind == "done":
            result = event.result
    assert streamed == whole
    assert result is not None and not result.cancelled and result.error is None
    assert result.assistant_message is not None and result.assistant_message.content == whole
    assert [m.role for m in store.user("alice").session(sid).tail(10)] == ["user", "assistant"]
    assert store.user("alice").log.tail(1)[0].assistant_message_id == result.assistant_message.message_id


class _WrongShapeFirst(OfflineChatModel):
    """First a preamble with a tool call whose arguments are a JSON list (answered with an error and the model sent
    round again), then a proper answer."""

    def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None,  # type: ignore[override]
                **kwargs: Any):
        from langchain_core.messages import AIMessageChunk, ToolMessage
        from langchain_core.outputs import ChatGenerationChunk

        if any(isinstance(m, ToolMessage) for m in messages):
            yield from super()._stream(messages, stop, run_manager, **kwargs)
            return
        for piece in ("Let me ", "search."):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[
            {"name": "search_session", "args": "[1, 2]", "id": "call-1", "index": 0}]))


def test_a_stop_after_a_reply_whose_calls_were_all_malformed_saves_no_reply(store: MemoryStore) -> None:
    """A reply with only malformed calls is not an answer (the model is sent round again): a stop that lands right
    after it cancels the turn; its preamble is never saved as the reply."""
    svc = ChatService(store, model=_WrongShapeFirst(model_name="wrong-shape"))
    sid = svc.new_conversation("alice")
    streamed = ""
    result = None
    for event in svc.stream_turn("alice", sid, "where did I put my keys?"):
        if event.kind == "token":
            streamed += event.text
            if streamed == "Let me search.":
                svc.cancel("alice", sid)
        if event.kind == "done":
            result = event.result
    assert result is not None and result.cancelled and result.assistant_message is None
    assert [m.role for m in store.user("alice").session(sid).tail(10)] == ["user"]



class _WaitsBeforeItsEnd(OfflineChatModel):
    """Streams its answer, then waits (for the reader's stop) before langchain closes the stream with its empty last
    chunk: the moment a reader's stop can land after the whole answer, made certain instead of rare."""

    proceed: Any = None

    def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
        return AIMessage(content=" ".join(f"word{i}" for i in range(20)))

    def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None,  # type: ignore[override]
                **kwargs: Any):
        yield from super()._stream(messages, stop, run_manager, **kwargs)
        self.proceed.wait(timeout=30)  # every piece is out; langchain's closing chunk comes once the reader stopped


def test_a_stop_between_the_last_piece_and_the_streams_end_keeps_the_answer(store: MemoryStore) -> None:
    """The reader has every piece of the answer and stops before langchain's closing (empty) chunk went through the
    callbacks: the answer is complete, so it is the reply — not a cancelled turn that threw it away (this raced in
    the suite: the closing chunk's callback raised the stop)."""
    model = _WaitsBeforeItsEnd(model_name="waits", proceed=threading.Event())
    svc = ChatService(store, model=model)
    sid = svc.new_conversation("alice")
    whole = " ".join(f"word{i}" for i in range(20))
    streamed, result = "", None
    for event in svc.stream_turn("alice", sid, "tell me a story"):
        if event.kind == "token":
            streamed += event.text
            if streamed == whole:
                assert svc.cancel("alice", sid) is True
                model.proceed.set()
        if event.kind == "done":
            result = event.result
    assert streamed == whole
    assert result is not None and not result.cancelled and result.error is None, result
    assert result.assistant_message is not None and result.assistant_message.content == whole


class _ThinksFirst(OfflineChatModel):
    """A reasoning model as ChatOpenAI streams it: many pieces without text while it thinks, then the answer. After
    its first piece it waits for the test's stop, then counts the pieces it still gets to hand over."""

    started: Any = None
    proceed: Any = None
    after_stop: Any = None  # a list (the model is copied for the run: an int set on the copy would not be seen)

    def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None,  # type: ignore[override]
                **kwargs: Any):
        from langchain_core.messages import AIMessageChunk
        from langchain_core.outputs import ChatGenerationChunk

        for index in range(30):
            if index == 1:
                self.started.set()
                self.proceed.wait(timeout=30)
            if index >= 1:
                self.after_stop.append(index)
            yield ChatGenerationChunk(message=AIMessageChunk(content=""))
        yield ChatGenerationChunk(message=AIMessageChunk(content="the answer"))


def test_a_stop_while_the_model_thinks_ends_the_stream_at_its_next_piece(store: MemoryStore) -> None:
    """Pieces without text (a reasoning model thinking) do not hold the stop back until the first word: the stream
    ends at the next piece, as it does while text streams."""
    model = _ThinksFirst(model_name="thinker", started=threading.Event(), proceed=threading.Event(), after_stop=[])
    svc = ChatService(store, model=model)
    sid = svc.new_conversation("alice")

    def stop_when_thinking() -> None:
        model.started.wait(timeout=30)
        svc.cancel("alice", sid)
        model.proceed.set()

    stopper = threading.Thread(target=stop_when_thinking)
    stopper.start()
    result = [event for event in svc.stream_turn("alice", sid, "think hard") if event.kind == "done"][0].result
    stopper.join()
    assert result is not None and result.cancelled
    assert model.after_stop == [1]  # the first piece after the stop ended it; the other 28 were never asked for
