"""Conformance: the message layers — appends and ids, the day copy, get, windows, exact search."""

from __future__ import annotations

import datetime as _dt

import pytest

from agentmem_nb.messages import ToolCall
from agentmem_nb.store import MAX_WINDOW_SIDE, Appended
from agentmem_nb.store.contract import ConversationList, DialogueRecord, LongTerm, MessageLayer, Store, UserStore

SHANGHAI = _dt.timezone(_dt.timedelta(hours=8))


def test_every_part_implements_its_protocol(store: Store) -> None:
    user = store.user("alice")
    assert isinstance(store, Store) and isinstance(user, UserStore)
    assert isinstance(user.session("s1"), MessageLayer) and isinstance(user.daily("2026-04-08"), MessageLayer)
    assert isinstance(user.long_term, LongTerm)
    assert isinstance(user.conversations, ConversationList)
    assert isinstance(user.log, DialogueRecord)


def test_a_chained_session_append_stamps_the_time_and_writes_the_day_copy(store: Store, clock) -> None:
    expected_ts = clock.now
    appended = store.user("alice").session("s1").append("user", "I moved to Lyon", tags=["fact"], meta={"k": 1})
    assert isinstance(appended, Appended)
    session, daily = appended.session, appended.daily
    assert session.ts == expected_ts and daily.ts == expected_ts  # the store's clock, not 1970
    assert (session.message_id, daily.message_id) == (1, 1)
    assert daily.day == "2026-04-08" and daily.session_id == "s1"
    day = store.user("alice").daily("2026-04-08")
    assert [(m.content, m.session_id, m.ts) for m in day.messages()] == [("I moved to Lyon", "s1", expected_ts)]
    again = store.user("alice").session("s1").get(1)
    assert again is not None and again.content == "I moved to Lyon" and again.ts == expected_ts
    assert "fact" in again.tags and again.meta.get("k") == 1


def test_user_append_and_layer_append_are_one_path(store: Store) -> None:
    user = store.user("alice")
    a = user.append("s1", "user", "one")
    b = user.session("s1").append("assistant", "two")
    assert [a.session.message_id, b.session.message_id] == [1, 2]
    assert [a.daily.message_id, b.daily.message_id] == [1, 2]
    assert [m.content for m in user.daily(a.daily.day).messages()] == ["one", "two"]


def test_ids_go_up_by_one_per_layer_and_survive_a_reopen(backend, store: Store) -> None:
    user = store.user("alice")
    for i in range(5):
        user.append("s1", "user", f"m{i}")
    user.append("s2", "user", "other thread")
    fresh = backend.reopen(store).user("alice")
    assert [m.message_id for m in fresh.session("s1").messages()] == [1, 2, 3, 4, 5]
    assert fresh.session("s2").messages()[0].message_id == 1
    assert fresh.append("s1", "user", "next").session.message_id == 6
    assert [m.message_id for m in fresh.daily("2026-04-08").messages()] == [1, 2, 3, 4, 5, 6, 7]


def test_a_pinned_day_and_tool_calls_are_kept(store: Store) -> None:
    call = ToolCall("search_session", {"keyword": "job"}, "#1 ...", id="c1")
    user = store.user("alice")
    written = user.append("s1", "assistant", "found it", tool_calls=[call], day="2026-04-07",
                          ts=_dt.datetime(2026, 4, 8, 0, 0, 1, tzinfo=SHANGHAI))
    assert written.daily.day == "2026-04-07" and user.days() == ["2026-04-07"]
    back = user.session("s1").get(written.session.message_id)
    assert back is not None and back.tool_calls == (call,)


@pytest.mark.parametrize("bad", [{"role": "user", "content": "hi"}, None, 3])
def test_a_raw_record_is_refused_and_writes_nothing(store: Store, bad) -> None:
    layer = store.user("alice").session("s1")
    with pytest.raises(TypeError, match="role"):
        layer.append(bad)  # type: ignore[arg-type]
    assert len(layer) == 0 and store.user("alice").days() == []


def test_a_day_layer_is_written_only_through_a_session(store: Store) -> None:
    with pytest.raises(TypeError, match="session"):
        store.user("alice").daily("2026-04-08").append("user", "hi")
    assert store.user("alice").days() == []


