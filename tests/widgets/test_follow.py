"""Linking the memory views to the chat: ChatWidget.on_turn, MemoryInspector.follow, ToolTimeline.follow.

Every turn here runs through chat.send(...) on the real ChatService with the offline model; nothing calls refresh()
unless a test says so. Costs are asserted as counts (rows, records, bytes), never as times.
"""

from __future__ import annotations

import datetime as _dt
import gc
import re
import weakref
from collections.abc import Iterator
from typing import Any

import ipywidgets as widgets
import pandas as pd
import pytest
from inspector_testlib import at, turn

from agentmem_nb import MemoryStore, ToolCall, UserMemory
from agentmem_nb.agent import ChatService, LLMConfig, OfflineChatModel
from agentmem_nb.widgets import ChatEvent, ChatWidget, MemoryInspector, ToolTimeline
from agentmem_nb.widgets import inspector as inspector_module
from agentmem_nb.widgets import timeline as timeline_module
from agentmem_nb.widgets._callbacks import _parts

MOVED = "I moved to Lyon in 2024 for a new job."
ASK = "Where did I move?"  # the offline model answers it with search_session + get_session_window
HISTORY_TURNS = 150


# ---------------------------------------------------------------------- services and helpers


def offline_service(store: MemoryStore, model: Any = None) -> ChatService:
    # an explicit empty config: the offline model whatever config/llm.yaml or AGENTMEM_* say on this machine.
    # Facts "hot": extracted before the turn returns, so no background extraction reads the store while the tests
    # count what a follower's refresh read (the store-wide byte counter took the worker's reads too, and a test failed
    # under load: 7,305 bytes read for a 7,113-byte log line)
    if model is None:
        return ChatService(store, config=LLMConfig(), facts="hot")
    return ChatService(store, model=model, facts="hot")


class _ModelDown(OfflineChatModel):
    """Every model call fails: the service ends the turn with result.error, after writing the user message and
    the log line."""

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("model is down")

    def _stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("model is down")


class RaisesAfterUserLine:
    """The real service, except that a message containing "boom" is written as the user's line and then the
    service raises (as a crashed service would, mid-turn)."""

    def __init__(self, inner: ChatService) -> None:
        self.inner = inner
        self.store = inner.store
        self.offline = inner.offline
        self.model_name = inner.model_name

    def new_conversation(self, user_id: str, title: str = "") -> str:
        return self.inner.new_conversation(user_id, title)

    def turn(self, user_id: str, session_id: str, message: str) -> Any:
        return self.inner.turn(user_id, session_id, message)

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[Any]:
        if "boom" in message:
            self.store.user(user_id).append(session_id, "user", message)
            raise RuntimeError(f"service crashed on {message!r}")
        return self.inner.stream_turn(user_id, session_id, message)


def with_history(store: MemoryStore, user_id: str = "alice", turns: int = HISTORY_TURNS) -> UserMemory:
    """``turns`` recorded turns in s1 (two messages, one log entry with one tool call each), plus conversations."""
    mem = store.user(user_id)
    mem.conversations.create("s1", title="Moving")
    start = at(1, 8)
    for i in range(turns):
        call = ToolCall("search_session", {"keyword": f"topic{i}"}, f"#{2 * i + 1} topic {i} " + "x" * 40,
                        id=f"h{i}", duration_ms=1.0)
        turn(mem, "s1", f"question {i} about topic{i} " + "q" * 40, f"answer {i} " + "a" * 40,
             start + _dt.timedelta(minutes=i), (call,))
    mem.conversations.create("s2", title="Holidays")
    return mem


def bytes_read(mem: UserMemory) -> int:
    """Every byte the store's files of ``mem`` read so far (index syncs, record reads, bulk reads)."""
    files = ([mem.session(s) for s in mem.session_ids()] + [mem.daily(d) for d in mem.days()] + [mem.log.file])
    return sum(f.stats.bytes_read for f in files)


