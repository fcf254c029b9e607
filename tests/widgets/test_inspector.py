"""MemoryInspector driven through its Python API and its controls (no browser)."""

from __future__ import annotations

import pytest
from inspector_testlib import (ESCAPED_IMG, ESCAPED_SCRIPT, XSS_IMG, assert_inert, at, build_user, table_rows,
                              turn)

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb import frames as F
from agentmem_nb.retrieval import Retriever, Scope, SearchResult, search
from agentmem_nb.store import MAX_WINDOW_SIDE
from agentmem_nb.widgets.inspector import LAYERS, MemoryInspector


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


@pytest.fixture
def inspector(store: MemoryStore, mem) -> MemoryInspector:
    return MemoryInspector(store, user_id="alice")


def test_repr_is_stable_and_says_where_it_looks(inspector) -> None:
    assert repr(inspector) == "MemoryInspector(user='alice', layer='sessions')"
    inspector.select_scope("s2")
    assert repr(inspector) == "MemoryInspector(user='alice', layer='sessions', scope='s2')"
    inspector.select_layer("log")
    assert repr(inspector) == "MemoryInspector(user='alice', layer='log')"


@pytest.mark.parametrize("layer, scope, expected", [
    ("sessions", None, lambda mem: F.session_messages(mem)),
    ("sessions", "s1", lambda mem: F.session_messages(mem, "s1")),
    ("days", None, lambda mem: F.daily_messages(mem)),
    ("days", "2026-04-07", lambda mem: F.daily_messages(mem, "2026-04-07")),
    ("long_term", None, lambda mem: F.long_term(mem)),
    ("long_term", "history", lambda mem: F.long_term_history(mem)),
    ("log", None, lambda mem: F.dialogue_log(mem)),
    ("tool_calls", None, lambda mem: F.tool_calls(mem)),
    ("tool_calls", "sessions", lambda mem: F.tool_calls(mem, source="sessions")),
    ("problems", None, lambda mem: F.problems(mem)),
    ("conversations", None, lambda mem: F.conversations(mem)),
])
def test_every_layer_is_its_frame(inspector, mem, layer, scope, expected) -> None:
    inspector.select_layer(layer)
    if scope:
        inspector.select_scope(scope)
    assert inspector.frame.equals(expected(mem))
    # the table (itables) gets one row per row of the frame, newest last
    assert len(table_rows(inspector.table)) == len(inspector.frame)


def test_the_table_shows_only_the_newest_rows(store, mem) -> None:
    inspector = MemoryInspector(store, user_id="alice", max_rows=3)
    assert len(inspector.frame) == 8
    assert len(table_rows(inspector.table)) == 3
    assert "the newest 3 of 8 rows" in inspector.caption.value
    assert inspector.frame["content"].iloc[-1] in str(table_rows(inspector.table))


def test_keyword_search_lists_the_store_hits_and_a_hit_opens_its_window(inspector, mem) -> None:
    hits = inspector.search("LYON")
    expected = [m for s in mem.session_ids() for m in mem.search_session(s, "lyon")]
    expected.sort(key=lambda m: m.ts)
    assert [(h.key, h.anchor) for h in hits] == [(m.session_id, m.message_id) for m in expected]
    assert inspector.search_mode == "keyword"
    assert len(inspector.hits_box.children) == len(hits)
    assert all("amn-inspector-hit" in b._dom_classes for b in inspector.hits_box.children)
    window = inspector.select_hit(1)
    store_window = mem.session(hits[1].key).window(hits[1].anchor, 2, 2)
    assert list(window.frame["message_id"]) == [m.message_id for m in store_window.messages]
    assert window.frame["message_id"].iloc[window.anchor_row] == hits[1].anchor
    # the anchor is the window table's one selected row
    assert inspector.window_table.selected_rows == [window.anchor_row]
    anchor_row = table_rows(inspector.window_table)[window.anchor_row]
    assert "Noted: you live in Lyon." in anchor_row


