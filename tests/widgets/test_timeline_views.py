"""Issue 19 for the timeline: any width, marks inside the axis, stable colours, sub-second ticks, zoom, click to
select, "all sessions", spans, a busy state, open-in-chat, the zone stated."""

from __future__ import annotations

import datetime as _dt
import re

import pytest
from inspector_testlib import at, build_user, table_rows, turn

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb.widgets._timeline_draw import LEFT, RIGHT
from agentmem_nb.widgets.timeline import ToolTimeline

UTC = _dt.timezone.utc


def _marks(svg: str) -> list[dict[str, str]]:
    """Every mark's attributes."""
    return [dict(re.findall(r'([\w-]+)="([^"]*)"', m)) for m in re.findall(r"<(?:circle|rect) ([^>]*)>", svg)]


def _right_edge(mark: dict[str, str]) -> float:
    if "cx" in mark:
        return float(mark["cx"]) + float(mark["r"])
    return float(mark["x"]) + float(mark["width"])


def _axis_end(svg: str) -> float:
    """Where the time axis (the first amn-axis line, drawn full length) ends."""
    found = re.search(r'<line x1="[\d.]+" x2="([\d.]+)" y1="[\d.]+" y2="[\d.]+" class="amn-axis"/>', svg)
    assert found, svg[:300]
    return float(found.group(1))


def _axis_labels(svg: str) -> list[str]:
    return re.findall(r'class="amn-axis-label">([^<]*)<', svg)


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