def disk_bytes(mem: UserMemory) -> int:
    files = ([mem.session(s) for s in mem.session_ids()] + [mem.daily(d) for d in mem.days()] + [mem.log.file])
    return sum(f.path.stat().st_size for f in files)


class Probe:
    """An on_turn callback that snapshots read counters; one subscribed before a view and one after measure
    exactly what the view's automatic refresh read (callbacks run in subscription order)."""

    def __init__(self, mem: UserMemory, view: Any) -> None:
        self.mem = mem
        self.view = view
        self.seen: list[tuple[int, Any, int, int]] = []

    def __call__(self, _event: ChatEvent) -> None:
        stats = self.view.read_stats
        self.seen.append((bytes_read(self.mem), stats, stats.bytes_read, stats.records))


def delta(before: Probe, after: Probe) -> tuple[int, int, int]:
    """(store bytes, follower bytes, follower records) read between the two probes. A view that swapped its
    follower for a new one is charged with everything the new one read, not the difference of two counters."""
    store_b, stats_b, bytes_b, records_b = before.seen[-1]
    store_a, stats_a, bytes_a, records_a = after.seen[-1]
    same = stats_a is stats_b
    return store_a - store_b, bytes_a - (bytes_b if same else 0), records_a - (records_b if same else 0)


@pytest.fixture
def service(store: MemoryStore) -> ChatService:
    return offline_service(store)


@pytest.fixture
def chat(service: ChatService) -> ChatWidget:
    return ChatWidget(service, user_id="alice", session_id="s1", stream_interval=0)


def hit_styles(inspector: MemoryInspector) -> list[str]:
    return [button.button_style for button in inspector.hits_box.children]


# ---------------------------------------------------------------------- the chat's seam


def test_on_turn_tells_each_turn_after_the_history_shows_it_and_close_stops_it(chat: ChatWidget) -> None:
    seen: list[tuple[ChatEvent, int]] = []
    handle = chat.on_turn(lambda event: seen.append((event, len(chat.messages))))
    assert handle.active and chat.observer_count == 1
    result = chat.send(MOVED)
    [(event, shown)] = seen
    assert (event.kind, event.user_id, event.session_id, event.error) == ("turn", "alice", "s1", "")
    assert event.result is result and not event.failed
    assert shown == 2  # the user's message and the reply were already in the history when the callback ran
    handle.close()
    handle.close()  # idempotent
    assert not handle.active and chat.observer_count == 0
    chat.send(ASK)
    assert len(seen) == 1


def test_callbacks_run_in_subscription_order(chat: ChatWidget) -> None:
    order: list[str] = []
    chat.on_turn(lambda _e: order.append("first"))
    chat.on_turn(lambda _e: order.append("second"))
    chat.send(MOVED)
    assert order == ["first", "second"]


def test_a_turn_failed_in_the_service_is_told_with_its_error(store: MemoryStore) -> None:
    chat = ChatWidget(offline_service(store, _ModelDown()), user_id="alice", session_id="s1", stream_interval=0)
    seen: list[ChatEvent] = []
    chat.on_turn(seen.append)
    result = chat.send(MOVED)
    assert result.error and "model is down" in result.error
    [event] = seen
    assert event.failed and event.error == result.error and event.result is result
    assert [m.role for m in store.user("alice").session("s1").messages()] == ["user"]  # written before the failure


def test_a_turn_that_raises_is_told_then_re_raised(store: MemoryStore, service: ChatService) -> None:
    chat = ChatWidget(RaisesAfterUserLine(service), user_id="alice", session_id="s1", stream_interval=0)
    seen: list[ChatEvent] = []
    chat.on_turn(seen.append)
    with pytest.raises(RuntimeError, match="service crashed"):
        chat.send("boom now")
    [event] = seen
    assert event.kind == "turn" and event.result is None
    assert event.error.startswith("RuntimeError: service crashed on 'boom now'")
    chat.input.value = "boom again"
    chat.send_button.click()  # the button path tells observers too (and does not raise)
    assert len(seen) == 2 and seen[-1].failed


