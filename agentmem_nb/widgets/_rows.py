"""Which row of a non-message table a widget has chosen, found again after the table changed.

A message is named by its :class:`~agentmem_nb.items.ItemKey`; a row of the other layers (the dialogue log, tool
calls, problems, conversations, long-term lines) by the values of a few columns, because its position moves when rows
are added before it (conversations are newest first). The inspector and the timeline both keep a chosen row this way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ROW_KEYS", "key_columns", "row_identity", "find_row"]


ROW_KEYS: dict[str, tuple[str, ...]] = {
    "long_term": ("section", "text"),
    "long_term/history": ("version",),
    "log": ("entry_id",),
    "tool_calls": ("session_id", "turn", "call_index"),
    "problems": ("file", "line", "kind"),
    "conversations": ("session_id",),
    "facts": ("fact_id",),
    "threads": ("thread_id",),  # a LangGraph checkpointer's threads, newest first (widgets/_langgraph_source.py)
    "checkpoints": ("thread_id", "checkpoint_id"),
}
"""Columns that name a row of a non-message layer (its position moves when rows are added before it)."""


def key_columns(frame: pd.DataFrame, view: str) -> list[str]:
    """The columns of ``frame`` that name a row of ``view`` (none for a view without row keys)."""
    return [c for c in ROW_KEYS.get(view, ()) if c in frame.columns]


def row_identity(frame: pd.DataFrame, position: int, view: str) -> tuple[Any, ...] | None:
    """The key column values of the row at ``position`` (``None`` when ``view`` has no row keys)."""
    columns = key_columns(frame, view)
    if not columns:
        return None
    return tuple(frame[c].iloc[position] for c in columns)


def find_row(frame: pd.DataFrame, identity: tuple[Any, ...], view: str, *, hint: int) -> int | None:
    """Where the row named ``identity`` is now: ``hint`` (its old position) when it has not moved — the usual case,
    rows are appended — else the first match, compared column by column without a Python loop over the rows."""
    columns = key_columns(frame, view)
    if len(columns) != len(identity) or not len(frame) or any(pd.isna(v) for v in identity):
        return None  # a missing value names nothing (and pd.NA cannot even be compared)
    if hint < len(frame) and all(not pd.isna(v := frame[c].iloc[hint]) and bool(v == w)
                                 for c, w in zip(columns, identity)):
        return hint
    mask = np.ones(len(frame), dtype=bool)
    for column, wanted in zip(columns, identity):
        mask &= (frame[column] == wanted).to_numpy(dtype=bool, na_value=False)
    found = np.flatnonzero(mask)
    return int(found[0]) if len(found) else None
