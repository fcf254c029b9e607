"""Cells as text, and the zone the views show times in: the rules the inspector and the timeline share.

One rule for the display zone (issue 19, item 9): every view shows times in
the zone of the DataFrame columns (``frames._time.frame_zone``) of the store — the store's zone, or the machine's local zone when the store has
none — and says which (:func:`zone_note`). The DataFrames already hold their times in that zone, so a cell is formatted
as it is, never converted again.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any

import pandas as pd

from agentmem_nb.frames._time import frame_zone

__all__ = ["cell_text", "one_line", "shorten", "zone_note", "zone_name"]


def cell_text(value: Any) -> str:
    """A DataFrame cell as plain text: times to the second, dicts as compact JSON, missing values empty."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, (pd.Timestamp, _dt.datetime)):
        return "" if pd.isna(value) else value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    if value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def one_line(text: object) -> str:
    """``text`` with every run of whitespace (newlines included) as one space."""
    return " ".join(str(text).split())


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def zone_name(zone: _dt.tzinfo | None) -> str:
    """The display zone of a store whose zone is ``zone``, by name (``"Europe/Paris"``, ``"UTC"``, ``"UTC+02:00"``)."""
    shown = frame_zone(zone)
    key = getattr(shown, "key", None)  # a ZoneInfo knows its IANA name
    if key:
        return str(key)
    name = shown.tzname(None)
    if name:
        return name
    offset = _dt.datetime.now(shown).strftime("%z")
    return f"UTC{offset[:3]}:{offset[3:]}"


def zone_note(zone: _dt.tzinfo | None) -> str:
    """What a view says about its times: ``"times in Europe/Paris"``."""
    return f"times in {zone_name(zone)}"
