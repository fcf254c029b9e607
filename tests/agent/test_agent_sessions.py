"""Turns of one session run one at a time; the per-session lock map stays bounded in a long-lived kernel; a stream
that is abandoned (stopped early, kept, never closed) cannot block its session silently."""

from __future__ import annotations

import collections
import contextlib
import gc
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import agentmem_nb.agent.service as agent_service
import agentmem_nb.agent.turn as agent_turn
from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, MemoryTools, OfflineChatModel, TurnEvent

QUESTION = "What did I tell you about my sister?"
JOIN = 30.0  # seconds: only a guard against hanging the suite when the behaviour under test is broken


def _in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Run ``fn`` in a daemon thread; the dict gets ``value`` or ``error`` when it ends."""
    out: dict[str, Any] = {}

    def body() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, out


def _finished(thread: threading.Thread) -> bool:
    thread.join(JOIN)
    return not thread.is_alive()


# ---------------------------------------------------------------------------------------------- item: bounded map


def test_the_lock_map_keeps_only_sessions_with_a_live_turn(svc: ChatService) -> None:
    for n in range(12):
        svc.turn("u1", f"s{n}", "hello")
        svc.turn(f"user{n}", "s0", "hello")
    assert len(svc._sessions) == 0, "no entry outlives its turns"

    events = svc.stream_turn("u1", "s3", QUESTION)
    next(events)
    assert list(svc._sessions) == [("u1", "s3")], "a paused stream keeps its session's entry"
    events.close()
    assert len(svc._sessions) == 0


def test_turns_of_one_session_never_overlap_while_agents_are_evicted(store: MemoryStore,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_service, "MAX_CACHED_GRAPHS", 2)  # agents are evicted and rebuilt under the turns
    active: collections.Counter[tuple[str, str]] = collections.Counter()
    overlaps: list[tuple[str, str]] = []
    guard = threading.Lock()
    original = agent_turn.Turn.run

    def tracked(turn: agent_turn.Turn, *, stream_tokens: bool) -> Iterator[TurnEvent]:
        key = (turn.user.user_id, turn.session_id)
        with guard:
            active[key] += 1
            if active[key] > 1:
                overlaps.append(key)
        try:
            time.sleep(0.001)  # widen the window a second turn of the session would need to slip in
            yield from original(turn, stream_tokens=stream_tokens)
        finally:
            with guard:
                active[key] -= 1

    monkeypatch.setattr(agent_turn.Turn, "run", tracked)
    svc = ChatService(store, model=OfflineChatModel())
    sessions = [f"s{n}" for n in range(5)]

    def chat(worker: int) -> None:
        for i in range(4):
            for sid in sessions[worker:] + sessions[:worker]:
                if (worker + i) % 2:
                    list(svc.stream_turn("u1", sid, f"w{worker} says {i}"))
                else:
                    svc.turn("u1", sid, f"w{worker} says {i}")

    workers = [_in_thread(lambda w=w: chat(w)) for w in range(4)]
    for thread, out in workers:
        assert _finished(thread) and "error" not in out, out.get("error")

    assert overlaps == []
    mem = store.user("u1")
    for sid in sessions:
        messages = mem.session(sid).messages()
        assert [m.role for m in messages] == ["user", "assistant"] * 16, "each turn's pair is written together"
    assert len(mem.log.entries()) == 80
    assert len(svc._sessions) == 0


# ---------------------------------------------------------------------------------------------- item: abandoned streams


def _seed(svc: ChatService, sid: str = "s1") -> int:
    svc.turn("u1", sid, "My sister Chloé lives in Lyon.")
    return 2


def _assert_abandoned(store: MemoryStore, sid: str, before: int, *, ran: list[tuple[str, str]]) -> None:
    """The abandoned turn is recorded like a failed one: user message kept, log line with the error, no reply."""
    mem = store.user("u1")
    session = mem.session(sid).messages()
    assert len(session) == before + 1 and session[-1].role == "user" and session[-1].content == QUESTION
    daily = mem.daily(session[-1].day or mem.days()[-1]).messages()
    assert daily[-1].role == "user" and daily[-1].content == QUESTION
    entry = mem.log.tail(1)[0]
    assert entry.user_message == QUESTION and entry.assistant_message_id is None
    assert entry.error is not None and "abandoned" in entry.error
    assert entry.assistant_reply == f"⚠️ {entry.error}"
    assert [(c.name, c.status) for c in entry.tool_calls] == ran
    assert len(mem.log.entries()) == before // 2 + 1, "one log line for the abandoned turn, no more"
    assert mem.conversations.get(sid).title == "My sister Chloé lives in Lyon."
    assert mem.problems() == []


def test_a_kept_stream_makes_a_same_thread_turn_fail_at_once(svc: ChatService, store: MemoryStore) -> None:
    before = _seed(svc)

    def scenario() -> agent_service.SessionBusy | None:
        events = svc.stream_turn("u1", "s1", QUESTION)
        for _event in events:
            break  # stop reading, keep the generator: its turn is still open
        try:
            svc.turn("u1", "s1", "Anything new?")
        except agent_service.SessionBusy as exc:
            return exc
        finally:
            events.close()
        return None

    thread, out = _in_thread(scenario)  # a thread only so that a deadlock fails the test instead of hanging it

    assert _finished(thread), "the second turn waited for a stream its own thread holds"
    busy = out["value"]
    assert isinstance(busy, agent_service.SessionBusy) and busy.session_id == "s1" and busy.user_id == "u1"
    text = str(busy)
    assert "'s1'" in text and "'u1'" in text and "stopped after 1 event(s)" in text and "close()" in text
    _assert_abandoned(store, "s1", before, ran=[("search_session", "error")])  # started, never run
    assert svc.turn("u1", "s1", QUESTION).error is None
    # The exception's traceback (in a reference cycle with the thread's frames) keeps the refused turn's frame,
    # and so its free slot, alive until the cycle collector runs.
    del busy, out
    gc.collect()
    assert len(svc._sessions) == 0


def test_another_thread_gets_a_clear_error_after_lock_timeout(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel(), lock_timeout=0.2)
    before = _seed(svc)
    events = svc.stream_turn("u1", "s1", QUESTION)
    kinds = [next(events).kind, next(events).kind]
    assert kinds == ["tool_started", "tool_finished"]

    thread, out = _in_thread(lambda: svc.turn("u1", "s1", "Anything new?"))

    assert _finished(thread)
    busy = out.get("error")
    assert isinstance(busy, agent_service.SessionBusy), out
    assert "waited 0.2 s" in str(busy) and "stopped after 2 event(s)" in str(busy) and "lock_timeout" in str(busy)
    assert len(store.user("u1").session("s1")) == before + 1, "the refused turn wrote nothing"
    events.close()
    _assert_abandoned(store, "s1", before, ran=[("search_session", "success")])  # the window was never asked for


def test_a_waiting_turn_goes_on_once_the_stream_is_closed(svc: ChatService, store: MemoryStore) -> None:
    before = _seed(svc)
    events = svc.stream_turn("u1", "s1", QUESTION)
    next(events)

    thread, out = _in_thread(lambda: svc.turn("u1", "s1", "Anything new?"))
    for _ in range(10_000):  # until the other thread is blocked on the session (it cannot get further)
        frame = sys._current_frames().get(thread.ident)
        names = set()
        while frame is not None:
            names.add(frame.f_code.co_name)
            frame = frame.f_back
        if "claim" in names or not thread.is_alive():
            break
        time.sleep(0.001)
    assert thread.is_alive() and "value" not in out, "it must wait while the stream is open"
    events.close()

    assert _finished(thread) and "error" not in out, out.get("error")
    assert out["value"].error is None
    roles = [(m.role, m.content) for m in store.user("u1").session("s1").messages()[before:]]
    assert roles[:2] == [("user", QUESTION), ("user", "Anything new?")] and roles[2][0] == "assistant"


def test_a_turn_inside_a_turn_of_the_same_session_is_refused(store: MemoryStore,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    inner: list[BaseException] = []
    search = MemoryTools.search_session

    def reentrant(self: MemoryTools, args: dict, **kwargs: Any) -> str:
        try:  # a tool (langgraph runs it in a pool thread) that starts a turn of its own session
            svc.turn("u1", "s1", "from inside a tool")
        except agent_service.SessionBusy as exc:
            inner.append(exc)
        return search(self, args, **kwargs)

    monkeypatch.setattr(MemoryTools, "search_session", reentrant)
    svc = ChatService(store, model=OfflineChatModel())
    _seed(svc)
    thread, out = _in_thread(lambda: svc.turn("u1", "s1", QUESTION))

    assert _finished(thread), "a turn waited for itself"
    assert out["value"].error is None and "Lyon" in out["value"].reply
    (busy,) = inner
    assert "this thread is already running a turn of it (or one of its tools)" in str(busy)
    assert [m.content for m in store.user("u1").session("s1").messages()].count("from inside a tool") == 0


def test_a_dropped_stream_frees_its_session_at_once(svc: ChatService, store: MemoryStore) -> None:
    before = _seed(svc)
    for _event in svc.stream_turn("u1", "s1", QUESTION):
        break  # nothing else refers to the stream: CPython finalises (closes) it here
    _assert_abandoned(store, "s1", before, ran=[("search_session", "error")])
    assert svc.turn("u1", "s1", QUESTION).error is None


def test_a_stream_read_to_the_end_then_closed_is_logged_once(svc: ChatService, store: MemoryStore) -> None:
    before = _seed(svc)
    events = svc.stream_turn("u1", "s1", QUESTION)
    for event in events:
        if event.kind == "done":
            break  # the turn is complete; the generator is paused on its last event
    events.close()
    mem = store.user("u1")
    assert len(mem.log.entries()) == 2 and mem.log.tail(1)[0].error is None
    assert len(mem.session("s1")) == before + 2


def test_a_session_stays_locked_while_its_agent_is_evicted(store: MemoryStore,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_service, "MAX_CACHED_GRAPHS", 1)
    svc = ChatService(store, model=OfflineChatModel(), lock_timeout=0.2)
    svc.turn("u1", "held", "My sister Chloé lives in Lyon.")
    events = svc.stream_turn("u1", "held", QUESTION)
    next(events)  # the turn of "held" is open, paused at its first event
    for n in range(5):  # other sessions push the agent of "held" out of the cache
        svc.turn("u1", f"other{n}", "hello")
    assert ("u1", "held") not in svc._agents

    thread, out = _in_thread(lambda: svc.turn("u1", "held", "a second turn"))

    assert _finished(thread)
    assert isinstance(out.get("error"), agent_service.SessionBusy), out
    assert len(store.user("u1").session("held")) == 3, "the refused turn wrote nothing"
    events.close()
    assert svc.turn("u1", "held", "a second turn").error is None


# ---------------------------------------------------------------------------------------------- item: no turn state on the cached agent


def _turn_state_on(agent: object) -> list[str]:
    """Attributes (two levels down) of a cached session agent that hold something of one turn."""
    found = []
    for name, value in vars(agent).items():
        inner = vars(value) if hasattr(value, "__dict__") else {}
        for path, item in [(name, value), *((f"{name}.{k}", v) for k, v in inner.items())]:
            if type(item).__name__ in {"TurnScope", "TurnState", "_TurnRecord"}:
                found.append(path)
    return found


def test_the_cached_agent_holds_nothing_of_the_turn_in_progress(svc: ChatService) -> None:
    """The turn's scope and record travel with the graph call (its runtime context), so even mid-turn the
    per-session agent, shared by every turn of the session, carries none of them."""
    _seed(svc)
    with contextlib.closing(svc.stream_turn("u1", "s1", QUESTION)) as events:
        first = next(events)  # paused inside the turn, between the model's tool call and its result
        assert first.kind == "tool_started"
        assert _turn_state_on(svc._agents[("u1", "s1")]) == []
    result = svc.turn("u1", "s1", QUESTION)
    assert result.error is None and result.memory_items, "the tools still report what they found"


def test_the_graph_records_into_the_state_passed_with_the_call(svc: ChatService) -> None:
    """The runtime context is the only channel: a graph called by hand records into the TurnState it is given (the
    middleware's runs, the tools' retrieved messages), and called without one it still answers."""
    from langchain_core.messages import HumanMessage

    from agentmem_nb.agent.recorder import TurnState
    from agentmem_nb.agent.tools import TurnScope

    _seed(svc)
    graph = svc.graph("u1", "s1")
    state = TurnState(scope=TurnScope(day="2026-04-08"))
    out = graph.invoke({"messages": [HumanMessage(content=QUESTION)]}, context=state)
    assert "Lyon" in out["messages"][-1].text
    assert state.model_calls >= 2 and [run.name for run in state.runs.values()][:1] == ["search_session"]
    assert ("session", "s1", 1) in state.scope.retrieved

    bare = graph.invoke({"messages": [HumanMessage(content=QUESTION)]})
    assert "Lyon" in bare["messages"][-1].text
