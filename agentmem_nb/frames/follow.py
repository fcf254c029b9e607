"""DataFrames that follow a user's growing files: each refresh reads only the lines appended since the last one.

A :class:`LayerFollower` reads each message file once in full (in columns when the columnar reader accepts it, else
through the store's line index; see :mod:`agentmem_nb.frames.messages`), then on every call reads only what was
appended and adds those rows to the frame it holds. What is new is the store's answer, never this module's: each
followed file keeps the store's scan :class:`~agentmem_nb.store.Cursor`, and the store's one rule (see
:mod:`agentmem_nb.store.jsonl`) says "unchanged", "appended", "rewritten" or "truncated". Two ways to read what was
appended:

* **Raw lines** (after a columnar load, which does not build the store's index): ``MessageFile.raw_lines(cursor)``
  gives the complete lines appended since, under the file's shared lock; they are taken when every new line is what
  the store writes (``RawLines.as_written``: a record with an integer id above the last one), and the store's rules
  give the same rows.
* **The store's index** (after an exact load, and whenever the new lines hold anything else — a blank, malformed or
  legacy line): ``MessageFile.scan(cursor)`` brings the index up to date and names the new positions, read through
  it. From then on that file is followed by the index.

A file rewritten or truncated since the cursor is read again from the start. The tool calls in a thread file
(``tool_calls(source="sessions")``) are read the first time they are asked for (the file is read once more then) and
followed from then on. The widgets use this so a refresh after a chat turn costs the size of the turn, not of the
history.

>>> # follower = LayerFollower(store.user("alice"))
>>> # follower.sessions()   # reads everything once
>>> # ...the chat appends...
>>> # follower.sessions()   # reads only the new lines
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from agentmem_nb.frames._read import ReadStats
from agentmem_nb.frames._text import concat_frames
from agentmem_nb.frames._time import frame_zone, timestamp_us
from agentmem_nb.frames.documents import log_frame
from agentmem_nb.frames.messages import _Columns, _read_file, _scan_records, _to_frame, each_readable
from agentmem_nb.frames.tools import ToolSource, tool_calls_from_log, tool_calls_from_messages
from agentmem_nb.store import Cursor, MessageFile, RawLines, UserMemory

__all__ = ["LayerFollower"]


_REREAD = object()  # _appended_lines: the file is not the one read


@dataclass(slots=True)
class _Followed:
    rows: int
    last_id: int | None
    frame: pd.DataFrame
    calls: pd.DataFrame | None  # the tool-call rows; None until asked for (message files only)
    cursor: Cursor | None = None  # the store's scan cursor after what was read
    by_lines: bool = False  # followed by raw lines (after a columnar load), else through the index


@dataclass(slots=True)
class _FollowedLog:
    rows: int
    frame: pd.DataFrame
    calls: pd.DataFrame  # the log's tool calls are always read with it


def _concat(frames: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty
    if len(frames) == 1:
        return frames[0]
    return concat_frames(frames)


class LayerFollower:
    """Message, log and tool-call frames of one user, extended incrementally on every call.

    ``stats`` counts the bytes of records this object read itself (not the few bytes it reads to see that a file is
    unchanged; the store's own index reads are in each file's ``stats``).
    Thread-safe.
    """

    def __init__(self, mem: UserMemory) -> None:
        self.mem = mem
        self.zone = frame_zone(mem.store.zone)
        self.stats = ReadStats()
        self._files: dict[tuple[str, str], _Followed] = {}
        self._log: _FollowedLog | None = None
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"LayerFollower(user_id={self.mem.user_id!r}, files={len(self._files)})"

    # ------------------------------------------------------------------ message files

    def _follow(self, file: MessageFile, *, calls: bool = False) -> _Followed:
        key = (file.kind, file.key)
        known = self._files.get(key)
        if known is None or (calls and known.calls is None):
            # Tool calls are read only when first asked for (a million messages carry ~150k calls: seconds of
            # Python work a message view does not need); then the file is read once more, with them.
            known = self._whole(file, calls=calls)
        elif known.by_lines:
            grown = self._appended_lines(file, known)
            if isinstance(grown, _Followed):
                known = grown
            elif grown is None:
                known = self._appended_records(file, replace(known, by_lines=False))
            else:  # _REREAD
                known = self._whole(file, calls=known.calls is not None)
        else:
            known = self._appended_records(file, known)
        self._files[key] = known
        return known

    def _whole(self, file: MessageFile, *, calls: bool) -> _Followed:
        read = _read_file(file, user_id=self.mem.user_id, calls=calls, stats=self.stats)
        return _Followed(len(read.frame), _last_id(read.frame, None), read.frame,
                         self._calls(read.frame, read.calls) if calls else None, read.cursor, read.columnar)

    def _grown(self, known: _Followed, new: pd.DataFrame, raw: list[tuple[int, list[Any]]], *, cursor: Cursor,
               by_lines: bool) -> _Followed:
        calls = None
        if known.calls is not None:
            added = self._calls(new, raw)
            calls = _concat([known.calls, added], added)
        return _Followed(known.rows + len(new), _last_id(new, known.last_id), _concat([known.frame, new], new), calls,
                         cursor, by_lines)

    def _appended_records(self, file: MessageFile, known: _Followed) -> _Followed:
        """New records through the store's index (``known`` is index-followed)."""
        scanned = file.scan(known.cursor)
        if scanned.change == "unchanged":
            return known
        if scanned.change in ("rewritten", "truncated") or scanned.start != known.rows or not known.rows:
            return self._whole(file, calls=known.calls is not None)
        if scanned.stop == scanned.start:
            return replace(known, cursor=scanned.cursor)
        read = _read_file(file, user_id=self.mem.user_id, start=scanned.start, stop=scanned.stop,
                          before_ts=_last_ts(known), calls=known.calls is not None, stats=self.stats)
        return self._grown(known, read.frame, read.calls, cursor=scanned.cursor, by_lines=False)

    def _appended_lines(self, file: MessageFile, known: _Followed) -> _Followed | object | None:
        """New lines from the store's raw scan (``known`` was read in columns); ``None`` when only the index can say
        what the new lines are, ``_REREAD`` when the file is not the one read (replaced, truncated, rewritten)."""
        with file.raw_lines(known.cursor) as raw:
            if raw.change in ("rewritten", "truncated"):
                return _REREAD
            if raw.end == raw.start:
                return known
            data = raw.read()
            cursor = raw.cursor
        # Only appends exactly as the store writes them are taken here; anything else goes through its index.
        parsed = RawLines.as_written(data, known.last_id or 0)
        if parsed is None:
            return None
        self.stats.bytes_read += len(data)
        records, id_list = parsed
        ids = np.asarray(id_list, dtype=np.int64)
        self.stats.records += len(records)
        cols = _Columns(with_calls=known.calls is not None)
        last = _last_ts(known)  # None exactly when nothing is known yet
        before = timestamp_us(last) if last is not None else 0
        _scan_records(file, cols, [(ids, records)], before_us=before)
        new = _to_frame(cols, user_id=self.mem.user_id, zone=self.zone)
        return self._grown(known, new, cols.calls, cursor=cursor, by_lines=True)

    def _calls(self, frame: pd.DataFrame, raw: list[tuple[int, list[Any]]]) -> pd.DataFrame:
        return tool_calls_from_messages(frame, raw, user_id=self.mem.user_id, zone=self.zone)

    def session(self, session_id: str) -> pd.DataFrame:
        """Messages of one thread (as :func:`~agentmem_nb.frames.session_messages`)."""
        with self._lock:
            return self._follow(self.mem.session(session_id)).frame

    def daily(self, day: str) -> pd.DataFrame:
        """Messages of one day file (as :func:`~agentmem_nb.frames.daily_messages`)."""
        with self._lock:
            return self._follow(self.mem.daily(day)).frame

    def sessions(self) -> pd.DataFrame:
        """Messages of every thread, ordered by time."""
        with self._lock:
            parts = each_readable(self.mem, [self.mem.session(s) for s in self.mem.session_ids()],
                                  lambda file: self._follow(file).frame)
        frame = _concat(parts, self._empty_messages())
        return frame.sort_values("ts", kind="stable", ignore_index=True) if len(parts) > 1 else frame

    def days(self) -> pd.DataFrame:
        """Messages of every day file, oldest day first."""
        with self._lock:
            parts = each_readable(self.mem, [self.mem.daily(d) for d in self.mem.days()],
                                  lambda file: self._follow(file).frame)
        return _concat(parts, self._empty_messages())

    def _empty_messages(self) -> pd.DataFrame:
        return _to_frame(_Columns(), user_id=self.mem.user_id, zone=self.zone)

    # ------------------------------------------------------------------ dialogue log

    def _follow_log(self) -> _FollowedLog:
        log = self.mem.log
        total = len(log)
        known = self._log
        if known is not None and total >= known.rows:
            if total == known.rows:
                return known
            entries = log.tail(total - known.rows)
            new = log_frame(entries, zone=self.zone)
            calls = tool_calls_from_log(entries, user_id=self.mem.user_id, zone=self.zone)
            known = _FollowedLog(total, _concat([known.frame, new], new), _concat([known.calls, calls], calls))
        else:
            entries = log.entries()
            known = _FollowedLog(len(entries), log_frame(entries, zone=self.zone),
                                 tool_calls_from_log(entries, user_id=self.mem.user_id, zone=self.zone))
        self._log = known
        return known

    def log(self) -> pd.DataFrame:
        """The dialogue log (as :func:`~agentmem_nb.frames.dialogue_log`)."""
        with self._lock:
            return self._follow_log().frame

    def tool_calls(self, *, source: ToolSource = "log") -> pd.DataFrame:
        """Every tool call, ordered by time (as :func:`~agentmem_nb.frames.tool_calls`)."""
        with self._lock:
            if source == "log":
                frame = self._follow_log().calls
            elif source == "sessions":
                # calls=True reads each file's calls, so none is None; the test only narrows the type.
                frame = _concat([calls for s in self.mem.session_ids()
                                 if (calls := self._follow(self.mem.session(s), calls=True).calls) is not None],
                                _empty_calls(self.mem))
            else:
                raise ValueError(f"source={source!r}: use 'log' or 'sessions'")
        return frame.sort_values("ts", kind="stable", ignore_index=True)


def _last_id(frame: pd.DataFrame, default: int | None) -> int | None:
    return int(frame["message_id"].iloc[-1]) if len(frame) else default


def _last_ts(known: _Followed) -> pd.Timestamp | None:
    return known.frame["ts"].iloc[-1] if known.rows else None


def _empty_calls(mem: UserMemory) -> pd.DataFrame:
    return tool_calls_from_log([], user_id=mem.user_id, zone=frame_zone(mem.store.zone))
