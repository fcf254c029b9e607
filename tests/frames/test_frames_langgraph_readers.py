"""The per-saver readers of a thread's writes (``agentmem_nb.frames._lg_readers``) give the frames the public walk
over ``list()`` gives, on real graphs and real savers, and read a thread in time linear in its steps.

Each scenario runs a real LangGraph graph (``create_agent`` with a scripted model, hand-built ``StateGraph``s) against
``InMemorySaver``, ``SqliteSaver`` and, under ``-m postgres``, ``PostgresSaver``; then the frame through
``frames.session_messages`` / ``frames.tool_calls`` (the readers) must equal the one built from the public walk
(``langgraph._walk_rows``), and the reader must have answered itself where it should (not fallen back).
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pandas as pd
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.types import Command, interrupt

from agentmem_nb import frames
from agentmem_nb.frames import _lg_readers as readers
from agentmem_nb.frames import langgraph as lg
from test_frames_langgraph import ScriptedModel, failing, get_weather
from langgraph_testlib import KINDS, make_saver


class CountingSerde:
    """The saver's serializer, counting what it decodes (calls and bytes): the cost measure of the readers."""

    def __init__(self) -> None:
        self.inner = JsonPlusSerializer()
        self.calls = 0
        self.bytes = 0

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        self.calls += 1
        self.bytes += len(data[1] or b"")
        return self.inner.loads_typed(data)


@pytest.fixture(params=KINDS)
def saver(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    yield from make_saver(request.param, tmp_path)


def _read_fast(saver: Any, thread: str) -> bool:
    """Whether the reader answered for this thread (True) or handed it to the public walk (False)."""
    reader = readers.reader_for(saver)
    assert reader is not None
    log = reader.thread_log(thread, "messages")
    return log is not None and readers.place(log) is not None


def assert_same_as_public_walk(saver: Any, thread: str, *, fast: bool = True) -> pd.DataFrame:
    zone = lg.frame_zone(None)
    walked = lg._walk_rows(saver, thread, "messages")
    expected = lg._messages_frame(*walked, thread_id=thread, zone=zone)
    got = frames.session_messages(saver, thread)
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(frames.tool_calls(saver, session=thread),
                                  lg._tool_frame(*walked, thread_id=thread, zone=zone))
    assert _read_fast(saver, thread) is fast
    config = {"configurable": {"thread_id": thread}}
    walked_history = lg._history_rows(lg._walked_history(saver, thread, config, "messages", subgraphs=False), thread)
    pd.testing.assert_frame_equal(frames.checkpoint_history(saver, thread),
                                  lg._history_frame(walked_history, zone=None))
    if isinstance(saver, InMemorySaver):  # the history is read from InMemorySaver's blobs (the others: list())
        assert (readers.MemoryReader(saver).history(thread, "messages") is not None) is fast
    return got


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]
    n: int


def _loop_graph(saver: Any, steps: int, *, text: str = "") -> Any:
    """One node looping ``steps`` times, each writing an id-less message (add_messages gives it a random id)."""
    def step(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"step {state['n']} {text}")], "n": state["n"] + 1}

    graph = StateGraph(State)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step")
    return graph.compile(checkpointer=saver)


def test_create_agent_threads(saver: Any) -> None:
    agent = create_agent(ScriptedModel(messages=iter([
        AIMessage(content="", tool_calls=[{"name": "get_weather", "args": {"city": "Lyon"}, "id": "c1"},
                                          {"name": "failing", "args": {"city": "Oslo"}, "id": "c2"}]),
        AIMessage(content="Lyon is sunny."),
        AIMessage(content="Still sunny."),
    ])), tools=[get_weather, failing], checkpointer=saver)
    config = {"configurable": {"thread_id": "agent"}}
    agent.invoke({"messages": [{"role": "user", "content": "Weather in Lyon and Oslo?"}]}, config)
    agent.invoke({"messages": [{"role": "user", "content": "And now?"}]}, config)
    frame = assert_same_as_public_walk(saver, "agent")
    assert frame["role"].tolist() == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant"]
    assert frame["step"].notna().all()
    calls = frames.tool_calls(saver, session="agent")
    assert calls["status"].tolist() == ["success", "error"]


