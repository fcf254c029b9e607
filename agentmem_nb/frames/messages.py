"""Session and day messages as DataFrames, and the filters a person expects (role, keyword, session, dates).

Columns (:data:`MESSAGE_COLUMNS`): ``ts`` (aware, the user's zone), ``user_id``, ``session_id``, ``day``,
``message_id``, ``role``, ``content``, ``n_tool_calls``, ``tags`` (a tuple), and ``meta`` (a dict) when asked for.
Values are exactly what :meth:`MessageFile.messages` returns (same skipped lines, same normalised legacy ids, same
fallbacks for odd fields), only columnar and much faster.

Two readers produce them. A full load of a large, clean file (the usual case for a long history) is read in columns
by pyarrow (``_fast``: only when the result is provably identical, else it refuses); every other read — part of a
file, a small or odd file, ``meta=True`` (the whole ``meta`` dict of every row is Python objects anyway) — goes
through the store's line index and orjson (``_read``). Pass a :class:`ReadStats` as ``stats`` to see which ran.
"""

from __future__ import annotations

import datetime as _dt
import gc
import json
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from agentmem_nb.frames import _fast
from agentmem_nb.frames._read import ReadStats, record_chunks
from agentmem_nb.frames import langgraph as _langgraph  # recognises a checkpointer without importing langgraph
from agentmem_nb.frames._text import concat_frames, text_array
from agentmem_nb.frames._time import (
    TimeBound,
    fill_missing_us,
    frame_zone,
    lower_bound,
    parse_ts_us,
    timestamp_us,
    upper_bound,
    us_to_series,
)
from agentmem_nb.errors import MemoryDataWarning, UnsafeFileError
from agentmem_nb.identifiers import check_day, check_session_id
from agentmem_nb.messages import Message
from agentmem_nb.store import Cursor, MessageFile, UserMemory

try:
    import pyarrow as pa  # used only for files the columnar reader read (so it is installed then)
except ImportError:  # pragma: no cover - pyarrow is a declared dependency; without it no file is read in columns
    pa = None

__all__ = [
    "MESSAGE_COLUMNS",
    "session_messages",
    "daily_messages",
    "filter_messages",
    "message_file_frame",
    "messages_frame",
    "contains_casefold",
    "time_mask",
    "DayRange",
]

MESSAGE_COLUMNS = ("ts", "user_id", "session_id", "day", "message_id", "role", "content", "n_tool_calls", "tags")

DayRange = str | _dt.date | tuple[str | _dt.date | None, str | _dt.date | None] | None
"""Which day files: ``None`` (all), one day (``"2026-04-08"``), or an inclusive ``(first, last)`` pair (either end
may be ``None`` for an open range)."""


@dataclass(slots=True)
class _Columns:
    """Column lists accumulated over one or more files (strings shared through small caches, so repeated values such
    as roles, tags and session ids cost one pointer per row)."""

    with_meta: bool = False
    with_calls: bool = False
    ts: list[np.ndarray] = field(default_factory=list)
    session_id: list[str | None] = field(default_factory=list)
    day: list[str | None] = field(default_factory=list)
    message_id: list[np.ndarray] = field(default_factory=list)
    role: list[str] = field(default_factory=list)
    content: list[str] = field(default_factory=list)
    n_tool_calls: list[int] = field(default_factory=list)
    tags: list[tuple[str, ...]] = field(default_factory=list)
    meta: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[int, list[Any]]] = field(default_factory=list)  # (row, raw meta.tool_calls) when asked for
    _interned: dict[Any, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.content)


def _intern(cache: dict[Any, Any], value: Any) -> Any:
    found = cache.get(value)
    if found is None:
        cache[value] = found = value
    return found


# The per-record work below is written as map() over C functions wherever the common case allows (all values of the
# expected type), with a Python comprehension only for the odd chunk: at a million rows every Python-level call per
# row costs about a tenth of a second.
_get = dict.get


def _field(records: list[dict[str, Any]] | list[Any], name: str) -> list[Any]:
    try:
        return list(map(itemgetter(name), records))  # the usual case: every record has the key
    except KeyError:
        return list(map(_get, records, repeat(name)))


