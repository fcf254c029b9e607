"""Issue 19 for the inspector: true totals, a busy state, open-in-chat, one display zone, editing long-term memory."""

from __future__ import annotations

import datetime as _dt

import pytest
from inspector_testlib import table_rows

from agentmem_nb import MemoryStore
from agentmem_nb.errors import StoreError
from agentmem_nb.retrieval import Retriever
from agentmem_nb.widgets.inspector import MemoryInspector

PARIS = _dt.timezone(_dt.timedelta(hours=2))


def _many(store: MemoryStore, n_tea: int = 30, n_coffee: int = 5, n_other: int = 10):
    mem = store.user("alice")
    when = _dt.datetime(2026, 4, 8, 9, 0, tzinfo=_dt.timezone.utc)
    for i in range(n_tea):
        mem.append("s1", "user", f"I drink tea number {i}", ts=when + _dt.timedelta(minutes=i))
    for i in range(n_coffee):
        mem.append("s2", "user", f"some coffee {i}", ts=when + _dt.timedelta(hours=1, minutes=i))
    for i in range(n_other):
        mem.append("s2", "user", f"nothing here {i}", ts=when + _dt.timedelta(hours=2, minutes=i))
    return mem


def test_keyword_search_says_how_many_match_in_all(store) -> None:
    _many(store)
    inspector = MemoryInspector(store, user_id="alice", hit_limit=20)
    hits = inspector.search("tea")
    assert len(hits) == 20 and inspector.total == 30
    assert "20 of 30" in inspector.hits_summary.value and "hit(s)" not in inspector.hits_summary.value


def test_ranked_search_says_how_many_messages_hold_its_words(store) -> None:
    _many(store)
    inspector = MemoryInspector(store, user_id="alice", hit_limit=20)
    inspector.search("tea coffee")
    assert inspector.search_mode == "ranked"
    assert len(inspector.hits) == 20 and inspector.total == 35  # 30 with "tea" + 5 with "coffee"
    assert "20 of 35" in inspector.hits_summary.value


def test_a_row_layer_search_counts_every_matching_row(store) -> None:
    mem = store.user("alice")
    for i in range(25):
        mem.long_term.add_note(f"likes tea {i}")
    inspector = MemoryInspector(store, user_id="alice", layer="long_term", hit_limit=5)
    inspector.search("tea")
    assert len(inspector.hits) == 5 and inspector.total == 25 and "5 of 25" in inspector.hits_summary.value


