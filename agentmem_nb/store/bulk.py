"""What bulk readers get from a layer file: a copy of its line index, blocks of indexed lines, raw new lines.

Frames, the follower and the retrieval index read many lines at once; these values hand them the bytes with what
the index knows about them (:class:`IndexSnapshot`, :class:`LineBlock`), or the complete lines appended since a
cursor without the index, under the file's shared lock (:class:`RawLines`), for readers that parse a whole file
their own faster way. Each parses as the index does (:mod:`agentmem_nb.store.lines`): the format is read by the
store's rules and nowhere else. Made by :class:`agentmem_nb.store.jsonl.JsonlFile` (``index_snapshot``,
``line_blocks``, ``raw_lines``).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem_nb.errors import StoreError
from agentmem_nb.store.lines import FAST_ERRORS, fast_loads, fast_parse_exact, loads_record, plain_records
from agentmem_nb.store.scan import Change, Cursor

__all__ = ["IndexSnapshot", "LineBlock", "RawLines"]


@dataclass(frozen=True, slots=True)
class IndexSnapshot:
    """A copy of part of a file's line index: ``ids[i]`` starts at byte ``offsets[i]``; ``end`` is the byte just past
    the last complete line indexed."""

    ids: array[int]
    offsets: array[int]
    end: int


class LineBlock:
    """Raw lines of consecutive indexed records (:meth:`JsonlFile.line_blocks`): ``ids[i]`` is the normalised id of
    the record whose line starts at byte ``offsets[i]`` of the file, ``data`` the bytes from ``offsets[0]`` to just
    past the last record's line. :meth:`records` parses them as the index did."""

    __slots__ = ("ids", "offsets", "data", "whole")

    def __init__(self, ids: array[int], offsets: array[int], data: bytes) -> None:
        self.ids = ids
        self.offsets = offsets
        self.data = data
        self.whole = False
        """After :meth:`records`: whether the block was parsed in one call (no skipped line inside)."""

    @property
    def starts(self) -> list[int]:
        """Where each record's line starts in ``data``."""
        first = self.offsets[0] if self.offsets else 0
        return [offset - first for offset in self.offsets]

    def records(self) -> list[dict[str, Any]]:
        """The records, exactly as the index parsed their lines. A block holding only its records (no skipped or
        blank line between them: its newline count equals its record count) whose integers orjson keeps exact is
        parsed as one JSON array — one C call instead of one per line; otherwise each line by :func:`loads_record`."""
        count = len(self.offsets)
        if self.data.count(b"\n") == count and fast_parse_exact(self.data):
            records: list[dict[str, Any]] | None
            try:
                records = fast_loads(b"[" + self.data[:-1].replace(b"\n", b",") + b"]")
            except FAST_ERRORS:
                records = None
            if records is not None and len(records) == count:
                self.whole = True
                return records
        blob = self.data
        return [loads_record(blob[start : blob.index(b"\n", start)]) for start in self.starts]


class RawLines:
    """Complete lines appended since a cursor, read without the index, under the file's shared lock (held while the
    ``with`` block of :meth:`JsonlFile.raw_lines` lasts, so no line is read half written).

    ``change`` and ``cursor`` as in :class:`Scan`; the new lines are the bytes ``start <= b < end`` (``end`` just
    past the last complete line; ``size`` the file's size, beyond ``end`` only by an unterminated last line)."""

    __slots__ = ("change", "start", "end", "size", "cursor", "bytes_read", "_fd", "_path")

    def __init__(self, change: Change, start: int, end: int, size: int, cursor: Cursor, fd: int | None,
                 checked: int, path: Path) -> None:
        self.change = change
        self.start = start
        self.end = end
        self.size = size
        self.cursor = cursor
        self.bytes_read = checked  # the rule's own look, then every block read
        self._fd = fd
        self._path = path

    def read(self) -> bytes:
        """All the new lines at once."""
        return b"".join(self.blocks(max(1, self.end - self.start)))

    def blocks(self, size: int) -> Iterator[memoryview]:
        """The new lines in consecutive pieces of about ``size`` bytes, each ending with a newline (a line longer
        than ``size`` is one piece). Views, so cutting a piece at its last newline copies nothing."""
        position = self.start
        while position < self.end and self._fd is not None:
            want = min(size, self.end - position)
            data = os.pread(self._fd, want, position)
            while position + len(data) < self.end and data.rfind(b"\n") < 0:  # one line longer than a piece
                more = os.pread(self._fd, min(size, self.end - position - len(data)), position + len(data))
                if not more:
                    break
                data += more
            if len(data) < want:  # cut short by a writer who ignores the lock
                raise StoreError(f"{self._path}: the file shrank while it was read (a writer that ignores the "
                                 "store's lock?); read it again")
            self.bytes_read += len(data)
            piece = memoryview(data)
            if position + len(data) < self.end:
                piece = piece[: data.rfind(b"\n") + 1]
            yield piece
            position += len(piece)

    @staticmethod
    def as_written(data: bytes, after_id: int) -> tuple[list[dict[str, Any]], list[int]] | None:
        """``(records, ids)`` of complete lines ``data`` when each is exactly what this store appends (see
        :func:`plain_records`; ids above ``after_id``) and orjson parses them exactly — the index would then keep
        exactly these records with these ids; ``None`` when only the index can say (read through :meth:`scan`)."""
        if not fast_parse_exact(data):
            return None
        return plain_records(data.split(b"\n")[:-1], after_id)
