"""``ToolTimeline``: every tool call of a user on a time axis, filtered by tool, keyword, session and dates.

Layout (CSS classes in brackets; the browser test addresses them)::

    [user] [source] [lanes] [Refresh]                                             [amn-timeline]
    [tools: amn-timeline-filter-tool] [keyword: amn-timeline-filter-keyword]
    [session: amn-timeline-filter-session] [from: amn-timeline-filter-start] [to: amn-timeline-filter-end] [Clear]
    summary: calls, range, the zone times are shown in                            [amn-timeline-summary]
    SVG chart as wide as the notebook: one lane per tool (or per session),        [amn-timeline-chart]
      one mark per call (a span when its duration is known); click a mark to
      select the call, drag across the axis to zoom          [Reset zoom: amn-timeline-zoom-reset]
    the calls as a sortable, filterable, paged table (itables); click a row       [amn-timeline-table]
    [call picker: amn-timeline-pick] [Open in chat] the chosen call in full        [amn-timeline-detail]
    errors                                                                        [amn-timeline-error]

The chart is an SVG built and escaped in Python (:mod:`agentmem_nb.widgets._timeline_draw`) and shown by a tiny
anywidget (:mod:`agentmem_nb.widgets._chart`) that reports the width, clicks and drags. Every text goes through
:func:`agentmem_nb.widgets.html.escape`; the table's cells are text (itables, ``allow_html=False``). The calls come
from :func:`agentmem_nb.frames.tool_calls` through a :class:`~agentmem_nb.frames.LayerFollower` (a refresh reads only
what was appended); the filtered DataFrame is :attr:`ToolTimeline.frame`, ready for more pandas.

Driven from code::

    timeline = ToolTimeline(store, user_id="alice")
    timeline.filter(tools=["search_session"], keyword="lyon", start="2026-04-01")
    timeline.frame                     # the filtered calls
    timeline.select(0)                 # show the first one in full
    timeline.zoom("2026-04-08 10:00:00", "2026-04-08 10:00:02"); timeline.reset_zoom()
    timeline.show_trace(0)             # the waterfall of the turn that made call 0 (also the "Trace" button)
    timeline.follow(chat)              # refresh after each of the chat's turns (filters and chosen call kept),
    timeline.open_call(0)              # and "Open in chat" opens the message that made the call in that chat

A LangGraph agent's calls in place of a user's (:mod:`agentmem_nb.widgets._langgraph_source`): ``ToolTimeline(agent)``
or ``ToolTimeline(checkpointer)`` lists the tool calls of every thread (the session filter picks threads), and the
trace of a call is the graph run that made it, timed by its checkpoints.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import ipywidgets as widgets
import pandas as pd

from agentmem_nb import frames
from agentmem_nb.frames.tools import tool_calls_from_log
from agentmem_nb.identifiers import check_user_id
from agentmem_nb.widgets._busy import BusyState
from agentmem_nb.widgets._callbacks import WidgetError
from agentmem_nb.widgets._cells import cell_text, zone_note
from agentmem_nb.widgets._chart import TimelineChart
from agentmem_nb.widgets._follow import FollowsChat
from agentmem_nb.widgets._langgraph_source import (
    LangGraphData,
    LangGraphLike,
    LangGraphSource,
    langgraph_source,
    our_store,
)
from agentmem_nb.widgets._open import OpenMessage, OpensMessages
from agentmem_nb.widgets._rows import find_row, row_identity
from agentmem_nb.widgets._tables import TABLE_STYLE, new_table, show_rows
from agentmem_nb.widgets._timeline_draw import call_spans, duration_text, timeline_svg, tool_colours
from agentmem_nb.widgets.trace import TurnTrace
from agentmem_nb.widgets.html import displayable, escape, pretty_json

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore, UserMemory

__all__ = ["ToolTimeline", "TimelineFilters", "TimelineError", "timeline_svg"]  # timeline_svg: _timeline_draw's

Lanes = Literal["tool", "session"]
_Choice = TypeVar("_Choice", bound=str)

_TABLE_COLUMNS = ("ts", "tool", "session_id", "turn", "status", "duration_ms", "output_len", "input_text", "output")
_ALL_SESSIONS = ""
"""The session filter's value for "all sessions" (a Dropdown shows ``None`` as a blank)."""


