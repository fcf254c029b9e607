"""The store's everyday contract: windows, recent, search limits, days by zone, tool calls, listings, the log."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore, StoreError, ToolCall, UserMemory
from agentmem_nb.errors import MemoryDataWarning
from agentmem_nb.store import MAX_SEARCH_LIMIT, MAX_WINDOW_SIDE, DialogueEntry

UTC = _dt.UTC


@pytest.fixture
def thread(mem: UserMemory) -> UserMemory:
    """Session s1 with 120 messages "m0".."m119" (ids 1..120)."""
    for i in range(120):
        mem.append("s1", "user" if i % 2 == 0 else "assistant", f"m{i}")
    return mem


@pytest.mark.parametrize(
    ("anchor", "before", "after", "expected"),
    [
        (10, 2, 3, list(range(8, 14))),
        (1, 5, 1, [1, 2]),  # clamped at the start
        (120, 1, 9, [119, 120]),  # clamped at the end
        (50, -4, -1, [50]),  # negative sides count as 0
        (60, 500, 0, list(range(60 - MAX_WINDOW_SIDE, 61))),  # sides are capped
    ],
)
def test_window_is_positional_inclusive_and_clamped(
    thread: UserMemory, anchor: int, before: int, after: int, expected: list[int]
) -> None:
    window = thread.session_window("s1", anchor, before, after)
    assert [m.message_id for m in window.messages] == expected
    assert window.anchor is not None and window.anchor.message_id == anchor and window.reason == ""
    assert (window.before, window.after) == (max(0, min(before, MAX_WINDOW_SIDE)), max(0, min(after, MAX_WINDOW_SIDE)))


def test_unknown_anchor_gives_an_empty_window_with_a_reason(thread: UserMemory) -> None:
    window = thread.session_window("s1", 999)
    assert not window and window.anchor is None
    assert "#999" in window.reason and "1 to 120" in window.reason
    empty = thread.session_window("nothing-here", 1)
    assert not empty and "no messages" in empty.reason


def test_recent_tail_and_get(thread: UserMemory) -> None:
    assert [m.content for m in thread.recent("s1", 3)] == [f"m{i}" for i in range(114, 120)]
    assert thread.recent("s1", 0) == [] and thread.recent("s1", -2) == []
    assert [m.message_id for m in thread.session("s1").tail(2)] == [119, 120]
    got = thread.session("s1").get(42)
    assert got is not None and got.content == "m41"
    assert thread.session("s1").get(0) is None and thread.session("s1").get(121) is None


def test_search_returns_the_last_hits_in_order_and_clamps_the_limit(thread: UserMemory) -> None:
    layer = thread.session("s1")
    assert [m.content for m in layer.search("M1", limit=3)] == ["m117", "m118", "m119"]
    assert [m.content for m in layer.search("m1")][:1] == ["m100"]  # default limit 20: the last 20 of 31 hits
    assert len(layer.search("m1")) == 20
    assert layer.search("m1", limit=-5) == []
    assert len(layer.search("", limit=10_000)) == min(120, MAX_SEARCH_LIMIT)
    assert layer.search("absent") == []


def test_search_daily_spans_days_newest_last_with_day_and_session(store: MemoryStore) -> None:
    mem = store.user("alice")
    for day, session in [(1, "a"), (2, "b"), (3, "a")]:
        for i in range(3):
            mem.append(session, "user", f"blueberry {day}.{i}", ts=_dt.datetime(2026, 4, day, 9, i, tzinfo=UTC))
    hits = mem.search_daily("BLUEBERRY", limit=5)
    assert [m.content for m in hits] == ["blueberry 2.1", "blueberry 2.2", "blueberry 3.0", "blueberry 3.1",
                                         "blueberry 3.2"]
    assert [(m.day, m.session_id) for m in hits[:2]] == [("2026-04-02", "b")] * 2
    assert [m.day for m in hits[2:]] == ["2026-04-03"] * 3
    assert [m.content for m in mem.search_daily("blueberry", day="2026-04-01", limit=1)] == ["blueberry 1.2"]


def test_the_day_file_follows_the_configured_zone(tmp_path: Path) -> None:
    moment = _dt.datetime(2026, 4, 8, 17, 30, tzinfo=UTC)  # 01:30 on the 9th in Shanghai
    shanghai = MemoryStore(tmp_path / "sh", zone="Asia/Shanghai").user("u")
    written = shanghai.append("s1", "user", "late", ts=moment)
    assert written.daily.day == "2026-04-09" and shanghai.days() == ["2026-04-09"]
    assert written.session.ts.isoformat() == "2026-04-09T01:30:00+08:00"
    utc = MemoryStore(tmp_path / "utc", zone="UTC").user("u")
    assert utc.append("s1", "user", "late", ts=moment).daily.day == "2026-04-08"
    pinned = shanghai.append("s1", "user", "reply after midnight", ts=moment, day="2026-04-08")
    assert pinned.daily.day == "2026-04-08"  # a turn that crossed midnight stays in its day
    naive = shanghai.append("s1", "user", "naive", ts=_dt.datetime(2026, 4, 8, 23, 59))
    assert naive.daily.day == "2026-04-08" and naive.session.ts.utcoffset() == _dt.timedelta(hours=8)


def test_appended_messages_carry_tags_meta_and_tool_calls(mem: UserMemory) -> None:
    calls = [ToolCall("search_session", {"keyword": "蓝莓"}, "#1 …", id="call_1", duration_ms=1.5),
             ToolCall("remember_note", {"note": "x"}, "failed", id="call_2", status="error")]
    written = mem.append("s1", "assistant", "done", tags=["tool"], meta={"model": "offline"}, tool_calls=calls)
    for message in (written.session, mem.session("s1").messages()[0], written.daily, mem.daily(written.daily.day)
                    .messages()[0]):
        assert message.tool_calls == tuple(calls)
        assert message.meta["session_id"] == "s1" and message.meta["model"] == "offline"
    assert mem.session("s1").messages()[0].tags == ("session", "tool")
    assert mem.daily(written.daily.day).messages()[0].tags == ("daily", "tool")


def test_listings_ignore_names_that_are_not_ids(store: MemoryStore) -> None:
    mem = store.user("alice")
    mem.append("s1", "user", "x", day="2026-04-08")
    for name in [".hidden.jsonl", " a.jsonl", "a\u202eb.jsonl", "notes.txt", "s1.jsonl.quarantine"]:
        (mem.directory / "sessions" / name).write_text("{}\n")
    (mem.directory / "daily" / "2026-4-8.jsonl").write_text("{}\n")
    (store.root / ".trash").mkdir()
    (store.root / "not a user ").mkdir()  # a space at the end: not an id (see test_store_paths for the rule)
    (store.root / "file-not-dir").write_text("")
    assert mem.session_ids() == ["s1"] and mem.days() == ["2026-04-08"]
    with pytest.warns(MemoryDataWarning, match="'not a user '"):  # listed as not openable, not dropped silently
        assert store.users() == ["alice"]


def test_durability_is_checked_and_fsync_mode_writes(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="'sometimes'"):
        MemoryStore(tmp_path, durability="sometimes").user("u").append("s1", "user", "x")  # type: ignore[arg-type]
    mem = MemoryStore(tmp_path / "f", durability="fsync").user("u")
    assert mem.append("s1", "user", "x").session.message_id == 1
    mem.long_term.add_note("durable")
    assert mem.long_term.lines() == ["- durable"]


def test_dialogue_log_appends_and_reads_back(mem: UserMemory) -> None:
    entry = DialogueEntry(0, _dt.datetime(2026, 4, 8, 10, 0, tzinfo=UTC), "s1", "hi", "hello", "ctx",
                          (ToolCall("search_session", {"keyword": "hi"}, "none", id="c1"),), {"total": 12.5},
                          None, "offline", 2)
    first = mem.log.append(entry)
    second = mem.log.append(entry)
    assert (first.entry_id, second.entry_id) == (1, 2)
    assert mem.log.entries()[0].tool_calls == entry.tool_calls
    assert [e.entry_id for e in mem.log.tail(1)] == [2]
    assert mem.log.tail(1)[0].timings_ms == {"total": 12.5} and mem.log.tail(1)[0].assistant_message_id == 2
