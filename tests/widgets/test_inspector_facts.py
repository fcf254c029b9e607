"""The inspector's Facts layer: the current facts as a table, a key's history as a timeline, conflicts resolved by
their buttons (events in the store), a fact's source window one click away, following a chat, escaping, and no
widgets left behind by refreshes. Real stores and real fact events throughout; buttons driven with ``click()``."""

from __future__ import annotations

import datetime as _dt

import pandas as pd
import pytest
from facts_testlib import open_widgets
from inspector_testlib import ESCAPED_IMG, XSS_IMG, assert_inert, table_rows

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.agent import ChatService, LLMConfig
from agentmem_nb.store import FactSource, Statement
from agentmem_nb.widgets import ChatWidget, MemoryInspector

SAID = ["hello", "I live in Paris.", "nice", "We moved to Lyon.", "ok", f"My name is {XSS_IMG}.", "right"]


def _user(store: MemoryStore) -> UserMemory:
    """alice: Paris superseded by Lyon (a change), name Alice with an unsure other name held as a conflict, each
    from its own message of s1 (the name's conflict carries HTML)."""
    user = store.user("alice")
    for text in SAID:
        user.append("s1", "user", text)
    user.facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 2))
    user.facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 4))
    user.facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 1))
    user.facts.record([Statement("user", "name", XSS_IMG)], source=FactSource("s1", 6))
    user.facts.record([Statement("user", "likes", "tea", "add")])  # recorded by hand: no source message
    return user


def _facts_inspector(store: MemoryStore, **kwargs: object) -> MemoryInspector:
    return MemoryInspector(store, user_id="alice", layer="facts", **kwargs)  # type: ignore[arg-type]


def test_the_table_lists_the_current_facts_with_status_source_and_validity(store: MemoryStore) -> None:
    user = _user(store)
    inspector = _facts_inspector(store)
    frame = inspector.frame
    assert list(zip(frame["key"], frame["value"], frame["status"])) == [
        ("user.lives_in", "Lyon", "active"), ("user.name", "Alice", "active"), ("user.name", XSS_IMG, "conflict"),
        ("user.likes", "tea", "active")]
    assert list(frame["source"].fillna("-")) == ["s1#4", "s1#1", "s1#6", "-"]
    rows = table_rows(inspector.table)
    assert len(rows) == 4 and rows[2][2].startswith("&lt;img")  # itables escaped it
    for row in rows:
        assert_inert("".join(str(cell) for cell in row))
    header = inspector.table._dt_args["table_html"]
    assert [c for c in ("key", "value", "status", "source", "valid_from", "valid_to") if f"<th>{c}</th>" in header] \
        == ["key", "value", "status", "source", "valid_from", "valid_to"]
    # scope "history": every fact ever, the superseded Paris with when it stopped being true
    inspector.select_scope("history")
    paris = inspector.frame[inspector.frame["value"] == "Paris"].iloc[0]
    assert paris["status"] == "superseded" and paris["source"] == "s1#2"
    assert paris["valid_to"] == inspector.frame[inspector.frame["value"] == "Lyon"]["valid_from"].iloc[0]
    assert len(inspector.frame) == len(user.facts.all())
    # the layer is searched like the others
    inspector.select_scope(None)
    assert [h.anchor for h in inspector.search("lyon")] == [0]


def test_choosing_a_fact_shows_its_key_as_a_timeline(store: MemoryStore) -> None:
    _user(store)
    inspector = _facts_inspector(store)
    panel = inspector.facts_panel
    assert "Choose a fact" in panel.timeline_title.value and panel.timeline.children == ()
    inspector.table.selected_rows = [0]  # a click on the Lyon row
    assert inspector.errors == [] and str(panel.key) == "user.lives_in"
    lines = [row.children[0].value for row in panel.timeline.children]
    assert len(lines) == 2 and "Paris" in lines[0] and "Lyon" in lines[1]  # oldest first
    assert "superseded, change" in lines[0] and "from s1#2" in lines[0] and "→ now" in lines[1]
    assert "amn-facts-chosen" in lines[1] and "amn-facts-chosen" not in lines[0]
    assert [row.children[1].description for row in panel.timeline.children] == ["source s1#2", "source s1#4"]
    history = panel.select_key("User.Lives In")  # normalised like the store's keys
    assert [f.value for f in history] == ["Paris", "Lyon"] and panel.chosen is None


