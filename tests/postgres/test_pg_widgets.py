"""The three widgets over a PostgreSQL store, driven through their Python API (no browser): the inspector's layers,
search, window and refresh; the timeline's calls; a chat turn with the offline model."""

from __future__ import annotations

import datetime as _dt

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb import frames as F
from agentmem_nb.agent import ChatService
from agentmem_nb.agent.offline import OfflineChatModel
from agentmem_nb.store.postgres import PostgresStore
from agentmem_nb.widgets import ChatWidget, MemoryInspector, ToolTimeline

LATER = _dt.datetime(2026, 4, 9, 12, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))


@pytest.mark.parametrize("layer, scope, expected", [
    ("sessions", None, lambda mem: F.session_messages(mem)),
    ("sessions", "s1", lambda mem: F.session_messages(mem, "s1")),
    ("days", None, lambda mem: F.daily_messages(mem)),
    ("long_term", None, lambda mem: F.long_term(mem)),
    ("long_term", "history", lambda mem: F.long_term_history(mem)),
    ("log", None, lambda mem: F.dialogue_log(mem)),
    ("tool_calls", None, lambda mem: F.tool_calls(mem)),
    ("problems", None, lambda mem: F.problems(mem)),
    ("conversations", None, lambda mem: F.conversations(mem)),
])
def test_the_inspector_shows_every_layer_of_a_postgres_user(twin: tuple[MemoryStore, PostgresStore], layer: str,
                                                            scope: str | None, expected) -> None:
    files, pg = twin
    inspector = MemoryInspector(pg, user_id="alice")
    inspector.select_layer(layer)
    if scope:
        inspector.select_scope(scope)
    assert inspector.frame.equals(expected(pg.user("alice")))
    on_files = MemoryInspector(files, user_id="alice")
    on_files.select_layer(layer)
    if scope:
        on_files.select_scope(scope)
    assert inspector.frame.equals(on_files.frame)


def test_the_inspector_searches_windows_and_follows_a_postgres_user(twin: tuple[MemoryStore, PostgresStore]) -> None:
    _, pg = twin
    inspector = MemoryInspector(pg, user_id="alice")
    hits = inspector.search("LYON")  # one keyword: the store's exact search
    assert inspector.search_mode == "keyword"
    assert [(h.key, h.anchor) for h in hits] == [("s1", 1), ("s1", 2), ("s1", 3), ("s1", 4), ("s2", 6)]
    window = inspector.select_hit(1)
    assert list(window.frame["message_id"]) == [m.message_id for m in pg.user("alice").session("s1").window(2).messages]
    ranked = inspector.search("which city did I move to")
    assert inspector.search_mode == "ranked" and ranked and all(h.explain.startswith("score") for h in ranked)
    read = inspector._follower().stats.records
    pg.user("alice").append("s1", "user", "a new message about Lyon", ts=LATER)
    inspector.refresh()
    assert inspector.frame["content"].iloc[-1] == "a new message about Lyon"
    assert inspector._follower().stats.records - read == 1  # the new message only


def test_redacting_on_postgres_hides_the_message_and_its_day_copy(twin: tuple[MemoryStore, PostgresStore]) -> None:
    files, pg = twin
    for store in (files, pg):
        inspector = MemoryInspector(store, user_id="alice")
        inspector.search("lyon")
        inspector.select_hit(0)
        assert not inspector.editor.redact_button.disabled and not inspector.editor.redact_button.tooltip
        inspector.redact_message("s1", 1, reason="private")
    user = pg.user("alice")
    assert len(user.session("s1")) == 7  # nothing rewritten: an event was recorded
    assert [(e.item.layer, e.item.key, e.item.message_id) for e in user.redactions.events()] == \
        [(e.item.layer, e.item.key, e.item.message_id) for e in files.user("alice").redactions.events()]
    assert 1 not in [m.message_id for m in user.search_session("s1", "lyon")]
    assert user.session_window("s1", 1, 0, 0).messages[0].content == "[redacted: private]"


def test_the_timeline_shows_the_calls_of_a_postgres_user(twin: tuple[MemoryStore, PostgresStore]) -> None:
    files, pg = twin
    for source in ("log", "sessions"):
        timeline = ToolTimeline(pg, user_id="alice", source=source)
        assert timeline.frame.equals(F.tool_calls(pg.user("alice"), source=source))
        assert timeline.frame.equals(ToolTimeline(files, user_id="alice", source=source).frame)
        assert len(timeline.frame) == 1 and "1 call" in timeline.html_values()["summary"]


def test_a_chat_turn_on_postgres(twin: tuple[MemoryStore, PostgresStore]) -> None:
    _, pg = twin
    service = ChatService(pg, model=OfflineChatModel())  # type: ignore[arg-type]  # the contract, not the class
    chat = ChatWidget(service, user_id="alice", session_id="s3", stream_interval=0, run_in_thread=False)
    chat.send("I moved to Lyon in 2024 for a new job.")
    result = chat.send("Where did I move?")
    assert result.error is None and "Lyon" in result.reply
    assert [c.name for c in result.tool_calls][:1] == ["search_session"]
    assert [m.role for m in chat.messages] == ["user", "assistant"] * 2
    assert len(pg.user("alice").session("s3")) == 4
    assert chat.history.value.count('class="amn-msg amn-msg-assistant"') == 2