def test_a_blank_message_is_not_a_turn(chat: ChatWidget) -> None:
    seen: list[ChatEvent] = []
    chat.on_turn(seen.append)
    with pytest.raises(ValueError, match="empty message"):
        chat.send("   ")
    assert seen == []


def test_switches_are_told_with_where_the_chat_was(chat: ChatWidget) -> None:
    seen: list[ChatEvent] = []
    chat.on_turn(seen.append)
    chat.send(MOVED)
    new = chat.new_conversation("later")
    chat.switch_conversation("s1")
    chat.switch_conversation("s1")  # already there: no event
    chat.switch_user("bob")
    kinds = [(e.kind, e.previous_user_id, e.previous_session_id, e.user_id, e.session_id) for e in seen]
    assert kinds == [("turn", None, None, "alice", "s1"),
                     ("switch", "alice", "s1", "alice", new),
                     ("switch", "alice", new, "alice", "s1"),
                     ("switch", "alice", "s1", "bob", chat.session_id)]
    assert [e.user_changed for e in seen] == [False, False, False, True]


def test_a_raising_callback_is_shown_in_the_chat_and_the_others_still_run(chat: ChatWidget) -> None:
    def broken(_event: ChatEvent) -> None:
        raise LookupError("subscriber bug <b>")

    after: list[ChatEvent] = []
    chat.on_turn(broken)
    chat.on_turn(after.append)
    result = chat.send(MOVED)
    assert result.error is None and len(after) == 1
    assert [m.role for m in chat.messages] == ["user", "assistant"]
    assert chat.last_error is not None and isinstance(chat.last_error.error, LookupError)
    assert "on_turn callback" in chat.last_error.action and "broken" in chat.last_error.action
    assert "LookupError: subscriber bug &lt;b&gt;" in chat.error_area.value
    assert not chat.send_button.disabled and chat.input.disabled is False
    chat.send(ASK)  # the chat keeps working; the new turn clears the old error before showing the new one
    assert chat.error_area.value.count("amn-error-box") == 1


def test_a_callback_error_is_shown_under_the_failed_turn_not_instead_of_it(store: MemoryStore) -> None:
    chat = ChatWidget(offline_service(store, _ModelDown()), user_id="alice", session_id="s1", stream_interval=0)
    chat.on_turn(lambda _e: 1 / 0)
    chat.send(MOVED)
    shown = chat.error_area.value
    assert "model is down" in shown and "ZeroDivisionError" in shown
    assert shown.index("model is down") < shown.index("ZeroDivisionError")
    assert chat.errors[0].action == "sending your message"


def test_on_turn_rejects_what_it_cannot_call_or_hold(chat: ChatWidget) -> None:
    with pytest.raises(TypeError, match="callable"):
        chat.on_turn("not a function")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="weakly"):
        chat.on_turn([].append, weak=True)  # a builtin's bound method would die at once

    class Slotted:
        __slots__ = ()

        def __call__(self, _event: ChatEvent) -> None: ...

    with pytest.raises(TypeError, match="weakly"):
        chat.on_turn(Slotted(), weak=True)  # no __weakref__ slot
    assert chat.observer_count == 0


def test_weak_callbacks_drop_out_when_their_object_is_gone(chat: ChatWidget) -> None:
    class Listener:
        def __init__(self) -> None:
            self.events: list[ChatEvent] = []

        def on_event(self, event: ChatEvent) -> None:
            self.events.append(event)

    kept, dropped = Listener(), Listener()
    chat.on_turn(kept.on_event, weak=True)
    handle = chat.on_turn(dropped.on_event, weak=True)
    chat.send(MOVED)
    assert len(kept.events) == len(dropped.events) == 1
    del dropped
    gc.collect()
    assert not handle.active and chat.observer_count == 1
    chat.send(ASK)
    assert len(kept.events) == 2


def test_closing_the_chat_ends_its_subscriptions(chat: ChatWidget) -> None:
    handle = chat.on_turn(lambda _e: None)
    chat.close()
    assert not handle.active and chat.observer_count == 0