def test_id_less_messages_over_many_steps_and_two_runs(saver: Any) -> None:
    graph = _loop_graph(saver, 6)
    config = {"configurable": {"thread_id": "loop"}}
    graph.invoke({"messages": [{"role": "user", "content": "go"}], "n": 0}, config)
    graph.invoke({"messages": [("user", "again")], "n": 3}, config)
    frame = assert_same_as_public_walk(saver, "loop")
    assert len(frame) == 11 and frame["step"].is_monotonic_increasing and frame["lc_id"].notna().all()


def test_removed_replaced_and_wiped_messages(saver: Any) -> None:
    def step(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(content="added")], "n": state["n"] + 1}

    def edit(state: State) -> dict[str, Any]:
        first, second = state["messages"][:2]
        return {"messages": [RemoveMessage(id=first.id), AIMessage(content="replaced", id=second.id),
                             AIMessage(content="new", id="new")]}

    def wipe(state: State) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage(content="fresh start")]}

    graph = StateGraph(State)
    for name, node in (("step", step), ("edit", edit), ("again", step)):
        graph.add_node(name, node)
    graph.add_edge(START, "step")
    graph.add_edge("step", "edit")
    graph.add_edge("edit", "again")
    app = graph.compile(checkpointer=saver)
    app.invoke({"messages": [HumanMessage("a", id="a"), AIMessage("b", id="b")], "n": 0},
               {"configurable": {"thread_id": "edit"}})
    frame = assert_same_as_public_walk(saver, "edit")
    assert frame["content"].tolist() == ["replaced", "added", "new", "added"]
    assert frame["step"].tolist()[0] == 0  # a message replaced by id keeps the step that first wrote its id

    wiper = StateGraph(State)
    wiper.add_node("step", step)
    wiper.add_node("wipe", wipe)
    wiper.add_edge(START, "step")
    wiper.add_edge("step", "wipe")
    wiper.compile(checkpointer=saver).invoke({"messages": [HumanMessage("gone")], "n": 0},
                                             {"configurable": {"thread_id": "wipe"}})
    assert assert_same_as_public_walk(saver, "wipe")["content"].tolist() == ["fresh start"]


def test_interrupted_parallel_branch_then_resumed(saver: Any) -> None:
    def quick(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", id="ask", tool_calls=[
            {"name": "delete_file", "args": {"path": "/tmp/x"}, "id": "d1"}])]}

    def approve(state: State) -> dict[str, Any]:
        answer = interrupt({"question": "delete /tmp/x?"})
        return {"messages": [ToolMessage(content=f"approved={answer}", tool_call_id="d1")]}

    graph = StateGraph(State)
    graph.add_node("quick", quick)
    graph.add_node("approve", approve)
    graph.add_edge(START, "quick")
    graph.add_edge(START, "approve")  # both in one superstep: quick's writes wait, filed, while approve interrupts
    app = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "hitl"}}
    app.invoke({"messages": [HumanMessage("clean up", id="u1")], "n": 0}, config)
    paused = assert_same_as_public_walk(saver, "hitl")
    assert paused["lc_id"].tolist() == ["u1"]  # quick's pending write is in no state yet
    assert frames.tool_calls(saver, session="hitl").empty
    app.invoke(Command(resume=True), config)
    done = assert_same_as_public_walk(saver, "hitl")
    assert sorted(done["role"]) == ["assistant", "tool", "user"] and done["step"].tolist()[1:] == [1, 1]
    assert frames.tool_calls(saver, session="hitl")["output"].tolist() == ["approved=True"]


def test_subgraph_thread(saver: Any) -> None:
    class Inner(TypedDict):
        messages: Annotated[list[Any], add_messages]

    def inner_node(state: Inner) -> dict[str, Any]:
        answer = interrupt("go on?")
        return {"messages": [AIMessage(content=f"inner says {answer}")]}

    inner = StateGraph(Inner)
    inner.add_node("inner_node", inner_node)
    inner.add_edge(START, "inner_node")
    outer = StateGraph(Inner)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    graph = outer.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "nested"}}
    graph.invoke({"messages": [{"role": "user", "content": "hi"}]}, config)
    graph.invoke(Command(resume="yes"), config)
    assert assert_same_as_public_walk(saver, "nested")["content"].tolist() == ["hi", "inner says yes"]


