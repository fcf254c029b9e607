"""ChatWidget over the user's own LangGraph graph (``ChatWidget.for_graph`` / ``agentmem_nb.agent.graph_chat``).

Every graph is a real LangGraph graph — ``create_agent`` driven by our offline model, or a hand-built ``StateGraph``
with a ``ToolNode`` and a scripted model — run against a real saver (``InMemorySaver``, ``SqliteSaver``). Nothing of
the conversation may reach an agentmem_nb store: it lives in the graph's checkpointer.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolCallChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import StructuredTool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt

from agentmem_nb import frames
from agentmem_nb.agent import OfflineChatModel
from agentmem_nb.agent.graph_chat import GRAPH_LIMITS, NOT_ANSWERED, TIMED_CHECKPOINTS, GraphChat, list_threads, uuid6_time
from agentmem_nb.errors import ConfigError, InvalidIdentifier
from agentmem_nb.widgets.chat import ChatWidget

from test_chat import assert_inert, html_values
from langgraph_testlib import make_saver


@tool
def remember_note(note: str) -> str:
    """Keep a durable note about the user."""
    return f"saved: {note}"


@tool
def search_session(keyword: str) -> str:
    """Search the conversation for a keyword."""
    return f"#1 [2026-04-08 09:00] user: I prefer green {keyword}"


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from make_saver(request.param, tmp_path)


def offline_agent(saver: Any) -> Any:
    return create_agent(OfflineChatModel(), tools=[remember_note, search_session], checkpointer=saver)


def thread_messages(graph: Any, thread_id: str, channel: str = "messages") -> list[BaseMessage]:
    return list(graph.get_state({"configurable": {"thread_id": thread_id}}).values.get(channel, []))


class Recorder:
    """Every value the chat's live area showed during a turn."""

    def __init__(self, chat: ChatWidget) -> None:
        self.values: list[str] = []
        chat.live.observe(lambda change: self.values.append(change["new"]), names="value")


# ---------------------------------------------------------------------- create_agent with the offline model


def test_send_goes_to_the_graph_as_a_human_message_and_streams_reply_and_tool_call(saver: Any) -> None:
    agent = offline_agent(saver)
    chat = ChatWidget.for_graph(agent, thread_id="morning", stream_interval=0)
    live = Recorder(chat)
    result = chat.send("I prefer green tea in the morning")

    assert result.error is None and result.session_id == "morning"
    assert result.reply.startswith("Got it, I'll remember")
    assert [(c.name, c.status) for c in result.tool_calls] == [("remember_note", "success")]
    assert result.tool_calls[0].output == f"saved: {result.tool_calls[0].input['note']}"
    # the conversation is in *their* checkpointer, the user's text as a HumanMessage
    stored = thread_messages(agent, "morning")
    assert isinstance(stored[0], HumanMessage) and stored[0].content == "I prefer green tea in the morning"
    assert [m.type for m in stored] == ["human", "ai", "tool", "ai"]
    # while it ran: the tool as running, then done, then the reply piece by piece (the offline model streams)
    running = [i for i, v in enumerate(live.values) if "amn-tool-running" in v and "remember_note" in v]
    finished = [i for i, v in enumerate(live.values) if "amn-tool-success" in v and "remember_note" in v]
    pieces = [v for v in live.values if "amn-streaming-text" in v]
    assert running and finished and running[0] < finished[0]
    assert len(pieces) >= 3 and "Got" in pieces[0] and result.reply not in pieces[0]
    # afterwards: one user bubble, one assistant bubble carrying the tool call with its input and output
    assert [(m.role, m.message_id) for m in chat.messages] == [("user", 1), ("assistant", 4)]
    assert [(c.name, c.input, c.output) for c in chat.messages[1].tool_calls] == [
        (c.name, c.input, c.output) for c in result.tool_calls]
    history = chat.history.value
    assert "amn-tool-panel" in history and "1 tool call: remember_note" in history
    assert "saved: " in history and chat.live.value == "" and not chat.busy