# ---------------------------------------------------------------------- the inspector follows


def test_a_following_inspector_shows_the_new_messages_without_a_refresh(store: MemoryStore, chat: ChatWidget) -> None:
    inspector = MemoryInspector(store, user_id="alice")
    inspector.follow(chat)
    assert len(inspector.frame) == 0 and inspector.auto_refreshes == 0
    chat.send(MOVED)
    assert list(inspector.frame["content"]) == [MOVED, chat.messages[-1].content]
    assert "I moved to Lyon in 2024" in inspector.table._dt_args["data_json"]
    chat.send(ASK)
    assert len(inspector.frame) == 4 and inspector.auto_refreshes == 2
    assert inspector.errors == []


def test_the_automatic_refresh_reads_only_the_new_lines(store: MemoryStore, chat: ChatWidget) -> None:
    mem = with_history(store)
    inspector = MemoryInspector(store, user_id="alice")
    assert len(inspector.frame) == 2 * HISTORY_TURNS
    before, after = Probe(mem, inspector), Probe(mem, inspector)
    chat.on_turn(before)
    inspector.follow(chat)
    chat.on_turn(after)
    size = disk_bytes(mem)
    session_size = mem.session("s1").path.stat().st_size
    chat.send(MOVED)
    store_bytes, bulk_bytes, records = delta(before, after)
    appended = mem.session("s1").path.stat().st_size - session_size
    assert len(inspector.frame) == 2 * HISTORY_TURNS + 2
    assert records == 2  # the turn's user line and reply, nothing older
    assert 0 < bulk_bytes <= appended
    # plus at most a short check of the last line read before; nowhere near the history
    assert bulk_bytes + store_bytes < size / 20


def test_with_a_live_search_the_refresh_costs_the_hits_not_the_history(store: MemoryStore) -> None:
    # the same turns and the same hits for two users, one with four times the history: a refresh that re-read the
    # files would cost about four times as much for the second
    costs: dict[str, int] = {}
    for user_id, turns in (("alice", 40), ("bob", 160)):
        mem = with_history(store, user_id, turns)
        chat = ChatWidget(offline_service(store), user_id=user_id, session_id="s1", stream_interval=0)
        chat.send(MOVED)
        inspector = MemoryInspector(store, user_id=user_id)
        assert len(inspector.search("lyon")) == 1
        inspector.select_hit(0)
        before, after = Probe(mem, inspector), Probe(mem, inspector)
        chat.on_turn(before)
        inspector.follow(chat)
        chat.on_turn(after)
        chat.send("Lyon again")
        assert [h.anchor for h in inspector.hits] == [2 * turns + 1, 2 * turns + 3]  # the new message is a hit
        assert inspector.selected_hit == 0
        store_bytes, bulk_bytes, _records = delta(before, after)
        costs[user_id] = store_bytes + bulk_bytes
    assert disk_bytes(store.user("bob")) > 3 * disk_bytes(store.user("alice"))
    assert costs["bob"] <= costs["alice"] * 1.1


def test_selection_search_and_window_survive_the_refresh(store: MemoryStore, chat: ChatWidget) -> None:
    chat.send("I grew up near Lyon")
    chat.send("Lyon has good food")
    inspector = MemoryInspector(store, user_id="alice", hit_limit=2)
    inspector.select_scope("s1")
    inspector.follow(chat)
    hits = inspector.search("lyon")
    assert [h.rank for h in hits] == [1, 2]
    chosen = hits[1]  # the newest: a new hit will push it to rank 1
    inspector.select_hit(1)
    inspector.widen(before=1, after=-1)
    chat.send(MOVED)  # mentions Lyon: a new hit
    assert (inspector.query, inspector.search_box.value, inspector.scope) == ("lyon", "lyon", "s1")
    assert inspector.hits[-1].anchor == store.user("alice").session("s1").messages()[-2].message_id  # the new one
    assert inspector.selected_hit == 0  # the same message, now first of the two listed
    assert (inspector.hits[0].key, inspector.hits[0].anchor) == (chosen.key, chosen.anchor)
    assert inspector.window is not None and inspector.window.hit.anchor == chosen.anchor
    assert (inspector.before, inspector.after) == (3, 1)
    assert hit_styles(inspector) == ["info", ""]  # the highlight followed the hit to its new place
    anchor = inspector.window.frame.iloc[inspector.window.anchor_row]
    assert anchor["message_id"] == chosen.anchor


