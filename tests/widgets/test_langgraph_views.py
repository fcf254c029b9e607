"""MemoryInspector and ToolTimeline over a LangGraph agent's memory (``widgets/_langgraph_source.py``).

Every source here is real: a graph built by ``create_agent`` with agentmem_nb's offline model (which makes real tool
calls), run against ``InMemorySaver``, ``SqliteSaver`` (``PostgresSaver`` under ``-m postgres``) and an
``InMemoryStore`` its tools write to. What the widgets show is compared with what :mod:`agentmem_nb.frames` returns
for the same objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspector_testlib import table_rows
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from agentmem_nb import frames
from agentmem_nb.agent import OfflineChatModel
from agentmem_nb.store import MAX_WINDOW_SIDE
from agentmem_nb.widgets import LangGraphSource, MemoryInspector, ToolTimeline
from agentmem_nb.widgets._langgraph_source import READ_ONLY
from langgraph_testlib import KINDS, make_saver

NOTES = ("alice", "notes")


@tool
def remember_note(note: str, runtime: ToolRuntime) -> str:
    """Keep a durable note about the user."""
    key = f"note-{len(runtime.store.search(NOTES, limit=1000)) + 1}"
    runtime.store.put(NOTES, key, {"note": note, "kind": "preference"})
    return f"saved {key}"


@tool
def search_session(keyword: str, runtime: ToolRuntime) -> str:
    """Search the notes for a keyword."""
    hits = [i for i in runtime.store.search(NOTES, limit=1000) if keyword.casefold() in i.value["note"].casefold()]
    return "\n".join(f"#{n} note: {i.value['note']}" for n, i in enumerate(hits, 1)) or "no hits"


@pytest.fixture(params=KINDS)
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from make_saver(request.param, tmp_path)


def _agent(saver: Any, store: Any, **options: Any) -> Any:
    return create_agent(OfflineChatModel(), tools=[remember_note, search_session], checkpointer=saver, store=store,
                        **options)


def _chat(agent: Any, thread: str, text: str) -> None:
    agent.invoke({"messages": [{"role": "user", "content": text}]}, {"configurable": {"thread_id": thread}})


@pytest.fixture
def lg_store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def agent(saver: Any, lg_store: InMemoryStore) -> Any:
    agent = _agent(saver, lg_store)
    _chat(agent, "morning", "I prefer green tea in the morning")
    _chat(agent, "morning", "I prefer oat milk, not cow's milk")
    _chat(agent, "evening", "What did I say about tea?")
    return agent


# ---------------------------------------------------------------------------------------------------- inspector


def test_the_threads_are_the_sessions(agent: Any, saver: Any) -> None:
    inspector = MemoryInspector(agent)
    assert inspector.layer == "sessions" and inspector.user_id is None
    every = frames.session_messages(saver)
    assert inspector.frame["content"].tolist() == every["content"].tolist()
    assert sorted(set(inspector.frame["session_id"])) == ["evening", "morning"]
    assert len(table_rows(inspector.table)) == len(every)
    assert [v for _, v in inspector.scope_picker.options] == ["", *frames.threads(saver)["thread_id"]]
    inspector.select_scope("morning")
    assert inspector.frame.equals(frames.session_messages(saver, "morning"))
    assert f"{type(saver).__name__} + InMemoryStore" in inspector.caption.value


def test_search_is_the_exact_substring_search_and_a_hit_opens_its_window(agent: Any, saver: Any) -> None:
    inspector = MemoryInspector(agent, before=1, after=1)
    hits = inspector.search("TEA")
    every = frames.session_messages(saver)
    expected = every[every["content"].str.casefold().str.contains("tea", regex=False)]
    assert inspector.total == len(expected) == len(hits) and inspector.search_mode == "keyword"
    assert [(h.key, h.anchor) for h in hits] == list(zip(expected["session_id"], expected["message_id"]))
    # the evening's tool answer: a window of its thread only, positional, the anchor row chosen
    chosen = next(i for i, h in enumerate(hits) if h.key == "evening" and "note:" in h.label)
    window = inspector.select_hit(chosen)
    thread = frames.session_messages(saver, "evening")
    anchor = hits[chosen].anchor
    assert window.frame["message_id"].tolist() == [anchor - 1, anchor, anchor + 1]
    assert (window.frame["session_id"] == "evening").all()
    assert window.frame["content"].iloc[window.anchor_row] == thread["content"].iloc[anchor - 1]
    inspector.widen(before=5)  # clamped at the thread's first message
    assert inspector.window is not None and inspector.window.frame["message_id"].iloc[0] == 1
    inspector.set_window(before=MAX_WINDOW_SIDE + 50, after=MAX_WINDOW_SIDE + 50)
    assert inspector.window is not None and inspector.before == MAX_WINDOW_SIDE
    assert inspector.window.frame["message_id"].tolist() == thread["message_id"].tolist()
    assert len(table_rows(inspector.window_table)) == len(thread)


def test_a_window_whose_thread_was_deleted_says_so_after_a_refresh(agent: Any, saver: Any) -> None:
    inspector = MemoryInspector(agent)
    inspector.search("oat")
    inspector.select_hit(0)
    saver.delete_thread("morning")
    inspector.refresh()
    assert inspector.window is not None and inspector.window.anchor_row == -1
    assert "thread 'morning' has no message #5" in inspector.window.reason
    assert "no message #5" in inspector.window_view.value
    assert set(inspector.frame["session_id"]) == {"evening"}


def test_an_empty_checkpointer_shows_empty_layers(lg_store: InMemoryStore) -> None:
    inspector = MemoryInspector(LangGraphSource(checkpointer=InMemorySaver(), store=lg_store))
    for layer in ("sessions", "tool_calls", "threads", "checkpoints", "store"):
        inspector.select_layer(layer)
        assert len(inspector.frame) == 0 and inspector.search("tea") == []
    assert inspector.errors == []
    assert len(ToolTimeline(InMemorySaver()).frame) == 0


def test_a_refresh_shows_the_new_turn_and_keeps_the_chosen_hit(agent: Any) -> None:
    inspector = MemoryInspector(agent)
    inspector.search("green")
    inspector.select_hit(0)
    chosen = inspector.window.hit if inspector.window is not None else None
    before = len(inspector.frame)
    _chat(agent, "evening", "I prefer green olives")
    inspector.refresh()
    assert len(inspector.frame) == before + 4  # the question, the call, its answer, the reply
    assert inspector.window is not None and inspector.window.hit.item == chosen.item  # type: ignore[union-attr]
    assert any("green olives" in h.label for h in inspector.hits)


def test_the_store_namespaces_are_a_layer(agent: Any, lg_store: InMemoryStore) -> None:
    lg_store.put(("bob", "facts"), "city", {"city": "Oslo"})
    inspector = MemoryInspector(agent, layer="store")
    assert inspector.frame.equals(frames.store_items(lg_store))
    options = [v for _, v in inspector.scope_picker.options]
    assert options == ["", "alice", "alice.notes", "bob", "bob.facts"]
    inspector.select_scope("alice.notes")
    assert inspector.frame["key"].tolist() == ["note-1", "note-2"]
    hits = inspector.search("OAT MILK")  # searched in the values, as their text
    assert inspector.total == 1 and "note-2" in hits[0].label
    window = inspector.select_hit(0)
    assert window.frame["key"].iloc[window.anchor_row] == "note-2"
    inspector.select_scope("bob")
    assert inspector.search("facts") and inspector.total == 1  # the namespace is searched too


def test_a_store_alone_is_its_layer(lg_store: InMemoryStore) -> None:
    lg_store.put(NOTES, "n1", {"note": "likes tea"})
    inspector = MemoryInspector(lg_store)
    assert inspector.layer == "store" and list(inspector.data.layers) == ["store"]
    assert [v for _, v in inspector.layer_picker.options] == ["store"]
    with pytest.raises(ValueError, match="unknown layer 'sessions'"):
        inspector.select_layer("sessions")
    assert inspector.frame["key"].tolist() == ["n1"]


@pytest.mark.parametrize("layer, expected", [
    ("tool_calls", lambda saver: frames.tool_calls(saver)),
    ("threads", lambda saver: frames.threads(saver)),
])
def test_the_other_checkpointer_layers_are_their_frames(agent: Any, saver: Any, layer: str, expected: Any) -> None:
    inspector = MemoryInspector(LangGraphSource(checkpointer=saver))
    inspector.select_layer(layer)
    want = expected(saver)
    assert inspector.frame[["session_id" if layer == "tool_calls" else "thread_id"]].equals(
        want[["session_id" if layer == "tool_calls" else "thread_id"]])
    assert len(inspector.frame) == len(want)


def test_a_chosen_thread_row_stays_chosen_when_a_newer_thread_moves_it(agent: Any) -> None:
    inspector = MemoryInspector(agent, layer="threads")
    inspector.search("morning")
    inspector.select_hit(0)
    assert inspector.window is not None and inspector.window.hit.anchor == 1  # threads are newest first
    _chat(agent, "night", "I prefer chamomile")
    inspector.refresh()
    assert inspector.frame["thread_id"].tolist()[0] == "night"
    window = inspector.window
    assert window is not None and window.frame["thread_id"].iloc[window.anchor_row] == "morning"


def test_the_checkpoints_layer_is_each_threads_history(agent: Any, saver: Any) -> None:
    inspector = MemoryInspector(saver, layer="checkpoints", scope="evening")
    assert inspector.frame["checkpoint_id"].tolist() == frames.checkpoint_history(saver, "evening")[
        "checkpoint_id"].tolist()
    inspector.select_scope(None)
    assert len(inspector.frame) == sum(len(frames.checkpoint_history(saver, t)) for t in ("morning", "evening"))


def test_a_langgraph_source_is_read_only_and_says_why(agent: Any, saver: Any) -> None:
    inspector = MemoryInspector(agent)
    assert READ_ONLY.split(":")[0] in inspector.caption.value
    assert inspector.editor.box.layout.display == "none"
    assert inspector.user_picker.layout.display == "none"
    inspector.select_layer("store")
    assert inspector.editor.box.layout.display == "none"
    with pytest.raises(ValueError, match="read only"):
        inspector.edit_note(1, "x")
    with pytest.raises(ValueError, match="read only"):
        inspector.redact_message("morning", 1, reason="x")
    with pytest.raises(ValueError, match="no users"):
        inspector.select_user("alice")
    with pytest.raises(ValueError, match="no users"):
        MemoryInspector(agent, user_id="alice")
    assert len(frames.session_messages(saver, "morning")) == 8  # nothing was written


def test_what_is_not_a_memory_is_refused_by_name(saver: Any) -> None:
    bare = create_agent(OfflineChatModel(), tools=[remember_note])  # no checkpointer, no store
    with pytest.raises(ValueError, match="compiled without a checkpointer or a store"):
        MemoryInspector(bare)
    with pytest.raises(TypeError, match="got dict"):
        MemoryInspector({"messages": []})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got str"):
        LangGraphSource(checkpointer="not a saver")
    with pytest.raises(ValueError, match="needs the graph's checkpointer"):
        ToolTimeline(InMemoryStore())


# ---------------------------------------------------------------------------------------------------- timeline


def test_the_timeline_lists_the_graphs_tool_calls(agent: Any, saver: Any) -> None:
    timeline = ToolTimeline(agent)
    calls = frames.tool_calls(saver)
    assert timeline.frame["call_id"].tolist() == calls["call_id"].tolist()
    assert timeline.frame["tool"].tolist() == ["remember_note", "remember_note", "search_session"]
    assert timeline.chart.svg.count('class="amn-timeline-mark') == len(calls)
    assert len(table_rows(timeline.table)) == len(calls)
    assert [v for _, v in timeline.session_filter.options] == ["", "evening", "morning"]
    assert timeline.user_picker.layout.display == "none" and timeline.source_picker.layout.display == "none"
    assert repr(timeline).startswith("ToolTimeline(langgraph=")


def test_the_timeline_filters_work_on_the_checkpointers_calls(agent: Any, saver: Any) -> None:
    timeline = ToolTimeline(saver)
    assert timeline.filter(tools="search_session")["session_id"].tolist() == ["evening"]
    assert timeline.filter(session="morning")["tool"].tolist() == ["remember_note", "remember_note"]
    assert timeline.filter(keyword="OAT")["input"].tolist() == [{"note": "User prefers oat milk, not cow's milk"}]
    assert len(timeline.filter(status="error")) == 0
    day = timeline.all_calls["ts"].iloc[0].date()
    assert len(timeline.filter(start=day, end=day)) == 3
    timeline.clear_filters()
    assert len(timeline.frame) == 3
    with pytest.raises(ValueError, match="no users"):
        timeline.select_user("alice")
    with pytest.raises(ValueError, match="from its threads only"):
        timeline.set_source("log")


def test_the_trace_of_a_call_is_the_graph_run_timed_by_its_checkpoints(agent: Any, saver: Any) -> None:
    timeline = ToolTimeline(agent)
    index = timeline.frame["tool"].tolist().index("search_session")
    trace = timeline.show_trace(index)
    assert timeline.trace_area.children == (trace,)
    data = trace.data
    assert data is not None and data.status == "ok"
    assert [(s.kind, s.label) for s in data.spans] == [("model", "model step 1"), ("tool", "search_session"),
                                                       ("model", "model step 2")]
    history = frames.checkpoint_history(saver, "evening")
    at = dict(zip(history["step"], history["ts"]))
    first_user = frames.session_messages(saver, "evening").iloc[0]
    zero = at[int(first_user["step"]) - 1]  # the run's input checkpoint
    call = timeline.frame.iloc[index]
    tool_span = data.spans[1]
    tool_step = int(call["step"]) + 1  # the tools superstep follows the model step that asked
    assert tool_span.start_ms == pytest.approx((at[tool_step - 1] - zero).total_seconds() * 1000)
    assert tool_span.end_ms == pytest.approx((at[tool_step] - zero).total_seconds() * 1000)
    assert tool_span.tool is not None and tool_span.tool.output == call["output"]
    assert tool_span.tool.input == {"keyword": "tea"}
    # the first model step was given the question; the second, its own call and the tool's answer
    assert [m.role for m in data.spans[0].given] == ["human"]
    assert [m.role for m in data.spans[2].given] == ["ai", "tool"]
    assert data.entry.user_message == "What did I say about tea?"
    assert "message #2" in trace.view.value and "log #" not in trace.view.value
    assert "memory context" not in trace.view.value  # the checkpointer keeps no system prompt to show


def test_an_interrupted_run_shows_its_unanswered_call_as_stopped(saver: Any, lg_store: InMemoryStore) -> None:
    agent = _agent(saver, lg_store, interrupt_before=["tools"])
    _chat(agent, "paused", "I prefer jasmine tea")
    timeline = ToolTimeline(agent)
    assert timeline.frame["status"].tolist() == ["pending"]
    data = timeline.show_trace(0).data
    assert data is not None and data.status == "cancelled"
    assert [s.kind for s in data.spans] == ["model"]
    agent.invoke(None, {"configurable": {"thread_id": "paused"}})  # resume: the tool runs, the reply follows
    timeline.refresh()
    assert timeline.frame["status"].tolist() == ["success"]
    resumed = timeline.show_trace(0).data
    assert resumed is not None and resumed.status == "ok"
    assert [s.kind for s in resumed.spans] == ["model", "tool", "model"]


def test_the_views_show_times_in_the_sources_zone(agent: Any, saver: Any) -> None:
    from zoneinfo import ZoneInfo

    source = LangGraphSource(checkpointer=saver, zone=ZoneInfo("Asia/Tokyo"))
    inspector, timeline = MemoryInspector(source), ToolTimeline(source)
    assert "times in Asia/Tokyo" in inspector.caption.value and "times in Asia/Tokyo" in timeline.summary.value
    assert str(inspector.frame["ts"].dt.tz) == "Asia/Tokyo" and str(timeline.frame["ts"].dt.tz) == "Asia/Tokyo"
    assert isinstance(timeline.frame["ts"].iloc[0], pd.Timestamp)


def test_a_followed_chats_turn_refreshes_a_langgraph_view(agent: Any, tmp_path: Path) -> None:
    from agentmem_nb import MemoryStore
    from agentmem_nb.agent import ChatService, LLMConfig
    from agentmem_nb.widgets import ChatWidget

    chat = ChatWidget(ChatService(MemoryStore(tmp_path / "memory"), config=LLMConfig()), user_id="alice")
    inspector, timeline = MemoryInspector(agent), ToolTimeline(agent)
    inspector.follow(chat)
    timeline.follow(chat)
    _chat(agent, "night", "I prefer chamomile")  # the graph ran: the views have not looked yet
    assert "night" not in set(inspector.frame["session_id"])
    chat.send("hello")
    assert inspector.auto_refreshes == 1 and timeline.auto_refreshes == 1
    assert inspector.last_error is None and timeline.last_error is None
    assert "night" in set(inspector.frame["session_id"]) and "night" in set(timeline.frame["session_id"])
    assert inspector.user_id is None  # the chat's user is not the graph's


def test_our_stores_views_do_not_import_langgraph(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; from agentmem_nb import MemoryStore; from agentmem_nb.widgets import MemoryInspector, "
            "ToolTimeline; s = MemoryStore(sys.argv[1]); s.user('a').append('s1', 'user', 'hi'); "
            "MemoryInspector(s); ToolTimeline(s); print(sorted(m for m in sys.modules if m.startswith('langgraph')))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "memory")], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]", done.stdout