@dataclass(frozen=True, slots=True)
class TimelineFilters:
    """The filters in force (``None`` = not filtering on that); see :func:`agentmem_nb.frames.filter_tool_calls`."""

    tools: tuple[str, ...] | None = None
    keyword: str = ""
    session: str | None = None
    start: frames.TimeBound = None
    end: frames.TimeBound = None
    status: str | None = None

    def active(self) -> bool:
        """True if any filter is set."""
        return self != TimelineFilters()


TimelineError = WidgetError
"""The timeline's name for :class:`~agentmem_nb.widgets._callbacks.WidgetError` (kept for existing code)."""


class ToolTimeline(OpensMessages, FollowsChat, widgets.VBox):
    """Every tool call of a user on a time axis, with filters and details.

    Args:
        store: the :class:`~agentmem_nb.store.MemoryStore` to read — or a LangGraph agent's memory: a compiled
            graph, a checkpointer or a :class:`~agentmem_nb.widgets.LangGraphSource` (every thread's calls; see
            :attr:`langgraph`).
        user_id: whose calls (default: the first user in the store, if any; a LangGraph source has no users).
        source: ``"log"`` (the dialogue log, default) or ``"sessions"`` (the thread files); see
            :mod:`agentmem_nb.frames.tools`.
        lanes: one lane per ``"tool"`` (default) or per ``"session"``.
        max_rows: calls listed as rows and drawn as marks (the newest); :attr:`frame` keeps them all.
        width: the chart's width in pixels until the browser reports the notebook's (then it follows that).
        on_open_message: ``callback(session_id, message_id)`` run by :meth:`open_call` and "Open in chat" with
            the assistant message that made the call (wire it to the chat's ``open_message``).

    :meth:`follow` links it to a :class:`~agentmem_nb.widgets.ChatWidget`: after each turn it refreshes itself,
    reading only the appended lines, and keeps its user, source, lanes, filters and chosen call.
    """

    _css_root = "amn-timeline-root"
    _css_error = "amn-timeline-error"

    def __init__(
        self,
        store: MemoryStore | LangGraphLike,
        *,
        user_id: str | None = None,
        source: frames.ToolSource = "log",
        lanes: Lanes = "tool",
        max_rows: int = 2000,
        width: int = 640,
        on_open_message: OpenMessage | None = None,
    ) -> None:
        self._init_follow()  # first: Widget.__del__ calls close(), which needs it, even after a rejected argument
        if max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows!r}")
        _check_choice("source", source, ("log", "sessions"))
        _check_choice("lanes", lanes, ("tool", "session"))
        self._init_open(on_open_message)
        self.langgraph: LangGraphSource | None = langgraph_source(store)
        """The LangGraph checkpointer whose threads' calls are shown (``None``: our store's user's are)."""
        if self.langgraph is not None and self.langgraph.checkpointer is None:
            raise ValueError("ToolTimeline needs the graph's checkpointer (its threads hold the tool calls); a "
                             "store alone has none: pass the graph, the checkpointer, or "
                             "LangGraphSource(checkpointer=..., store=...)")
        self.store: MemoryStore | None = our_store(store) if self.langgraph is None else None
        """The store shown (``None`` for a LangGraph source)."""
        self._lg = LangGraphData(self.langgraph) if self.langgraph is not None else None
        self.max_rows = int(max_rows)
        self.user_id: str | None = None
        self.source: frames.ToolSource = source if self.langgraph is None else "sessions"  # a checkpointer's threads
        self.lanes: Lanes = lanes
        self.filters = TimelineFilters()
        self.all_calls: pd.DataFrame = pd.DataFrame()
        """Every call of the user (no filter)."""
        self.frame: pd.DataFrame = pd.DataFrame()
        """The calls that pass the filters, oldest first."""
        self.selected: int | None = None
        """Position in :attr:`frame` of the call shown in the detail panel."""
        self.zoomed: tuple[pd.Timestamp, pd.Timestamp] | None = None
        """The time range the chart shows (``None``: all the filtered calls)."""
        self._init_callbacks()  # errors, error_area, _syncing
        self._busy = BusyState(self, "amn-timeline-status")

        self.user_picker = widgets.Dropdown(description="User", options=[], layout=widgets.Layout(width="auto"),
                                            style={"description_width": "40px"})
        self.user_picker.add_class("amn-timeline-user")
        self.source_picker = widgets.Dropdown(description="From", options=[("dialogue log", "log"),
                                                                            ("thread files", "sessions")],
                                              layout=widgets.Layout(width="auto"), style={"description_width": "40px"})
        self.source_picker.add_class("amn-timeline-source")
        self.lanes_picker = widgets.ToggleButtons(options=[("lane per tool", "tool"), ("lane per session", "session")],
                                                  style={"button_width": "auto"})
        self.lanes_picker.add_class("amn-timeline-lanes")
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh", layout=widgets.Layout(width="auto"))
        self.refresh_button.add_class("amn-timeline-refresh")
        self.tool_filter = widgets.SelectMultiple(description="Tools", options=[], rows=4,
                                                  layout=widgets.Layout(width="auto"),
                                                  style={"description_width": "44px"})
        self.tool_filter.add_class("amn-timeline-filter-tool")
        self.keyword_filter = widgets.Text(description="Keyword", placeholder="in input or output",
                                           continuous_update=False, layout=widgets.Layout(width="auto"),
                                           style={"description_width": "60px"})
        self.keyword_filter.add_class("amn-timeline-filter-keyword")
        self.session_filter = widgets.Dropdown(description="Session", options=[("all sessions", _ALL_SESSIONS)],
                                               value=_ALL_SESSIONS,
                                               layout=widgets.Layout(width="auto"),
                                               style={"description_width": "60px"})
        self.session_filter.add_class("amn-timeline-filter-session")
        self.start_filter = widgets.DatePicker(description="From", layout=widgets.Layout(width="auto"),
                                               style={"description_width": "40px"})
        self.start_filter.add_class("amn-timeline-filter-start")
        self.end_filter = widgets.DatePicker(description="To", layout=widgets.Layout(width="auto"),
                                             style={"description_width": "30px"})
        self.end_filter.add_class("amn-timeline-filter-end")
        self.clear_button = widgets.Button(description="Clear filters", icon="times",
                                           layout=widgets.Layout(width="auto"))
        self.clear_button.add_class("amn-timeline-clear")
        self.summary = widgets.HTML()
        self.summary.add_class("amn-timeline-summary")
        self.chart = TimelineChart(width=int(width))
        self.chart.add_class("amn-timeline-chart")
        self.zoom_reset = widgets.Button(description="Reset zoom", icon="search-minus", disabled=True,
                                         layout=widgets.Layout(width="auto"))
        self.zoom_reset.add_class("amn-timeline-zoom-reset")
        self.zoom_note = widgets.HTML()
        self.zoom_note.add_class("amn-timeline-zoom-note")
        self.table = new_table("amn-timeline-table")
        self.open_button = widgets.Button(description="Open in chat", icon="comments", disabled=True,
                                          layout=widgets.Layout(width="auto"))
        self.open_button.add_class("amn-timeline-open")
        self.trace_button = widgets.Button(description="Trace", icon="stream", disabled=True,
                                           tooltip="the waterfall of the turn that made this call",
                                           layout=widgets.Layout(width="auto"))
        self.trace_button.add_class("amn-timeline-trace")
        self.trace_area = widgets.VBox()
        """Holds the :class:`~agentmem_nb.widgets.trace.TurnTrace` opened by :meth:`show_trace`."""
        self.call_picker = widgets.Dropdown(description="Call", options=[], layout=widgets.Layout(width="auto"),
                                            style={"description_width": "36px"})
        self.call_picker.add_class("amn-timeline-pick")
        self.detail = widgets.HTML()
        self.detail.add_class("amn-timeline-detail")

        super().__init__([
            widgets.HTML(_STYLE),
            widgets.HBox([self.user_picker, self.source_picker, self.lanes_picker, self.refresh_button],
                         layout=widgets.Layout(flex_flow="row wrap")),
            widgets.HBox([self.tool_filter,
                          widgets.VBox([self.keyword_filter, self.session_filter]),
                          widgets.VBox([self.start_filter, self.end_filter]),
                          self.clear_button], layout=widgets.Layout(flex_flow="row wrap")),
            self._busy.status,
            self.summary,
            self.chart,
            widgets.HBox([self.zoom_reset, self.zoom_note], layout=widgets.Layout(flex_flow="row wrap")),
            self.table,
            widgets.HBox([self.call_picker, self.open_button, self.trace_button],
                         layout=widgets.Layout(flex_flow="row wrap")),
            self.detail,
            self.trace_area,
            self.error_area,
        ])
        self.add_class("amn-timeline")

        self.user_picker.observe(self._guarded_change("select user", self.select_user), names="value")
        self.source_picker.observe(self._guarded_change("choose source", self.set_source), names="value")
        self.lanes_picker.observe(self._guarded_change("choose lanes", self.set_lanes), names="value")
        for control in (self.tool_filter, self.keyword_filter, self.session_filter, self.start_filter,
                        self.end_filter):
            control.observe(self._guarded_change("filter", lambda _value: self._filter_from_controls()), names="value")
        self.call_picker.observe(self._guarded_change("choose call", self._pick), names="value")
        self.refresh_button.on_click(self._guarded("refresh", lambda _b: self.refresh()))
        self.clear_button.on_click(self._guarded("clear filters", lambda _b: self.clear_filters()))
        self.zoom_reset.on_click(self._guarded("reset zoom", lambda _b: self.reset_zoom()))
        self.open_button.on_click(self._guarded("open in chat", lambda _b: self.open_call()))
        self.trace_button.on_click(self._guarded("show the trace", lambda _b: self.show_trace()))
        self.chart.observe(self._guarded_change("resize", lambda _w: self._render_chart()), names="width")
        self.chart.observe(self._guarded_change("choose call", self._mark_clicked), names="clicked")
        self.chart.observe(self._guarded_change("zoom", self._brushed), names="brush")
        self.table.observe(self._guarded_change("choose call", self._row_clicked), names="selected_rows")

        if self.langgraph is not None and user_id is not None:
            raise ValueError(f"user_id={user_id!r}: a LangGraph source has no users (its threads are the sessions: "
                             "filter(session=THREAD_ID))")
        users = self._users()
        chosen = user_id if user_id is not None else (users[0] if users else None)
        self.user_id = check_user_id(chosen) if chosen is not None else None
        self._reload()

    # ------------------------------------------------------------------ public API

    def __repr__(self) -> str:
        if self.langgraph is not None:
            return f"ToolTimeline(langgraph={self.langgraph.label!r}, lanes={self.lanes!r})"
        return f"ToolTimeline(user={self.user_id!r}, source={self.source!r}, lanes={self.lanes!r})"

    @property
    def df(self) -> pd.DataFrame:
        """Alias of :attr:`frame`."""
        return self.frame

    @property
    def mem(self) -> UserMemory:
        """The current user's memory."""
        if self.store is None:
            raise ValueError("a LangGraph source has no user memory: its calls are in .frame, its messages in "
                             "frames.session_messages(checkpointer, THREAD_ID)")
        if self.user_id is None:
            raise ValueError("no user selected: call select_user('...') first (the store has no users yet)")
        return self.store.user(self.user_id)

    def _shows_users(self) -> bool:
        return self.langgraph is None  # a LangGraph source: every followed turn refreshes the view

    def select_user(self, user_id: str) -> None:
        """Show ``user``'s calls (filters are kept; a session filter from the previous user is dropped)."""
        if self.langgraph is not None:
            raise ValueError(f"select_user({user_id!r}): a LangGraph source has no users; its threads are the "
                             "sessions (filter(session=THREAD_ID))")
        user_id = check_user_id(user_id)
        if user_id != self.user_id:
            self.user_id = user_id
            self.filters = replace(self.filters, session=None)
        self._reload()

    def set_source(self, source: frames.ToolSource) -> None:
        """Read calls from the dialogue log (``"log"``) or from the thread files (``"sessions"``)."""
        if self.langgraph is not None and source != "sessions":
            raise ValueError(f"source={source!r}: a LangGraph checkpointer's calls come from its threads only "
                             "('sessions')")
        self.source = _check_choice("source", source, ("log", "sessions"))
        self._reload()

    def set_lanes(self, lanes: Lanes) -> None:
        """Draw one lane per ``"tool"`` or per ``"session"``."""
        self.lanes = _check_choice("lanes", lanes, ("tool", "session"))
        self._render()

    def filter(
        self,
        *,
        tools: str | Iterable[str] | None = None,
        keyword: str | None = None,
        session: str | None = None,
        start: frames.TimeBound = None,
        end: frames.TimeBound = None,
        status: str | None = None,
    ) -> pd.DataFrame:
        """Replace the filters (anything not given is not filtered on) and return the filtered calls.

        ``tools``: a name or several; ``keyword``: in the input or the output (casefolded); ``session``: a session
        id; ``start``/``end``: inclusive bounds (a day means the whole local day); ``status``: ``"success"`` or
        ``"error"``.
        """
        chosen = None if tools is None else ((tools,) if isinstance(tools, str) else tuple(tools))
        filters = TimelineFilters(chosen, keyword or "", session or None, start, end, status)
        frames.time_mask(_empty_calls()["ts"], start, end)  # a bad bound raises here, before anything changes
        self.filters = filters
        self._apply()
        return self.frame

    def clear_filters(self) -> pd.DataFrame:
        """Show every call again."""
        return self.filter()

    def select(self, index: int) -> pd.Series:
        """Show call ``index`` (a position in :attr:`frame`, negative from the end) in the detail panel; the chart
        rings its mark and the table selects its row."""
        total = len(self.frame)
        if not -total <= index < total:
            raise IndexError(f"call {index} does not exist: the filtered timeline has {total} call(s)")
        self.selected = index % total
        self._render_detail()
        self._sync_controls()
        self._render_chart()
        offset = total - len(self.frame.tail(self.max_rows))
        with self._quiet():
            self.table.selected_rows = [self.selected - offset] if self.selected >= offset else []
        return self.frame.iloc[self.selected]

    def refresh(self) -> None:
        """Pick up calls written since the last look (reads only appended lines); filters are kept."""
        self._reload()

    def zoom(self, start: frames.TimeBound, end: frames.TimeBound) -> None:
        """Show only ``start..end`` on the chart (the filters and the table are unchanged); naive times are in the
        zone the timeline shows. A drag across the chart does the same."""
        zone = self.all_calls["ts"].dt.tz
        first, last = (_moment(b, zone) for b in (start, end))
        if not first < last:
            raise ValueError(f"zoom: the start {start!r} must be before the end {end!r}")
        self.zoomed = (first, last)
        self._render_chart()

    def reset_zoom(self) -> None:
        """Show every filtered call on the chart again."""
        self.zoomed = None
        self._render_chart()

    def open_call(self, index: int | None = None) -> tuple[str, int]:
        """Ask the wired chat to open the assistant message that made call ``index`` (default: the selected call);
        returns ``(session_id, message_id)``."""
        position = self.selected if index is None else index
        if position is None:
            raise IndexError("no call selected: click a mark or a row first, or pass the call's index")
        row = self.select(position) if index is not None else self.frame.iloc[position]
        session = None if pd.isna(row["session_id"]) else str(row["session_id"])
        message = None if pd.isna(row["message_id"]) else int(row["message_id"])
        self._open_message(session, message)
        assert session is not None and message is not None  # _open_message raised otherwise
        return session, message

    def show_trace(self, index: int | None = None) -> TurnTrace:
        """Show (below the call's details) the trace of the turn that made call ``index`` (default: the selected
        call): its model steps and tool calls as spans with their durations. Returns the trace widget."""
        position = self.selected if index is None else index
        if position is None:
            raise IndexError("no call selected: click a mark or a row first, or pass the call's index")
        row = self.select(position) if index is not None else self.frame.iloc[position]
        if self._lg is not None:  # the graph run that made the call, from the thread's checkpoints
            thread, message = str(row["session_id"]), int(row["message_id"])
            trace = TurnTrace.of(self._lg.run_trace(thread, message),
                                 origin=f"{self._lg.label} · message #{message}")
            self._close_trace()
            self.trace_area.children = (trace,)
            return trace
        assert self.user_id is not None and self.store is not None  # a selected call belongs to the shown user
        if self.source == "log":  # the call's row names its dialogue-log line
            trace = TurnTrace(self.store, user_id=self.user_id, entry_id=int(row["turn"]))
        else:  # thread files: the assistant message that carries the call
            if pd.isna(row["session_id"]) or pd.isna(row["message_id"]):
                raise LookupError(f"call #{position} names no message, so no turn can be found for it")
            trace = TurnTrace(self.store, user_id=self.user_id, session_id=str(row["session_id"]),
                              message_id=int(row["message_id"]))
        self._close_trace()
        self.trace_area.children = (trace,)
        return trace

    def _close_trace(self) -> None:
        for shown in self.trace_area.children:
            shown.close()
        self.trace_area.children = ()

    @property
    def busy(self) -> str:
        """What the timeline is doing right now (``""`` when idle)."""
        return self._busy.busy

    @property
    def colours(self) -> dict[str, str]:
        """The colour of each tool: from every call of the user, so filtering never changes a tool's colour."""
        return tool_colours(self.all_calls["tool"].dropna().astype(str)) if len(self.all_calls) else {}

    def html_values(self) -> dict[str, str]:
        """Every HTML string the widget currently shows, by part (for checks such as escaping)."""
        return {"summary": self.summary.value, "chart": self.chart.svg, "detail": self.detail.value,
                "zoom": self.zoom_note.value, "status": self._busy.status.value, "error": self.error_area.value}

    def table_data(self) -> str:
        """The rows the calls table sends to the browser (itables' JSON, cells escaped)."""
        return str(self.table._dt_args.get("data_json", ""))

    # ------------------------------------------------------------------ state

    def _reload(self) -> None:
        with self._busy.working("Loading tool calls…"):
            if self._lg is not None:
                self.all_calls = self._lg.tool_calls()
            elif self.user_id is None:
                self.all_calls = _empty_calls()
            else:
                self.all_calls = self._follower().tool_calls(source=self.source)
        self._apply()

    def _apply(self) -> None:
        f = self.filters
        chosen = self.selected if self.selected is not None and self.selected < len(self.frame) else None
        previous = row_identity(self.frame, chosen, "tool_calls") if chosen is not None else None
        self.frame = frames.filter_tool_calls(self.all_calls, tools=f.tools, keyword=f.keyword or None,
                                              session=f.session, start=f.start, end=f.end, status=f.status)
        # (session_id, turn, call_index) names one call, so the old position is only a hint for where it is now
        self.selected = (find_row(self.frame, previous, "tool_calls", hint=chosen)
                         if previous is not None and chosen is not None else None)
        self._render()

    def _filter_from_controls(self) -> None:
        tools = tuple(self.tool_filter.value) or None
        self.filter(tools=tools, keyword=self.keyword_filter.value, session=self.session_filter.value or None,
                    start=self.start_filter.value, end=self.end_filter.value, status=self.filters.status)

    def _pick(self, value: int | None) -> None:
        if value is not None:
            self.select(value)

    # ------------------------------------------------------------------ rendering

    def _render(self) -> None:
        self._sync_controls()
        shown = self.frame.tail(self.max_rows)
        offset = len(self.frame) - len(shown)
        total, count = len(self.all_calls), len(self.frame)
        who = escape(self.user_id) if self.user_id else escape(self._lg.label) if self._lg else "no user"
        extent = f"{count:,} of {total:,} calls" if self.filters.active() else f"{total:,} calls"
        if len(shown) < count:
            extent += f" (the newest {len(shown):,} drawn and listed; all are in <code>.frame</code>)"
        if count:
            first, last = self.frame["ts"].min(), self.frame["ts"].max()
            extent += f" · {escape(cell_text(first))} → {escape(cell_text(last))}"
        tools = self.frame["tool"].nunique() if count else 0
        self.summary.value = (f'<div class="amn-timeline-root">{who} · {extent} · {tools} tool(s) · '
                              f'lanes per {escape(self.lanes)} · <span class="amn-zone">'
                              f"{escape(zone_note(self._zone()))}</span></div>")
        self._render_chart()
        listed = shown.assign(ts=_to_the_millisecond(shown["ts"])) if len(shown) else shown  # calls a few ms apart
        show_rows(self.table, listed, [c for c in _TABLE_COLUMNS if c in shown.columns] if len(shown) else [],
                  selected=None if self.selected is None or self.selected < offset else self.selected - offset)
        self._render_detail()

    def _render_chart(self) -> None:
        shown = self.frame.tail(self.max_rows)
        offset = len(self.frame) - len(shown)
        window = None
        if self.zoomed is not None:
            window = (_us(self.zoomed[0]), _us(self.zoomed[1]))
            self.zoom_note.value = (f'<span class="amn-timeline-root">zoomed: {escape(cell_text(self.zoomed[0]))}'
                                    f" → {escape(cell_text(self.zoomed[1]))}</span>")
        else:
            self.zoom_note.value = ('<span class="amn-timeline-root">drag across the chart to zoom; click a mark to '
                                    "select its call</span>") if len(shown) else ""
        self.zoom_reset.disabled = self.zoomed is None
        self.chart.svg = timeline_svg(shown, lanes=self.lanes, width=self.chart.width, index_offset=offset,
                                      colours=self.colours, window=window, selected=self.selected)

    def _mark_clicked(self, clicked: list[int]) -> None:
        if clicked and clicked[0] >= 0:
            self.select(clicked[0])

    def _row_clicked(self, rows: list[int]) -> None:
        if rows:
            offset = len(self.frame) - len(self.frame.tail(self.max_rows))
            if self.selected != offset + rows[0]:
                self.select(offset + rows[0])

    def _brushed(self, brush: list[float]) -> None:
        """A drag across the chart: zoom to that part of the axis shown."""
        if len(brush) != 2 or not len(self.frame):
            return
        if self.zoomed is not None:
            first, last = (_us(t) for t in self.zoomed)
        else:
            start, end = call_spans(self.frame.tail(self.max_rows))
            first, last = int(start.min()), int(end.max())
            if last - first < 1000:
                first, last = first - 1_000_000, last + 1_000_000
        zone = self.frame["ts"].dt.tz
        lo, hi = (first + (last - first) * f for f in sorted(brush))
        if hi - lo < 1:
            return
        self.zoomed = (pd.Timestamp(int(lo), unit="us", tz="UTC").tz_convert(zone),
                       pd.Timestamp(int(hi), unit="us", tz="UTC").tz_convert(zone))
        self._render_chart()

    def _render_detail(self) -> None:
        self.open_button.disabled = self.selected is None or self.selected >= len(self.frame)
        self.trace_button.disabled = self.open_button.disabled
        self._close_trace()  # a trace belongs to the call it was opened for
        if self.selected is None or self.selected >= len(self.frame):
            self.detail.value = ""
            return
        row = self.frame.iloc[self.selected]
        self.detail.value = ('<div class="amn-timeline-root amn-timeline-detail-box">'
                             f"<div><b>#{self.selected} {escape(row['tool'])}</b> · {escape(cell_text(row['ts']))} · "
                             f"session {escape(cell_text(row['session_id']))} · turn {escape(cell_text(row['turn']))}"
                             f" · {escape(row['status'])}{duration_text(row['duration_ms'])}</div>"
                             f"<div>input</div><pre>{pretty_json(row['input'])}</pre>"
                             f"<div>output ({row['output_len']} characters)</div><pre>{escape(row['output'])}</pre>"
                             "</div>")

    def _sync_controls(self) -> None:
        with self._quiet():
            users = self._users()
            for picker in (self.user_picker, self.source_picker):  # a LangGraph source has neither users nor a log
                picker.layout.display = "none" if self.langgraph is not None else ""
            if self.user_id is not None and self.user_id not in users:
                users = sorted([*users, self.user_id])
            if list(self.user_picker.options) != users:
                self.user_picker.options = users
            self.user_picker.value = self.user_id
            self.source_picker.value = self.source
            self.lanes_picker.value = self.lanes
            f = self.filters
            known = set(self.all_calls["tool"].dropna()) if len(self.all_calls) else set()
            tools = [(displayable(t), t) for t in sorted(known | set(f.tools or ()))]  # labels go to the browser
            if list(self.tool_filter.options) != tools:
                self.tool_filter.options = tools
            self.tool_filter.value = tuple(f.tools or ())
            self.keyword_filter.value = f.keyword
            sessions = sorted(set(self.all_calls["session_id"].dropna())) if len(self.all_calls) else []
            if f.session and f.session not in sessions:
                sessions.append(f.session)
            options = [("all sessions", _ALL_SESSIONS), *((s, s) for s in sessions)]
            if list(self.session_filter.options) != options:
                self.session_filter.options = options
            self.session_filter.value = f.session or _ALL_SESSIONS
            self.start_filter.value = _as_date(f.start)
            self.end_filter.value = _as_date(f.end)
            shown = self.frame.tail(self.max_rows)
            offset = len(self.frame) - len(shown)
            picks = [(displayable(f"#{offset + i} {cell_text(ts)} {tool} ({cell_text(session)})"), offset + i)
                     for i, (ts, tool, session) in enumerate(zip(shown["ts"], shown["tool"], shown["session_id"]))
                     ] if len(shown) else []
            if list(self.call_picker.options) != picks:
                self.call_picker.options = picks
            self.call_picker.value = self.selected if self.selected is not None and self.selected >= offset else None

    def _after_error(self) -> None:
        self._sync_controls()  # show the state the widget is really in

    def _users(self) -> list[str]:
        return self.store.users() if self.store is not None else []

    def _zone(self) -> _dt.tzinfo | None:
        return self.store.zone if self.store is not None else self._lg.zone if self._lg is not None else None


