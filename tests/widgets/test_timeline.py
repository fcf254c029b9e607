"""ToolTimeline driven through its Python API and its controls (no browser)."""

from __future__ import annotations

import datetime as _dt
import html
import json

import pandas as pd
import pytest
from inspector_testlib import (
    ESCAPED_IMG,
    ESCAPED_SCRIPT,
    XSS_IMG,
    XSS_SCRIPT,
    assert_inert,
    at,
    build_user,
    expected_calls,
    table_rows,
    turn,
)

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb import frames as F
from agentmem_nb.widgets.timeline import ToolTimeline, timeline_svg


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


@pytest.fixture
def timeline(store: MemoryStore, mem) -> ToolTimeline:
    return ToolTimeline(store, user_id="alice")


def marks(html: str) -> int:
    return html.count('class="amn-timeline-mark')


def rows(timeline: ToolTimeline) -> int:
    return len(table_rows(timeline.table))


def ids(frame: pd.DataFrame) -> list[str]:
    return list(frame["call_id"])


def test_repr_is_stable(timeline) -> None:
    assert repr(timeline) == "ToolTimeline(user='alice', source='log', lanes='tool')"
    timeline.set_lanes("session")
    timeline.set_source("sessions")
    assert repr(timeline) == "ToolTimeline(user='alice', source='sessions', lanes='session')"


@pytest.mark.parametrize("source", ["log", "sessions"])
def test_every_call_is_a_row_and_a_mark(store, mem, source) -> None:
    timeline = ToolTimeline(store, user_id="alice", source=source)
    assert timeline.frame.equals(F.tool_calls(mem, source=source))
    assert timeline.df is timeline.frame
    assert len(timeline.frame) == len(expected_calls(mem, source=source)) == 6
    values = timeline.html_values()
    assert marks(values["chart"]) == 6 and rows(timeline) == 6
    assert "6 calls" in values["summary"]


def test_lanes_per_tool_or_per_session(timeline) -> None:
    chart = timeline.chart.svg
    assert chart.count('class="amn-lane-label"') == timeline.frame["tool"].nunique() == 4
    timeline.lanes_picker.value = "session"
    assert timeline.lanes == "session"
    assert timeline.chart.svg.count('class="amn-lane-label"') == timeline.frame["session_id"].nunique() == 3


@pytest.mark.parametrize("kwargs, keep", [
    ({"tools": "search_daily"}, lambda r: r[5] == "search_daily"),
    ({"tools": ["remember_note", "search_session"]}, lambda r: r[5] in ("remember_note", "search_session")),
    ({"keyword": "LYON"}, lambda r: "lyon" in json.dumps(r[6]).casefold() or "lyon" in r[7].casefold()),
    ({"keyword": XSS_SCRIPT}, lambda r: XSS_SCRIPT in r[7]),
    ({"session": "s2"}, lambda r: r[1] == "s2"),
    ({"start": "2026-04-07"}, lambda r: r[0] >= at(7, 0)),
    ({"end": _dt.date(2026, 4, 6)}, lambda r: r[0] < at(7, 0)),
    ({"start": at(6, 9, 1), "end": at(7, 23)}, lambda r: at(6, 9, 1) <= r[0] <= at(7, 23)),
    ({"status": "error"}, lambda r: r[8] == "error"),
    ({"tools": "search_daily", "keyword": "boom"}, lambda r: r[5] == "search_daily" and "boom" in json.dumps(r[6])),
])
def test_filters(timeline, mem, kwargs, keep) -> None:
    frame = timeline.filter(**kwargs)
    expected = [r for r in expected_calls(mem, source="log") if keep(r)]
    assert [(t.to_pydatetime(), s, tool) for t, s, tool in zip(frame["ts"], frame["session_id"], frame["tool"])] == [
        (r[0], r[1], r[5]) for r in expected]
    assert frame is timeline.frame
    assert marks(timeline.chart.svg) == rows(timeline) == len(expected)
    assert timeline.filters.active()