def test_update_state_is_read_and_a_fork_falls_back(saver: Any) -> None:
    graph = _loop_graph(saver, 3)
    config = {"configurable": {"thread_id": "upd"}}
    graph.invoke({"messages": [HumanMessage("u", id="u")], "n": 0}, config)
    graph.update_state(config, {"messages": [AIMessage("from update", id="up")]})
    graph.update_state(config, {"messages": [AIMessage("id-less update")]})
    assert assert_same_as_public_walk(saver, "upd")["content"].tolist()[-2:] == ["from update", "id-less update"]
    older = list(graph.get_state_history(config))[3].config
    graph.update_state(older, {"messages": [AIMessage("forked", id="f")]})  # the history is now a tree
    assert assert_same_as_public_walk(saver, "upd", fast=False)["content"].tolist()[-1] == "forked"


def test_another_reducer_falls_back(saver: Any) -> None:
    class Plain(TypedDict):
        messages: Annotated[list[Any], operator.add]  # keeps id-less messages without ids: not add_messages

    graph = StateGraph(Plain)
    graph.add_node("a", lambda state: {"messages": [AIMessage("plain")]})
    graph.add_edge(START, "a")
    graph.compile(checkpointer=saver).invoke({"messages": [HumanMessage("x")]}, {"configurable": {"thread_id": "p"}})
    assert assert_same_as_public_walk(saver, "p", fast=False)["content"].tolist() == ["x", "plain"]


