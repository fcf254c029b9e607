"""The timeline's SVG: lanes, an axis whose labels stay distinct at any zoom, one colour per tool, spans.

Rules this module keeps (issue 19, item 6):

* it fits the width it is given (the chart widget reports the notebook's width), and no mark is drawn past the end
  of the axis: every x is clamped into the plot;
* a tool keeps its colour whatever the filters: the colour map is made from *every* tool of the user, sorted, and
  handed in;
* axis ticks are round steps (1 ms … 1 year) chosen for the width, labelled at the step's resolution, so calls
  within one second get ``10:00:00.250``-style labels instead of five identical ``10:00:00``;
* a call with a recorded ``duration_ms`` is a span: the calls of one turn ran one after another from the turn's
  time, so call *k* starts after the durations of calls *0..k-1* (the log records no start time of its own); a call
  without a duration is a dot.

Every text (tool names, inputs, outputs, session ids) goes through :func:`agentmem_nb.widgets.html.escape`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from agentmem_nb.widgets._cells import cell_text
from agentmem_nb.widgets.html import escape

__all__ = ["PALETTE", "ERROR_COLOUR", "tool_colours", "call_spans", "ticks", "timeline_svg", "LEFT", "RIGHT"]

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
           "#86bcb6")
"""Tableau 10: mark fills (not text), distinguishable in both themes."""
ERROR_COLOUR = "#e15759"
LEFT, RIGHT, TOP, LANE_H = 130, 16, 14, 26
_TITLE_CHARS = 600
_STEPS_US = [int(x) for x in (
    1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5,                      # milliseconds
    1e6, 2e6, 5e6, 1e7, 15e6, 3e7,                                    # seconds
    6e7, 12e7, 3e8, 6e8, 9e8, 18e8,                                   # minutes
    36e8, 72e8, 108e8, 216e8, 432e8,                                  # hours
    864e8, 1728e8, 6048e8, 26784e8, 315576e8,                         # days, weeks, a month, a year
)]


def tool_colours(tools: Iterable[str]) -> dict[str, str]:
    """One colour per tool, from the sorted names: the same tool gets the same colour whatever is filtered out."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(set(map(str, tools))))}


