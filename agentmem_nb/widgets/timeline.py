"""``ToolTimeline``: every tool call of a user on a time axis, filtered by tool, keyword, session and dates.

Layout (CSS classes in brackets; the browser test addresses them)::

    [user] [source] [lanes] [Refresh]                                             [amn-timeline]
    [tools: amn-timeline-filter-tool] [keyword: amn-timeline-filter-keyword]
    [session: amn-timeline-filter-session] [from: amn-timeline-filter-start] [to: amn-timeline-filter-end] [Clear]
    summary                                                                       [amn-timeline-summary]
    SVG chart: one lane per tool (or per session), one mark per call;             [amn-timeline-chart]
      hovering a mark shows its tool, time, input and output (an SVG <title>)
    one row per call, newest last; click a row to unfold its input and output     [amn-timeline-row]
    [call picker: amn-timeline-pick] the chosen call in full                      [amn-timeline-detail]
    errors                                                                        [amn-timeline-error]

The chart is plain inline SVG inside an ``ipywidgets.HTML`` — no front-end build — and every text in it (tool names,
inputs, outputs, session ids) goes through :func:`agentmem_nb.widgets.html.escape`. The calls come from
:func:`agentmem_nb.frames.tool_calls` through a :class:`~agentmem_nb.frames.LayerFollower` (a refresh reads only
what was appended); the filtered DataFrame is :attr:`ToolTimeline.frame`, ready for more pandas.

Driven from code::

    timeline = ToolTimeline(store, user_id="alice")
    timeline.filter(tools=["search_session"], keyword="lyon", start="2026-04-01")
    timeline.frame                     # the filtered calls
    timeline.select(0)                 # show the first one in full
    timeline.follow(chat)              # refresh after each of the chat's turns (filters and chosen call kept)
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
from agentmem_nb.widgets._callbacks import WidgetError
from agentmem_nb.widgets._follow import FollowsChat
from agentmem_nb.widgets.html import displayable, escape, pretty_json
from agentmem_nb.widgets._rows import find_row, row_identity
from agentmem_nb.widgets.inspector import cell_text

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore, UserMemory

__all__ = ["ToolTimeline", "TimelineFilters", "TimelineError", "timeline_svg"]

Lanes = Literal["tool", "session"]
_Choice = TypeVar("_Choice", bound=str)

_PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
            "#86bcb6")
_ERROR_COLOUR = "#e15759"
_TITLE_CHARS = 600
"""Characters of input/output in a mark's hover title (the row and the detail panel show everything)."""
_ROW_OUTPUT_CHARS = 4000


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