def test_a_chosen_row_is_followed_when_new_rows_move_it(store: MemoryStore, chat: ChatWidget) -> None:
    with_history(store, turns=2)  # conversations s1 "Moving", then s2 "Holidays" (newest first: s2, s1)
    inspector = MemoryInspector(store, user_id="alice", layer="conversations")
    inspector.follow(chat)
    [hit] = inspector.search("holidays")
    assert hit.anchor == 0
    inspector.select_hit(0)
    chat.send(MOVED)  # touches s1, which moves to the top: the Holidays row is now row 1
    assert list(inspector.frame["session_id"]) == ["s1", "s2"]
    window = inspector.window
    assert window is not None and window.frame.iloc[window.anchor_row]["session_id"] == "s2"
    assert inspector.selected_hit == 0 and inspector.hits[0].anchor == 1


def test_the_inspector_keeps_its_user_when_the_chat_switches(store: MemoryStore, chat: ChatWidget) -> None:
    mem = store.user("alice")
    chat.send(MOVED)
    inspector = MemoryInspector(store, user_id="alice")
    inspector.follow(chat)
    shown = list(inspector.frame["content"])
    assert shown == [m.content for m in mem.session("s1").messages()]
    read = (bytes_read(mem), inspector.read_stats.bytes_read, inspector.auto_refreshes)
    chat.switch_user("bob")
    chat.send("hello from bob")
    # bob's turn changed nothing alice's view shows: it was not even read
    assert (bytes_read(mem), inspector.read_stats.bytes_read, inspector.auto_refreshes) == read
    assert inspector.user_id == "alice" and list(inspector.frame["content"]) == shown
    chat.switch_user("alice", "s1")
    chat.send(ASK)
    assert len(inspector.frame) == 4


def test_follow_user_makes_the_inspector_switch_with_the_chat(store: MemoryStore, chat: ChatWidget) -> None:
    chat.send(MOVED)
    inspector = MemoryInspector(store, user_id="alice")
    inspector.follow(chat, follow_user=True)
    chat.switch_user("bob")
    assert inspector.user_id == "bob" and inspector.user_picker.value == "bob"
    chat.send("hello from bob")
    assert inspector.frame["content"].iloc[0] == "hello from bob"


def test_an_inspector_without_a_user_takes_the_chats(tmp_path, clock) -> None:
    store = MemoryStore(tmp_path / "empty", zone="Asia/Shanghai", clock=clock)
    inspector = MemoryInspector(store)
    assert inspector.user_id is None
    chat = ChatWidget(offline_service(store), user_id="carol", session_id="s1", stream_interval=0)
    inspector.follow(chat)
    chat.send(MOVED)
    assert inspector.user_id == "carol" and len(inspector.frame) == 2


def test_failed_and_raised_turns_still_refresh_the_inspector(store: MemoryStore, service: ChatService) -> None:
    down = ChatWidget(offline_service(store, _ModelDown()), user_id="alice", session_id="s1", stream_interval=0)
    crashing = ChatWidget(RaisesAfterUserLine(service), user_id="alice", session_id="s1", stream_interval=0)
    inspector = MemoryInspector(store, user_id="alice")
    log = MemoryInspector(store, user_id="alice", layer="log")
    for view in (inspector, log):
        view.follow(down)
        view.follow(crashing)
    down.send("first try")
    assert list(inspector.frame["content"]) == ["first try"]
    assert len(log.frame) == 1 and "model is down" in log.frame["error"].iloc[0]
    with pytest.raises(RuntimeError):
        crashing.send("boom second")
    assert list(inspector.frame["content"]) == ["first try", "boom second"]