def test_the_source_button_opens_the_window_around_the_source_message(store: MemoryStore) -> None:
    _user(store)
    opened: list[tuple[str, int]] = []
    inspector = _facts_inspector(store, on_open_message=lambda sid, mid: opened.append((sid, mid)))
    panel = inspector.facts_panel
    panel.select_fact(1)  # Paris
    panel.timeline.children[0].children[1].click()  # its source button
    window = inspector.window
    assert inspector.errors == [] and window is not None
    assert list(window.frame["message_id"]) == [1, 2, 3, 4] and window.anchor_row == 1
    assert window.frame["content"].iloc[window.anchor_row] == "I live in Paris."
    assert table_rows(inspector.window_table)  # the window table shows it
    inspector.widen(after=1)
    assert list(inspector.window.frame["message_id"]) == [1, 2, 3, 4, 5]  # stepped like any other window
    inspector.open_button.click()  # "Open in chat"
    assert opened == [("s1", 2)]
    # a conflict's source button works the same; a fact without a source has its button disabled
    inspector.facts_panel.conflicts.children[0].children[3].click()
    assert inspector.window.frame["content"].iloc[inspector.window.anchor_row] == SAID[5]
    tea = next(f for f in store.user("alice").facts.all() if f.value == "tea")
    panel.select_fact(tea.fact_id)
    assert panel.timeline.children[0].children[1].disabled
    with pytest.raises(ValueError, match="names no source message"):
        panel.open_source(tea.fact_id)


def test_accept_resolves_the_conflict_as_an_event_and_the_view_refreshes(store: MemoryStore) -> None:
    user = _user(store)
    inspector = _facts_inspector(store)
    row = inspector.facts_panel.conflicts.children[0]
    assert "(1)" in inspector.facts_panel.conflicts_title.value
    row.children[1].click()  # accept
    assert inspector.errors == []
    last = user.facts.events()[-1]
    assert last.kind == "resolve" and last.detail["decision"] == "accept" and last.detail["by"] == "inspector"
    assert [f.value for f in user.facts.get("user", "name")] == [XSS_IMG]
    # the view refreshed: the table, the conflicts (none left) and the key's timeline
    names = inspector.frame[inspector.frame["key"] == "user.name"]
    assert list(zip(names["value"], names["status"])) == [(XSS_IMG, "active")]
    assert inspector.facts_panel.conflicts.children == () and "(0)" in inspector.facts_panel.conflicts_title.value
    timeline = [r.children[0].value for r in inspector.facts_panel.timeline.children]
    assert "superseded, resolution" in timeline[0] and ESCAPED_IMG in timeline[1]
    assert "accepted" in inspector.facts_panel.status.value


def test_reject_drops_the_held_value(store: MemoryStore) -> None:
    user = _user(store)
    inspector = _facts_inspector(store)
    inspector.facts_panel.conflicts.children[0].children[2].click()  # reject
    assert inspector.errors == [] and user.facts.conflicts() == []
    assert [f.value for f in user.facts.get("user", "name")] == ["Alice"]
    assert user.facts.events()[-1].detail["decision"] == "reject"
    assert XSS_IMG not in list(inspector.frame["value"])


def test_a_stale_resolve_button_shows_its_error_in_the_inspector(store: MemoryStore) -> None:
    user = _user(store)
    inspector = _facts_inspector(store)
    stale = inspector.facts_panel.conflicts.children[0]
    user.facts.resolve(user.facts.conflicts()[0].fact_id, accept=False)  # decided elsewhere meanwhile
    stale.children[1].click()
    assert inspector.last_error is not None and "not a conflict" in inspector.last_error.message
    assert "not a conflict" in inspector.error_area.value


