"""DataFrames that follow a user's growing files: each refresh reads only the lines appended since the last one.

A :class:`LayerFollower` reads each message file once in full (in columns when the columnar reader accepts it, else
through the store's line index; see :mod:`agentmem_nb.frames.messages`), then on every call reads only what was
appended and adds those rows to the frame it holds. Two ways to know what is new:

* **Bytes** (after a columnar load, which does not build the store's index): the follower keeps the byte end and
  inode it read, and the last 256 bytes before that end. A refresh looks at the file's size under its shared lock:
  unchanged size, nothing to do; a larger size, with the same inode and those bytes unchanged (appends never change
  them; an editor's save in place does), means lines were appended — it reads just those bytes and takes them if
  every new line is a record with an integer id above the last one (how the store writes); the store's own parser
  (orjson) gives the records, the store's rules give the same rows.
* **The store's index** (after an exact load, and whenever the new bytes hold anything else — a blank, malformed or
  legacy line): ``len(file)`` brings the incremental index up to date and the new positions are read through it.
  From then on that file is followed by the index.

A file that shrank, was replaced or rewritten (the record read last is no longer where it was) is read again from
the start. The tool calls in a thread file (``tool_calls(source="sessions")``) are read the first time they are asked
for (the file is read once more then) and followed from then on. The widgets use this so a refresh after a chat turn
costs the size of the turn, not of the history.

>>> # follower = LayerFollower(store.user("alice"))
>>> # follower.sessions()   # reads everything once
>>> # ...the chat appends...
>>> # follower.sessions()   # reads only the new lines
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from agentmem_nb.frames._read import ReadStats
from agentmem_nb.frames._fast import TAIL_BYTES
from agentmem_nb.frames._text import concat_frames
from agentmem_nb.frames._time import frame_zone, timestamp_us
from agentmem_nb.frames.documents import log_frame
from agentmem_nb.frames.messages import _Columns, _read_file, _scan_records, _to_frame
from agentmem_nb.frames.tools import ToolSource, tool_calls_from_log, tool_calls_from_messages
from agentmem_nb.store import MessageFile, UserMemory
from agentmem_nb.store._fs import flocked
from agentmem_nb.store.jsonl import fast_parse_exact, plain_records

__all__ = ["LayerFollower"]


_REREAD = object()  # _appended_bytes: the file is not the one read


@dataclass(slots=True)
class _Followed:
    rows: int
    last_id: int | None
    frame: pd.DataFrame
    calls: pd.DataFrame | None  # the tool-call rows; None until asked for (message files only)
    end: int | None = None  # byte end of what was read, when followed by bytes (see the module docstring)
    inode: tuple[int, int] | None = None
    tail: bytes = b""  # the last bytes before ``end`` as read: if they changed, the file was rewritten in place


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
        self._log: _Followed | None = None
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
        elif known.end is not None:
            grown = self._appended_bytes(file, known)
            if grown is _REREAD:
                known = self._whole(file, calls=known.calls is not None)
            elif grown is None:
                known = self._appended_records(file, replace(known, end=None))
            else:
                known = grown
        else:
            known = self._appended_records(file, known)
        self._files[key] = known
        return known

    def _whole(self, file: MessageFile, *, calls: bool) -> _Followed:
        read = _read_file(file, user_id=self.mem.user_id, calls=calls, stats=self.stats)
        return _Followed(len(read.frame), _last_id(read.frame, None), read.frame,
                         self._calls(read.frame, read.calls) if calls else None, read.end, read.inode, read.tail)

    def _grown(self, known: _Followed, new: pd.DataFrame, raw: list[tuple[int, list[Any]]], **where: Any) -> _Followed:
        calls = None
        if known.calls is not None:
            added = self._calls(new, raw)
            calls = _concat([known.calls, added], added)
        return _Followed(known.rows + len(new), _last_id(new, known.last_id), _concat([known.frame, new], new), calls,
                         **where)

    def _appended_records(self, file: MessageFile, known: _Followed) -> _Followed:
        """New records through the store's index (``known`` is index-followed)."""
        total = len(file)
        if total < known.rows or not self._unchanged(file, known):
            return self._whole(file, calls=known.calls is not None)
        if total == known.rows:
            return known
        read = _read_file(file, user_id=self.mem.user_id, start=known.rows, before_ts=_last_ts(known),
                          calls=known.calls is not None, stats=self.stats)
        return self._grown(known, read.frame, read.calls)

    def _appended_bytes(self, file: MessageFile, known: _Followed) -> _Followed | object | None:
        """New lines by byte position (``known`` was read in columns); ``None`` when only the index can say what
        the new lines are, ``_REREAD`` when the file is not the one read (gone, replaced, shrunk, rewritten)."""
        assert known.end is not None
        try:
            fd = file.open_for_reading()  # never through a link, never a FIFO (store._fs)
        except FileNotFoundError:
            return _REREAD
        try:
            with flocked(fd, exclusive=False):
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) != known.inode or st.st_size < known.end:
                    return _REREAD
                if st.st_size == known.end:
                    return known
                if os.pread(fd, len(known.tail), known.end - len(known.tail)) != known.tail:
                    # Rewritten in place (an editor's save): appends never change these bytes. Read it all again,
                    # not through the store's index, which checks only the byte before its end.
                    return _REREAD
                data = os.pread(fd, st.st_size - known.end, known.end)
        finally:
            os.close(fd)
        self.stats.bytes_read += len(data)
        complete = data[: data.rfind(b"\n") + 1]  # a last line without its newline is not read (as the store)
        if not complete:
            return known
        # Only appends exactly as the store writes them are taken here; anything else goes through its index.
        # fast_parse_exact: orjson would round a long integer (in meta, say) that the index path keeps exact.
        parsed = plain_records(complete.split(b"\n")[:-1], known.last_id or 0) if fast_parse_exact(complete) else None
        if parsed is None:
            return None
        records, id_list = parsed
        ids = np.asarray(id_list, dtype=np.int64)
        self.stats.records += len(records)
        cols = _Columns(with_calls=known.calls is not None)
        before = timestamp_us(_last_ts(known)) if known.rows else 0
        _scan_records(file, cols, [(ids, records)], before_us=before)
        new = _to_frame(cols, user_id=self.mem.user_id, zone=self.zone)
        return self._grown(known, new, cols.calls, end=known.end + len(complete), inode=known.inode,
                           tail=(known.tail + complete)[-TAIL_BYTES:])

    def _calls(self, frame: pd.DataFrame, raw: list[tuple[int, list[Any]]]) -> pd.DataFrame:
        return tool_calls_from_messages(frame, raw, user_id=self.mem.user_id, zone=self.zone)

    @staticmethod
    def _unchanged(file: MessageFile, known: _Followed) -> bool:
        """The record we read last is still where it was (one short read; skipped when nothing was appended)."""
        if known.rows == 0 or len(file) == known.rows:
            return True
        (mid, _record), = file.read_at([known.rows - 1])
        return mid == known.last_id

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
            parts = [self._follow(self.mem.session(s)).frame for s in self.mem.session_ids()]
        frame = _concat(parts, self._empty_messages())
        return frame.sort_values("ts", kind="stable", ignore_index=True) if len(parts) > 1 else frame

    def days(self) -> pd.DataFrame:
        """Messages of every day file, oldest day first."""
        with self._lock:
            parts = [self._follow(self.mem.daily(d)).frame for d in self.mem.days()]
        return _concat(parts, self._empty_messages())

    def _empty_messages(self) -> pd.DataFrame:
        return _to_frame(_Columns(), user_id=self.mem.user_id, zone=self.zone)

    # ------------------------------------------------------------------ dialogue log

    def _follow_log(self) -> _Followed:
        log = self.mem.log
        total = len(log.file)
        known = self._log
        if known is not None and total >= known.rows:
            if total == known.rows:
                return known
            entries = log.tail(total - known.rows)
            new = log_frame(entries, zone=self.zone)
            calls = tool_calls_from_log(entries, user_id=self.mem.user_id, zone=self.zone)
            known = _Followed(total, None, _concat([known.frame, new], new), _concat([known.calls, calls], calls))
        else:
            entries = log.entries()
            known = _Followed(len(entries), None, log_frame(entries, zone=self.zone),
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
                frame = _concat([self._follow(self.mem.session(s), calls=True).calls for s in self.mem.session_ids()],
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
