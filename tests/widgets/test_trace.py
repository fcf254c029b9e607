"""TurnTrace and its data: spans with real times from the dialogue log, the messages each model step was given,
token counts when the server reports usage, errors in place, old log lines, and escaping."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.store import DialogueEntry
from agentmem_nb.testing import fake_openai as fake
from agentmem_nb.widgets.trace import TurnTrace
from agentmem_nb.widgets.trace_data import find_entry, messages_given, trace_of


@pytest.fixture
def svc(store: MemoryStore) -> ChatService:
    return ChatService(store, model=OfflineChatModel())


def _two_turns(svc: ChatService) -> Any:
    svc.turn("alice", "s1", "I moved to Lyon in 2024.")
    return svc.turn("alice", "s1", "Where did I move?")


def test_the_waterfall_has_each_phase_step_and_tool_in_time_order(svc: ChatService, store: MemoryStore) -> None:
    result = _two_turns(svc)
    trace = TurnTrace(store, user_id="alice", session_id="s1", message_id=result.assistant_message.message_id)
    data = trace.data
    assert data is not None and data.timed and data.status == "ok"
    kinds = [(s.kind, s.label) for s in data.spans]
    models = [label for kind, label in kinds if kind == "model"]
    tools = [label for kind, label in kinds if kind == "tool"]
    assert models == ["model step 1", "model step 2", "model step 3"]
    assert tools == ["search_session", "get_session_window"]
    starts = [s.start_ms for s in data.spans]
    assert starts == sorted(starts)
    # model step 1 < search_session < model step 2 < get_session_window < model step 3, none overlapping
    order = [s for s in data.spans if s.kind in ("model", "tool")]
    assert [s.label for s in order] == ["model step 1", "search_session", "model step 2", "get_session_window",
                                        "model step 3"]
    for before, after in zip(order, order[1:], strict=False):
        assert before.end_ms <= after.start_ms + 0.01
    assert data.spans[-1].end_ms <= data.total_ms + 0.01
    # the tool span carries its real duration from the trace of the reply
    assert next(s for s in order if s.kind == "tool").ms == result.tool_calls[0].duration_ms
    html = trace.view.value
    assert html.count('class="amn-trace-row ') == len(data.spans)
    assert "search_session" in html and "Where did I move?" in html


def test_each_step_shows_every_message_it_was_given(svc: ChatService, store: MemoryStore) -> None:
    result = _two_turns(svc)
    data = trace_of(find_entry(store, "alice", session_id="s1", message_id=result.assistant_message.message_id))
    last = messages_given(data, 3)
    roles = [m.role for m in last]
    assert roles[0] == "system" and roles[-4:] == ["ai", "tool", "ai", "tool"]
    assert "human" in roles and last[roles.index("human", len(roles) - 5)].content == "Where did I move?"
    assert last[-4].tool_calls[0]["name"] == "search_session"
    assert "I moved to Lyon" in last[-3].content  # the search result the model read
    html = TurnTrace(store, user_id="alice", entry_id=data.entry.entry_id).view.value
    assert f"the {len(last)} messages this step was given (2 new since the step before)" in html


def test_a_failed_turn_shows_its_error_in_place(store: MemoryStore) -> None:
    class Down(OfflineChatModel):
        def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
            raise ConnectionError("the <model> is down")

    result = ChatService(store, model=Down()).turn("alice", "s1", "hello?")
    trace = TurnTrace(store, user_id="alice", session_id="s1", message_id=result.user_message.message_id)
    assert trace.data is not None and trace.data.status == "error"
    step = trace.data.model_steps[0]
    assert step.status == "error" and "the <model> is down" in (step.error or "")
    assert "the &lt;model&gt; is down" in trace.view.value and "<model>" not in trace.view.value
    assert 'amn-trace-row amn-trace-model amn-trace-error' in trace.view.value


def test_a_stopped_turn_is_marked_stopped(store: MemoryStore) -> None:
    class Long(OfflineChatModel):
        def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
            return AIMessage(content=" ".join(["word"] * 100))

    svc = ChatService(store, model=Long())
    events = svc.stream_turn("alice", "s1", "go on")
    for event in events:
        if event.kind == "token":
            svc.cancel("alice", "s1")
    entry = store.user("alice").log.tail(1)[0]
    trace = TurnTrace(store, user_id="alice", entry_id=entry.entry_id)
    assert trace.data is not None and trace.data.status == "cancelled"
    assert "■ stopped" in trace.view.value and ">stopped</span>" in trace.view.value


def test_token_counts_from_the_server_are_shown(store: MemoryStore) -> None:
    server = fake.FakeOpenAI(policy=fake.memory_policy("Lyon"))
    httpd = fake.start(server)
    try:
        svc = ChatService(store, config=fake.real_config(server))
        svc.turn("alice", "s1", "I moved to Lyon.")
        result = svc.turn("alice", "s1", "Where is Lyon?")
    finally:
        server.stop.set()
        httpd.shutdown()
        httpd.server_close()
    trace = TurnTrace(store, user_id="alice", session_id="s1", message_id=result.assistant_message.message_id)
    assert trace.data is not None
    steps = len(trace.data.model_steps)
    assert steps >= 2 and (trace.data.input_tokens, trace.data.output_tokens) == (10 * steps, 5 * steps)
    assert f"tokens {10 * steps} in / {5 * steps} out" in trace.view.value
    assert "10 in / 5 out" in trace.view.value


def test_a_log_line_from_before_the_trace_lays_tools_out_from_their_durations(svc: ChatService,
                                                                              store: MemoryStore) -> None:
    _two_turns(svc)
    entry = store.user("alice").log.tail(1)[0]
    old = DialogueEntry(entry.entry_id, entry.ts, entry.session_id, entry.user_message, entry.assistant_reply,
                        entry.memory_context, entry.tool_calls, entry.timings_ms, entry.error, entry.model,
                        entry.assistant_message_id)  # no trace: what older versions wrote
    data = trace_of(old)
    assert not data.timed and not data.model_steps
    tools = [s for s in data.spans if s.kind == "tool"]
    assert tools[1].start_ms == pytest.approx(tools[0].end_ms)
    from agentmem_nb.widgets.trace import trace_html

    assert "logged before step timings were recorded" in trace_html(data)


def test_a_message_no_turn_wrote_says_so(store: MemoryStore) -> None:
    store.user("alice").append("s1", "assistant", "written by hand")
    trace = TurnTrace(store, user_id="alice", session_id="s1", message_id=1)
    assert trace.data is None and "No trace" in trace.view.value
    with pytest.raises(TypeError, match="entry_id"):
        TurnTrace(store, user_id="alice", session_id="s1")


def test_a_stop_inside_the_model_call_marks_the_step_stopped_not_failed(store: MemoryStore) -> None:
    import threading

    gate = threading.Event()

    class Paused(OfflineChatModel):
        def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
            return AIMessage(content=" ".join(["word"] * 100))

        def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            for index, piece in enumerate(super()._stream(messages, stop, run_manager, **kwargs)):
                if index == 2:
                    assert gate.wait(10)  # the stop arrives while the model is still answering
                yield piece

    svc = ChatService(store, model=Paused())
    for event in svc.stream_turn("alice", "s1", "go on"):
        if event.kind == "token" and not gate.is_set():
            svc.cancel("alice", "s1")
            gate.set()
    data = trace_of(store.user("alice").log.tail(1)[0])
    step = data.model_steps[0]
    assert data.status == "cancelled" and step.status == "cancelled"
    assert step.error is not None and "Stopped on request" in step.error


@pytest.mark.parametrize("source", ["log", "sessions"])
def test_the_timeline_opens_the_trace_of_the_turn_that_made_a_call(svc: ChatService, store: MemoryStore,
                                                                   source: str) -> None:
    from agentmem_nb.widgets.timeline import ToolTimeline

    first = _two_turns(svc)
    second = svc.turn("alice", "s1", "Where did I move again?")
    assert first.tool_calls and second.tool_calls and second.assistant_message is not None
    timeline = ToolTimeline(store, user_id="alice", source=source)  # type: ignore[arg-type]
    assert timeline.trace_button.disabled  # nothing selected yet
    last = len(timeline.frame) - 1  # a call of the last turn
    trace = timeline.show_trace(last)
    assert trace.data is not None
    assert trace.data.entry.assistant_message_id == second.assistant_message.message_id
    assert [s.tool.name for s in trace.data.spans if s.kind == "tool" and s.tool] == \
        [c.name for c in second.tool_calls]
    assert timeline.trace_area.children == (trace,)
    timeline.select(0)  # another call: the trace shown belonged to the one before
    assert timeline.trace_area.children == ()
    timeline.trace_button.click()
    shown = timeline.trace_area.children[0]
    assert isinstance(shown, TurnTrace) and shown.data is not None
    assert first.assistant_message is not None
    assert shown.data.entry.assistant_message_id == first.assistant_message.message_id  # call 0's own turn


def test_tool_arguments_in_a_step_are_escaped_once(svc: ChatService, store: MemoryStore) -> None:
    result = _two_turns(svc)
    assert result.tool_calls
    trace = TurnTrace(store, user_id="alice", session_id="s1", message_id=result.assistant_message.message_id)
    html = trace.view.value
    assert "&amp;quot;" not in html and "&amp;lt;" not in html  # escaped twice, a person would read the entities
    assert "&quot;" in html  # the arguments' JSON quotes, escaped once
    trace.close()
    assert trace.view.comm is None  # the view is closed with the trace


def test_the_log_names_a_long_memory_in_the_system_message_instead_of_copying_it(svc: ChatService,
                                                                                  store: MemoryStore) -> None:
    from agentmem_nb.agent.context import LOG_LONG_TERM_MAX_CHARS

    marker = "TAIL-OF-A-LONG-MEMORY"
    mem = store.user("alice")
    mem.long_term.write("".join(f"- note {i} about tea and trains\n" for i in range(LOG_LONG_TERM_MAX_CHARS // 28))
                        + f"- {marker}\n")
    svc.turn("alice", "s1", "What do I like?")
    raw = (mem.directory / "logs" / "llm_dialogue.jsonl").read_text(encoding="utf-8")
    assert marker not in raw  # neither memory_context nor the trace's system message copies it
    given = messages_given(trace_of(mem.log.entries()[-1]), 1)
    system = next(g for g in given if g.role == "system")
    assert system.sha256 and system.chars > len(system.content)  # the trace names it by length and hash