def _all_of(values: list[Any], kind: type) -> bool:
    return set(map(type, values)) <= {kind}


def _content(value: Any) -> str:
    # message_from_record's rule for a non-string content.
    if value.__class__ is str:
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _str_or(value: Any, default: Any) -> Any:
    return sys.intern(value) if value.__class__ is str else default


def _tags_of(raw: list[Any], cache: dict[tuple[Any, ...], tuple[str, ...]]) -> list[tuple[str, ...]]:
    """``Message.tags`` of each raw value: the string items of a list, else ``()``. Equal tag lists share one tuple."""
    if _all_of(raw, list):
        try:
            keys = list(map(tuple, raw))
            for key in set(keys).difference(cache):
                cache[key] = tuple(t for t in key if isinstance(t, str))
            return list(map(cache.__getitem__, keys))
        except TypeError:  # an unhashable item (a dict inside tags): take the slow path
            pass
    return [tuple(t for t in v if isinstance(t, str)) if v.__class__ is list else () for v in raw]


def _count_calls(raw: Any) -> int:
    # Message.tool_calls keeps the entries ToolCall.from_raw accepts: dicts with a string name.
    if raw.__class__ is not list:
        return 0
    count = 0
    for call in raw:
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            count += 1
    return count


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector during a bulk parse.

    Parsing creates hundreds of thousands of short-lived dicts and lists that contain no cycles; each 700 of them
    would otherwise trigger a collection pass (about a quarter of the parse time). Reference counting still frees
    everything; the previous state is restored even on error.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _scan(file: MessageFile, cols: _Columns, *, start: int = 0, stop: int | None = None, before_us: int = 0,
          stats: ReadStats | None) -> None:
    """Append the records of ``file`` at positions ``start <= i < stop`` to ``cols``."""
    with _gc_paused():
        _scan_records(file, cols, record_chunks(file, start=start, stop=stop, stats=stats), before_us=before_us)


def _scan_records(file: MessageFile, cols: _Columns, chunks: Iterable[tuple[np.ndarray, list[dict[str, Any]]]], *,
                  before_us: int) -> None:
    """Append ``(normalised ids, records)`` chunks of ``file`` (in file order) to ``cols``."""
    zone = file.zone
    cache = cols._interned
    is_session = file.kind == "session"
    key = _intern(cache, file.key)
    micros: list[np.ndarray] = []
    for ids, records in chunks:
        count = len(records)
        base = len(cols.content)
        cols.message_id.append(ids)
        micros.append(parse_ts_us(_field(records, "ts"), zone))
        contents = _field(records, "content")
        cols.content += contents if _all_of(contents, str) else list(map(_content, contents))
        roles = _field(records, "role")
        cols.role += list(map(sys.intern, roles)) if _all_of(roles, str) else [_str_or(v, "unknown") for v in roles]
        cols.tags += _tags_of(_field(records, "tags"), cache)
        metas = _field(records, "meta")
        if not _all_of(metas, dict):
            metas = [m if m.__class__ is dict else {} for m in metas]
        if is_session:
            cols.session_id += [key] * count
        else:
            cols.session_id += [_str_or(v, None) for v in _field(metas, "session_id")]
            cols.day += [key] * count
        raw_calls = _field(metas, "tool_calls")
        counts = [0] * count
        with_calls = list(compress(range(count), raw_calls))  # rows whose meta has a (truthy) tool_calls
        for k in with_calls:
            counts[k] = _count_calls(raw_calls[k])
        cols.n_tool_calls += counts
        if cols.with_calls:
            cols.calls += [(base + k, raw_calls[k]) for k in with_calls if raw_calls[k].__class__ is list]
        if cols.with_meta:
            cols.meta += metas
    if not micros:
        return
    ts = fill_missing_us(np.concatenate(micros), before=before_us)
    cols.ts.append(ts)
    if is_session:
        cols.day += _local_days(ts, frame_zone(zone), cache)


