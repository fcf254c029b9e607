"""Facts in the agent: extraction after the reply through a durable queue (crash, replay, drain), the hot-path mode,
ranked facts in the context with their reasons, the recall_facts tool, and the model extractor on the loopback server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from agentmem_nb.testing.fake_openai import Fault, FakeOpenAI, Reply, real_config

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.agent.facts_model import ModelExtractor
from agentmem_nb.agent.facts_queue import queue_file
from agentmem_nb.agent.facts_tools import recall_facts
from agentmem_nb.agent.models import make_chat_model
from agentmem_nb.agent.tools import _BadArgument
from agentmem_nb.facts import OfflineExtractor, record_message
from agentmem_nb.store import FactSource

WORKER = Path(__file__).with_name("facts_worker.py")


def test_background_extraction_is_written_by_drain(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel())
    sid = svc.new_conversation("u")
    said = svc.turn("u", sid, "I live in Paris and my sister Ana lives in Madrid.")
    assert svc.drain(timeout=30)
    facts = store.user("u").facts
    lives = facts.get("user", "lives_in")[0]
    assert lives.value == "Paris" and lives.source == FactSource(sid, said.user_message.message_id)
    assert facts.get("sister", "lives_in")[0].value == "Madrid" and lives.extracted_by == "offline"
    assert svc.facts.written == 1 and svc.facts.pending == 0


def test_hot_mode_writes_before_the_turn_returns(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel(), facts="hot")
    sid = svc.new_conversation("u")
    svc.turn("u", sid, "I live in Paris.")
    svc.turn("u", sid, "We moved to Lyon last month.")
    history = store.user("u").facts.history("user", "lives_in")  # no drain: written on the turn's own thread
    assert [(f.value, f.status) for f in history] == [("Paris", "superseded"), ("Lyon", "active")]


def test_off_mode_extracts_nothing_and_offers_no_fact_tool(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel(), facts="off")
    sid = svc.new_conversation("u")
    svc.turn("u", sid, "I live in Paris.")
    assert store.user("u").facts.all() == [] and not (store.user("u").directory / "facts.queue.jsonl").exists()
    assert "recall_facts" not in svc.graph("u", sid).get_graph().nodes["tools"].data.tools_by_name


def test_the_context_holds_the_profile_and_the_relevant_facts_with_why(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel(), facts="hot", fact_budget=3)
    sid = svc.new_conversation("u")
    for text in ["My name is Ana.", "My sister Eva lives in Madrid.", "I love jazz.", "My boss hates meetings."]:
        svc.turn("u", sid, text)
    result = svc.turn("u", sid, "Where does my sister live these days?")
    section = result.memory_context.split("[FACTS]\n", 1)[1].splitlines()
    assert section[0].startswith("user.name = Ana") and section[0].endswith("<- profile")
    assert section[1].startswith("sister.lives_in = Madrid") and "<- relevant: sister, live" in section[1]
    assert len([line for line in section if " <- " in line]) == 3, "the budget holds"


def test_recall_facts_lists_a_key_with_its_history(store: MemoryStore) -> None:
    user = store.user("u")
    for number, text in enumerate(["I live in Paris.", "I moved to Lyon."], start=1):
        record_message(user.facts, OfflineExtractor(), text, source=FactSource("s1", number))
    svc = ChatService(store, model=OfflineChatModel())
    out = recall_facts(user, svc.fact_ranker, {"query": "where do I live"})
    assert out.splitlines()[0].startswith("fact 2: user.lives_in = Lyon")
    assert out.splitlines()[1].strip().startswith("before: Paris (until") and "from s1#1" in out
    with pytest.raises(_BadArgument, match="query must be"):
        recall_facts(user, svc.fact_ranker, {"query": "  "})


def test_a_killed_process_loses_no_queued_extraction(store: MemoryStore) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, str(WORKER), str(store.root), "u", "s1", "I moved to Lyon."],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "turned"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    user = store.user("u")
    assert user.facts.all() == [], "killed before its extraction ran"
    svc = ChatService(store, model=OfflineChatModel())
    assert svc.facts.resume(user) == 1 and svc.drain(timeout=30)
    assert [f.value for f in user.facts.get("user", "lives_in")] == ["Lyon"]
    again = ChatService(store, model=OfflineChatModel())
    assert again.facts.resume(user) == 0 and len(user.facts.events()) == 1


def test_a_replay_after_a_crash_between_facts_and_done_records_nothing_twice(store: MemoryStore) -> None:
    user = store.user("u")
    message = user.append("s1", "user", "I live in Paris and I love jazz.").session
    queue_file(user).append({"event": "queued", "session_id": "s1", "target": message.message_id})
    record_message(user.facts, OfflineExtractor(), message.content, source=FactSource("s1", message.message_id))
    before = len(user.facts.events())  # facts written, then the crash: no "done" line
    svc = ChatService(store, model=OfflineChatModel(), facts="hot")
    assert svc.facts.resume(user) == 1
    assert len(user.facts.events()) == before == 2
    assert [r["event"] for _, r in queue_file(user).iter_records()] == ["queued", "done"]


def _facts_reply(facts: list[dict[str, object]]) -> Reply:
    return Reply(tool_calls=(("record_facts", json.dumps({"facts": facts})),))


def test_the_model_extractor_records_the_same_events(store: MemoryStore, fake_openai: FakeOpenAI) -> None:
    fake_openai.policy = lambda body: _facts_reply(
        [{"subject": "user", "attribute": "lives_in", "value": "Lyon", "op": "set"},
         {"subject": "user", "attribute": "", "value": "junk", "op": "set"}, "not an object"])
    extractor = ModelExtractor(make_chat_model(real_config(fake_openai)))
    svc = ChatService(store, model=OfflineChatModel(), facts="hot", fact_extractor=extractor)
    svc.turn("u", svc.new_conversation("u"), "I moved to Lyon.")
    facts = store.user("u").facts.all()
    assert [(f.key.attribute, f.value, f.extracted_by) for f in facts] == [("lives_in", "Lyon", "model")]
    sent = fake_openai.requests[-1]
    assert sent["tools"][0]["function"]["name"] == "record_facts" and sent["messages"][-1]["content"] == (
        "I moved to Lyon.")


def test_a_failed_model_extraction_is_recorded_and_the_next_one_works(store: MemoryStore,
                                                                      fake_openai: FakeOpenAI) -> None:
    fake_openai.policy = lambda body: _facts_reply([{"subject": "user", "attribute": "likes", "value": "tea",
                                                     "op": "add"}])
    fake_openai.overrides.append(Fault(401, echo_authorization=True))
    config = real_config(fake_openai)
    svc = ChatService(store, model=OfflineChatModel(), config=config, facts="hot",
                      fact_extractor=ModelExtractor(make_chat_model(config)))
    sid = svc.new_conversation("u")
    first = svc.turn("u", sid, "I like tea.")
    assert first.error is None, "the turn itself answered"
    assert len(svc.facts.errors) == 1 and "HTTP 401" in svc.facts.errors[0] and "test-key" not in svc.facts.errors[0]
    user = store.user("u")
    assert user.facts.all() == []
    svc.turn("u", sid, "I like tea a lot.")
    assert [f.value for f in user.facts.active()] == ["tea"]
    events = [r["event"] for _, r in queue_file(user).iter_records()]
    assert events == ["queued", "failed", "queued", "done"]


class CountingClock:
    """A fixed-step clock that counts its calls."""

    def __init__(self) -> None:
        import datetime as dt

        self.now = dt.datetime(2026, 4, 8, 9, 0, tzinfo=dt.timezone.utc)
        self.step = dt.timedelta(seconds=7)
        self.calls = 0

    def __call__(self):  # type: ignore[no-untyped-def]
        self.calls += 1
        self.now += self.step
        return self.now


def test_the_background_worker_never_advances_the_store_clock(tmp_path: Path) -> None:
    counts = {}
    for mode in ("off", "background"):
        clock = CountingClock()
        svc = ChatService(MemoryStore(tmp_path / mode, clock=clock), model=OfflineChatModel(), facts=mode,
                          procedural=False)
        sid = svc.new_conversation("u")
        svc.turn("u", sid, "I live in Paris and I love jazz.")
        assert svc.drain(timeout=30)
        counts[mode] = clock.calls
    # one call more: the queued line's time, taken on the turn's own thread (so a demo's times stay stable)
    assert counts["background"] == counts["off"] + 1


def test_background_extraction_waits_while_a_turn_runs(store: MemoryStore) -> None:
    import threading

    from agentmem_nb.agent.facts_queue import FactWriter

    entered, gate, calls = threading.Event(), threading.Event(), []

    class Gated:
        name = "gated"

        def extract(self, text: str, *, last_key: object = None) -> list[object]:
            calls.append(text)
            if text == "first":
                entered.set()
                gate.wait()
            return []

    user = store.user("u")
    first, second = (user.append("s1", "user", text).session.message_id for text in ("first", "second"))
    writer = FactWriter(Gated())  # type: ignore[arg-type]
    writer.submit(user, "s1", first)
    assert entered.wait(30)  # the worker is inside the first extraction
    writer.turn_started()
    writer.submit(user, "s1", second)
    gate.set()
    assert not writer.drain(timeout=2), "the second extraction must wait for the running turn"
    assert calls == ["first"]
    writer.turn_finished()
    assert writer.drain(timeout=30) and calls == ["first", "second"]