@pytest.fixture
def ten(store: Store) -> MessageLayer:
    user = store.user("alice")
    for i in range(1, 11):
        user.append("s1", "user" if i % 2 else "assistant", f"message {i}")
    return user.session("s1")


@pytest.mark.parametrize(("anchor", "before", "after", "ids"), [
    (5, 2, 2, [3, 4, 5, 6, 7]),
    (1, 3, 1, [1, 2]),  # clamped at the start
    (10, 1, 5, [9, 10]),  # clamped at the end
    (5, -4, -1, [5]),  # negative sides are 0
    (5, 0, 0, [5]),
])
def test_windows_are_positional_and_clamped(ten: MessageLayer, anchor, before, after, ids) -> None:
    window = ten.window(anchor, before, after)
    assert [m.message_id for m in window.messages] == ids and window.reason == ""
    assert window.anchor is not None and window.anchor.message_id == anchor


def test_window_sides_are_clamped_to_the_maximum(store: Store) -> None:
    user = store.user("alice")
    for i in range(2 * MAX_WINDOW_SIDE + 10):
        user.append("s1", "user", f"m{i}")
    anchor = MAX_WINDOW_SIDE + 5
    window = user.session("s1").window(anchor, 10 * MAX_WINDOW_SIDE, 10 * MAX_WINDOW_SIDE)
    assert (window.before, window.after) == (MAX_WINDOW_SIDE, MAX_WINDOW_SIDE)
    assert len(window.messages) == 2 * MAX_WINDOW_SIDE + 1


def test_an_unknown_anchor_gives_an_empty_window_with_a_reason(ten: MessageLayer, store: Store) -> None:
    window = ten.window(99)
    assert not window and "99" in window.reason
    empty = store.user("alice").session("nothing-here").window(1)
    assert not empty and empty.reason
    assert ten.get(99) is None


@pytest.mark.parametrize(("stored", "keyword"), [
    ("I moved to LYON", "lyon"),
    ("Straße", "STRASSE"),  # casefold, not lower
    ("我在找工作", "找工作"),  # CJK substring
    ("我在找工作", " 找工作\u3000"),  # stripped, full-width space too
    ("a [bracket] (paren) .* regex", "[bracket] (paren) .*"),  # literal, not a pattern
])
def test_exact_search_is_a_casefolded_substring(store: Store, stored, keyword) -> None:
    user = store.user("alice")
    user.append("s1", "user", "unrelated")
    user.append("s1", "user", stored)
    hits = user.session("s1").search(keyword)
    assert [m.content for m in hits] == [stored]
    day_hits = user.daily("2026-04-08").search(keyword)
    assert [(m.content, m.session_id) for m in day_hits] == [(stored, "s1")]


def test_search_returns_the_last_hits_in_order_one_per_message(ten: MessageLayer) -> None:
    assert [m.message_id for m in ten.search("message", limit=3)] == [8, 9, 10]
    assert [m.message_id for m in ten.search("message 1", limit=5)] == [1, 10]  # "message 1" and "message 10"
    assert ten.search("message", limit=0) == []
    assert [m.message_id for m in ten.search("", limit=2)] == [9, 10]  # empty keyword: the last rows
    assert ten.search("absent") == []


def test_reads_of_an_empty_layer(store: Store) -> None:
    layer = store.user("alice").session("empty")
    assert len(layer) == 0 and layer.messages() == [] and layer.tail(3) == [] and layer.head(3) == []
    assert layer.first_and_last() is None and layer.search("x") == [] and layer.recent() == []


def test_head_tail_recent_and_ends(ten: MessageLayer) -> None:
    assert [m.message_id for m in ten.head(2)] == [1, 2]
    assert [m.message_id for m in ten.tail(3)] == [8, 9, 10]
    assert [m.message_id for m in ten.recent(1)] == [9, 10]
    ends = ten.first_and_last()
    assert ends is not None and (ends[0].message_id, ends[1].message_id) == (1, 10)
    assert ten.position_of(4) == 3 and ten.position_of(42) is None
