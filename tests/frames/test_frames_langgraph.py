"""Frames over real LangGraph checkpointers and stores (``agentmem_nb.frames.langgraph``).

Every graph here is a real LangGraph graph (``create_agent`` or a hand-built ``StateGraph``) run against a real saver
(``InMemorySaver``, ``SqliteSaver``, and ``PostgresSaver`` under ``-m postgres``) or store (``InMemoryStore``, ``SqliteStore``); only the chat model is scripted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pandas as pd
import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

from agentmem_nb import frames
from langgraph_testlib import KINDS, make_saver, make_store


class ScriptedModel(GenericFakeChatModel):
    """GenericFakeChatModel answers from its script; create_agent binds tools, which the script already names."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # noqa: ARG002 - the script has the calls
        return self


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _fail(city: str) -> str:
    """A tool that fails (its error becomes a tool message with status "error")."""
    raise ToolException(f"no data for {city}")


failing = StructuredTool.from_function(_fail, name="failing", handle_tool_error=True)


@pytest.fixture(params=KINDS)
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from make_saver(request.param, tmp_path)


def _agent(saver: Any, script: list[AIMessage]) -> Any:
    return create_agent(ScriptedModel(messages=iter(script)), tools=[get_weather, failing], checkpointer=saver)


def _run_weather(saver: Any, thread: str = "t1") -> Any:
    agent = _agent(saver, [
        AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": "Lyon"}, "id": "c1"},
                                          {"name": "get_weather", "args": {"city": "Oslo"}, "id": "c2"}]),
        AIMessage(content="Sunny in Lyon and Oslo."),
    ])
    agent.invoke({"messages": [{"role": "user", "content": "Weather in Lyon and Oslo?"}]},
                 {"configurable": {"thread_id": thread}})
    return agent


def test_create_agent_thread_as_message_frame(saver: Any) -> None:
    agent = _run_weather(saver)
    frame = frames.session_messages(saver, "t1")
    assert tuple(frame.columns) == frames.LANGGRAPH_MESSAGE_COLUMNS
    assert frame["role"].tolist() == ["user", "assistant", "tool", "tool", "assistant"]
    assert frame["content"].tolist() == ["Weather in Lyon and Oslo?", "", "sunny in Lyon", "sunny in Oslo",
                                         "Sunny in Lyon and Oslo."]
    assert frame["message_id"].tolist() == [1, 2, 3, 4, 5]
    assert frame["n_tool_calls"].tolist() == [0, 2, 0, 0, 0]
    assert frame["tool_call_id"].tolist()[2:4] == ["c1", "c2"]
    assert (frame["session_id"] == "t1").all()
    # Each message carries the step and checkpoint that first held it: the user's at step 0, both tool answers at
    # the same step (one tools superstep), and the checkpoint ids are those of the thread's history.
    steps = frame["step"].tolist()
    assert steps[0] == 0 and steps[2] == steps[3] and steps == sorted(steps) and steps[1] < steps[2] < steps[4]
    history = {s.config["configurable"]["checkpoint_id"]: s for s in agent.get_state_history(
        {"configurable": {"thread_id": "t1"}})}
    for cid, step, ts in zip(frame["checkpoint_id"], frame["step"], frame["ts"]):
        assert history[cid].metadata["step"] == step
        assert ts == pd.Timestamp(history[cid].created_at)
    assert frame["ts"].is_monotonic_increasing and frame["ts"].dt.tz is not None


def test_filters_of_the_store_frames_apply(saver: Any) -> None:
    _run_weather(saver)
    assert frames.session_messages(saver, "t1", role="tool")["content"].tolist() == ["sunny in Lyon", "sunny in Oslo"]
    assert frames.session_messages(saver, "t1", keyword="OSLO")["message_id"].tolist() == [1, 4, 5]


def test_tool_calls_matched_by_call_id(saver: Any) -> None:
    _run_weather(saver)
    calls = frames.tool_calls(saver, session="t1")
    assert tuple(calls.columns) == frames.LANGGRAPH_TOOL_COLUMNS
    assert calls["call_id"].tolist() == ["c1", "c2"]
    assert calls["input"].tolist() == [{"city": "Lyon"}, {"city": "Oslo"}]
    assert calls["output"].tolist() == ["sunny in Lyon", "sunny in Oslo"]
    assert calls["status"].tolist() == ["success", "success"]
    assert calls["turn"].tolist() == [2, 2] and calls["call_index"].tolist() == [0, 1]
    assert frames.tool_calls(saver, session="t1", keyword="oslo")["call_id"].tolist() == ["c2"]


