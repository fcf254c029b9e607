"""The tables of the inspector and the timeline: itables' ``ITable`` widget (DataTables), offline and text-only.

Why itables: sorting, a filter per column, paging with the row count, copy to the clipboard — what people expect of a
table in Jupyter — without a hand-written HTML table. The ``ITable`` *widget* (``itables.widget``, an anywidget) is
used rather than ``itables.show``: it ships DataTables inside the Python package (no CDN, so it works offline, the
same as ``init_notebook_mode(connected=False)``), it lives inside an ``ipywidgets`` box, and its ``selected_rows``
trait carries a click on a row back to Python.

Text safety: cells are given to DataTables as data with ``allow_html=False`` (itables escapes ``<``, ``>`` and ``&``
of every cell and column name before they reach the browser), so a message such as ``<img src=x onerror=...>``
shows as text. :func:`table_rows` also makes every non-numeric cell plain text first (:func:`cell_text`), long ones
cut at :data:`CELL_CHARS` (the DataFrame keeps them whole).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import itables.widget
import pandas as pd
from itables.widget import ITable

from agentmem_nb.widgets._cells import cell_text, shorten
from agentmem_nb.widgets.html import displayable

__all__ = ["CELL_CHARS", "table_rows", "new_table", "show_rows", "TABLE_OPTIONS", "TABLE_STYLE"]

CELL_CHARS = 300
"""Characters of a cell shown in a table (the whole text stays in the DataFrame)."""

_SHORT_CHARS = 24

TABLE_OPTIONS: dict[str, Any] = {
    "allow_html": False,  # the default, said out loud: cells are text, never markup
    "showIndex": False,
    "paging": True,
    "pageLength": 10,
    "lengthMenu": [10, 25, 100, 500],
    # sort from the header, and one search box per column (DataTables' ColumnControl, bundled in the widget)
    "columnControl": ["order", ["search"]],
    "ordering": {"indicators": False, "handler": False},
    "buttons": ["copyHtml5", "csvHtml5"],
    "select": {"style": "single", "info": False},
    "autoWidth": False,
    # the whole page is sent: the widget must not drop rows to stay under its default 64 kB
    "maxBytes": 0,
    "classes": "display compact amn-datatable",
    "style": "width: 100%; margin: 0; caption-side: bottom",
}
"""itables options of every table (see https://mwouts.github.io/itables/options/options.html)."""


_STATIC = Path(itables.widget.__file__).parent / "static"


class _Table(ITable):
    """``ITable`` with its script and stylesheet as text rather than as files.

    anywidget watches a widget's ``_esm``/``_css`` *file* for hot reloading by connecting a strong callback, bound
    to the instance, to a signal of the class: every ``ITable`` ever made stays alive, and with it every observer —
    here the inspector or the timeline, which must be collectable once closed (``tests/widgets/test_follow.py``).
    The same text as a string is not watched."""

    # ITable declares them as Path; anywidget takes either, and text is what keeps instances collectable
    _esm = (_STATIC / "widget.js").read_text(encoding="utf-8")  # type: ignore[assignment]
    _css = (_STATIC / "widget.css").read_text(encoding="utf-8")  # type: ignore[assignment]


def table_rows(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame[columns]`` ready for DataTables: numbers stay numbers (so they sort as numbers), everything else
    becomes one line of plain text at most :data:`CELL_CHARS` long (times as ``YYYY-MM-DD HH:MM:SS``, which sorts)."""
    out: dict[str, Any] = {}
    for column in columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
            out[column] = values.astype("float64") if values.hasnans else values  # Int64 with NA -> NaN
        else:
            # displayable: a lone surrogate the store kept cannot cross to the browser (it shows as U+FFFD)
            out[column] = [shorten(displayable(cell_text(v)), CELL_CHARS) for v in values.tolist()]
    return pd.DataFrame(out, columns=list(columns), index=pd.RangeIndex(len(frame)))


def new_table(css: str) -> ITable:
    """An empty table widget carrying the CSS class ``css`` (the browser test finds it by it)."""
    table = _Table(pd.DataFrame(), **TABLE_OPTIONS)
    table.add_class(css)
    table.add_class("amn-table-widget")
    return table


def show_rows(table: ITable, frame: pd.DataFrame, columns: Sequence[str], *, caption: str = "",
              selected: int | None = None) -> None:
    """Show ``frame[columns]`` in ``table`` (``selected``: the row shown selected, e.g. a window's anchor)."""
    rows = table_rows(frame, columns) if len(frame) and columns else pd.DataFrame({"": []})
    # ids, times, numbers: never wrapped (a time cut into three lines is hard to read); text wraps
    short = [i for i, c in enumerate(rows.columns)
             if not len(rows) or rows[c].astype(str).str.len().max() <= _SHORT_CHARS]
    table.update(rows, caption=caption, selected_rows=[] if selected is None or selected < 0 else [int(selected)],
                 columnDefs=[{"targets": short, "className": "amn-nowrap"}],
                 **TABLE_OPTIONS)


TABLE_STYLE = """
/* a wide table scrolls sideways inside its own box (one table: DataTables' scrollX splits the header from the body,
   and they drift apart when the widget is drawn before it has its width) */
.amn-table-widget .dt-layout-table { display: block; overflow-x: auto; }
/* a selected row (the window's anchor, the chosen call): the theme's own colours, readable in Light and Dark
   (DataTables' default is white on blue, 3.9:1 — below WCAG AA); the browser test measures it */
.amn-datatable.dataTable > tbody > tr.selected > * {
  box-shadow: inset 0 0 0 9999px var(--jp-layout-color3) !important; color: var(--jp-ui-font-color0) !important;
  font-weight: 600; }
.amn-datatable.dataTable > tbody > tr.selected > *:first-child { border-left: 4px solid var(--jp-brand-color1); }
.amn-datatable td.amn-nowrap { white-space: nowrap; }
/* text columns keep a readable width (the table scrolls sideways) instead of wrapping a word per line */
.amn-datatable td { overflow-wrap: anywhere; }
.amn-datatable td:not(.amn-nowrap) { min-width: 16em; }
.amn-datatable { color: var(--jp-ui-font-color1); }
"""
"""CSS of every table (each view puts it in its stylesheet)."""