def test_the_chart_fits_the_width_the_notebook_gives_it(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice")
    timeline.chart.width = 600  # what the browser reports for a 600 px notebook
    svg = timeline.chart.svg
    assert 'width="100%"' in svg and 'viewBox="0 0 600 ' in svg and "860" not in svg
    assert all(_right_edge(m) <= 600 - RIGHT + 0.01 for m in _marks(svg))


def test_no_mark_is_drawn_past_the_end_of_the_axis(store) -> None:
    mem = store.user("bob")
    turn(mem, "s", "q1", "r1", at(8, 9))
    # the last turn makes eight calls at the same moment: they used to be stepped 7 px apart, past the axis
    turn(mem, "s", "q2", "r2", at(8, 10), tuple(ToolCall(f"tool{i}", {}, "x", id=f"c{i}") for i in range(8)))
    turn(mem, "s", "q0", "r0", at(8, 8), (ToolCall("first", {}, "x", id="c0"),))
    timeline = ToolTimeline(store, user_id="bob")
    for width in (600, 900):
        timeline.chart.width = width
        edges = [_right_edge(m) for m in _marks(timeline.chart.svg)]
        assert len(edges) == 9 and max(edges) <= _axis_end(timeline.chart.svg) + 0.01
        assert min(float(m.get("cx", m.get("x", 0))) for m in _marks(timeline.chart.svg)) >= LEFT


def test_a_tool_keeps_its_colour_when_others_are_filtered_out(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice")

    def colour_of(tool: str) -> set[str]:
        return {m["fill"] for m in _marks(timeline.chart.svg) if f"{tool} ·" in timeline.chart.svg
                and m["class"].find("amn-error") < 0 and timeline.frame["tool"].iloc[int(m["data-index"])] == tool}

    before = colour_of("get_session_window")
    assert before
    timeline.filter(tools=["get_session_window"])
    assert colour_of("get_session_window") == before


def test_calls_within_one_second_get_distinct_sub_second_labels(store) -> None:
    mem = store.user("bob")
    start = _dt.datetime(2026, 4, 8, 10, 0, 0, 100_000, tzinfo=UTC)
    for k in range(5):
        turn(mem, "s", f"q{k}", f"r{k}", start + _dt.timedelta(milliseconds=150 * k),
             (ToolCall("search_session", {"keyword": str(k)}, "x", id=f"c{k}"),))
    timeline = ToolTimeline(store, user_id="bob")
    labels = _axis_labels(timeline.chart.svg)
    assert len(labels) >= 3 and len(set(labels)) == len(labels)
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", label) for label in labels), labels


def test_zoom_by_range_and_by_dragging_and_reset(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice")
    everything = len(_marks(timeline.chart.svg))
    first = timeline.frame["ts"].min()
    timeline.zoom(first - _dt.timedelta(minutes=1), first + _dt.timedelta(minutes=1))
    zoomed = _marks(timeline.chart.svg)
    assert 0 < len(zoomed) < everything and not timeline.zoom_reset.disabled
    assert "zoomed" in timeline.zoom_note.value
    timeline.reset_zoom()
    assert len(_marks(timeline.chart.svg)) == everything and timeline.zoom_reset.disabled
    timeline.chart.brush = [0.0, 0.05]  # a drag over the first twentieth of the axis, in the browser
    assert timeline.zoomed is not None and 0 < len(_marks(timeline.chart.svg)) < everything
    with pytest.raises(ValueError, match="before the end"):
        timeline.zoom(first, first)


def test_clicking_a_mark_or_a_row_selects_its_call(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice")
    timeline.chart.clicked = [2, 1]  # what the chart's script sends for a click on mark 2
    assert timeline.selected == 2 and f"#2 {timeline.frame['tool'].iloc[2]}" in timeline.detail.value
    assert "amn-selected" in timeline.chart.svg and timeline.table.selected_rows == [2]
    timeline.table.selected_rows = [4]  # a click on row 4 of the table
    assert timeline.selected == 4 and timeline.frame["tool"].iloc[4] in timeline.detail.value


def test_the_session_filter_reads_all_sessions_when_not_filtering(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice")
    assert timeline.session_filter.label == "all sessions"
    timeline.filter(session="s1")
    assert timeline.session_filter.label == "s1"
    timeline.clear_filters()
    assert timeline.session_filter.label == "all sessions" and timeline.session_filter.index == 0
    timeline.session_filter.value = "s2"
    assert set(timeline.frame["session_id"]) == {"s2"}


def test_calls_with_durations_are_spans_one_after_another(store) -> None:
    mem = store.user("bob")
    calls = (ToolCall("search_session", {}, "x", id="a", duration_ms=400.0),
             ToolCall("get_session_window", {}, "y", id="b", duration_ms=600.0),
             ToolCall("remember_note", {}, "z", id="c"))
    turn(mem, "s", "q", "r", _dt.datetime(2026, 4, 8, 10, 0, tzinfo=UTC), calls)
    timeline = ToolTimeline(store, user_id="bob")
    timeline.chart.width = 1000
    marks = {timeline.frame["call_id"].iloc[int(m["data-index"])]: m for m in _marks(timeline.chart.svg)}
    a, b = marks["a"], marks["b"]
    assert "amn-span" in a["class"] and "amn-span" in b["class"] and "cx" in marks["c"]
    assert float(a["x"]) + float(a["width"]) == pytest.approx(float(b["x"]), abs=0.2)  # b starts as a ends
    assert float(b["width"]) == pytest.approx(1.5 * float(a["width"]), rel=0.01)  # 600 ms vs 400 ms


def test_loading_shows_it_is_busy(store, mem) -> None:
    timeline = ToolTimeline(store, user_id="alice")
    follower = timeline._follower()
    seen: list[tuple[str, bool]] = []
    real = follower.tool_calls

    def watched(**kwargs):
        seen.append((timeline.busy, "amn-busy" in timeline._dom_classes))
        return real(**kwargs)

    follower.tool_calls = watched  # type: ignore[method-assign]
    timeline.refresh()
    assert seen and seen[-1][0].startswith("Loading") and seen[-1][1]
    assert timeline.busy == "" and "amn-busy" not in timeline._dom_classes


def test_open_call_hands_the_assistant_message_to_the_hook(store, mem) -> None:
    opened: list[tuple[str, int]] = []
    timeline = ToolTimeline(store, user_id="alice", on_open_message=lambda s, m: opened.append((s, m)))
    row = timeline.frame.iloc[1]
    assert timeline.open_call(1) == (row["session_id"], int(row["message_id"]))
    timeline.open_button.click()
    assert opened == [(row["session_id"], int(row["message_id"]))] * 2
    message = mem.session(row["session_id"]).get(int(row["message_id"]))
    assert message is not None and message.role == "assistant"
    assert any(c.id == row["call_id"] for c in message.tool_calls)


def test_the_summary_states_the_zone_and_the_table_agrees(tmp_path) -> None:
    store = MemoryStore(tmp_path / "m", zone="Europe/Paris")
    turn(store.user("demo"), "s", "q", "r", _dt.datetime(2026, 4, 8, 7, 29, tzinfo=UTC),
         (ToolCall("search_session", {}, "x", id="a"),))
    timeline = ToolTimeline(store, user_id="demo")
    assert "times in Europe/Paris" in timeline.summary.value
    assert table_rows(timeline.table)[0][0] == "2026-04-08 09:29:05.000"  # the turn's time (+5 s), in Paris