def test_window_steps_before_and_after_and_clamps(inspector, mem) -> None:
    inspector.search("where do i live")  # several words: ranked when retrieval is there, else substring
    anchor = inspector.hits[0].anchor
    inspector.set_window(before=0, after=0)
    window = inspector.select_hit(0)
    assert list(window.frame["message_id"]) == [anchor]
    window = inspector.widen(before=1)
    assert list(window.frame["message_id"]) == [anchor - 1, anchor]
    inspector.after_plus.click()  # the UI path
    assert list(inspector.window.frame["message_id"]) == [anchor - 1, anchor, anchor + 1]
    inspector.before_minus.click()
    assert (inspector.before, inspector.after) == (0, 1)
    assert inspector.before_minus.disabled and not inspector.before_plus.disabled
    inspector.widen(before=-5)
    assert inspector.before == 0
    inspector.set_window(after=10 * MAX_WINDOW_SIDE)
    assert inspector.after == MAX_WINDOW_SIDE and inspector.after_plus.disabled
    # clamped at the end of the thread: the window simply stops there
    assert inspector.window.frame["message_id"].iloc[-1] == len(mem.session(inspector.hits[0].key))


def test_days_layer_hits_and_windows_use_the_day_files(inspector, mem) -> None:
    inspector.select_layer("days")
    hits = inspector.search("蓝莓")
    assert [(h.key, h.anchor) for h in hits] == [(m.day, m.message_id) for m in mem.search_daily("蓝莓")]
    window = inspector.select_hit(0)
    assert list(window.frame["message_id"]) == [m.message_id for m in mem.daily(hits[0].key).window(hits[0].anchor,
                                                                                                      2, 2).messages]


def test_ranked_search_explains_its_hits(inspector) -> None:
    pytest.importorskip("agentmem_nb.retrieval")
    hits = inspector.search("where do I live")
    assert inspector.search_mode == "ranked"
    assert hits and all(h.explain.startswith("score") for h in hits)
    inspector.select_hit(0)
    assert "score" in inspector.window_view.value