class ToolTimeline(FollowsChat, widgets.VBox):
    """Every tool call of a user on a time axis, with filters and details.

    Args:
        store: the :class:`~agentmem_nb.store.MemoryStore` to read.
        user_id: whose calls (default: the first user in the store, if any).
        source: ``"log"`` (the dialogue log, default) or ``"sessions"`` (the thread files); see
            :mod:`agentmem_nb.frames.tools`.
        lanes: one lane per ``"tool"`` (default) or per ``"session"``.
        max_rows: calls listed as rows and drawn as marks (the newest); :attr:`frame` keeps them all.
        width: the chart's width in pixels.

    :meth:`follow` links it to a :class:`~agentmem_nb.widgets.ChatWidget`: after each turn it refreshes itself,
    reading only the appended lines, and keeps its user, source, lanes, filters and chosen call.
    """

    _css_root = "amn-timeline-root"
    _css_error = "amn-timeline-error"

    def __init__(
        self,
        store: MemoryStore,
        *,
        user_id: str | None = None,
        source: frames.ToolSource = "log",
        lanes: Lanes = "tool",
        max_rows: int = 300,
        width: int = 860,
    ) -> None:
        self._init_follow()  # first: Widget.__del__ calls close(), which needs it, even after a rejected argument
        if max_rows < 1:
            raise ValueError(f"max_rows must be >= 1, got {max_rows!r}")
        _check_choice("source", source, ("log", "sessions"))
        _check_choice("lanes", lanes, ("tool", "session"))
        self.store = store
        self.max_rows = int(max_rows)
        self.width = int(width)
        self.user_id: str | None = None
        self.source: frames.ToolSource = source
        self.lanes: Lanes = lanes
        self.filters = TimelineFilters()
        self.all_calls: pd.DataFrame = pd.DataFrame()
        """Every call of the user (no filter)."""
        self.frame: pd.DataFrame = pd.DataFrame()
        """The calls that pass the filters, oldest first."""
        self.selected: int | None = None
        """Position in :attr:`frame` of the call shown in the detail panel."""
        self._init_callbacks()  # errors, error_area, _syncing

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
        self.session_filter = widgets.Dropdown(description="Session", options=[("all sessions", None)],
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
        self.chart = widgets.HTML()
        self.chart.add_class("amn-timeline-chart")
        self.rows = widgets.HTML()
        self.rows.add_class("amn-timeline-rows")
        self.call_picker = widgets.Dropdown(description="Call", options=[], layout=widgets.Layout(width="auto"),
                                            style={"description_width": "36px"})
        self.call_picker.add_class("amn-timeline-pick")
        self.detail = widgets.HTML()
        self.detail.add_class("amn-timeline-detail")

        super().__init__([
            widgets.HTML(_STYLE),
            widgets.HBox([self.user_picker, self.source_picker, self.lanes_picker, self.refresh_button]),
            widgets.HBox([self.tool_filter,
                          widgets.VBox([self.keyword_filter, self.session_filter]),
                          widgets.VBox([self.start_filter, self.end_filter]),
                          self.clear_button]),
            self.summary,
            self.chart,
            self.rows,
            self.call_picker,
            self.detail,
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

        users = store.users()
        chosen = user_id if user_id is not None else (users[0] if users else None)
        self.user_id = check_user_id(chosen) if chosen is not None else None
        self._reload()

    # ------------------------------------------------------------------ public API

    def __repr__(self) -> str:
        return f"ToolTimeline(user={self.user_id!r}, source={self.source!r}, lanes={self.lanes!r})"

    @property
    def df(self) -> pd.DataFrame:
        """Alias of :attr:`frame`."""
        return self.frame

    @property
    def mem(self) -> UserMemory:
        """The current user's memory."""
        if self.user_id is None:
            raise ValueError("no user selected: call select_user('...') first (the store has no users yet)")
        return self.store.user(self.user_id)

    def select_user(self, user_id: str) -> None:
        """Show ``user``'s calls (filters are kept; a session filter from the previous user is dropped)."""
        user_id = check_user_id(user_id)
        if user_id != self.user_id:
            self.user_id = user_id
            self.filters = replace(self.filters, session=None)
        self._reload()

    def set_source(self, source: frames.ToolSource) -> None:
        """Read calls from the dialogue log (``"log"``) or from the thread files (``"sessions"``)."""
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
        """Show call ``index`` (a position in :attr:`frame`, negative from the end) in the detail panel."""
        total = len(self.frame)
        if not -total <= index < total:
            raise IndexError(f"call {index} does not exist: the filtered timeline has {total} call(s)")
        self.selected = index % total
        self._render_detail()
        self._sync_controls()
        return self.frame.iloc[self.selected]

    def refresh(self) -> None:
        """Pick up calls written since the last look (reads only appended lines); filters are kept."""
        self._reload()

    def html_values(self) -> dict[str, str]:
        """Every HTML string the widget currently shows, by part (for checks such as escaping)."""
        return {"summary": self.summary.value, "chart": self.chart.value, "rows": self.rows.value,
                "detail": self.detail.value, "error": self.error_area.value}

    # ------------------------------------------------------------------ state

    def _reload(self) -> None:
        if self.user_id is None:
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
        self.filter(tools=tools, keyword=self.keyword_filter.value, session=self.session_filter.value,
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
        who = escape(self.user_id) if self.user_id else "no user"
        extent = f"{count} of {total} calls" if self.filters.active() else f"{total} calls"
        if len(shown) < count:
            extent += f" (the newest {len(shown)} drawn and listed; all are in <code>.frame</code>)"
        if count:
            first, last = self.frame["ts"].min(), self.frame["ts"].max()
            extent += f" · {escape(cell_text(first))} → {escape(cell_text(last))}"
        tools = self.frame["tool"].nunique() if count else 0
        self.summary.value = (f'<div class="amn-timeline-root">{who} · {extent} · {tools} tool(s) · '
                              f"lanes per {escape(self.lanes)}</div>")
        self.chart.value = timeline_svg(shown, lanes=self.lanes, width=self.width, index_offset=offset)
        self.rows.value = _rows_html(shown, offset)
        self._render_detail()

    def _render_detail(self) -> None:
        if self.selected is None or self.selected >= len(self.frame):
            self.detail.value = ""
            return
        row = self.frame.iloc[self.selected]
        self.detail.value = ('<div class="amn-timeline-root amn-timeline-detail-box">'
                             f"<div><b>#{self.selected} {escape(row['tool'])}</b> · {escape(cell_text(row['ts']))} · "
                             f"session {escape(cell_text(row['session_id']))} · turn {escape(cell_text(row['turn']))}"
                             f" · {escape(row['status'])}{_duration_text(row['duration_ms'])}</div>"
                             f"<div>input</div><pre>{pretty_json(row['input'])}</pre>"
                             f"<div>output ({row['output_len']} characters)</div><pre>{escape(row['output'])}</pre>"
                             "</div>")

    def _sync_controls(self) -> None:
        with self._quiet():
            users = self.store.users()
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
            options = [("all sessions", None), *((s, s) for s in sessions)]
            if list(self.session_filter.options) != options:
                self.session_filter.options = options
            self.session_filter.value = f.session
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


# ---------------------------------------------------------------------- drawing


def timeline_svg(calls: pd.DataFrame, *, lanes: Lanes = "tool", width: int = 860, index_offset: int = 0) -> str:
    """Tool calls as an inline SVG: one lane per tool (or session), one mark per call, hover titles with the call's
    time, input and output. Every text is escaped. ``index_offset`` numbers the marks as positions in a larger
    frame."""
    if not len(calls):
        return '<div class="amn-timeline-root amn-empty">No tool calls to draw.</div>'
    column = "tool" if lanes == "tool" else "session_id"
    keys = [cell_text(v) or "(none)" for v in calls[column]]
    lane_names = list(dict.fromkeys(keys))  # order of first appearance: the story's order
    lane_of = {name: i for i, name in enumerate(lane_names)}
    left, right, top, lane_h = 170, 76, 14, 26  # the right margin leaves room for the steps of a turn's calls
    height = top + lane_h * len(lane_names) + 34
    ts = calls["ts"]
    first, last = ts.min(), ts.max()
    if pd.isna(first):
        first = last = pd.Timestamp(0, tz="UTC")
    span = (last - first).total_seconds() or 60.0
    if (last - first).total_seconds() == 0:
        first = first - pd.Timedelta(seconds=30)
    plot_w = max(50, width - left - right)

    def x_of(moment: pd.Timestamp) -> float:
        if pd.isna(moment):
            return float(left)
        return float(left + (moment - first).total_seconds() / span * plot_w)

    parts = [(f'<svg class="amn-timeline-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" role="img">')]
    for i, name in enumerate(lane_names):
        y = top + lane_h * i + lane_h / 2
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="amn-lane-line"/>')
        label = name if len(name) <= 24 else name[:23] + "…"
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" class="amn-lane-label">'
                     f"<title>{escape(name)}</title>{escape(label)}</text>")
    axis_y = top + lane_h * len(lane_names) + 4
    parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{axis_y}" y2="{axis_y}" class="amn-axis"/>')
    fmt = "%Y-%m-%d %H:%M" if span > 86400 else "%m-%d %H:%M:%S"
    for k in range(5):
        moment = first + pd.Timedelta(seconds=span * k / 4)
        x = left + plot_w * k / 4
        anchor = "start" if k == 0 else ("end" if k == 4 else "middle")
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{axis_y}" y2="{axis_y + 4}" class="amn-axis"/>'
                     f'<text x="{x:.1f}" y="{axis_y + 16}" text-anchor="{anchor}" class="amn-axis-label">'
                     f"{escape(moment.strftime(fmt))}</text>")
    colours = {name: _PALETTE[i % len(_PALETTE)] for i, name in enumerate(dict.fromkeys(calls["tool"].astype(str)))}
    row: Any  # a named tuple of the columns; pandas-stubs type each field as any scalar, whatever the column holds
    for i, row in enumerate(calls.itertuples(index=False)):
        lane = lane_of[keys[i]]
        y = top + lane_h * lane + lane_h / 2
        failed = row.status == "error"
        colour = _ERROR_COLOUR if failed else colours.get(str(row.tool), _PALETTE[0])
        title = _hover_text(index_offset + i, row)
        # the calls of one turn share its time: step them apart in call order so none hides another
        x = x_of(row.ts) + 7 * min(int(row.call_index), 8)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{6 if failed else 5}" fill="{colour}" '
                     f'class="amn-timeline-mark{" amn-error" if failed else ""}" data-index="{index_offset + i}">'
                     f"<title>{escape(title)}</title></circle>")
    parts.append("</svg>")
    return f'<div class="amn-timeline-root amn-timeline-scroll">{"".join(parts)}</div>'


def _hover_text(index: int, row: Any) -> str:
    text_in = row.input_text if len(row.input_text) <= _TITLE_CHARS else row.input_text[:_TITLE_CHARS] + "…"
    text_out = row.output if len(row.output) <= _TITLE_CHARS else row.output[:_TITLE_CHARS] + "…"
    return (f"#{index} {row.tool} · {cell_text(row.ts)} · session {cell_text(row.session_id)} · "
            f"{row.status}{_duration_text(row.duration_ms)}\ninput: {text_in}\noutput: {text_out}")


def _rows_html(calls: pd.DataFrame, offset: int) -> str:
    if not len(calls):
        return '<div class="amn-timeline-root amn-empty">No call matches the filters.</div>'
    rows = []
    row: Any  # a named tuple of the columns (see timeline_svg)
    for i, row in enumerate(calls.itertuples(index=False)):
        output = row.output if len(row.output) <= _ROW_OUTPUT_CHARS else (
            row.output[:_ROW_OUTPUT_CHARS] + f"… ({len(row.output) - _ROW_OUTPUT_CHARS} more characters: select "
            "the call to see all)")
        failed = " amn-error" if row.status == "error" else ""
        rows.append(
            f'<details class="amn-timeline-row{failed}" data-index="{offset + i}"'
            f' title="{escape(_hover_text(offset + i, row))}">'
            f"<summary><span class=\"amn-row-index\">#{offset + i}</span> {escape(cell_text(row.ts))} · "
            f"<b>{escape(row.tool)}</b> · {escape(cell_text(row.session_id))} · turn {escape(cell_text(row.turn))} · "
            f"{row.output_len} chars{_duration_text(row.duration_ms)}{' · error' if failed else ''}</summary>"
            f"<div>input</div><pre>{pretty_json(row.input)}</pre><div>output</div><pre>{escape(output)}</pre>"
            "</details>"
        )
    return f'<div class="amn-timeline-root amn-timeline-list">{"".join(rows)}</div>'


def _duration_text(ms: Any) -> str:
    return "" if ms is None or pd.isna(ms) else f" · {float(ms):g} ms"


def _as_date(bound: frames.TimeBound) -> _dt.date | None:
    if bound is None:
        return None
    if isinstance(bound, _dt.date) and not isinstance(bound, _dt.datetime):
        return bound
    try:
        return pd.Timestamp(bound).date()
    except (TypeError, ValueError):
        return None


def _check_choice(name: str, value: object, allowed: tuple[_Choice, ...]) -> _Choice:
    """The one of ``allowed`` equal to ``value`` (typed as the choice, a Literal where the caller wants one)."""
    for choice in allowed:
        if value == choice:
            return choice
    raise ValueError(f"{name}={value!r}: use one of {', '.join(map(repr, allowed))}")


def _empty_calls() -> pd.DataFrame:
    return tool_calls_from_log([], user_id="", zone=_dt.timezone.utc)


_STYLE = """<style>
/* line-height as the inspector's: ipywidgets' HTML content inherits the 28 px control height, so each row summary,
   wrapped output line and error line would otherwise be 28 px tall */
.amn-timeline-root { font-size: 13px; line-height: 1.4; }
.amn-timeline-root.amn-timeline-scroll { overflow-x: auto; }
.amn-timeline-svg .amn-lane-line { stroke: var(--jp-border-color2, #ddd); }
.amn-timeline-svg .amn-axis { stroke: var(--jp-ui-font-color2, #888); }
.amn-timeline-svg text { fill: var(--jp-ui-font-color1, #333); font-size: 11px; }
.amn-timeline-svg .amn-timeline-mark { stroke: #fff; stroke-width: 1; cursor: help; }
.amn-timeline-svg .amn-timeline-mark.amn-error { stroke: #600; stroke-width: 1.5; }
.amn-timeline-root.amn-timeline-list { max-height: 320px; overflow: auto; }
.amn-timeline-root details.amn-timeline-row { border-bottom: 1px solid var(--jp-border-color2, #eee); padding: 2px 4px; }
.amn-timeline-root details.amn-timeline-row.amn-error summary { color: #a00; }
.amn-timeline-root details.amn-timeline-row summary { cursor: pointer; }
.amn-timeline-root pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0 6px 12px; max-height: 240px;
  overflow: auto; }
.amn-timeline-root.amn-error-box { color: #a00; border: 1px solid #e99; padding: 4px 8px; }
</style>"""