def test_filter_replaces_the_previous_filters(timeline) -> None:
    timeline.filter(tools="search_daily")
    assert len(timeline.filter(session="s1")) == 3  # not "search_daily in s1" (there is none)
    assert len(timeline.clear_filters()) == 6 and not timeline.filters.active()


def test_filter_controls_drive_the_widget(timeline) -> None:
    timeline.keyword_filter.value = "lyon"  # what the browser sends on Enter
    assert ids(timeline.frame) == ["c1", "c2"]
    timeline.tool_filter.value = ("search_session",)
    assert ids(timeline.frame) == ["c2"]
    timeline.clear_button.click()
    assert len(timeline.frame) == 6 and timeline.keyword_filter.value == "" and timeline.tool_filter.value == ()
    timeline.session_filter.value = "s3"
    assert ids(timeline.frame) == ["c6"]
    timeline.session_filter.value = None
    timeline.start_filter.value = _dt.date(2026, 4, 7)
    timeline.end_filter.value = _dt.date(2026, 4, 7)
    assert ids(timeline.frame) == ["c4", "c5"]
    assert timeline.errors == []


def test_programmatic_filters_show_in_the_controls(timeline) -> None:
    timeline.filter(tools=["search_daily"], keyword="boom", session="s2", start="2026-04-07")
    assert timeline.tool_filter.value == ("search_daily",)
    assert timeline.keyword_filter.value == "boom"
    assert timeline.session_filter.value == "s2"
    assert timeline.start_filter.value == _dt.date(2026, 4, 7) and timeline.end_filter.value is None


def test_select_shows_the_whole_call(timeline) -> None:
    row = timeline.select(3)
    assert row["call_id"] == "c4" and timeline.selected == 3
    detail = timeline.detail.value
    assert ESCAPED_SCRIPT in detail and "search_daily" in detail
    assert html.escape(json.dumps(XSS_IMG)) in detail  # the input as JSON text, escaped
    assert timeline.select(-1)["call_id"] == "c6"
    timeline.call_picker.value = 0  # the UI path
    assert timeline.selected == 0 and "remember_note" in timeline.detail.value
    # a filter that keeps the chosen call keeps it chosen (at its new position); one that drops it clears the panel
    timeline.select(5)
    timeline.filter(session="s3")
    assert timeline.selected == 0 and ids(timeline.frame) == ["c6"] and "喜欢蓝莓" in timeline.detail.value
    timeline.filter(session="s1")
    assert timeline.selected is None and timeline.detail.value == ""
    with pytest.raises(IndexError, match="3 call"):
        timeline.select(3)


def test_rows_show_input_and_output_and_marks_carry_hover_titles(timeline) -> None:
    data = timeline.table_data()
    assert rows(timeline) == 6
    assert "saved" in data and "lives in Lyon" in data
    chart = timeline.chart.svg
    assert chart.count("<title>") >= 6
    assert "input: {&quot;keyword&quot;: &quot;lyon&quot;}" in chart