def call_spans(calls: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each call in epoch microseconds (the calls of a turn one after another; see the module)."""
    if not len(calls):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ts = calls["ts"].array.as_unit("us").asi8.astype(np.int64)
    duration = np.nan_to_num(calls["duration_ms"].to_numpy(dtype=float), nan=0.0)
    duration_us = np.round(duration * 1000).astype(np.int64)
    turn_key = calls["session_id"].astype(str).str.cat(calls["turn"].astype(str), sep="\x1f")
    earlier = pd.Series(duration_us).groupby(turn_key.to_numpy()).cumsum().to_numpy() - duration_us
    start = ts + earlier
    return start, start + duration_us


def ticks(first_us: int, last_us: int, plot_w: float, zone: Any) -> list[tuple[int, str]]:
    """Round ticks between two moments (epoch µs), at most one per ~90 px, labelled in ``zone`` at the step's
    resolution (distinct labels by construction: every tick is a different multiple of the step)."""
    span = max(1, last_us - first_us)
    wanted = max(2, int(plot_w // 90))
    step = next((s for s in _STEPS_US if span / s <= wanted), _STEPS_US[-1])
    # align on the wall clock of the zone (minutes on :00, days at midnight)
    utc_offset = pd.Timestamp(first_us, unit="us", tz="UTC").tz_convert(zone).utcoffset()
    offset = int(utc_offset.total_seconds() * 1e6) if utc_offset is not None else 0
    tick = -(-(first_us + offset) // step) * step - offset
    out: list[tuple[int, str]] = []
    while tick <= last_us and len(out) < wanted + 2:
        moment = pd.Timestamp(tick, unit="us", tz="UTC").tz_convert(zone)
        out.append((tick, _label(moment, step, span)))
        tick += step
    return out


def _label(moment: pd.Timestamp, step: int, span: int) -> str:
    if step < 1_000_000:
        return moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    if step < 60_000_000:
        return moment.strftime("%H:%M:%S")
    if step < 86_400_000_000:
        return moment.strftime("%m-%d %H:%M" if span > 86_400_000_000 else "%H:%M")
    return moment.strftime("%Y-%m-%d")


def timeline_svg(calls: pd.DataFrame, *, lanes: str = "tool", width: int = 640, index_offset: int = 0,
                 colours: Mapping[str, str] | None = None, window: tuple[int, int] | None = None,
                 selected: int | None = None) -> str:
    """Tool calls as an inline SVG: one lane per tool (or session), one mark (dot or span) per call, hover titles
    with the call's time, input and output. ``window``: the zoomed range in epoch µs (calls outside it are not
    drawn); ``selected``: the frame position of the chosen call (ringed). ``data-left``/``data-right`` on the
    ``<svg>`` give the plot's x range (the chart's script turns a drag into a range of the axis)."""
    if not len(calls):
        return '<div class="amn-timeline-root amn-empty">No tool calls to draw.</div>'
    colours = dict(colours) if colours is not None else tool_colours(calls["tool"].astype(str))
    start, end = call_spans(calls)
    valid = calls["ts"].notna().to_numpy()
    if window is not None:
        first, last = window
    elif valid.any():
        first, last = int(start[valid].min()), int(end[valid].max())
    else:
        first = last = 0
    if last - first < 1000:  # one moment: a second either side, so the mark sits mid-axis
        first, last = first - 1_000_000, last + 1_000_000
    shown = valid & (end >= first) & (start <= last)
    column = "tool" if lanes == "tool" else "session_id"
    keys = [cell_text(v) or "(none)" for v in calls[column]]
    lane_names = list(dict.fromkeys(k for k, s in zip(keys, shown) if s)) or ["(no call in this range)"]
    lane_of = {name: i for i, name in enumerate(lane_names)}
    width = max(320, int(width))
    plot_w = width - LEFT - RIGHT
    height = TOP + LANE_H * len(lane_names) + 34
    zone = calls["ts"].dt.tz

    def x_of(us: int) -> float:
        return LEFT + min(1.0, max(0.0, (us - first) / (last - first))) * plot_w

    parts = [(f'<svg class="amn-timeline-svg" xmlns="http://www.w3.org/2000/svg" width="100%" height="{height}" '
              f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMinYMin meet" role="img" '
              f'data-left="{LEFT}" data-right="{LEFT + plot_w}">')]
    for i, name in enumerate(lane_names):
        y = TOP + LANE_H * i + LANE_H / 2
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="amn-lane-line"/>')
        label = name if len(name) <= 18 else name[:17] + "…"
        parts.append(f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end" class="amn-lane-label">'
                     f"<title>{escape(name)}</title>{escape(label)}</text>")
    axis_y = TOP + LANE_H * len(lane_names) + 4
    parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{axis_y}" y2="{axis_y}" class="amn-axis"/>')
    for tick, text in ticks(first, last, plot_w, zone):
        x = x_of(tick)
        anchor = "start" if x < LEFT + 30 else ("end" if x > LEFT + plot_w - 30 else "middle")
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{axis_y}" y2="{axis_y + 4}" class="amn-axis"/>'
                     f'<text x="{x:.1f}" y="{axis_y + 16}" text-anchor="{anchor}" class="amn-axis-label">'
                     f"{escape(text)}</text>")
    row: Any  # a named tuple of the columns; pandas-stubs type each field as any scalar
    for i, row in enumerate(calls.itertuples(index=False)):
        if not shown[i]:
            continue
        y = TOP + LANE_H * lane_of[keys[i]] + LANE_H / 2
        failed = row.status == "error"
        colour = ERROR_COLOUR if failed else colours.get(str(row.tool), PALETTE[0])
        index = index_offset + i
        classes = "amn-timeline-mark" + (" amn-error" if failed else "") + (" amn-selected" if index == selected
                                                                           else "")
        title = f"<title>{escape(hover_text(index, row))}</title>"
        x0, x1 = x_of(int(start[i])), x_of(int(end[i]))
        if x1 - x0 >= 4:
            parts.append(f'<rect x="{x0:.1f}" y="{y - 6:.1f}" width="{x1 - x0:.1f}" height="12" rx="2" '
                         f'fill="{colour}" class="{classes} amn-span" data-index="{index}">{title}</rect>')
        else:
            r = 6 if failed else 5
            cx = min(max(x0, LEFT + r), LEFT + plot_w - r)  # the whole dot inside the axis
            parts.append(f'<circle cx="{cx:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}" class="{classes}" '
                         f'data-index="{index}">{title}</circle>')
    parts.append("</svg>")
    return f'<div class="amn-timeline-root">{"".join(parts)}</div>'


def hover_text(index: int, row: Any) -> str:
    """A call in a few lines: number, tool, time, session, status, duration, input and output (cut)."""
    text_in = row.input_text if len(row.input_text) <= _TITLE_CHARS else row.input_text[:_TITLE_CHARS] + "…"
    text_out = row.output if len(row.output) <= _TITLE_CHARS else row.output[:_TITLE_CHARS] + "…"
    return (f"#{index} {row.tool} · {cell_text(row.ts)} · session {cell_text(row.session_id)} · "
            f"{row.status}{duration_text(row.duration_ms)}\ninput: {text_in}\noutput: {text_out}")


def duration_text(ms: Any) -> str:
    """`` · 3.5 ms`` (empty when no duration was recorded)."""
    return "" if ms is None or pd.isna(ms) else f" · {float(ms):g} ms"