def test_html_in_values_is_shown_as_text_everywhere(store: MemoryStore) -> None:
    _user(store)
    inspector = _facts_inspector(store)
    inspector.facts_panel.select_fact(4)  # the held name, with its <img onerror>
    inspector.facts_panel.open_source(4)
    values = inspector.html_values()
    assert ESCAPED_IMG in values["facts_conflicts"] and ESCAPED_IMG in values["facts_timeline"]
    cells = [str(c) for t in (inspector.table, inspector.window_table) for r in table_rows(t) for c in r]
    for html in [*values.values(), *cells]:
        assert_inert(html)


def test_refreshes_leave_no_widgets_behind(store: MemoryStore) -> None:
    _user(store)
    inspector = _facts_inspector(store)
    inspector.facts_panel.select_fact(2)  # a timeline of two rows, and one conflict row, rebuilt on every refresh
    inspector.refresh()
    opened = open_widgets()
    for _ in range(5):
        inspector.refresh()
    assert open_widgets() == opened
    inspector.close()


def test_new_facts_appear_when_the_inspector_follows_the_chat(store: MemoryStore) -> None:
    service = ChatService(store, config=LLMConfig(), facts="hot")  # extracted before the turn returns
    chat = ChatWidget(service, user_id="alice", session_id="s1")
    inspector = MemoryInspector(store, user_id="alice", layer="facts")
    inspector.follow(chat)
    assert len(inspector.frame) == 0
    chat.send("I live in Paris.")
    assert inspector.auto_refreshes == 1 and inspector.errors == []
    assert list(zip(inspector.frame["key"], inspector.frame["value"])) == [("user.lives_in", "Paris")]
    inspector.facts_panel.select_key("user.lives_in")
    chat.send("Big news: we moved to Toulouse last month!")
    assert list(inspector.frame["value"]) == ["Toulouse"]
    timeline = [r.children[0].value for r in inspector.facts_panel.timeline.children]
    assert len(timeline) == 2 and "superseded, change" in timeline[0] and "Toulouse" in timeline[1]
    # the new fact's source is the message the chat wrote, and "Open in chat" (wired by follow) opens it there
    source = store.user("alice").facts.get("user", "lives_in")[0].source
    assert source is not None
    window = inspector.facts_panel.open_source(int(inspector.frame["fact_id"].iloc[0]))
    assert window.frame["content"].iloc[window.anchor_row] == "Big news: we moved to Toulouse last month!"
    assert inspector.open_hit() == (source.session_id, source.message_id)
    inspector.close()
    chat.close()
    service.facts.close()


def test_background_facts_appear_at_the_next_refresh_after_drain(store: MemoryStore) -> None:
    """Background extraction writes after the turn's event: the facts are in the view once written and refreshed
    (the next turn's automatic refresh, or the Refresh button)."""
    service = ChatService(store, config=LLMConfig())  # facts="background"
    chat = ChatWidget(service, user_id="alice", session_id="s1")
    inspector = MemoryInspector(store, user_id="alice", layer="facts")
    inspector.follow(chat)
    chat.send("I live in Paris.")
    assert service.drain(timeout=60)
    chat.send("nice weather today")
    assert ("user.lives_in", "Paris") in list(zip(inspector.frame["key"], inspector.frame["value"]))
    inspector.close()
    chat.close()
    service.facts.close()


def test_valid_from_and_to_are_times_in_the_store_zone(store: MemoryStore) -> None:
    _user(store)
    inspector = _facts_inspector(store, scope="history")
    assert isinstance(inspector.frame["valid_from"].dtype, pd.DatetimeTZDtype)
    assert str(inspector.frame["valid_from"].dt.tz) == "Asia/Shanghai"
    assert pd.isna(inspector.frame["valid_to"].iloc[-1]) and isinstance(
        inspector.frame["valid_to"].iloc[0].to_pydatetime(), _dt.datetime)