def test_max_rows_draws_the_newest(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice", max_rows=2)
    assert len(timeline.frame) == 6
    assert marks(timeline.chart.svg) == rows(timeline) == 2
    assert 'data-index="5"' in timeline.chart.svg and 'data-index="3"' not in timeline.chart.svg
    assert "the newest 2" in timeline.summary.value


def test_xss_payloads_are_escaped_everywhere(timeline) -> None:
    seen = ""
    for lanes in ("tool", "session"):
        timeline.set_lanes(lanes)
        for index in range(len(timeline.frame)):
            timeline.select(index)
            cells = [str(c) for r in table_rows(timeline.table) for c in r]
            for value in [*timeline.html_values().values(), *cells]:
                assert_inert(value)  # a table cell reaches the browser as HTML too: itables escaped it
                seen += value
    assert html.escape(json.dumps(XSS_IMG)) in seen  # the input, shown as JSON text
    assert ESCAPED_SCRIPT in seen


def test_a_tool_name_with_markup_is_escaped_in_lanes(store) -> None:
    mem = store.user("mallory")
    turn(mem, "s", "hi", "ok", at(8, 10), (ToolCall(XSS_IMG, {"k": XSS_SCRIPT}, XSS_SCRIPT, status="error"),))
    timeline = ToolTimeline(store, user_id="mallory")
    for value in timeline.html_values().values():
        assert_inert(value)
    assert ESCAPED_IMG in timeline.chart.svg
    assert_inert(timeline_svg(timeline.frame, lanes="session"))


def test_refresh_picks_up_new_calls_reading_only_them(timeline, mem) -> None:
    follower = timeline._followers["alice"]
    log_path = mem.directory / "logs" / "llm_dialogue.jsonl"
    size_before = log_path.stat().st_size
    file_before = mem.log.file.stats.bytes_read
    turn(mem, "s1", "my cat?", "Tom.", at(9, 8), (ToolCall("search_session", {"keyword": "cat"}, "none", id="c9"),))
    timeline.filter(tools="search_session")
    assert ids(timeline.frame) == ["c2"]
    timeline.refresh_button.click()
    assert ids(timeline.frame) == ["c2", "c9"]  # filters kept
    new_bytes = log_path.stat().st_size - size_before
    assert mem.log.file.stats.bytes_read - file_before <= 2 * new_bytes + 4096  # index catch-up + the new entry
    assert follower.stats.bytes_read == 0  # log entries come through the store's own tail()


def test_errors_in_callbacks_are_shown_not_lost(timeline, monkeypatch) -> None:
    def broken(*_args, **_kwargs):
        raise RuntimeError(f"log unreadable {XSS_SCRIPT}")

    monkeypatch.setattr(type(timeline._followers["alice"]), "tool_calls", broken)
    timeline.refresh_button.click()
    assert timeline.last_error is not None and timeline.last_error.action == "refresh"
    assert ESCAPED_SCRIPT in timeline.error_area.value
    assert_inert(timeline.error_area.value)


def test_bad_arguments_raise_and_change_nothing(timeline) -> None:
    timeline.filter(tools="search_daily")
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        timeline.filter(start="someday")
    assert timeline.filters.tools == ("search_daily",) and len(timeline.frame) == 2
    with pytest.raises(ValueError, match="'tool', 'session'"):
        timeline.set_lanes("day")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'log', 'sessions'"):
        ToolTimeline(timeline.store, source="daily")  # type: ignore[arg-type]


def test_user_switch(timeline, store) -> None:
    build_user(store, "bob")
    timeline.filter(session="s1", tools="search_session")
    timeline.user_picker.value = "bob"
    assert timeline.user_id == "bob" and set(timeline.frame["user_id"]) == {"bob"}
    assert timeline.filters.session is None and timeline.filters.tools == ("search_session",)


def test_an_empty_store(tmp_path) -> None:
    timeline = ToolTimeline(MemoryStore(tmp_path / "empty", zone="UTC"))
    assert repr(timeline) == "ToolTimeline(user=None, source='log', lanes='tool')"
    assert len(timeline.frame) == 0 and "No tool calls" in timeline.chart.svg


def test_seed_data(seed_root) -> None:
    store = MemoryStore(seed_root, zone="Asia/Shanghai")
    timeline = ToolTimeline(store)
    assert timeline.user_id == "demo-user" and len(timeline.frame) == 8
    assert marks(timeline.chart.svg) == 8
    found = timeline.filter(keyword="生日")
    assert len(found) == len([r for r in expected_calls(store.user("demo-user"), source="log")
                              if "生日" in json.dumps(r[6], ensure_ascii=False) or "生日" in r[7]])
    timeline.set_source("sessions")
    assert len(timeline.frame) <= 4
    timeline.clear_filters()
    assert len(timeline.frame) == 4
    timeline.select(0)
    assert "生日" in timeline.detail.value
