"""Turns of one session run one at a time; the per-session lock map stays bounded in a long-lived kernel; a stream
that is abandoned (stopped early, kept, never closed) cannot block its session silently."""

from __future__ import annotations

import collections
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import agentmem_nb.agent.service as agent_service
from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel, TurnEvent

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
    for n in range(30):
        svc.turn("u1", f"s{n}", "hello")
        svc.turn(f"user{n}", "s0", "hello")
    assert len(svc._session_locks) == 0, "no entry outlives its turns"

    events = svc.stream_turn("u1", "s3", QUESTION)
    next(events)
    assert list(svc._session_locks) == [("u1", "s3")], "a paused stream keeps its session's entry"
    events.close()
    assert len(svc._session_locks) == 0


def test_turns_of_one_session_never_overlap_while_agents_are_evicted(store: MemoryStore,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_service, "MAX_CACHED_GRAPHS", 2)  # agents are evicted and rebuilt under the turns
    active: collections.Counter[tuple[str, str]] = collections.Counter()
    overlaps: list[tuple[str, str]] = []
    guard = threading.Lock()
    original = agent_service._Turn.run

    def tracked(turn: agent_service._Turn, *, stream_tokens: bool) -> Iterator[TurnEvent]:
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

    monkeypatch.setattr(agent_service._Turn, "run", tracked)
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
    assert len(svc._session_locks) == 0