def test_unfollow_and_closing_the_handle_stop_the_refreshes(store: MemoryStore, chat: ChatWidget) -> None:
    inspector = MemoryInspector(store, user_id="alice")
    handle = inspector.follow(chat)
    assert inspector.follow(chat) is handle and chat.observer_count == 1  # following again adds nothing
    assert inspector.following == (chat,)
    chat.send(MOVED)
    assert len(inspector.frame) == 2
    assert inspector.unfollow(chat) == 1 and not handle.active and inspector.following == ()
    chat.send(ASK)
    assert len(inspector.frame) == 2 and inspector.auto_refreshes == 1
    inspector.refresh()  # the Refresh button still works, and picks up what was missed
    assert len(inspector.frame) == 4
    again = inspector.follow(chat)
    again.close()
    chat.send(MOVED)
    assert len(inspector.frame) == 4 and inspector.following == ()


def test_a_failing_refresh_shows_in_the_inspector_not_the_chat(store: MemoryStore, chat: ChatWidget,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    inspector = MemoryInspector(store, user_id="alice")
    timeline = ToolTimeline(store, user_id="alice")
    inspector.follow(chat)
    timeline.follow(chat)

    def broken() -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(inspector, "refresh", broken)
    result = chat.send(ASK)
    assert result.error is None and chat.errors == [] and chat.error_area.value == ""
    assert inspector.last_error is not None and inspector.last_error.action == "refreshing after a chat turn"
    assert "OSError: disk went away" in inspector.error_area.value
    assert len(timeline.all_calls) == len(result.tool_calls)  # the other follower still refreshed
    monkeypatch.undo()
    chat.send(MOVED)
    assert inspector.error_area.value == "" and len(inspector.frame) == 4  # the stale error went with the fix


def test_a_closed_inspector_is_not_kept_alive_by_the_chat(store: MemoryStore, chat: ChatWidget) -> None:
    inspector = MemoryInspector(store, user_id="alice")
    timeline = ToolTimeline(store, user_id="alice")
    inspector.follow(chat)
    handle = timeline.follow(chat)
    chat.send(MOVED)
    gone = weakref.ref(inspector)
    inspector.close()
    del inspector
    gc.collect()
    assert gone() is None
    assert chat.observer_count == 1  # the timeline's
    timeline.close()
    assert not handle.active and chat.observer_count == 0
    chat.send(ASK)  # nobody left to tell; the chat does not mind


def test_the_chat_holds_a_following_view_weakly(store: MemoryStore, chat: ChatWidget) -> None:
    inspector = MemoryInspector(store, user_id="alice")
    handle = inspector.follow(chat)
    # close the widgets the way ipywidgets alone would, without our close() (which would unfollow first): only the
    # chat could still reach the inspector now, and it must not keep it alive
    for part in _parts(inspector):
        part.close()
    widgets.Widget.close(inspector)
    gone = weakref.ref(inspector)
    del inspector
    gc.collect()
    assert gone() is None and not handle.active and chat.observer_count == 0


def test_follow_needs_something_with_on_turn(store: MemoryStore) -> None:
    inspector = MemoryInspector(store)
    with pytest.raises(TypeError, match="ChatWidget"):
        inspector.follow(object())  # type: ignore[arg-type]


def test_any_turn_source_can_be_followed(store: MemoryStore, service: ChatService) -> None:
    """What a ChatService-level hook would look like: it hands its TurnResult (which has user_id) to observers."""

    class ServiceWithObservers:
        def __init__(self) -> None:
            from agentmem_nb.widgets._turns import TurnObservers
            self.observers = TurnObservers()

        def on_turn(self, callback: Any, *, weak: bool = False) -> Any:
            return self.observers.add(callback, weak=weak)

        def turn(self, user_id: str, session_id: str, message: str) -> Any:
            result = service.turn(user_id, session_id, message)
            for callback in self.observers.callbacks():
                callback(result)
            return result

    source = ServiceWithObservers()
    timeline = ToolTimeline(store, user_id="alice")
    timeline.follow(source)
    result = source.turn("alice", "s1", ASK)
    assert [c.name for c in result.tool_calls] == list(timeline.frame["tool"])


# ---------------------------------------------------------------------- the timeline follows


def test_a_following_timeline_adds_the_calls_and_keeps_filters_and_the_chosen_call(store: MemoryStore,
                                                                                     chat: ChatWidget) -> None:
    mem = with_history(store, turns=20)
    timeline = ToolTimeline(store, user_id="alice")
    timeline.filter(tools=["get_session_window"])
    assert len(timeline.frame) == 0
    timeline.filter(tools=["search_session", "get_session_window"], keyword="topic1")
    timeline.select(2)
    chosen = timeline.frame.iloc[2][["session_id", "turn", "call_index"]].tolist()
    before, after = Probe(mem, timeline), Probe(mem, timeline)
    chat.on_turn(before)
    timeline.follow(chat)
    chat.on_turn(after)
    log_size = mem.log.file.path.stat().st_size
    result = chat.send("Where did I mention topic1?")
    assert [c.name for c in result.tool_calls][:1] == ["search_session"]
    assert len(timeline.all_calls) == 20 + len(result.tool_calls)
    assert timeline.filters.tools == ("search_session", "get_session_window")
    assert timeline.filters.keyword == "topic1" and timeline.keyword_filter.value == "topic1"
    new_rows = timeline.frame[timeline.frame["ts"] > timeline.all_calls["ts"].iloc[19]]
    assert len(new_rows) >= 1 and set(new_rows["tool"]) <= {"search_session", "get_session_window"}
    assert timeline.selected is not None
    assert timeline.frame.iloc[timeline.selected][["session_id", "turn", "call_index"]].tolist() == chosen
    assert timeline.call_picker.value == timeline.selected
    store_bytes, _bulk, _records = delta(before, after)
    appended = mem.log.file.path.stat().st_size - log_size
    assert 0 < store_bytes <= appended  # the new log line, not the log


def test_the_timeline_keeps_its_user_when_the_chat_switches(store: MemoryStore, chat: ChatWidget) -> None:
    chat.send(ASK)
    timeline = ToolTimeline(store, user_id="alice")
    timeline.follow(chat)
    calls = len(timeline.all_calls)
    chat.switch_user("bob")
    chat.send(ASK)
    assert timeline.user_id == "alice" and len(timeline.all_calls) == calls
    timeline.follow(chat, follow_user=True)  # following again changes only the mode
    chat.send(ASK)
    assert timeline.user_id == "bob" and chat.observer_count == 1


# ---------------------------------------------------------------------- style


def _root_line_height(style: str, root: str) -> str:
    found = re.search(rf"\.{root} \{{[^}}]*line-height:\s*([^;]+);", style)
    assert found is not None, f"no line-height on .{root}"
    return found.group(1).strip()


def test_timeline_and_inspector_text_share_one_line_height() -> None:
    inspector = _root_line_height(inspector_module._STYLE, "amn-inspector-root")
    timeline = _root_line_height(timeline_module._STYLE, "amn-timeline-root")
    assert timeline == inspector
    assert not inspector.endswith("px")  # relative: rows scale with the font, not ipywidgets' 28 px control height


def test_a_row_is_found_again_by_its_key_columns_and_missing_keys_match_nothing() -> None:
    from agentmem_nb.widgets._rows import find_row

    problems = pd.DataFrame({"file": ["a", "b", "c"], "line": pd.array([1, None, 3], dtype="Int64"),
                             "kind": ["x", "y", "z"]})
    assert find_row(problems, ("c", 3, "z"), "problems", hint=1) == 2  # moved: found by value, past a missing one
    assert find_row(problems, ("a", 1, "x"), "problems", hint=0) == 0  # still where it was
    assert find_row(problems, ("b", pd.NA, "y"), "problems", hint=1) is None  # a missing key names nothing
    assert find_row(problems, ("a", 2, "x"), "problems", hint=0) is None


# ---------------------------------------------------------------------- from a hit to the conversation


def _two_chats(store: MemoryStore, service: ChatService) -> tuple[ChatWidget, ChatWidget]:
    mem = store.user("alice")
    mem.conversations.create("s2", title="lyon")
    mem.append("s2", "user", MOVED)
    mem.append("s2", "assistant", "Noted.")
    return (ChatWidget(service, user_id="alice", session_id="s1", stream_interval=0),
            ChatWidget(service, user_id="alice", session_id="s1", stream_interval=0))


@pytest.mark.parametrize("kind", ["inspector", "timeline"])
def test_following_a_chat_is_enough_to_open_a_message_in_it(store: MemoryStore, service: ChatService,
                                                             kind: str) -> None:
    first, second = _two_chats(store, service)
    view: Any = MemoryInspector(store, user_id="alice") if kind == "inspector" else ToolTimeline(store, user_id="alice")
    open_one = (lambda: view.open_hit(0)) if kind == "inspector" else (lambda: view.open_call(0))
    if kind == "inspector":
        view.search("Lyon")
    else:
        # a call made in s3 (by a third chat: the two below show s1 and are not told of other writers' turns)
        ChatWidget(service, user_id="alice", session_id="s3", stream_interval=0).send(ASK)
        view.refresh()
    view.follow(first)
    view.follow(second)  # the hook is already set: the first chat keeps it
    session_id, message_id = open_one()
    assert first.session_id == session_id and first.history.focus["message_id"] == message_id
    assert second.history.focus.get("message_id") != message_id
    view.unfollow(first)  # the hook goes with the chat, to the chat still followed
    assert open_one() == (session_id, message_id) and second.history.focus["message_id"] == message_id
    view.unfollow()
    with pytest.raises(ValueError, match="on_open_message"):
        open_one()


def test_a_hook_set_by_hand_is_kept_and_a_gone_chat_is_let_go(store: MemoryStore, service: ChatService) -> None:
    first, _ = _two_chats(store, service)
    opened: list[tuple[str, int]] = []
    inspector = MemoryInspector(store, user_id="alice", on_open_message=lambda s, m: opened.append((s, m)))
    inspector.search("Lyon")
    inspector.follow(first)
    assert inspector.open_hit(0) == opened[0] and first.history.focus.get("message_id") is None
    other = MemoryInspector(store, user_id="alice")
    other.search("Lyon")
    other.follow(first).close()  # the subscription closed by its handle: the hook goes too
    with pytest.raises(ValueError, match="no longer followed"):
        other.open_hit(0)
    assert other.following == ()
    with pytest.raises(ValueError, match="no chat is wired"):
        other.open_hit(0)


def test_open_in_chat_from_a_view_of_another_user_opens_that_users_conversation(store: MemoryStore,
                                                                                 service: ChatService) -> None:
    """The inspector keeps bob while the chat talks as alice; both have a conversation "s1". Opening bob's hit opens
    bob's s1 in the chat (switched to bob), never alice's s1 at the same message number."""
    alice, bob = store.user("alice"), store.user("bob")
    for i in range(4):
        alice.append("s1", "user", f"alice line {i}")
    bob.append("s1", "user", "bob has nothing to hide")
    bob.append("s1", "user", "bob moved to Porto last spring")
    chat = ChatWidget(service, user_id="alice", session_id="s1", stream_interval=0)
    inspector = MemoryInspector(store, user_id="bob")
    inspector.follow(chat)
    inspector.search("Porto")
    session_id, message_id = inspector.open_hit(0)
    assert (session_id, message_id) == ("s1", 2)
    assert chat.user_id == "bob" and chat.session_id == "s1"
    focused = chat.history.focus["message_id"]
    assert focused == message_id
    shown = store.user(chat.user_id).session(chat.session_id).window(focused, 0, 0)
    assert [m.content for m in shown.messages] == ["bob moved to Porto last spring"]