def _day_codes(micros: np.ndarray, zone: _dt.tzinfo) -> tuple[np.ndarray, list[str]]:
    """``YYYY-MM-DD`` of each instant in ``zone`` (the store's ``Message.day`` for a session line), factorised:
    ``(codes, names)`` with ``names[codes[i]]`` the day of row ``i``."""
    local = us_to_series(micros, zone).dt.tz_localize(None).dt.floor("D")
    codes, uniques = pd.factorize(local)
    # From the components, not strftime: an instant near year 1 can fall on a local day in year 0, which pandas
    # holds but cannot strftime (a single such line made the whole frame raise).
    return codes, [f"{d.year:04d}-{d.month:02d}-{d.day:02d}" for d in uniques]


def _local_days(micros: np.ndarray, zone: _dt.tzinfo, cache: dict[Any, Any]) -> list[str]:
    """The day of each instant as a list of shared strings."""
    codes, names = _day_codes(micros, zone)
    names = [_intern(cache, name) for name in names]
    return [names[c] for c in codes.tolist()]


def _to_frame(cols: _Columns, *, user_id: str, zone: _dt.tzinfo) -> pd.DataFrame:
    ts = np.concatenate(cols.ts) if cols.ts else np.empty(0, np.int64)
    ids = np.concatenate(cols.message_id) if cols.message_id else np.empty(0, np.int64)
    data: dict[str, Any] = {
        "ts": us_to_series(ts, zone).array,
        "user_id": text_array([user_id] * len(cols)),
        "session_id": text_array(cols.session_id),
        "day": text_array(cols.day),
        "message_id": ids,
        "role": text_array(cols.role),
        "content": text_array(cols.content),
        "n_tool_calls": np.asarray(cols.n_tool_calls, dtype=np.int64),
        "tags": _object_array(cols.tags),
    }
    if cols.with_meta:
        data["meta"] = _object_array(cols.meta)
    return pd.DataFrame(data)