def test_threads_frame_equals_the_public_one(saver: Any) -> None:
    for thread in ("a", "b"):
        _loop_graph(saver, 3).invoke({"messages": [], "n": 0}, {"configurable": {"thread_id": thread}})
    reader = readers.reader_for(saver)
    assert reader is not None and reader.all_points() is not None
    seen = lg._threads_seen(saver)
    assert lg._points_seen(reader.all_points() or {}) == seen
    assert frames.threads(saver)["thread_id"].tolist() == ["b", "a"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_thread_is_read_in_time_linear_in_its_steps(kind: str, tmp_path: Any) -> None:
    """Bytes and calls the saver's serde decodes to build the frames: linear in the steps (the public walk decodes
    every checkpoint's whole state, n²/2 messages)."""
    cost: dict[int, tuple[int, int]] = {}
    for steps in (10, 40):
        serde = CountingSerde()
        for saver in make_saver(kind, tmp_path, serde):
            _loop_graph(saver, steps).invoke({"messages": [], "n": 0},
                                             {"configurable": {"thread_id": "t"}, "recursion_limit": steps + 10})
            serde.calls = serde.bytes = 0
            assert len(frames.session_messages(saver, "t")) == steps
            assert len(frames.tool_calls(saver)) == 0  # every thread, listed then read
            cost[steps] = (serde.calls, serde.bytes)
    calls_ratio, bytes_ratio = cost[40][0] / cost[10][0], cost[40][1] / cost[10][1]
    assert calls_ratio < 4.5 and bytes_ratio < 4.5, cost  # four times the steps: about four times the work


@pytest.mark.parametrize("kind", KINDS)
def test_every_thread_is_decoded_once(kind: str, tmp_path: Any) -> None:
    """``tool_calls(checkpointer)`` (no thread) lists the threads without decoding their states, then reads each:
    it decodes what reading each thread by name decodes, not that twice."""
    serde = CountingSerde()
    for saver in make_saver(kind, tmp_path, serde):
        for thread in ("a", "b"):
            _loop_graph(saver, 8, text="x" * 1000).invoke({"messages": [], "n": 0},
                                                          {"configurable": {"thread_id": thread}})
        serde.bytes = 0
        by_name = len(frames.tool_calls(saver, session="a")) + len(frames.tool_calls(saver, session="b"))
        named = serde.bytes
        serde.bytes = 0
        assert len(frames.tool_calls(saver)) == by_name
        assert len(frames.session_messages(saver)) == 16
        everything = serde.bytes
    # two frames, each thread read once per frame, plus the listing (checkpoint heads, no state): about 2x; listing
    # threads through list(None) decoded every state once more per frame (4x)
    assert everything <= 2.5 * named, (everything, named)


def test_checkpoint_history_of_an_in_memory_thread_is_read_in_linear_time() -> None:
    cost: dict[int, int] = {}
    for steps in (10, 40):
        serde = CountingSerde()
        saver = InMemorySaver(serde=serde)
        _loop_graph(saver, steps).invoke({"messages": [], "n": 0},
                                         {"configurable": {"thread_id": "t"}, "recursion_limit": steps + 10})
        serde.bytes = 0
        history = frames.checkpoint_history(saver, "t")
        assert history["n_messages"].tolist() == [0, 0, *range(1, steps + 1)]
        assert [v.get("n") for v in history["values"]] == [None, *range(steps + 1)]
        cost[steps] = serde.bytes
    assert cost[40] / cost[10] < 4.5, cost  # four times the steps, about four times the bytes (the walk: ~10x)


class PickleSerde:
    """A serializer whose bytes are not msgpack (type tag "pickle"): the SQLite reader cannot parse a checkpoint's
    head out of them, so it hands the thread to the public walk; InMemorySaver's reader only calls the serde."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        import pickle

        return "pickle", pickle.dumps(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        import pickle

        assert data[0] == "pickle"
        return pickle.loads(data[1])  # noqa: S301 - the test's own bytes


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_serializer_the_reader_cannot_parse(kind: str, tmp_path: Any) -> None:
    for saver in make_saver(kind, tmp_path, PickleSerde()):
        _loop_graph(saver, 3).invoke({"messages": [], "n": 0}, {"configurable": {"thread_id": "p"}})
        frame = assert_same_as_public_walk(saver, "p", fast=kind == "memory")
        assert frame["content"].str.startswith("step").all() and len(frame) == 3
        assert frames.threads(saver)["n_checkpoints"].tolist() == [5]


# ---------------------------------------------------------------------- LangGraph's internals changed


def _old_database(path: Any) -> sqlite3.Connection:
    """A SqliteSaver database of a thread as written before ``writes.task_path`` existed, to open read-only (then
    setup() cannot add the column and the saver reads the writes without it). The connection returned keeps the
    WAL database's shared-memory file, which a read-only connection cannot create."""
    conn = sqlite3.connect(path, check_same_thread=False)
    _loop_graph(SqliteSaver(conn), 3).invoke({"messages": [], "n": 0}, {"configurable": {"thread_id": "old"}})
    conn.executescript("""
        CREATE TABLE writes_old (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL,
            type TEXT, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
        INSERT INTO writes_old SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value
            FROM writes;
        DROP TABLE writes;
        ALTER TABLE writes_old RENAME TO writes;
    """)
    return conn


def test_an_old_read_only_sqlite_database_is_read_fast_on_the_first_call(tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.db"
    writer = _old_database(path)
    walked = lg._walk_rows(SqliteSaver(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)),
                           "old", "messages")
    saver = SqliteSaver(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))

    def no_walk(*args: Any) -> Any:
        raise AssertionError("the reader should have answered")

    monkeypatch.setattr(lg, "_walk_rows", no_walk)
    got = frames.session_messages(saver, "old")  # the first call on this saver: setup() has not run yet
    pd.testing.assert_frame_equal(got, lg._messages_frame(*walked, thread_id="old", zone=lg.frame_zone(None)))
    assert got["content"].tolist() == ["step 0 ", "step 1 ", "step 2 "]
    assert saver._has_task_path is False  # the old read-only database this test means
    writer.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_saver_whose_langgraph_internals_changed_is_read_the_public_way(kind: str, tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    saver = next(make_saver(kind, tmp_path))
    _loop_graph(saver, 3).invoke({"messages": [], "n": 0}, {"configurable": {"thread_id": "t"}})
    zone = lg.frame_zone(None)
    walked = lg._walk_rows(saver, "t", "messages")
    # a LangGraph release without what the readers import (the savers' own modules bound it at their import)
    monkeypatch.delattr("langgraph.checkpoint.base.writes_sort_key")
    with pytest.raises(ImportError):
        readers.reader_for(saver).thread_log("t", "messages")  # type: ignore[union-attr]
    pd.testing.assert_frame_equal(frames.session_messages(saver, "t"),
                                  lg._messages_frame(*walked, thread_id="t", zone=zone))
    pd.testing.assert_frame_equal(frames.tool_calls(saver, session="t"),
                                  lg._tool_frame(*walked, thread_id="t", zone=zone))



def test_a_checkpoint_without_a_step_has_no_last_step_as_in_the_public_walk(saver: Any) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    saver.put({"configurable": {"thread_id": "bare", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
    _loop_graph(saver, 1).invoke({"messages": [], "n": 0}, {"configurable": {"thread_id": "run"}})
    reader = readers.reader_for(saver)
    assert reader is not None
    found = reader.all_points()
    assert found is not None and lg._points_seen(found) == lg._threads_seen(saver)
    frame = frames.threads(saver).set_index("thread_id")
    assert frame.loc["bare", "last_step"] is pd.NA and frame.loc["run", "last_step"] == 1