class _Watching(Retriever):
    """A retriever that notes what the inspector shows while the search runs (the slow part)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, bool, int, str]] = []
        self.inspector: MemoryInspector | None = None

    def search(self, *args, **kwargs):  # type: ignore[override]
        i = self.inspector
        assert i is not None
        self.seen.append((i.busy, "amn-busy" in i._dom_classes, len(i.hits_box.children), i._busy.status.value))
        return super().search(*args, **kwargs)


def test_a_search_shows_it_is_busy_and_clears_the_old_hits_while_it_runs(store) -> None:
    _many(store)
    retriever = _Watching()
    inspector = MemoryInspector(store, user_id="alice", retriever=retriever)
    retriever.inspector = inspector
    inspector.search("tea")
    assert len(inspector.hits_box.children) == 20
    inspector.search("coffee")
    busy, dimmed, old_hits, status = retriever.seen[-1]
    assert busy and dimmed and old_hits == 0 and "Searching" in status and "coffee" in status
    assert not inspector.busy and "amn-busy" not in inspector._dom_classes and inspector._busy.status.value == ""


def test_the_busy_state_ends_when_the_search_fails(store, monkeypatch) -> None:
    _many(store)
    inspector = MemoryInspector(store, user_id="alice")

    def boom(*_a, **_k):
        raise RuntimeError("index broken")

    monkeypatch.setattr(inspector.data, "find", boom)
    inspector.search_box.value = "tea"  # typed in the box: the callback is guarded
    assert inspector.last_error is not None and "index broken" in inspector.last_error.message
    assert not inspector.busy and "amn-busy" not in inspector._dom_classes


@pytest.mark.parametrize("layer", ["sessions", "days"])
def test_open_hit_hands_the_session_and_message_to_the_hook(store, layer) -> None:
    _many(store)
    opened: list[tuple[str, int]] = []
    inspector = MemoryInspector(store, user_id="alice", layer=layer, on_open_message=lambda s, m: opened.append((s, m)))
    hits = inspector.search("coffee")
    message = store.user("alice").session("s2").search("coffee", limit=20)[1]
    assert inspector.open_hit(1) == ("s2", message.message_id)
    inspector.select_hit(1)
    inspector.open_button.click()
    assert opened == [("s2", message.message_id)] * 2 and hits[1].session_id == "s2"


def test_open_hit_without_a_hook_says_how_to_wire_it(store) -> None:
    _many(store)
    inspector = MemoryInspector(store, user_id="alice")
    inspector.search("coffee")
    with pytest.raises(ValueError, match="on_open_message"):
        inspector.open_hit(0)


def test_every_time_shown_is_in_the_stated_zone(tmp_path) -> None:
    store = MemoryStore(tmp_path / "m", zone="Europe/Paris")
    store.user("demo").append("s1", "user", "what time is it", ts=_dt.datetime(2026, 4, 8, 7, 29, tzinfo=_dt.timezone.utc))
    inspector = MemoryInspector(store, user_id="demo")
    assert "times in Europe/Paris" in inspector.caption.value
    assert "2026-04-08 09:29:00" in str(table_rows(inspector.table))
    hit = inspector.search("time")[0]
    assert "[2026-04-08 09:29]" in hit.label  # the hit list and the table agree


def test_edit_delete_and_restore_long_term_lines_are_recorded(store) -> None:
    lt = store.user("alice").long_term
    for note in ("likes tea", "lives in Lyon", "has a cat"):
        lt.add_note(note)
    inspector = MemoryInspector(store, user_id="alice", layer="long_term")
    inspector.edit_note(2, "lives in Paris")
    assert lt.lines() == ["- likes tea", "lives in Paris", "- has a cat"]
    assert lt.history()[-1].source == "inspector"
    edited = len(lt.history())
    inspector.delete_note(1)
    assert lt.lines() == ["lives in Paris", "- has a cat"]
    inspector.restore_version(edited)
    assert lt.lines() == ["- likes tea", "lives in Paris", "- has a cat"]
    assert len(lt.history()) == edited + 2 and lt.history()[-1].source.startswith("restore:")
    assert list(inspector.frame["text"]) == ["- likes tea", "lives in Paris", "- has a cat"]  # refreshed


def test_an_edit_of_a_line_changed_meanwhile_writes_nothing(store) -> None:
    lt = store.user("alice").long_term
    lt.add_note("likes tea")
    inspector = MemoryInspector(store, user_id="alice", layer="long_term")
    lt.write("- likes coffee\n", source="agent")  # changed after the inspector showed it
    versions = len(lt.history())
    with pytest.raises(StoreError, match="changed since it was shown"):
        inspector.edit_note(1, "likes green tea")
    assert lt.read() == "- likes coffee\n" and len(lt.history()) == versions


def test_the_edit_buttons_edit_and_errors_show_in_the_widget(store) -> None:
    lt = store.user("alice").long_term
    lt.add_note("likes tea")
    inspector = MemoryInspector(store, user_id="alice", layer="long_term")
    inspector.table.selected_rows = [0]  # a click on the row in the browser
    assert inspector.editor.line.value == 1 and inspector.editor.text.value == "- likes tea"
    inspector.editor.text.value = "- likes green tea"
    inspector.editor.save_button.click()
    assert lt.lines() == ["- likes green tea"] and "recorded" in inspector.editor.status.value
    inspector.editor.text.value = "  "
    inspector.editor.save_button.click()
    assert inspector.last_error is not None and "Delete line" in inspector.last_error.message


def test_redacting_a_message_shows_the_reason_and_keeps_the_line(store) -> None:
    mem = _many(store, n_tea=3, n_coffee=2, n_other=0)
    inspector = MemoryInspector(store, user_id="alice")
    inspector.search("coffee")
    inspector.select_hit(0)
    line_before = mem.session("s2").path.read_bytes()
    inspector.editor.reason.value = "private"
    inspector.editor.redact_button.click()
    assert inspector.last_error is None
    assert mem.session("s2").path.read_bytes() == line_before
    events = mem.redactions.events()
    assert {e.item.layer for e in events} == {"session", "daily"} and all(e.source == "inspector" for e in events)
    assert "[redacted: private]" in str(table_rows(inspector.table)) and "some coffee 0" not in str(
        table_rows(inspector.table))
    assert "[redacted: private]" in str(table_rows(inspector.window_table))
    # the search ran again on refresh, and a redacted message is never a hit (store/redactions.py)
    assert [h.label.endswith("some coffee 1") for h in inspector.hits] == [True]
    inspector.select_layer("days")
    assert "[redacted: private]" in str(table_rows(inspector.table))
    assert inspector.frame["content"].str.contains("some coffee 0").any()  # the DataFrame keeps the text


def test_the_scope_picker_reads_all_sessions_when_not_narrowed(store) -> None:
    _many(store)
    inspector = MemoryInspector(store, user_id="alice")
    assert inspector.scope_picker.label == "all sessions"  # it was blank: a Dropdown shows None as nothing
    inspector.select_scope("s1")
    inspector.scope_picker.value = ""
    assert inspector.scope is None and inspector.scope_picker.label == "all sessions"