# ---------------------------------------------------------------------- helpers


def _as_date(bound: frames.TimeBound) -> _dt.date | None:
    if bound is None:
        return None
    if isinstance(bound, _dt.date) and not isinstance(bound, _dt.datetime):
        return bound
    try:
        return pd.Timestamp(bound).date()
    except (TypeError, ValueError):
        return None


def _moment(bound: frames.TimeBound, zone: Any) -> pd.Timestamp:
    """A zoom bound as a Timestamp in ``zone`` (a naive one is a wall time there)."""
    moment = pd.Timestamp(bound)  # type: ignore[arg-type]  # TimeBound minus None: the caller gave a bound
    if pd.isna(moment):
        raise ValueError(f"zoom: {bound!r} is not a time")
    return moment.tz_localize(zone) if moment.tzinfo is None else moment.tz_convert(zone)


def _to_the_millisecond(times: pd.Series) -> list[str]:
    """Times as ``YYYY-MM-DD HH:MM:SS.mmm`` (text that sorts): the calls of one turn are milliseconds apart."""
    return ["" if pd.isna(t) else t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}" for t in times]


def _us(moment: pd.Timestamp) -> int:
    """Epoch microseconds of an aware Timestamp."""
    return int((moment - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(microseconds=1))


def _check_choice(name: str, value: object, allowed: tuple[_Choice, ...]) -> _Choice:
    """The one of ``allowed`` equal to ``value`` (typed as the choice, a Literal where the caller wants one)."""
    for choice in allowed:
        if value == choice:
            return choice
    raise ValueError(f"{name}={value!r}: use one of {', '.join(map(repr, allowed))}")


def _empty_calls() -> pd.DataFrame:
    return tool_calls_from_log([], user_id="", zone=_dt.timezone.utc)


# Colours: JupyterLab theme variables only (marks are filled from a palette, text never is), checked for contrast in
# Light and Dark by the browser test.
_STYLE = """<style>
/* line-height as the inspector's: ipywidgets' HTML content inherits the 28 px control height */
.amn-timeline-root { font-size: 13px; line-height: 1.4; color: var(--jp-ui-font-color1); }
.amn-timeline-chart { width: 100%; min-width: 0; }
.amn-timeline-svg { display: block; max-width: 100%; user-select: none; }
.amn-timeline-svg .amn-lane-line { stroke: var(--jp-border-color2); }
.amn-timeline-svg .amn-axis { stroke: var(--jp-ui-font-color2); }
.amn-timeline-svg text { fill: var(--jp-ui-font-color1); font-size: 11px; }
.amn-timeline-svg .amn-timeline-mark { stroke: var(--jp-layout-color0); stroke-width: 1; cursor: pointer; }
.amn-timeline-svg .amn-timeline-mark.amn-error { stroke: var(--jp-error-color1); stroke-width: 1.5; }
.amn-timeline-svg .amn-timeline-mark.amn-selected { stroke: var(--jp-ui-font-color0); stroke-width: 2.5; }
.amn-timeline-root pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0 6px 12px; max-height: 240px;
  overflow: auto; color: var(--jp-content-font-color1); }
.amn-timeline-root.amn-error-box { color: var(--jp-ui-font-color1); background: var(--jp-layout-color1);
  border: 1px solid var(--jp-error-color1); border-left-width: 4px; padding: 4px 8px; }
.amn-timeline.amn-busy .amn-timeline-chart, .amn-timeline.amn-busy .amn-timeline-table { opacity: 0.45; }
.amn-busy-note { color: var(--jp-ui-font-color1); font-size: 13px; padding: 2px 0; }
""" + TABLE_STYLE + """</style>"""
