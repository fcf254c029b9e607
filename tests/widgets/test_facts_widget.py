"""FactsWidget: current facts, one key's timeline, conflicts resolved by their buttons (driven without a browser)."""

from __future__ import annotations

from facts_testlib import open_widgets

from agentmem_nb import MemoryStore
from agentmem_nb.store import FactSource, Statement
from agentmem_nb.widgets.facts import FactsWidget


def _store(store: MemoryStore):  # type: ignore[no-untyped-def]
    user = store.user("alice")
    user.facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    user.facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3))
    user.facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 5))
    user.facts.record([Statement("user", "name", "<b>Alicia</b>")], source=FactSource("s1", 7))
    return user


def test_current_facts_timeline_and_escaped_text(store: MemoryStore) -> None:
    widget = FactsWidget(_store(store))
    assert list(widget.frame["value"]) == ["Lyon", "Alice", "<b>Alicia</b>"]
    assert "&lt;b&gt;Alicia" in widget.current.value and "<b>Alicia</b>" not in widget.current.value
    widget.key_picker.value = "user.lives_in"
    assert widget.timeline.value.index("Paris") < widget.timeline.value.index("Lyon")
    assert "superseded, change" in widget.timeline.value


def test_the_accept_button_resolves_the_conflict_as_an_event(store: MemoryStore) -> None:
    user = _store(store)
    widget = FactsWidget(user)
    row = widget.conflict_box.children[0]
    row.children[1].click()  # accept
    assert widget.errors == [] and user.facts.get("user", "name")[0].value == "<b>Alicia</b>"
    assert user.facts.events()[-1].kind == "resolve" and user.facts.events()[-1].detail["by"] == "widget"
    assert "none" in widget.conflict_box.children[0].value


def test_a_failing_button_shows_its_error_in_the_widget(store: MemoryStore) -> None:
    user = _store(store)
    widget = FactsWidget(user)
    stale = widget.conflict_box.children[0]
    user.facts.resolve(user.facts.conflicts()[0].fact_id, accept=False)  # decided elsewhere meanwhile
    stale.children[1].click()
    assert widget.last_error is not None and "not a conflict" in widget.last_error.message
    assert "not a conflict" in widget.error_area.value


def test_a_facts_source_window_is_one_pick_away(store: MemoryStore) -> None:
    user = store.user("alice")
    for text in ["hello", "I live in <Paris>", "nice", "ok"]:
        user.append("s1", "user", text)
    user.facts.record([Statement("user", "lives_in", "<Paris>")], source=FactSource("s1", 2))
    user.facts.record([Statement("user", "likes", "tea", "add")])  # no source
    widget = FactsWidget(user)
    widget.source_picker.value = 1
    shown = widget.source.value
    assert "<b>#2 [" in shown and "&lt;Paris&gt;" in shown and "<Paris>" not in shown
    assert "#1 [" in shown and "#4 [" in shown
    widget.source_picker.value = 2
    assert "has no source message" in widget.source.value and widget.errors == []


def test_refreshing_closes_the_old_conflict_rows(store: MemoryStore) -> None:
    """Rows rebuilt on a refresh are closed: the number of open widgets (ipywidgets' registry) stays the same."""
    user = _store(store)
    user.facts.record([Statement("user", "birthday", "May 1")], source=FactSource("s1", 9))
    user.facts.record([Statement("user", "birthday", "June 2")], source=FactSource("s1", 11))
    widget = FactsWidget(user)
    assert len(widget.conflict_box.children) == 2
    widget.refresh()
    first = widget.conflict_box.children
    opened = open_widgets()
    for _ in range(5):
        widget.refresh()
    assert open_widgets() == opened
    assert all(row.comm is None and row.children[1].comm is None for row in first)  # the replaced rows are closed
    widget.close()