def test_a_failing_tool_is_an_error_row(saver: Any) -> None:
    agent = _agent(saver, [AIMessage(content="", tool_calls=[{"name": "failing", "args": {"city": "X"}, "id": "f1"}]),
                           AIMessage(content="Sorry.")])
    agent.invoke({"messages": [{"role": "user", "content": "go"}]}, {"configurable": {"thread_id": "bad"}})
    calls = frames.tool_calls(saver, session="bad")
    assert calls["status"].tolist() == ["error"]
    assert "no data for X" in calls["output"].iloc[0]
    assert frames.tool_calls(saver, session="bad", status="error")["call_id"].tolist() == ["f1"]


def test_threads_listed_and_all_threads_read(saver: Any) -> None:
    _run_weather(saver, "a")
    _run_weather(saver, "b")
    listed = frames.threads(saver)
    assert sorted(listed["thread_id"]) == ["a", "b"]
    assert listed["n_checkpoints"].tolist() == [5, 5]
    assert listed["thread_id"].iloc[0] == "b"  # newest first
    every = frames.session_messages(saver)
    assert sorted(set(every["session_id"])) == ["a", "b"] and len(every) == 10
    assert every["ts"].is_monotonic_increasing
    assert len(frames.tool_calls(saver)) == 4


def test_unknown_thread_is_empty_and_bad_source_is_named(saver: Any) -> None:
    assert len(frames.session_messages(saver, "nobody")) == 0
    with pytest.raises(TypeError, match="dict"):
        frames.checkpoint_history({}, "t1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="thread_id"):
        frames.checkpoint_history(saver, "")


class CountState(TypedDict):
    messages: Annotated[list[Any], add_messages]
    count: int
    approved: bool


def _approval_graph(saver: Any) -> Any:
    """A hand-built graph with custom state keys that asks for a tool, interrupts for approval, then answers."""
    def ask(state: CountState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", id="ask", tool_calls=[
            {"name": "delete_file", "args": {"path": "/tmp/x"}, "id": "d1"}])], "count": state["count"] + 1}

    def approve(state: CountState) -> dict[str, Any]:
        answer = interrupt({"question": "delete /tmp/x?"})
        return {"messages": [ToolMessage(content=f"approved={answer}", tool_call_id="d1", id="done")],
                "approved": bool(answer), "count": state["count"] + 1}

    graph = StateGraph(CountState)
    graph.add_node("ask", ask)
    graph.add_node("approve", approve)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", "approve")
    return graph.compile(checkpointer=saver)


def test_interrupted_then_resumed_run(saver: Any) -> None:
    graph = _approval_graph(saver)
    config = {"configurable": {"thread_id": "hitl"}}
    graph.invoke({"messages": [{"role": "user", "content": "clean up", "id": "u1"}], "count": 0, "approved": False},
                 config)
    paused = frames.tool_calls(saver, session="hitl")
    assert paused["status"].tolist() == ["pending"] and paused["output"].tolist() == [""]
    graph.invoke(Command(resume=True), config)
    done = frames.tool_calls(saver, session="hitl")
    assert done["status"].tolist() == ["success"] and done["output"].tolist() == ["approved=True"]
    messages = frames.session_messages(saver, "hitl")
    assert messages["lc_id"].tolist() == ["u1", "ask", "done"]
    assert messages["step"].tolist() == [0, 1, 2]
    history = frames.checkpoint_history(saver, "hitl")
    assert tuple(history.columns) == frames.CHECKPOINT_COLUMNS
    assert history["step"].tolist() == [-1, 0, 1, 2]
    assert [v.get("count") for v in history["values"]] == [None, 0, 1, 2]  # the custom keys, step by step
    assert history["values"].iloc[-1]["approved"] is True
    assert history["n_messages"].tolist() == [0, 1, 2, 3]
    assert history["parent_checkpoint_id"].iloc[1:].tolist() == history["checkpoint_id"].iloc[:-1].tolist()
    assert "count" in history["channels"].iloc[-1]