def test_an_existing_thread_reopens_from_the_checkpointer_with_its_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    agent = offline_agent(SqliteSaver(conn))
    agent.invoke({"messages": [{"role": "user", "content": "I prefer oat milk"}]},
                 {"configurable": {"thread_id": "t1"}})
    agent.invoke({"messages": [{"role": "user", "content": "What did I say about milk?"}]},
                 {"configurable": {"thread_id": "t1"}})
    conn.close()

    # a new process would do this: a new connection, the graph compiled again
    conn = sqlite3.connect(path, check_same_thread=False)
    reopened = offline_agent(SqliteSaver(conn))
    chat = ChatWidget.for_graph(reopened, thread_id="t1")
    frame = frames.session_messages(SqliteSaver(conn), "t1")
    assert [m.role for m in chat.messages] == ["user", "assistant", "user", "assistant"]
    # ids are the positions in the thread, as in the frames: a user message keeps its own, a reply its last
    assert [m.message_id for m in chat.messages] == [1, 4, 5, 8]
    assert frame["role"].tolist() == ["user", "assistant", "tool", "assistant"] * 2
    assert [c.name for c in chat.messages[1].tool_calls] == ["remember_note"]
    assert [c.name for c in chat.messages[3].tool_calls] == ["search_session"]
    assert chat.messages[3].tool_calls[0].output == frame["content"].iloc[6]
    assert chat.messages[3].ts == frame["ts"].iloc[7].to_pydatetime()
    # and the next turn continues that thread
    chat.send("I prefer black tea")
    assert len(thread_messages(reopened, "t1")) == 12
    conn.close()


def test_thread_id_from_the_config_and_the_config_sent_with_each_turn(saver: Any) -> None:
    agent = offline_agent(saver)
    chat = ChatWidget.for_graph(agent, config={"configurable": {"thread_id": "cfg"}, "recursion_limit": 2})
    assert chat.session_id == "cfg"
    result = chat.send("I prefer green tea")  # the agent needs 3 steps: the recursion limit sent stops it
    assert result.error is not None and "GraphRecursionError" in result.error
    assert "Recursion limit of 2" in result.error


def test_new_conversation_is_a_new_thread_and_switching_back_shows_the_old_one(saver: Any) -> None:
    agent = offline_agent(saver)
    chat = ChatWidget.for_graph(agent, thread_id="first")
    chat.send("I prefer green tea")
    new_id = chat.new_conversation()
    assert new_id != "first" and chat.session_id == new_id and chat.messages == ()
    chat.send("I prefer oat milk")
    assert set(frames.threads(saver)["thread_id"]) == {"first", new_id}
    assert {value for _, value in chat.conversation_list.options} == {"first", new_id}
    chat.switch_conversation("first")
    assert [m.content for m in chat.messages if m.role == "user"] == ["I prefer green tea"]
    # no thread given: the one written last
    assert ChatWidget.for_graph(agent).session_id == new_id


def test_nothing_is_written_to_an_agentmem_store_and_store_features_are_off(saver: Any, tmp_path: Path) -> None:
    agent = offline_agent(saver)
    chat = ChatWidget.for_graph(agent, thread_id="t")
    chat.send("I prefer green tea")
    # the only files are the SQLite saver's own (checkpoints.db and its journal)
    assert chat.store is None and all(p.name.startswith("checkpoints.db") for p in tmp_path.iterdir())
    assert chat.user_box.layout.display == "none"  # a thread has no user
    assert "memory editing" in chat.status.value and GRAPH_LIMITS.split(":")[0] in chat.status.value
    assert "amn-trace-link" not in chat.history.value  # no turn traces in a checkpointer
    with pytest.raises(LookupError, match="turn traces"):
        chat.open_trace(chat.messages[-1].message_id)
    with pytest.raises(ValueError, match="switch_conversation"):
        chat.switch_user("bob")
    assert chat.banner.layout.display == "none"  # our offline model's banner is about our agent, not theirs


# ---------------------------------------------------------------------- a hand-built StateGraph with a tool node


