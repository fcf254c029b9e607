"""What one turn writes (session, daily, meta.tool_calls, the log line, conversations.json), that a fresh store
replays it, and the pipeline's bookkeeping (title, one day file per turn, one graph per session, context)."""

from __future__ import annotations

import datetime as _dt
import json
import threading
from pathlib import Path

import pytest

from agentmem_nb import InvalidIdentifier, MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.agent.service import title_from


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _recall_session(svc: ChatService) -> tuple[str, object]:
    sid = svc.new_conversation("u1")
    svc.turn("u1", sid, "My sister Chloé lives in Lyon.")
    for i in range(4):
        svc.turn("u1", sid, f"Filler number {i}.")
    return sid, svc.turn("u1", sid, "What did I say about my sister?")


def test_one_turn_writes_exactly_the_specified_lines(svc: ChatService, store: MemoryStore) -> None:
    sid, result = _recall_session(svc)
    user_dir = store.root / "u1"

    session = _lines(user_dir / "sessions" / f"{sid}.jsonl")
    assert [r["message_id"] for r in session] == list(range(1, 13))
    question, answer = session[-2], session[-1]
    assert set(question) == set(answer) == {"ts", "role", "content", "tags", "meta", "message_id", "byte_offset"}
    assert question["role"] == "user" and question["content"] == "What did I say about my sister?"
    assert question["tags"] == ["session"] and question["meta"] == {"session_id": sid}
    assert answer["role"] == "assistant" and answer["content"] == result.reply
    assert answer["meta"]["session_id"] == sid and answer["meta"]["model"] == "offline"
    calls = answer["meta"]["tool_calls"]
    assert [c["name"] for c in calls] == ["search_session", "get_session_window"]
    for call, traced in zip(calls, result.tool_calls):
        assert set(call) == {"id", "name", "input", "output", "duration_ms"}, "dict shape; status only if not success"
        assert isinstance(call["input"], dict) and call["id"] == traced.id and call["output"] == traced.output
    assert calls[1]["input"] == {"message_id": 1, "before": 2, "after": 2}
    assert _dt.datetime.fromisoformat(answer["ts"]).utcoffset() == _dt.timedelta(hours=8)

    daily = _lines(user_dir / "daily" / f"{result.user_message.day}.jsonl")
    assert [(r["role"], r["content"], r["tags"]) for r in daily[-2:]] == [
        ("user", question["content"], ["daily"]), ("assistant", answer["content"], ["daily"])]
    assert daily[-1]["meta"]["tool_calls"] == calls and daily[-1]["meta"]["session_id"] == sid

    log = _lines(user_dir / "logs" / "llm_dialogue.jsonl")
    assert len(log) == 6
    line = log[-1]
    assert line["session_id"] == sid and line["user_message"] == question["content"]
    assert line["assistant_reply"] == result.reply and line["error"] is None and line["model"] == "offline"
    assert line["tool_calls"] == calls and line["assistant_message_id"] == 12
    assert "[SESSION]" in line["memory_context"]
    assert "[LONG_TERM]" not in line["memory_context"], "memory.md is empty: its section is left out"
    assert {"persist_user", "context", "agent", "model", "tools", "persist_reply", "total"} <= set(line["timings_ms"])

    conversations = json.loads((user_dir / "conversations.json").read_text(encoding="utf-8"))
    assert list(conversations) == [sid]
    entry = conversations[sid]
    assert entry["title"] == "My sister Chloé lives in Lyon." == result.title
    assert _dt.datetime.fromisoformat(entry["updated_at"]) > _dt.datetime.fromisoformat(answer["ts"])
    assert _dt.datetime.fromisoformat(entry["created_at"]) < _dt.datetime.fromisoformat(session[0]["ts"])


def test_a_fresh_store_replays_the_turn(svc: ChatService, store: MemoryStore, clock) -> None:  # noqa: ANN001
    sid, result = _recall_session(svc)
    fresh = MemoryStore(store.root, zone="Asia/Shanghai", clock=clock).user("u1")

    replayed = fresh.session(sid).messages()
    assert replayed[-1] == result.assistant_message
    assert replayed[-2] == result.user_message
    assert replayed[-1].tool_calls == result.tool_calls
    entry = fresh.log.tail(1)[0]
    assert entry.tool_calls == result.tool_calls and entry.assistant_reply == result.reply
    assert fresh.conversations.get(sid).title == result.title
    assert fresh.problems() == []


def test_turns_continue_after_a_restart(store: MemoryStore, clock) -> None:  # noqa: ANN001
    svc = ChatService(store, model=OfflineChatModel())
    sid = svc.new_conversation("u1")
    svc.turn("u1", sid, "My sister Chloé lives in Lyon.")
    restarted = ChatService(MemoryStore(store.root, zone="Asia/Shanghai", clock=clock), model=OfflineChatModel())
    result = restarted.turn("u1", sid, "Where does my sister live?")
    assert "Lyon" in result.reply
    assert result.user_message.message_id == 3