class Inner(TypedDict):
    messages: Annotated[list[Any], add_messages]


def test_subgraph_messages_and_its_checkpoints(saver: Any) -> None:
    def inner_node(state: Inner) -> dict[str, Any]:
        answer = interrupt("go on?")
        return {"messages": [AIMessage(content=f"inner says {answer}", id="inner")]}

    inner = StateGraph(Inner)
    inner.add_node("inner_node", inner_node)
    inner.add_edge(START, "inner_node")
    outer = StateGraph(Inner)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    graph = outer.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "nested"}}
    graph.invoke({"messages": [{"role": "user", "content": "hi", "id": "u"}]}, config)
    graph.invoke(Command(resume="yes"), config)
    frame = frames.session_messages(saver, "nested")
    assert frame["content"].tolist() == ["hi", "inner says yes"]
    top = frames.checkpoint_history(saver, "nested")
    assert set(top["checkpoint_ns"]) == {""}
    every = frames.checkpoint_history(saver, "nested", subgraphs=True)
    assert len(every) > len(top) and any(ns.startswith("sub") for ns in every["checkpoint_ns"])


@pytest.fixture(params=["memory", "sqlite"])
def lg_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from make_store(request.param, tmp_path)


def test_store_items_flat_values_get_columns(lg_store: Any) -> None:
    lg_store.put(("users", "alice"), "food", {"likes": "pizza", "stars": 5})
    lg_store.put(("users", "alice"), "city", {"likes": "Lyon", "since": 2020})
    lg_store.put(("users", "bob"), "food", {"likes": "soup"})
    lg_store.put(("other",), "x", {"likes": "nothing"})
    frame = frames.store_items(lg_store, namespace_prefix=("users",))
    assert tuple(frame.columns[:5]) == frames.STORE_COLUMNS
    assert frame["namespace"].tolist() == [("users", "alice"), ("users", "alice"), ("users", "bob")]
    assert frame["key"].tolist() == ["city", "food", "food"]
    assert frame["likes"].tolist() == ["Lyon", "pizza", "soup"]
    assert frame["stars"].tolist()[1] == 5 and frame["since"].tolist()[0] == 2020
    assert frame["updated_at"].dt.tz is not None and (frame["updated_at"] >= frame["created_at"]).all()
    assert len(frames.store_items(lg_store)) == 4
    names = frames.store_namespaces(lg_store)
    assert names["namespace"].tolist() == [("other",), ("users", "alice"), ("users", "bob")]
    assert names["n_items"].tolist() == [1, 2, 1]
    assert frames.store_namespaces(lg_store, max_depth=1)["namespace"].tolist() == [("other",), ("users",)]


def test_store_items_nested_values_stay_whole(lg_store: Any) -> None:
    lg_store.put(("docs",), "d1", {"title": "A", "tags": ["x"]})
    frame = frames.store_items(lg_store)
    assert list(frame.columns) == list(frames.STORE_COLUMNS)
    assert frame["value"].iloc[0] == {"title": "A", "tags": ["x"]}
    assert frames.store_items(lg_store, fields=True)["title"].tolist() == ["A"]


def test_store_items_pages_past_one_search(lg_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmem_nb.frames import langgraph as lg

    monkeypatch.setattr(lg, "_ITEM_PAGE", 2)  # a store's search returns one page at a time: every page must be read
    for i in range(17):  # pages of 2, 4, 8, then 3 of 16
        lg_store.put(("n",), f"k{i:02d}", {"i": i})
    assert frames.store_items(lg_store)["i"].tolist() == list(range(17))


def test_store_items_refuses_what_is_not_a_store() -> None:
    with pytest.raises(TypeError, match="BaseStore.*InMemorySaver"):
        frames.store_items(InMemorySaver())  # type: ignore[arg-type]


def test_frames_recognise_a_checkpointer_without_importing_langgraph() -> None:
    # frames read a user's folder without LangGraph loaded; only a checkpointer (which loaded it) brings it in.
    import subprocess
    import sys

    code = ("import sys, agentmem_nb.frames as f; from agentmem_nb import MemoryStore; import tempfile; "
            "m = MemoryStore(tempfile.mkdtemp()).user('u'); f.session_messages(m); f.tool_calls(m); "
            "print(sorted(n for n in sys.modules if n.startswith(('langgraph', 'langchain'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