def _object_array(values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values  # element-wise: tuples and dicts stay whole objects
    return out


def message_file_frame(
    file: MessageFile,
    *,
    user_id: str,
    start: int = 0,
    before_ts: pd.Timestamp | None = None,
    meta: bool = False,
    stats: ReadStats | None = None,
) -> pd.DataFrame:
    """The messages of one file from position ``start`` (for following a growing file: pass the number of rows
    already read, and ``before_ts`` = the time of the last of them, the fallback for an unreadable first time)."""
    return _read_file(file, user_id=user_id, start=start, before_ts=before_ts, meta=meta, stats=stats).frame


@dataclass(slots=True)
class _FileRead:
    """One file's rows, the raw tool calls when asked for, and — for a whole read — the store's scan cursor after
    what was read (what :class:`~agentmem_nb.frames.LayerFollower` passes to the scan to read only what comes after);
    ``columnar`` says which reader ran."""

    frame: pd.DataFrame
    calls: list[tuple[int, list[Any]]]
    cursor: Cursor | None = None
    columnar: bool = False


def _read_file(
    file: MessageFile,
    *,
    user_id: str,
    start: int = 0,
    stop: int | None = None,
    before_ts: pd.Timestamp | None = None,
    meta: bool = False,
    calls: bool = False,
    stats: ReadStats | None = None,
) -> _FileRead:
    cursor = None
    if start == 0 and stop is None:
        if not meta:
            fast = _columnar(file, calls=calls, stats=stats)
            if fast is not None:
                return _FileRead(_columnar_frame(fast, file, user_id=user_id), fast.calls, fast.cursor, True)
        # A whole read through the index: the scan first, so its cursor covers no more than what is read.
        scanned = file.scan()
        stop, cursor = scanned.stop, scanned.cursor
    cols = _Columns(with_meta=meta, with_calls=calls)
    before = 0 if before_ts is None or pd.isna(before_ts) else timestamp_us(before_ts)
    _scan(file, cols, start=start, stop=stop, before_us=before, stats=stats)
    return _FileRead(_to_frame(cols, user_id=user_id, zone=frame_zone(file.zone)), cols.calls, cursor)


def _columnar(file: MessageFile, *, calls: bool, stats: ReadStats | None) -> _fast.FastColumns | None:
    """The file in columns, or ``None`` when the columnar reader refuses it (the reason goes to ``stats``) or the
    layer is not a file (a database's rows are read through its ``read_records``)."""
    if not isinstance(file, MessageFile):
        return None
    try:
        fast = _fast.read_columns(file, calls=calls)
    except _fast.TooSmall:
        return None
    except _fast.Refused as why:
        if stats is not None:
            stats.refusals.append(f"{file.path}: {why}")
        return None
    if stats is not None:
        stats.columnar_files += 1
        stats.bytes_read += fast.end
        stats.records += len(fast)
    return fast


def _repeat_text(value: str, count: int) -> Any:
    try:
        return pd.array(pa.repeat(pa.scalar(value, pa.large_string()), count), dtype="str")
    except UnicodeEncodeError:
        return text_array([value] * count)


def _local_day_array(micros: np.ndarray, zone: _dt.tzinfo) -> Any:
    """``YYYY-MM-DD`` of each instant in ``zone`` as a ``"str"`` array (as :func:`_local_days`, without a Python
    string per row)."""
    codes, names = _day_codes(micros, zone)
    return pd.array(pa.array(names, type=pa.large_string()).take(pa.array(codes)), dtype="str")


def _columnar_frame(fast: _fast.FastColumns, file: MessageFile, *, user_id: str) -> pd.DataFrame:
    """The frame of :func:`_to_frame` from the columnar reader's columns (same columns, dtypes and values)."""
    zone = frame_zone(file.zone)
    count = len(fast)
    if file.kind == "session":
        session, day = _repeat_text(file.key, count), _local_day_array(fast.ts_us, zone)
    else:
        session, day = pd.array(fast.session_id, dtype="str"), _repeat_text(file.key, count)
    return pd.DataFrame({
        "ts": us_to_series(fast.ts_us, zone).array,
        "user_id": _repeat_text(user_id, count),
        "session_id": session,
        "day": day,
        "message_id": fast.ids,
        "role": pd.array(fast.role, dtype="str"),
        "content": pd.array(fast.content, dtype="str"),
        "n_tool_calls": fast.n_tool_calls,
        "tags": fast.tags,
    })


def messages_frame(messages: Iterable[Message], *, user_id: str, zone: _dt.tzinfo | None) -> pd.DataFrame:
    """Message objects (a search result, a window) as rows with the :data:`MESSAGE_COLUMNS` of the other frames."""
    cols = _Columns()
    messages = list(messages)
    cols.ts.append(np.asarray([timestamp_us(m.ts) for m in messages], dtype=np.int64))
    cols.message_id.append(np.asarray([m.message_id for m in messages], dtype=np.int64))
    cols.session_id += [m.session_id for m in messages]
    cols.day += [m.day for m in messages]
    cols.role += [m.role for m in messages]
    cols.content += [m.content for m in messages]
    cols.n_tool_calls += [len(m.tool_calls) for m in messages]
    cols.tags += [m.tags for m in messages]
    return _to_frame(cols, user_id=user_id, zone=frame_zone(zone))


def _session_ids(mem: UserMemory, session: str | Iterable[str] | None) -> list[str]:
    if session is None:
        return mem.session_ids()
    wanted = [session] if isinstance(session, str) else list(session)
    return [check_session_id(s) for s in wanted]


_T = TypeVar("_T")


def _warn_refused(mem: UserMemory, refused: list[str]) -> None:
    """One warning naming the files of a listing that were left out because the store refuses to open them."""
    if refused:
        warnings.warn(MemoryDataWarning(
            f"{len(refused)} file(s) of {mem.user_id!r} not read, the store refuses to open them (a link, a FIFO or a "
            f"folder in a file's place): {', '.join(refused[:5])}{' ...' if len(refused) > 5 else ''}; see "
            "UserMemory.problems()"), stacklevel=4)


def each_readable(mem: UserMemory, files: list[MessageFile], read: Callable[[MessageFile], _T]) -> list[_T]:
    """``read(file)`` for each file of a listing (every thread, every day), leaving out with one warning those the
    store refuses to open (see :func:`_load`)."""
    out: list[_T] = []
    refused: list[str] = []
    for file in files:
        try:
            out.append(read(file))
        except UnsafeFileError as exc:  # refused before a byte was read
            refused.append(str(exc.path))
    _warn_refused(mem, refused)
    return out


def _load(mem: UserMemory, files: list[MessageFile], *, meta: bool, calls: bool = False,
          stats: ReadStats | None = None, every: bool = False) -> tuple[pd.DataFrame, list[tuple[int, list[Any]]]]:
    """The rows of ``files`` in order: runs of files read exactly share one column set (many small threads cost
    one frame), a file read in columns is a frame of its own; ``calls`` rows refer to the combined frame.

    ``every``: the files are a listing (every thread, every day), not ones the caller named. Then a file the store
    refuses to open (a link, a FIFO, a folder in its place) is left out with a :class:`MemoryDataWarning` naming it
    (``problems()`` reports it too), so one bad file does not keep a whole user from being seen; a file the caller
    named raises as the store does."""
    zone = frame_zone(mem.store.zone)
    parts: list[pd.DataFrame] = []
    raw_calls: list[tuple[int, list[Any]]] = []
    rows = 0
    cols = _Columns(with_meta=meta, with_calls=calls)

    def add(frame: pd.DataFrame, found: list[tuple[int, list[Any]]]) -> None:
        nonlocal rows
        raw_calls.extend((rows + row, raw) for row, raw in found)
        parts.append(frame)
        rows += len(frame)

    def read(file: MessageFile) -> None:
        nonlocal cols
        fast = None if meta else _columnar(file, calls=calls, stats=stats)
        if fast is None:
            _scan(file, cols, stats=stats)
            return
        if len(cols):
            add(_to_frame(cols, user_id=mem.user_id, zone=zone), cols.calls)
            cols = _Columns(with_meta=meta, with_calls=calls)
        add(_columnar_frame(fast, file, user_id=mem.user_id), fast.calls)

    if every:
        each_readable(mem, files, read)  # a refused file is refused before a byte of it was read: skipped whole
    else:
        for file in files:
            read(file)
    if len(cols) or not parts:
        add(_to_frame(cols, user_id=mem.user_id, zone=zone), cols.calls)
    return (parts[0] if len(parts) == 1 else concat_frames(parts)), raw_calls


def session_messages(
    mem: UserMemory,
    session_id: str | Iterable[str] | None = None,
    *,
    role: str | Iterable[str] | None = None,
    keyword: str | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
    meta: bool = False,
    stats: ReadStats | None = None,
) -> pd.DataFrame:
    """Messages of one thread, several, or all of them (``session_id=None``), oldest first.

    With several threads the rows are ordered by time (ties keep thread order). Filters are those of
    :func:`filter_messages`. ``meta=True`` adds the ``meta`` dict of every row (read exactly, never in columns);
    ``stats`` collects what the reads cost and which reader read each file.

    >>> # session_messages(store.user("alice"), "s1", role="user", keyword="lyon")

    ``mem`` may also be a LangGraph checkpointer: ``session_id`` is then the thread id, and the frame has LangGraph's
    columns besides these (see :mod:`agentmem_nb.frames.langgraph`).
    """
    if _langgraph.given_checkpointer(mem):
        frame = _langgraph.checkpointer_messages(mem, session_id)  # type: ignore[arg-type]  # a checkpointer here
        return filter_messages(frame, role=role, keyword=keyword, start=start, end=end)
    ids = _session_ids(mem, session_id)
    frame, _ = _load(mem, [mem.session(s) for s in ids], meta=meta, stats=stats, every=session_id is None)
    if len(ids) > 1 and not frame["ts"].is_monotonic_increasing:  # (sorting sorted rows would copy every column)
        frame = frame.sort_values("ts", kind="stable", ignore_index=True)
    return filter_messages(frame, role=role, keyword=keyword, start=start, end=end)


def _day_list(mem: UserMemory, days: DayRange) -> list[str]:
    if days is None:
        return mem.days()
    if isinstance(days, (str, _dt.date)):
        return [check_day(days)]
    if isinstance(days, tuple) and len(days) == 2:
        first = check_day(days[0]) if days[0] is not None else None
        last = check_day(days[1]) if days[1] is not None else None
        return [d for d in mem.days() if (first is None or d >= first) and (last is None or d <= last)]
    raise ValueError(
        f"days={days!r}: give None (every day), one day 'YYYY-MM-DD', or a (first, last) pair of days"
    )


def daily_messages(
    mem: UserMemory,
    days: DayRange = None,
    *,
    session: str | Iterable[str] | None = None,
    role: str | Iterable[str] | None = None,
    keyword: str | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
    meta: bool = False,
    stats: ReadStats | None = None,
) -> pd.DataFrame:
    """Messages of one day file, an inclusive range of days, or every day (``days=None``), oldest day first.

    ``days`` picks day *files* (a turn that crossed midnight stays in the day it started); ``start``/``end`` filter
    rows by their time. Legacy day lines carry no session id: their ``session_id`` is missing (NA). ``meta`` and
    ``stats`` as for :func:`session_messages`.

    >>> # daily_messages(store.user("alice"), ("2026-04-01", "2026-04-08"), role="assistant")
    """
    frame, _ = _load(mem, [mem.daily(d) for d in _day_list(mem, days)], meta=meta, stats=stats,
                     every=not isinstance(days, (str, _dt.date)))
    return filter_messages(frame, session=session, role=role, keyword=keyword, start=start, end=end)


def _as_list(value: str | Iterable[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def contains_casefold(values: pd.Series, keyword: str, *, within: pd.Series | None = None) -> pd.Series:
    """Row mask: ``keyword`` occurs in the text, compared as the store compares (``str.casefold``).

    Only rows where ``within`` is true are examined (the others are false).
    """
    needle = keyword.casefold()
    texts = values.to_numpy(dtype=object)
    rows = np.arange(len(texts)) if within is None else np.flatnonzero(within.to_numpy(dtype=bool))
    out = np.zeros(len(texts), dtype=bool)
    out[rows] = [isinstance(v, str) and needle in v.casefold() for v in texts[rows]]
    return pd.Series(out, index=values.index)


def time_mask(ts: pd.Series, start: TimeBound, end: TimeBound) -> pd.Series:
    """Row mask for ``start <= ts <= end`` (see :data:`TimeBound`; a day as ``end`` includes the whole day)."""
    zone = ts.dt.tz
    mask = pd.Series(True, index=ts.index)
    low = lower_bound(start, zone)
    high = upper_bound(end, zone)
    if low is not None:
        mask &= ts >= low
    if high is not None:
        mask &= ts <= high
    return mask


def filter_messages(
    frame: pd.DataFrame,
    *,
    role: str | Iterable[str] | None = None,
    keyword: str | None = None,
    session: str | Iterable[str] | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
) -> pd.DataFrame:
    """Rows of a message frame that pass every given filter (``None`` = no filter).

    - ``role``: one role or several.
    - ``keyword``: casefolded substring of ``content`` (the store's search rule; CJK included). Empty = no filter.
    - ``session``: one session id or several.
    - ``start`` / ``end``: inclusive bounds on ``ts``; a date or ``"YYYY-MM-DD"`` means the whole local day, a naive
      datetime is read in the frame's zone.
    """
    mask = pd.Series(True, index=frame.index)
    if role is not None:
        mask &= frame["role"].isin(_as_list(role))
    if session is not None:
        mask &= frame["session_id"].isin(_as_list(session))
    if start is not None or end is not None:
        mask &= time_mask(frame["ts"], start, end)
    if keyword:
        mask &= contains_casefold(frame["content"], keyword, within=mask)
    if bool(mask.all()):
        return frame
    return frame.loc[mask].reset_index(drop=True)

