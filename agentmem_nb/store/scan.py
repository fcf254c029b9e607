"""What changed in a layer file since a reader last looked: one rule, one cursor, for the index and every reader.

A reader keeps a :class:`Cursor`: which file (device, inode), the byte just past the last complete line it took,
and the :data:`CURSOR_TAIL` bytes before that. Appends never change those bytes; an editor's save in place or a
replaced file does. So, by :func:`change_since`:

* another file, or those bytes changed → ``"rewritten"`` (everything is new again);
* the file shorter than the cursor's end, or gone → ``"truncated"`` (everything is new again);
* longer → ``"appended"`` (the new lines start at the cursor's end);
* else ``"unchanged"`` — and no byte is read: a rewrite that keeps the file's exact size is not seen until the size
  changes, the price of a free "nothing new" (a notebook refresh, a query over 365 day files).

Before this rule there were three (the index checked one byte before its end, the frames follower a 256-byte tail,
the retrieval index size and inode); the store's line index (:class:`~agentmem_nb.store.jsonl.JsonlFile`) now
follows its file by this rule with its own cursor, and bulk readers get theirs from ``JsonlFile.scan`` /
``raw_lines`` — the layer's ``scan`` in the store contract. A cursor is opaque to readers: pass it back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

__all__ = ["CURSOR_TAIL", "Change", "Cursor", "Scan", "change_since", "moved_tail"]


Change = Literal["unchanged", "appended", "rewritten", "truncated"]
"""What happened to a file since a :class:`Cursor` (see the module docstring for the one rule)."""

CURSOR_TAIL = 256
"""Bytes before a cursor's end it keeps: unchanged at the next look means whatever came after was appended."""


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a reader of a layer file stopped. ``Cursor()`` is the start: everything in the file is new to it.

    ``file`` is the (device, inode) read, ``end`` the byte just past the last complete line taken, ``tail`` the
    bytes just before ``end`` (at most :data:`CURSOR_TAIL`). Opaque to readers: pass it back to ``scan``."""

    file: tuple[int, int] | None = None
    end: int = 0
    tail: bytes = b""

    def __repr__(self) -> str:
        return f"Cursor(file={self.file}, end={self.end})"


def change_since(fd: int, st: os.stat_result, since: Cursor) -> tuple[Change, int]:
    """The rule (module docstring): what happened to the open file ``fd`` (``st`` its ``fstat``) since ``since``,
    and the bytes read to tell (0 or ``len(since.tail)``). The caller holds a lock on ``fd``."""
    if since.end == 0:
        return ("appended" if st.st_size else "unchanged"), 0
    if (st.st_dev, st.st_ino) != since.file:
        return "rewritten", 0
    if st.st_size < since.end:
        return "truncated", 0
    if st.st_size == since.end:
        return "unchanged", 0
    if os.pread(fd, len(since.tail), since.end - len(since.tail)) != since.tail:
        return "rewritten", len(since.tail)
    return "appended", len(since.tail)


def moved_tail(tail: bytes, data: bytes | memoryview) -> bytes:
    """The cursor tail after ``data`` was taken after ``tail``."""
    return (tail + bytes(data[-CURSOR_TAIL:]))[-CURSOR_TAIL:]


@dataclass(frozen=True, slots=True)
class Scan:
    """What :meth:`~agentmem_nb.store.jsonl.JsonlFile.scan` found: the ``change`` since the caller's cursor, the positions
    ``start <= i < stop`` of the records that are new to the caller (all of them, from 0, unless ``"appended"`` —
    a caller that held rows drops them on ``"rewritten"``/``"truncated"``), and the ``cursor`` for next time."""

    change: Change
    start: int
    stop: int
    cursor: Cursor