class _Recording(Retriever):
    """The default retriever, noting what each search asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Scope, str, int]] = []

    def search(self, user, query, *, scope=None, budget=20, **options) -> SearchResult:  # noqa: ANN001
        self.seen.append((scope, query, budget))
        return super().search(user, query, scope=scope, budget=budget, **options)


def test_message_layers_are_searched_by_the_given_retriever(store, mem) -> None:
    """The inspector runs the one search (retrieval.search, through the retriever it is given) and shows its hits:
    same items, same order, ranked ones with their explanation."""
    retriever = _Recording()
    inspector = MemoryInspector(store, user_id="alice", hit_limit=5, retriever=retriever)
    ranked = inspector.search("where do I live")
    inspector.select_scope("s1")
    exact = inspector.search(" lyon ")
    inspector.select_layer("days")
    inspector.search("蓝莓")
    assert retriever.seen == [(Scope.everything(layer="session"), "where do I live", 5),
                              (Scope.session("s1"), "lyon", 5), (Scope.everything(), "蓝莓", 5)]
    expected = search(mem, "where do I live", scope=Scope.everything(layer="session"), budget=5, before=0, after=0)
    assert [h.item for h in ranked] == [h.item for h in expected.hits] and expected.mode == "ranked"
    assert [h.explain for h in ranked] == [h.explain() for h in expected.hits]
    assert [h.item for h in exact] == [h.item for h in search(mem, "lyon", scope=Scope.session("s1")).hits]
    assert inspector.search("zzqx") == [] and "No hit" in inspector.hits_summary.value


@pytest.mark.parametrize("layer, column", [("log", "user_message"), ("tool_calls", "output"),
                                           ("long_term", "text")])
def test_other_layers_search_their_rows_and_window_by_position(inspector, layer, column) -> None:
    inspector.select_layer(layer)
    frame = inspector.frame
    keyword = {"log": "LYON", "tool_calls": "saved", "long_term": "tea"}[layer]
    hits = inspector.search(keyword)
    searched = {"log": ["user_message", "assistant_reply"], "tool_calls": ["tool", "input_text", "output"],
                "long_term": ["text", "section"]}[layer]
    expected = [i for i in range(len(frame))
                if any(keyword.casefold() in str(frame[c].iloc[i]).casefold() for c in searched)]
    assert [h.anchor for h in hits] == expected and hits
    inspector.set_window(before=1, after=1)
    window = inspector.select_hit(len(hits) - 1)
    position = hits[-1].anchor
    assert window.frame.equals(frame.iloc[max(0, position - 1): position + 2].reset_index(drop=True))
    assert window.frame[column].iloc[window.anchor_row] == frame[column].iloc[position]


def test_typing_in_the_search_box_and_clicking_a_hit(inspector) -> None:
    inspector.search_box.value = "lyon"  # what the browser sends on Enter (continuous_update=False)
    assert len(inspector.hits) == 3
    inspector.hits_box.children[2].click()
    assert inspector.window is not None and inspector.window.hit == inspector.hits[2]
    assert inspector.hits_box.children[2].button_style == "info"


def test_pickers_drive_the_widget(inspector, store) -> None:
    build_user(store, "bob")
    inspector.layer_picker.value = "days"
    assert inspector.layer == "days"
    inspector.scope_picker.value = "2026-04-07"
    assert inspector.scope == "2026-04-07" and set(inspector.frame["day"]) == {"2026-04-07"}
    inspector.user_picker.value = "bob"
    assert inspector.user_id == "bob" and inspector.scope is None
    assert set(inspector.frame["user_id"]) == {"bob"}
    assert inspector.errors == []


def test_refresh_picks_up_new_messages_reading_only_them(inspector, mem) -> None:
    inspector.search("cat")
    assert inspector.hits == []
    follower = inspector._followers["alice"]
    read_before = follower.stats.bytes_read
    path = mem.directory / "sessions" / "s1.jsonl"
    size_before = path.stat().st_size
    turn(mem, "s1", "my cat is Tom", "Noted: your cat is Tom.", at(9, 8),
         (ToolCall("remember_note", {"note": "cat Tom"}, "saved", id="c9"),))
    inspector.refresh_button.click()
    assert inspector.frame.equals(F.session_messages(mem))
    assert follower.stats.bytes_read - read_before == path.stat().st_size - size_before
    assert [h.anchor for h in inspector.hits] == [5, 6]  # the search ran again
    inspector.select_hit(0)
    turn(mem, "s1", "and the dog?", "No dog recorded.", at(9, 9))
    inspector.refresh()
    assert inspector.window is not None and len(inspector.window.frame) == 5  # new neighbours after the anchor


def test_errors_in_callbacks_are_shown_not_lost(inspector, monkeypatch) -> None:
    def broken(*_args, **_kwargs):
        raise RuntimeError(f"disk on fire {XSS_IMG}")

    monkeypatch.setattr(type(inspector.mem), "search_session", broken)
    inspector.search_box.value = "lyon"
    assert inspector.last_error is not None and inspector.last_error.action == "search"
    assert "disk on fire" in inspector.error_area.value and ESCAPED_IMG in inspector.error_area.value
    assert_inert(inspector.error_area.value)
    monkeypatch.undo()
    inspector.search_button.click()  # a later success clears the area
    assert inspector.error_area.value == "" and len(inspector.errors) == 1


def test_programmatic_misuse_raises_with_the_fix(inspector) -> None:
    with pytest.raises(IndexError, match="search first"):
        inspector.select_hit(0)
    inspector.search("lyon")
    with pytest.raises(IndexError, match="there are 3"):
        inspector.select_hit(7)
    with pytest.raises(ValueError, match="unknown layer 'memory'"):
        inspector.select_layer("memory")
    with pytest.raises(ValueError, match="'history'"):
        inspector.select_layer("long_term") or inspector.select_scope("lines")
    with pytest.raises(ValueError, match="no scopes"):
        inspector.select_layer("log") or inspector.select_scope("x")
    with pytest.raises(ValueError, match="session_id"):
        inspector.select_layer("sessions") or inspector.select_scope("../etc")
    with pytest.raises(ValueError, match="'history'"):
        inspector.select_layer("facts") or inspector.select_scope("current")
    assert set(LAYERS) == {"long_term", "sessions", "days", "log", "tool_calls", "problems", "conversations",
                           "facts"}


def test_xss_payloads_are_escaped_in_every_html_value(inspector) -> None:
    seen_img = seen_script = False
    for layer in LAYERS:
        inspector.select_layer(layer)
        for query in ("alert", XSS_IMG, "<script>"):
            inspector.search(query)
            if inspector.hits:
                inspector.select_hit(0)
                inspector.widen(before=3, after=3)
            cells = [str(c) for t in (inspector.table, inspector.window_table) for r in table_rows(t) for c in r]
            for html in [*inspector.html_values().values(), *cells]:
                assert_inert(html)  # a table cell reaches the browser as HTML too: itables escaped it
                seen_img |= ESCAPED_IMG in html
                seen_script |= ESCAPED_SCRIPT in html
    assert seen_img and seen_script  # the payloads were shown, as text


def test_an_empty_store(tmp_path) -> None:
    inspector = MemoryInspector(MemoryStore(tmp_path / "empty", zone="UTC"))
    assert repr(inspector) == "MemoryInspector(user=None, layer='sessions')"
    assert len(inspector.frame) == 0 and inspector.search("x") == []
    with pytest.raises(ValueError, match="select_user"):
        inspector.mem  # noqa: B018


def test_seed_data_in_every_layer(seed_root) -> None:
    store = MemoryStore(seed_root, zone="Asia/Shanghai")
    mem = store.user("demo-user")
    inspector = MemoryInspector(store)
    assert inspector.user_id == "demo-user"
    for layer in LAYERS:
        inspector.select_layer(layer)
        assert len(inspector.frame) == {"long_term": len(mem.long_term.lines()),
                                        "sessions": sum(len(mem.session(s)) for s in mem.session_ids()),
                                        "days": sum(len(mem.daily(d)) for d in mem.days()),
                                        "log": 31, "tool_calls": 8, "problems": len(mem.problems()),
                                        "conversations": 8, "facts": len(mem.facts.current())}[layer]
    inspector.select_layer("sessions")
    hits = inspector.search("生日")
    assert hits and inspector.search_mode == "keyword"
    window = inspector.select_hit(len(hits) - 1)
    assert "生日" in window.frame["content"].iloc[window.anchor_row]


@pytest.mark.parametrize("bad", ["folder", "fifo", "link"])
def test_one_refused_thread_file_does_not_keep_the_inspector_from_opening(store: MemoryStore, mem, tmp_path,
                                                                           bad: str) -> None:
    """A listing of every thread leaves out (with a warning naming it) a file the store refuses to open; the rest
    of the user is shown, and the file is still reported by problems()."""
    import os

    from agentmem_nb.errors import MemoryDataWarning, UnsafeFileError

    entry = mem.directory / "sessions" / "notes.jsonl"
    {"folder": entry.mkdir, "fifo": lambda: os.mkfifo(entry),
     "link": lambda: os.symlink(tmp_path / "elsewhere.jsonl", entry)}[bad]()
    with pytest.warns(MemoryDataWarning, match="notes.jsonl"):
        inspector = MemoryInspector(store, user_id=mem.user_id)
    assert len(inspector.frame) == len(F.session_messages(mem, [s for s in mem.session_ids() if s != "notes"]))
    assert str(entry) in {p.path for p in mem.problems()}
    with pytest.raises(UnsafeFileError):  # a thread named by the caller still raises, naming the file
        F.session_messages(mem, "notes")
