"""Timestamps for DataFrames: the zone of the columns, bulk parsing that agrees with the store, and range bounds.

Every datetime column is ``datetime64[us, zone]`` where ``zone`` is the store's zone (the machine's local zone, by
IANA name, when the store has none). Microseconds are the store's own precision (``format_ts``).
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agentmem_nb.timeutil import parse_ts, zone_named

__all__ = [
    "NAT_US",
    "TimeBound",
    "frame_zone",
    "parse_ts_us",
    "canonical_rows_us",
    "parse_rest_us",
    "fill_missing_us",
    "timestamp_us",
    "us_to_series",
    "datetimes_to_series",
    "lower_bound",
    "upper_bound",
]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_ONE_US = _dt.timedelta(microseconds=1)
NAT_US = np.iinfo(np.int64).min  # numpy's NaT as an int64

TimeBound = _dt.datetime | _dt.date | str | pd.Timestamp | None
"""A range bound: a datetime (naive = the user's zone), a date or ``"YYYY-MM-DD"`` (a whole local day), or an ISO
datetime string."""


def frame_zone(zone: _dt.tzinfo | None) -> _dt.tzinfo:
    """The zone of the DataFrame columns: the store's zone, or the machine's local zone when the store has none."""
    return zone if zone is not None else _local_zone()


@functools.cache
def _local_zone() -> _dt.tzinfo:
    # The store converts with ``datetime.astimezone()`` (the C library's local time). pandas needs a zone object
    # with DST rules, so find the IANA name the C library uses; a fixed offset is the last resort.
    candidates = [os.environ.get("TZ", "").lstrip(":")]
    try:
        link = os.readlink("/etc/localtime")
        candidates.append(link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "")
    except OSError:
        pass
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    for name in candidates:
        found = zone_named(name) if name else None  # TZ=America (a folder) is no zone: try the next candidate
        if found is not None:
            return found
    return _dt.datetime.now().astimezone().tzinfo or _dt.timezone.utc


# Byte positions in the canonical shape "2026-04-08T10:00:00.123456+08:00" (32 ASCII bytes).
_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23, 24, 25, 27, 28, 30, 31]
_PUNCTUATION = {4: b"-", 7: b"-", 10: b"T", 13: b":", 16: b":", 19: b".", 29: b":"}
_WIDTH = 33  # one byte more than the shape, so a longer string is caught by a non-zero byte 32


def _number(d: np.ndarray, first: int, last: int) -> np.ndarray:
    """The decimal number in digit columns ``first..last`` of ``d`` (one digit value per column)."""
    out = d[:, first].copy()
    for column in range(first + 1, last + 1):
        out *= 10
        out += d[:, column]
    return out


def _parse_canonical(strings: Sequence[str | None]) -> np.ndarray:
    """int64 µs for strings in exactly the shape ``format_ts`` writes; ``NAT_US`` for anything else.

    Vectorised, and validated as strictly as ``datetime.fromisoformat`` validates that shape (real calendar days,
    hours < 24, offsets < 24 h), so a string accepted here is one the store reads to the same instant.
    """
    count = len(strings)
    try:
        raw = np.array(strings, dtype=f"S{_WIDTH}")  # None becomes b"None", which fails the checks below
    except UnicodeEncodeError:  # a non-ASCII string somewhere (never canonical): blank those out
        raw = np.array([v if isinstance(v, str) and v.isascii() else "" for v in strings], dtype=f"S{_WIDTH}")
    return canonical_rows_us(raw.view(np.uint8).reshape(count, _WIDTH))


def canonical_rows_us(b: np.ndarray) -> np.ndarray:
    """:func:`_parse_canonical` on a ``(n, 32)`` or ``(n, 33)`` uint8 matrix of the strings' bytes (a 33rd column, if
    present, must be zero: it catches longer strings). The matrix may be a zero-copy view of a pyarrow string buffer
    whose values all have 32 bytes."""
    out = np.empty(len(b), dtype=np.int64)
    for first in range(0, len(b), _ROWS_AT_ONCE):
        out[first : first + _ROWS_AT_ONCE] = _canonical_block(b[first : first + _ROWS_AT_ONCE])
    return out


_ROWS_AT_ONCE = 4096  # the temporaries of a block stay in the CPU cache


def _canonical_block(b: np.ndarray) -> np.ndarray:
    d = b[:, _DIGITS] - np.uint8(48)  # uint8: a byte below "0" wraps to > 9
    ok = (d <= 9).all(axis=1)
    if b.shape[1] > 32:
        ok &= b[:, 32] == 0
    for position, char in _PUNCTUATION.items():
        ok &= b[:, position] == char[0]
    sign = b[:, 26]
    ok &= (sign == ord("+")) | (sign == ord("-"))
    d = d.astype(np.int64)
    # Columns of d: year 0-3, month 4-5, day 6-7, hour 8-9, minute 10-11, second 12-13, micro 14-19, offset 20-23.
    year = _number(d, 0, 3)
    month, day = _number(d, 4, 5), _number(d, 6, 7)
    hour, minute, second = _number(d, 8, 9), _number(d, 10, 11), _number(d, 12, 13)
    micro = _number(d, 14, 19)
    off_h, off_m = _number(d, 20, 21), _number(d, 22, 23)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_days = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)[np.clip(month, 0, 12)]
    month_days = month_days + ((month == 2) & leap)
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= month_days)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59) & (off_h <= 23) & (off_m <= 59)
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil), vectorised.
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    offset = np.where(sign == ord("-"), -1, 1) * (off_h * 60 + off_m) * 60
    seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset
    return np.where(ok, seconds * 1_000_000 + micro, NAT_US)


def parse_ts_us(values: Sequence[Any], zone: _dt.tzinfo | None) -> np.ndarray:
    """Raw ``ts`` values -> int64 microseconds since the epoch (``NAT_US`` where the store could not read one).

    Agrees with :func:`agentmem_nb.timeutil.parse_ts`: strings in the canonical shape are converted in one
    vectorised pass, the rest one by one through ``parse_ts`` itself.
    """
    strings = list(values) if set(map(type, values)) <= {str} else [v if v.__class__ is str else None for v in values]
    out = _parse_canonical(strings) if strings else np.empty(0, dtype=np.int64)
    parse_rest_us(out, strings.__getitem__, zone)
    return out


def parse_rest_us(out: np.ndarray, text_at: Callable[[int], str | None], zone: _dt.tzinfo | None) -> None:
    """Fill the ``NAT_US`` entries the canonical pass left with ``parse_ts`` of ``text_at(i)`` (``None`` = no
    string: stays ``NAT_US``), in place."""
    for i in np.flatnonzero(out == NAT_US).tolist():
        text = text_at(i)
        if text is None:
            continue
        moment, _naive = parse_ts(text, zone)
        if moment is not None:
            out[i] = (moment - _EPOCH) // _ONE_US


def fill_missing_us(values: np.ndarray, *, before: int = 0) -> np.ndarray:
    """The store's rule for unreadable timestamps: take the previous message's time (``before`` for the first one,
    the epoch by default). Works in place and returns ``values``."""
    missing = values == NAT_US
    if not missing.any():
        return values
    if missing[0]:
        values[0] = before
        missing[0] = False
    index = np.where(missing, 0, np.arange(len(values)))
    np.maximum.accumulate(index, out=index)
    values[:] = values[index]
    return values


def timestamp_us(moment: pd.Timestamp | _dt.datetime) -> int:
    """An aware moment as int64 microseconds since the epoch."""
    return (pd.Timestamp(moment).to_pydatetime() - _EPOCH) // _ONE_US


def us_to_series(values: np.ndarray | Sequence[int], zone: _dt.tzinfo, *, name: str = "ts") -> pd.Series:
    """int64 microseconds (``NAT_US`` = missing) -> an aware ``datetime64[us, zone]`` Series."""
    array = np.asarray(values, dtype=np.int64).view("M8[us]")
    return pd.Series(pd.DatetimeIndex(array).tz_localize("UTC").tz_convert(zone), name=name)


def datetimes_to_series(values: Sequence[_dt.datetime | None], zone: _dt.tzinfo, *, name: str = "ts") -> pd.Series:
    """Aware datetimes (``None`` = missing) -> an aware ``datetime64[us, zone]`` Series."""
    micros = [NAT_US if v is None else (v - _EPOCH) // _ONE_US for v in values]
    return us_to_series(micros, zone, name=name)


def _as_timestamp(bound: TimeBound, zone: _dt.tzinfo, *, end: bool) -> pd.Timestamp | None:
    if bound is None:
        return None
    whole_day = isinstance(bound, _dt.date) and not isinstance(bound, _dt.datetime)
    if isinstance(bound, str):
        text = bound.strip()
        whole_day = len(text) == 10
        try:
            stamp = pd.Timestamp(text)
        except ValueError:
            raise ValueError(
                f"cannot read the date {bound!r}: write 'YYYY-MM-DD' for a whole day or an ISO datetime such as "
                "'2026-04-08T10:00'"
            ) from None
    elif isinstance(bound, (_dt.datetime, _dt.date, pd.Timestamp)):
        stamp = pd.Timestamp(bound)
    else:
        raise TypeError(f"a date bound must be a date, datetime or ISO string, got {type(bound).__name__} {bound!r}")
    if pd.isna(stamp):
        raise ValueError(f"a date bound may not be missing (got {bound!r}): pass None for an open range")
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize(zone, ambiguous=True, nonexistent="shift_forward")
    if whole_day and end:
        # A day as an end bound means "through that day": up to the next local midnight (exclusive).
        stamp = (stamp.tz_localize(None) + pd.Timedelta(days=1)).tz_localize(zone, ambiguous=True,
                                                                              nonexistent="shift_forward")
        return stamp - pd.Timedelta(microseconds=1)
    return stamp


def lower_bound(bound: TimeBound, zone: _dt.tzinfo) -> pd.Timestamp | None:
    """``start`` as an inclusive aware timestamp (a day means its first instant)."""
    return _as_timestamp(bound, zone, end=False)


def upper_bound(bound: TimeBound, zone: _dt.tzinfo) -> pd.Timestamp | None:
    """``end`` as an inclusive aware timestamp (a day means its last microsecond)."""
    return _as_timestamp(bound, zone, end=True)