class ScriptedModel(GenericFakeChatModel):
    """GenericFakeChatModel answers from its script; tools are already in the script. Streamed (the chat streams
    the graph), it sends the text word by word and then the tool calls, as a hosted model does (the base class
    would drop the calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # noqa: ARG002 - the script has the calls
        return self

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        message = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        assert isinstance(message, AIMessage)
        for word in re.findall(r"\S+\s*", str(message.content)):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word, id=message.id))
        chunks = [ToolCallChunk(name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=i)
                  for i, call in enumerate(message.tool_calls)]
        if chunks or not message.content:
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id=message.id, tool_call_chunks=chunks))


class Chat(TypedDict):
    history: Annotated[list[BaseMessage], add_messages]
    turns: int


def _fail(city: str) -> str:
    """A tool that fails (ToolNode turns the error into a tool message with status "error")."""
    raise ToolException(f"no data for {city}")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"<b>sunny</b> in {city}"


failing = StructuredTool.from_function(_fail, name="failing", handle_tool_error=True)


def hand_built(saver: Any, script: list[AIMessage], *, model_hook: Callable[[Chat], None] | None = None) -> Any:
    model = ScriptedModel(messages=iter(script))

    def call_model(state: Chat) -> dict[str, Any]:
        if model_hook is not None:
            model_hook(state)
        return {"history": [model.invoke(state["history"])], "turns": state.get("turns", 0) + 1}

    def route(state: Chat) -> str:
        last = state["history"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(Chat)
    builder.add_node("call_model", call_model)
    builder.add_node("tools", ToolNode([get_weather, failing], messages_key="history"))
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", route, ["tools", END])
    builder.add_edge("tools", "call_model")
    return builder.compile(checkpointer=saver, name="weather-bot")


WEATHER = [
    AIMessage(content="Let me look.", tool_calls=[{"name": "get_weather", "args": {"city": "Lyon"}, "id": "c1"},
                                                  {"name": "failing", "args": {"city": "Oslo"}, "id": "c2"}]),
    AIMessage(content="Sunny in Lyon; no data for Oslo."),
]


def test_a_hand_built_graph_with_its_own_messages_key_and_tool_node(saver: Any) -> None:
    graph = hand_built(saver, list(WEATHER))
    chat = ChatWidget.for_graph(graph, thread_id="w", channel="history", stream_interval=0)
    live = Recorder(chat)
    result = chat.send("Weather in Lyon and Oslo?")

    assert result.error is None and result.reply == "Sunny in Lyon; no data for Oslo."
    assert [(c.id, c.name, c.status) for c in result.tool_calls] == [("c1", "get_weather", "success"),
                                                                    ("c2", "failing", "error")]
    assert result.tool_calls[1].output == "no data for Oslo"
    assert any("✗ failing" in v for v in live.values)  # the failed call shown as failed while the turn ran
    assert "weather-bot" in chat.status.value  # the graph's name where ours shows the model
    stored = thread_messages(graph, "w", "history")
    assert stored[0].content == "Weather in Lyon and Oslo?"
    # one assistant bubble: the text before the calls and the answer, both calls with their results
    (user, reply) = chat.messages
    assert user.content == "Weather in Lyon and Oslo?" and reply.message_id == 5
    assert reply.content == "Let me look.\n\nSunny in Lyon; no data for Oslo."
    assert [(c.name, c.status, c.output) for c in reply.tool_calls] == [
        ("get_weather", "success", "<b>sunny</b> in Lyon"), ("failing", "error", "no data for Oslo")]
    # a tool's output is the user's data, shown as text
    assert "&lt;b&gt;sunny&lt;/b&gt;" in chat.history.value
    for markup in html_values(chat):
        assert_inert(markup)


def test_a_graph_without_a_checkpointer_or_without_the_messages_key_is_refused(saver: Any) -> None:
    builder = StateGraph(Chat)
    builder.add_node("n", lambda state: {"turns": 1})
    builder.add_edge(START, "n")
    with pytest.raises(ConfigError, match="checkpointer"):
        ChatWidget.for_graph(builder.compile())
    with pytest.raises(ConfigError, match=r"no 'messages' key \(its keys: \['history', 'turns'\]\).*channel="):
        ChatWidget.for_graph(builder.compile(checkpointer=saver))
    with pytest.raises(ConfigError, match="compiled LangGraph graph"):
        GraphChat(builder)
    with pytest.raises(InvalidIdentifier, match="thread_id"):
        ChatWidget.for_graph(builder.compile(checkpointer=saver), channel="history", thread_id="a\nb")


# ---------------------------------------------------------------------- errors, interrupts, stop


def test_a_graph_error_is_shown_like_a_model_error_and_nothing_is_lost(saver: Any) -> None:
    calls = {"n": 0}

    def explode_once(state: Chat) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("the model server said no (api_key=sk-abcdefghijklmnopqrstuvwxyz123456)")

    graph = hand_built(saver, [AIMessage(content="Hello again.")], model_hook=explode_once)
    chat = ChatWidget.for_graph(graph, thread_id="e", channel="history")
    result = chat.send("Hello?")

    assert result.error is not None and result.assistant_message is None
    assert "Your graph raised RuntimeError: the model server said no" in result.error
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in result.error + chat.error_area.value  # secrets redacted
    assert "the turn failed" in chat.error_area.value and "RuntimeError" in chat.error_area.value
    # the user's message stays in their checkpointer, and is shown
    assert [m.content for m in thread_messages(graph, "e", "history")] == ["Hello?"]
    assert [(m.role, m.content) for m in chat.messages] == [("user", "Hello?")]
    assert not chat.busy and not chat.input.disabled
    # still usable: the next message is answered and clears the error
    again = chat.send("Anyone there?")
    assert again.error is None and again.reply == "Hello again."
    assert chat.error_area.value == ""
    assert [m.role for m in chat.messages] == ["user", "user", "assistant"]


def test_an_interrupt_is_shown_as_a_pause_and_the_next_message_answers_it(saver: Any) -> None:
    def ask(state: Chat) -> dict[str, Any]:
        answer = interrupt({"question": "Send the report to Bob?"})
        return {"history": [AIMessage(content=f"Understood: {answer}.")]}

    builder = StateGraph(Chat)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=saver)
    chat = ChatWidget.for_graph(graph, thread_id="hitl", channel="history")

    paused = chat.send("Please send the report")
    assert paused.error is None and paused.interrupt and "Send the report to Bob?" in paused.interrupt
    assert "Waiting for your answer" in chat.error_area.value and "Send the report to Bob?" in chat.error_area.value
    assert "the turn failed" not in chat.error_area.value
    assert [(m.role, m.content) for m in chat.messages] == [("user", "Please send the report")]
    assert not chat.busy

    # opened again (another cell, after a restart), the thread says it waits; another thread does not
    other = ChatWidget.for_graph(graph, thread_id="hitl", channel="history")
    assert "Waiting for your answer" in other.error_area.value and "Send the report to Bob?" in other.error_area.value
    other.new_conversation()
    assert other.error_area.value == ""

    answered = chat.send("yes, send it")
    assert answered.interrupt == "" and answered.error is None and answered.reply == "Understood: yes, send it."
    assert answered.user_message.meta == {"resume": True}
    assert [(m.role, m.content) for m in chat.messages] == [("user", "Please send the report"),
                                                             ("assistant", "Understood: yes, send it.")]
    assert graph.get_state({"configurable": {"thread_id": "hitl"}}).next == ()


def test_an_interrupt_before_a_tool_runs_shows_the_call_as_not_answered(saver: Any) -> None:
    builder = StateGraph(Chat)
    script = iter([AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": "Lyon"}, "id": "c1"}])])
    builder.add_node("call_model", lambda state: {"history": [next(script)]})
    builder.add_node("tools", ToolNode([get_weather], messages_key="history"))
    builder.add_edge(START, "call_model")
    builder.add_edge("call_model", "tools")
    builder.add_edge("tools", END)
    graph = builder.compile(checkpointer=saver, interrupt_before=["tools"])
    chat = ChatWidget.for_graph(graph, thread_id="before", channel="history")
    result = chat.send("Weather in Lyon?")
    assert result.error is None and not result.cancelled
    assert [(c.name, c.output) for c in result.tool_calls] == [("get_weather", NOT_ANSWERED)]
    assert [(c.name, c.status, c.output) for c in chat.messages[-1].tool_calls] == [
        ("get_weather", "error", NOT_ANSWERED)]


def test_stop_ends_the_turn_between_two_pieces_of_the_graphs_work(saver: Any) -> None:
    holder: dict[str, ChatWidget] = {}

    @tool
    def slow_lookup(city: str) -> str:
        """Look a city up (the person presses Stop while it runs)."""
        assert holder["chat"].stop() is True
        return f"found {city}"

    script = [AIMessage(content="", tool_calls=[{"name": "slow_lookup", "args": {"city": "Lyon"}, "id": "c1"}]),
              AIMessage(content="never shown")]
    agent = create_agent(ScriptedModel(messages=iter(script)), tools=[slow_lookup], checkpointer=saver)
    chat = holder["chat"] = ChatWidget.for_graph(agent, thread_id="s")
    result = chat.send("Find Lyon")
    assert result.cancelled and "Stopped on request" in (result.error or "")
    assert "Stopped:" in chat.error_area.value
    # the tool's answer was checkpointed before the stop took effect; the model was not asked again
    assert [m.type for m in thread_messages(agent, "s")] == ["human", "ai", "tool"]
    assert [(c.name, c.output) for c in result.tool_calls] == [("slow_lookup", "found Lyon")]
    assert not chat.busy and chat.stop() is False


# ---------------------------------------------------------------------- cost: what is decoded


class CountingSaver(InMemorySaver):
    """A real InMemorySaver that counts the checkpoints its list() hands over (each one decoded: the cost)."""

    def __init__(self) -> None:
        super().__init__()
        self.decoded = 0

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        for tup in super().list(config, **kwargs):
            self.decoded += 1
            yield tup


def test_a_long_thread_opens_by_decoding_a_bounded_number_of_checkpoints() -> None:
    saver = CountingSaver()
    agent = offline_agent(saver)
    for turn in range(16):
        agent.invoke({"messages": [{"role": "user", "content": f"I prefer tea number {turn}"}]},
                     {"configurable": {"thread_id": "long"}})
    total = len(list(saver.list({"configurable": {"thread_id": "long"}})))
    assert total > 2 * TIMED_CHECKPOINTS  # the walk of frames.session_messages would decode all of them

    saver.decoded = 0
    chat = ChatWidget.for_graph(agent, thread_id="long")
    assert saver.decoded == TIMED_CHECKPOINTS  # the thread listing decoded nothing
    assert len(chat.messages) == 32 and chat.messages[0].content == "I prefer tea number 0"
    # messages written within the checkpoints read have their exact time; older ones are shown "no later than"
    frame = frames.session_messages(saver, "long")
    exact = {int(i): t.to_pydatetime() for i, t in zip(frame["message_id"], frame["ts"])}
    bounded = [m for m in chat.messages if m.meta.get("ts_upper_bound")]
    timed = [m for m in chat.messages if not m.meta.get("ts_upper_bound")]
    assert bounded and timed and bounded[-1].message_id < timed[0].message_id
    assert all(m.ts == exact[m.message_id] for m in timed)
    assert all(m.ts >= exact[m.message_id] for m in bounded)
    assert "≤ " in chat.history.value

    # a turn then decodes only the checkpoints it wrote (and the one the graph reads to start)
    before = len(list(saver.list({"configurable": {"thread_id": "long"}})))
    saver.decoded = 0
    chat.send("I prefer green tea")
    during = saver.decoded
    written = len(list(saver.list({"configurable": {"thread_id": "long"}}))) - before
    assert written >= 4 and during <= written + 3  # each look also reads the newest checkpoint it already knew
    assert chat.messages[-1].ts == frames.session_messages(saver, "long")["ts"].iloc[-1].to_pydatetime()


def test_threads_are_listed_without_decoding_and_as_frames_threads_lists_them(saver: Any) -> None:
    agent = offline_agent(saver)
    for thread in ("a", "b", "c"):
        agent.invoke({"messages": [{"role": "user", "content": "I prefer green tea"}]},
                     {"configurable": {"thread_id": thread}})
    agent.invoke({"messages": [{"role": "user", "content": "I prefer oat milk"}]}, {"configurable": {"thread_id": "a"}})
    listed = list_threads(saver)
    frame = frames.threads(saver)
    assert list(listed) != [] and sorted(listed) == sorted(frame["thread_id"])
    for thread_id, last in zip(frame["thread_id"], frame["last_ts"]):
        when = listed[thread_id]
        # the time in the newest checkpoint's id and the checkpoint's own "ts" are taken by the same call
        assert when is not None and abs((when - last.to_pydatetime()).total_seconds()) < 5
    chat = ChatWidget.for_graph(agent)
    assert chat.session_id == "a"  # the thread written last
    assert [value for _, value in chat.conversation_list.options] == ["a", "c", "b"]


def test_uuid6_time_reads_only_version_6_ids() -> None:
    from langgraph.checkpoint.base.id import uuid6

    assert uuid6_time("not-a-uuid") is None
    assert uuid6_time("56197e3e-114f-4288-ad26-0eea900b38b3") is None  # a UUIDv4 holds no time
    stamp = uuid6_time(str(uuid6(clock_seq=3)))
    assert stamp is not None and stamp.tzinfo is not None and stamp.year >= 2024


def strict(left: list[Any], right: list[Any]) -> list[Any]:
    """A reducer that refuses every input: the run fails before its first checkpoint holds the message."""
    raise ValueError("this state takes no messages today")


class Strict(TypedDict):
    messages: Annotated[list[Any], strict]


def test_a_graph_that_fails_before_keeping_the_message_gives_the_text_back(saver: Any) -> None:
    builder = StateGraph(Strict)
    builder.add_node("n", lambda state: {})
    builder.add_edge(START, "n")
    chat = ChatWidget.for_graph(builder.compile(checkpointer=saver), thread_id="strict", run_in_thread=False)
    chat.input.value = "Hello?"
    chat.input.submit()  # Enter in the box
    assert "this state takes no messages today" in chat.error_area.value
    assert "not kept by the graph" in chat.error_area.value
    assert chat.input.value == "Hello?"  # the draft is back, to retry
    assert chat.messages == () and not chat.busy


# ---------------------------------------------------------------------- review fixes


class FlakySaver(InMemorySaver):
    """A real InMemorySaver whose next read (list() or get_tuple()) raises once when armed, as a locked SQLite
    database does."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = 0

    def _maybe_fail(self) -> None:
        if self.fail:
            self.fail -= 1
            raise sqlite3.OperationalError("database is locked")

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        self._maybe_fail()
        yield from super().list(config, **kwargs)

    def get_tuple(self, config: Any) -> Any:
        self._maybe_fail()
        return super().get_tuple(config)


