"""Tool results are matched to the call that issued them even when a server reuses tool-call ids (``call_0`` in
every model step, as some OpenAI-compatible servers do): by the step (the AIMessage) that issued the call, then
by id and name within it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from agentmem_nb.testing.fake_openai import Reply, memory_policy, real_config

import agentmem_nb.agent.tools as agent_tools
from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, TurnEvent, TurnResult

FACT = "My sister Chloé lives in Lyon."
QUESTION = "What did I tell you about my sister?"


def _turn(svc: ChatService, sid: str, text: str, *, stream: bool) -> tuple[TurnResult, list[TurnEvent]]:
    if not stream:
        return svc.turn("u1", sid, text), []
    events = list(svc.stream_turn("u1", sid, text))
    assert events[-1].kind == "done" and events[-1].result is not None
    return events[-1].result, events


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_reused_ids_across_steps_keep_each_output_with_its_call(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                                stream: bool) -> None:
    fake_openai.policy = memory_policy("sister")
    fake_openai.reuse_ids = True
    svc = ChatService(store, config=real_config(fake_openai))
    sid = svc.new_conversation("u1")
    fact_id = svc.turn("u1", sid, FACT).user_message.message_id
    expected_search = agent_tools.MemoryTools(store.user("u1"), sid).search_session({"keyword": "sister"})

    result, events = _turn(svc, sid, QUESTION, stream=stream)

    assert result.error is None, result.error
    search, window = result.tool_calls
    assert search.id == window.id == "call_0", "the server reused the id"
    assert search.name == "search_session" and search.input == {"keyword": "sister"}
    assert search.output == expected_search, "the search keeps its own output, not the window's"
    assert window.name == "get_session_window" and window.input["message_id"] == fact_id
    assert window.output != search.output and FACT in window.output
    assert "Lyon" in result.reply
    # each call keeps its own run's duration: together they are the turn's tool time
    assert result.timings_ms["tools"] == pytest.approx(search.duration_ms + window.duration_ms, abs=0.01)

    stored = store.user("u1").session(sid).messages()[-1].tool_calls
    assert stored == result.tool_calls
    assert store.user("u1").log.tail(1)[0].tool_calls == result.tool_calls
    if stream:
        finished = [e.tool_call for e in events if e.kind == "tool_finished"]
        assert [(c.name, c.output) for c in finished] == [(c.name, c.output) for c in result.tool_calls]
    # what went back to the server: each step's tool message answers the call of that step
    last = fake_openai.requests[-1]["messages"]
    tool_messages = [m for m in last if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [search.output, window.output]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_tool_failing_in_a_later_step_with_a_reused_id(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                         monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    fake_openai.policy = memory_policy("sister")
    fake_openai.reuse_ids = True
    svc = ChatService(store, config=real_config(fake_openai))
    sid = svc.new_conversation("u1")
    svc.turn("u1", sid, FACT)

    def broken(self: agent_tools.MemoryTools, args: dict, **_: object) -> str:
        raise OSError("disk on fire")

    monkeypatch.setattr(agent_tools.MemoryTools, "get_session_window", broken)
    svc = ChatService(store, config=real_config(fake_openai))  # a graph built with the broken tool
    result, _ = _turn(svc, sid, QUESTION, stream=stream)

    assert result.error is not None and "get_session_window failed: OSError: disk on fire" in result.error
    search, window = result.tool_calls
    assert search.status == "success" and "#1 [" in search.output, "step 1 keeps its result"
    assert window.status == "error" and "disk on fire" in window.output and "disk on fire" not in search.output
    assert search.duration_ms is not None and window.duration_ms is not None


def _duplicate_ids_turn(svc: ChatService, server, sid: str = "s1") -> TurnResult:  # noqa: ANN001
    """One turn whose model gives every call of every step the same id ("dup"): three calls in step one (two of
    them search_session), one in step two."""
    script = iter([
        Reply(tool_calls=(("search_session", json.dumps({"keyword": "sister"})),
                          ("get_recent_session", json.dumps({"rounds": 1})),
                          ("search_session", json.dumps({"keyword": "nothing-like-this"})))),
        Reply(tool_calls=(("search_session", json.dumps({"keyword": "Lyon"})),)),
        Reply(content="Done."),
    ])
    server.policy = lambda body: next(script)
    original = server.new_id
    server.new_id = lambda index=0: "dup"  # every call of every step is "dup"
    try:
        return svc.turn("u1", sid, "Search please.")
    finally:
        server.new_id = original


def _mismatches(result: TurnResult) -> list[str]:
    """What is wrong with the trace of :func:`_duplicate_ids_turn` (empty: each call kept its own output)."""
    if result.error is not None:
        return [f"error: {result.error}"]
    if [c.id for c in result.tool_calls] != ["dup"] * 4:
        return [f"ids {[c.id for c in result.tool_calls]}"]
    first, recent, second, third = result.tool_calls
    checks = {  # each output names what it answers, so a swapped output shows
        "first search": first.input == {"keyword": "sister"} and 'contain "sister"' in first.output,
        "recent": recent.name == "get_recent_session" and "Lyon" in recent.output,
        "second search": second.input == {"keyword": "nothing-like-this"} and second.output.startswith("No message"),
        "third search": third.input == {"keyword": "Lyon"} and 'contain "Lyon"' in third.output,
    }
    return [name for name, ok in checks.items() if not ok]


def test_duplicate_ids_within_one_step_are_matched_by_name_and_order(store: MemoryStore,
                                                                     fake_openai) -> None:  # noqa: ANN001
    svc = ChatService(store, config=real_config(fake_openai))
    svc.turn("u1", "s1", FACT)

    result = _duplicate_ids_turn(svc, fake_openai)

    assert _mismatches(result) == []
    assert all(call.output.count("\n#1 [") == 1 for call in (result.tool_calls[0], result.tool_calls[3]))
    assert store.user("u1").session("s1").messages()[-1].tool_calls == result.tool_calls


@pytest.fixture
def cpu_burners() -> Iterator[None]:
    """One busy process per core, for as long as the test runs (tool threads then finish in a shuffled order)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


RUNS_UNDER_LOAD = 300


@pytest.mark.slow
def test_duplicate_ids_are_matched_under_load(store: MemoryStore, fake_openai,  # noqa: ANN001
                                              cpu_burners: None) -> None:
    """The same turn, many times, with every core busy: no run may give a call another call's output.

    The tools of one step run as separate tasks and their results come back in completion order; matching them
    to calls afterwards went wrong in about a third of the runs on a busy machine.
    """
    svc = ChatService(store, config=real_config(fake_openai))
    failures = {}
    for run in range(RUNS_UNDER_LOAD):
        store.user("u1").append("s1", "user", FACT)  # what get_recent_session (one round) and the searches find
        wrong = _mismatches(_duplicate_ids_turn(svc, fake_openai))
        if wrong:
            failures[run] = wrong
    assert failures == {}, (f"{len(failures)} of {RUNS_UNDER_LOAD} runs gave a call another call's output, e.g. "
                            f"{list(failures.items())[:3]}")