def test_new_conversation_is_registered_before_the_first_message(svc: ChatService, store: MemoryStore) -> None:
    sid = svc.new_conversation("u1")
    entry = store.user("u1").conversations.get(sid)
    assert entry is not None and entry.title == "" and entry.created_at is not None
    assert not (store.root / "u1" / "sessions" / f"{sid}.jsonl").exists()
    titled = svc.new_conversation("u1", title="Trip planning")
    assert store.user("u1").conversations.get(titled).title == "Trip planning"
    assert svc.turn("u1", titled, "Hello").title == "Trip planning", "a given title is kept"


def test_title_comes_from_the_first_message_only(svc: ChatService) -> None:
    sid = svc.new_conversation("u1")
    first = svc.turn("u1", sid, "  Planning a   trip to Kyoto\nin the spring with my whole family  ")
    second = svc.turn("u1", sid, "Something else entirely")
    assert first.title == title_from("Planning a trip to Kyoto in the spring with my whole family")
    assert first.title.startswith("Planning a trip to Kyoto") and first.title.endswith("…")
    assert len(first.title) == 30
    assert second.title == first.title


def test_a_turn_crossing_midnight_stays_in_one_day_file(store: MemoryStore, clock) -> None:  # noqa: ANN001
    clock.now = _dt.datetime(2026, 4, 8, 23, 59, 59, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))
    svc = ChatService(store, model=OfflineChatModel())
    result = svc.turn("u1", "s1", "Hello just before midnight")
    mem = store.user("u1")
    assert result.assistant_message.ts.date().isoformat() == "2026-04-09", "the reply is written after midnight"
    assert mem.days() == ["2026-04-08"]
    assert [m.role for m in mem.daily("2026-04-08").messages()] == ["user", "assistant"]


def test_the_graph_is_built_once_per_session(svc: ChatService) -> None:
    for _ in range(3):
        svc.turn("u1", "s1", "hello")
    graph = svc.graph("u1", "s1")
    assert svc.graphs_built == 1 and svc.graph("u1", "s1") is graph
    svc.turn("u1", "s2", "hello")
    svc.turn("u2", "s1", "hello")
    assert svc.graphs_built == 3


def test_context_has_three_rounds_without_the_current_message(svc: ChatService) -> None:
    for i in range(5):
        svc.turn("u1", "s1", f"message {i}")
    result = svc.turn("u1", "s1", "message 5")
    session_part = result.memory_context.split("[LONG_TERM]")[0]
    users = [line for line in session_part.splitlines() if line.startswith("user: ")]
    assert users == ["user: message 2", "user: message 3", "user: message 4"]
    assert session_part.count("assistant: ") == 3


def test_daily_context_only_when_asked_and_only_other_sessions(store: MemoryStore) -> None:
    plain = ChatService(store, model=OfflineChatModel())
    plain.turn("u1", "elsewhere", "Lunch was ramen today.")
    plain.turn("u1", "here", "first")
    assert "[DAILY]" not in plain.turn("u1", "here", "second").memory_context

    with_daily = ChatService(store, model=OfflineChatModel(), daily_limit=5)
    context = with_daily.turn("u1", "here", "third").memory_context
    daily_part = context.split("[DAILY]")[1].split("[LONG_TERM]")[0]
    assert "Lunch was ramen today." in daily_part
    assert "first" not in daily_part and "third" not in daily_part


@pytest.mark.parametrize("user_id, session_id", [
    ("u1", "../escape"), ("u1", "a/b"), ("u1", ""), ("u1", ".hidden"), ("u1", "x" * 129), ("../u", "s1"),
    ("u1", "s1\x00"), ("u1", 42),
])
def test_hostile_ids_are_refused_before_anything_is_written(
    svc: ChatService, store: MemoryStore, user_id: object, session_id: object
) -> None:
    with pytest.raises(InvalidIdentifier):
        svc.turn(user_id, session_id, "hello")  # type: ignore[arg-type]
    with pytest.raises(InvalidIdentifier):
        svc.stream_turn(user_id, session_id, "hello")  # type: ignore[arg-type]
    assert not store.root.exists() or not any(store.root.rglob("*.jsonl"))


@pytest.mark.parametrize("message", ["", "   \n", None, 12])
def test_empty_or_non_text_messages_are_refused(svc: ChatService, store: MemoryStore, message: object) -> None:
    with pytest.raises(ValueError, match="message"):
        svc.turn("u1", "s1", message)  # type: ignore[arg-type]
    assert not store.root.exists()


def test_concurrent_turns_on_different_sessions(svc: ChatService, store: MemoryStore) -> None:
    def chat(sid: str) -> None:
        for i in range(5):
            svc.turn("u1", sid, f"{sid} says {i}")

    threads = [threading.Thread(target=chat, args=(f"s{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    mem = store.user("u1")
    for n in range(4):
        messages = mem.session(f"s{n}").messages()
        assert [m.content for m in messages if m.role == "user"] == [f"s{n} says {i}" for i in range(5)]
        assert [m.role for m in messages] == ["user", "assistant"] * 5
    assert len(mem.log.entries()) == 20
    assert len(mem.daily(mem.days()[0])) == 40
