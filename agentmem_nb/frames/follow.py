"""DataFrames that follow a user's growing files: each refresh reads only the lines appended since the last one.

The store's index is itself incremental (``len(file)`` reads only new bytes), so a :class:`LayerFollower` asks each
file how many records it has, reads just the new records, and appends their rows to the frame it holds. A file that
shrank or was replaced (its last known record changed) is read again from the start. The widgets use this so a
refresh after a chat turn costs the size of the turn, not of the history.

>>> # follower = LayerFollower(store.user("alice"))
>>> # follower.sessions()   # reads everything once
>>> # ...the chat appends...
>>> # follower.sessions()   # reads only the new lines
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pandas as pd

from agentmem_nb.frames._read import ReadStats
from agentmem_nb.frames._text import concat_frames
from agentmem_nb.frames._time import frame_zone
from agentmem_nb.frames.documents import log_frame
from agentmem_nb.frames.messages import _Columns, _file_frame, _to_frame
from agentmem_nb.frames.tools import ToolSource, tool_calls_from_log, tool_calls_from_messages
from agentmem_nb.store import MessageFile, UserMemory

__all__ = ["LayerFollower"]


@dataclass(slots=True)
class _Followed:
    rows: int
    last_id: int | None
    frame: pd.DataFrame
    calls: pd.DataFrame


def _concat(frames: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty
    if len(frames) == 1:
        return frames[0]
    return concat_frames(frames)


class LayerFollower:
    """Message, log and tool-call frames of one user, extended incrementally on every call.

    ``stats`` counts the bytes this object read itself (the store's own index reads are in each file's ``stats``).
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

    def _follow(self, file: MessageFile) -> _Followed:
        key = (file.kind, file.key)
        total = len(file)
        known = self._files.get(key)
        if known is not None and total >= known.rows and self._unchanged(file, known):
            if total == known.rows:
                return known
            last_ts = known.frame["ts"].iloc[-1] if known.rows else None
            new, raw = _file_frame(file, user_id=self.mem.user_id, start=known.rows, before_ts=last_ts, calls=True,
                                   stats=self.stats)
            calls = self._calls(new, raw)
            known = _Followed(total, _last_id(new, known.last_id), _concat([known.frame, new], new),
                              _concat([known.calls, calls], calls))
        else:
            frame, raw = _file_frame(file, user_id=self.mem.user_id, calls=True, stats=self.stats)
            known = _Followed(len(frame), _last_id(frame, None), frame, self._calls(frame, raw))
        self._files[key] = known
        return known

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
                frame = _concat([self._follow(self.mem.session(s)).calls for s in self.mem.session_ids()],
                                _empty_calls(self.mem))
            else:
                raise ValueError(f"source={source!r}: use 'log' or 'sessions'")
        return frame.sort_values("ts", kind="stable", ignore_index=True)


def _last_id(frame: pd.DataFrame, default: int | None) -> int | None:
    return int(frame["message_id"].iloc[-1]) if len(frame) else default


def _empty_calls(mem: UserMemory) -> pd.DataFrame:
    return tool_calls_from_log([], user_id=mem.user_id, zone=frame_zone(mem.store.zone))