def test_a_read_that_fails_as_a_turn_starts_does_not_leave_the_thread_running() -> None:
    saver = FlakySaver()
    svc = GraphChat(offline_agent(saver))
    saver.fail = 1
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        svc.turn("", "t", "I prefer green tea")
    assert not svc.cancel("", "t")  # no turn is registered as running any more
    result = svc.turn("", "t", "I prefer green tea")
    assert result.error is None and result.reply.startswith("Got it")


def test_open_message_with_a_tool_call_position_focuses_the_assistant_bubble(saver: Any) -> None:
    agent = offline_agent(saver)
    chat = ChatWidget.for_graph(agent, thread_id="m", stream_interval=0)
    chat.send("I prefer green tea in the morning")
    calls = frames.tool_calls(saver, session="m")
    (position,) = [int(p) for p in calls["message_id"]]  # the AI message asking for the tool, by its own position
    assert position == 2
    assert [(m.role, m.message_id) for m in chat.messages] == [("user", 1), ("assistant", 4)]
    assert chat.messages[1].meta["first_message_id"] == 2
    chat.open_message("m", position)
    assert chat._history.focused == 4 and "amn-msg-focus" in chat.history.value
    chat.open_message("m", 3)  # the tool's answer, inside the same run
    assert chat._history.focused == 4
    chat.open_message("m", 1)
    assert chat._history.focused == 1
    with pytest.raises(LookupError, match="#5"):
        chat.open_message("m", 5)


def test_a_failed_turn_of_a_graph_that_trims_the_history_keeps_the_message(saver: Any) -> None:
    from langchain_core.messages import RemoveMessage
    from langgraph.graph import MessagesState
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    broken = {"on": False}

    def trim(state: MessagesState) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), state["messages"][-1]]}

    def model(state: MessagesState) -> dict[str, Any]:
        if broken["on"]:
            raise RuntimeError("the model server is down")
        return {"messages": [AIMessage(content=f"heard {len(state['messages'])}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("trim", trim)
    builder.add_node("model", model)
    builder.add_edge(START, "trim")
    builder.add_edge("trim", "model")
    graph = builder.compile(checkpointer=saver)
    svc = GraphChat(graph)
    for text in ("one", "two", "three"):
        assert svc.turn("", "trimmed", text).error is None
    broken["on"] = True
    result = svc.turn("", "trimmed", "four")  # not raised: the message was kept, so the text is not given back
    assert result.error is not None and "the model server is down" in result.error
    assert [m.content for m in thread_messages(graph, "trimmed")] == ["four"]
