"""The in-memory line index of a layer file: where each record starts and its normalised id.

* **Reads never raise on bad data.** Malformed lines are skipped and recorded as :class:`Problem`\\ s; legacy rows
  get ids by the original rule (a missing or non-positive id takes the running next id; next = max(next, id + 1)).
  An id that an earlier line already has (a hand merge) is kept, and reported as ``DUPLICATE_ID``.
* **Reads after the first are incremental.** The index (byte offset and id of every line) is extended from the
  last indexed byte, so a reader following a growing file reads each byte once.
* **Bulk where it can prove the result is the same.** A block of lines exactly as this store writes them is indexed
  in a few C-level passes (:meth:`LineIndex._index_block`); anything else line by line, which records the problems
  with their line numbers. Both give the same index (property tests in ``tests/store/test_store_bulk_index.py``).
* **It follows its file by the one change rule** (:mod:`agentmem_nb.store.scan`) with its own cursor, and starts
  from a persisted copy (:mod:`agentmem_nb.store.index_cache`) when one describes the file.

The index covers complete lines only: an unfinished last line is reported (``UNTERMINATED_TAIL``) and not read.

This class holds the index and builds it from a descriptor it is handed; it opens nothing. The file's I/O (opening,
locking, reading records, appending) is :class:`agentmem_nb.store.jsonl.JsonlFile`, its one subclass: split so that
each module holds one concept, not to be used alone.
"""

from __future__ import annotations

import bisect
import json
import operator
import os
import threading
import warnings
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from agentmem_nb.errors import MemoryDataWarning
from agentmem_nb.store import index_cache
from agentmem_nb.store.lines import FAST_ERRORS, NOT_PARSED, fast_loads, orjson_suits, plain_records, usable_id
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.store.scan import CURSOR_TAIL, Change, Cursor, change_since, moved_tail

__all__ = ["IOStats", "LineIndex", "CHUNK"]

CHUNK = 1 << 20
"""Bytes read at a time while indexing (and the default block of ``line_blocks``)."""


@dataclass(slots=True)
class IOStats:
    """Counters for complexity tests and benchmarks (bytes, not seconds: stable on a noisy machine)."""

    bytes_read: int = 0
    reads: int = 0
    lines_indexed: int = 0
    lines_bulk: int = 0  # of lines_indexed, those taken by the bulk path (a whole block of plain records at once)


class LineIndex:
    """The line index of one file (``path``): ids and offsets of its records, what was wrong with its lines, and the
    hooks a layer uses to keep per-record state. Built by :meth:`_catch_up` from an open descriptor; the caller
    holds ``_lock`` (and a lock on the file). See the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stats = IOStats()
        self._repairs: list[Problem] = []  # what appends repaired or quarantined; outlives index rebuilds
        self._lock = threading.RLock()
        # Where a persisted copy of the index lives, by suffix (set by layers that keep one; see index_cache), and
        # whether it may be used: a read that found the indexed bytes changed stops trusting it in this process.
        self._cache_path: Callable[[str], Path] | None = None
        self._cache_trusted = True
        self._reset_index(inode=None)

    def _reset_index(self, *, inode: tuple[int, int] | None) -> None:
        self._inode = inode
        self._end = 0  # byte offset just past the last complete line indexed
        self._tail = b""  # the CURSOR_TAIL bytes before _end: with _inode and _end, the index's own cursor
        self._lineno = 0  # complete lines consumed (for problem line numbers)
        self._offsets = array("q")  # byte offset of each record
        self._ids = array("q")  # normalised message_id of each record
        self._next_id = 1
        self._ids_sorted = True
        self._id_pos: dict[int, int] | None = None  # only built when legacy ids are out of order
        self._problems: list[Problem] = []  # found while indexing; rebuilt with the index
        self._legacy_ids = 0
        self._duplicates = 0  # lines whose id an earlier line already has
        self._duplicate_lines: list[tuple[int, int]] = []  # (line number, id) of the first few, for problems()
        self._pending_tail = False
        self._pending_line = 0  # line number of the reported unterminated tail
        self._cache_saved = 0  # records of this index known to be in the persisted cache
        self._on_reset()

    def _on_reset(self) -> None:
        """Subclass hook: drop derived per-record state."""

    def _on_record(self, record: dict[str, Any], message_id: int) -> None:
        """Subclass hook: called once per indexed record, in file order."""

    def _cache_state(self) -> dict[str, Any]:
        """Subclass hook: the per-record state a persisted index must carry besides ids and offsets (JSON)."""
        return {}

    def _adopt_cached(self, state: object) -> bool:
        """Subclass hook: take a persisted index's ``_cache_state`` (any JSON: check it); ``False`` refuses it."""
        return True

    def _catch_up(self, fd: int) -> None:
        st = os.fstat(fd)
        inode = (st.st_dev, st.st_ino)
        if inode != self._inode or self._change_since(fd, st, self._cursor()) in ("rewritten", "truncated"):
            self._reset_index(inode=inode)
        if self._end == 0 and self._cache_path is not None:
            index_cache.adopt_lines(self, fd)  # a valid persisted index: read on from its end
        if st.st_size == self._end:
            self._set_pending_tail(False)
            return
        new_problems_before = len(self._problems)
        position = self._end
        carry = b""
        while position < st.st_size:
            chunk = os.pread(fd, min(CHUNK, st.st_size - position), position)
            if not chunk:
                break
            self._count_read(len(chunk))
            position += len(chunk)
            data = carry + chunk
            line_start = position - len(data)
            complete = data.rfind(b"\n") + 1  # the chunk's complete lines end here
            if complete and not self._index_block(data[:complete], line_start):
                start = 0
                while start < complete:
                    newline = data.index(b"\n", start)
                    self._index_line(data[start:newline], line_start + start)
                    start = newline + 1
            carry = data[complete:]
            if complete:
                self._tail = moved_tail(self._tail, data[max(0, complete - CURSOR_TAIL) : complete])
            self._end = position - len(carry)
        self._warn_new_problems(new_problems_before)  # first: _set_pending_tail may drop an older finding
        self._set_pending_tail(bool(carry))

    def _cursor(self) -> Cursor:
        """Where the index stopped (caller holds the lock)."""
        return Cursor(self._inode, self._end, self._tail)

    def _change_since(self, fd: int, st: os.stat_result, since: Cursor) -> Change:
        """:func:`~agentmem_nb.store.scan.change_since`, its look counted in :attr:`stats`."""
        change, checked = change_since(fd, st, since)
        if checked:
            self._count_read(checked)
        return change

    def _set_pending_tail(self, pending: bool) -> None:
        line = self._lineno + 1
        if self._pending_tail and (not pending or line != self._pending_line):
            # The tail we reported was completed or cut back since (maybe by another writer, who may have left a new
            # one further on): drop the stale finding so problems() describes the file as it is now.
            self._problems = [p for p in self._problems if p.kind is not ProblemKind.UNTERMINATED_TAIL]
            self._pending_tail = False
        if pending and not self._pending_tail:
            self._problems.append(
                Problem(str(self.path), ProblemKind.UNTERMINATED_TAIL, line,
                        "last line has no newline (a write was cut short?); it is not read and will be moved to "
                        f"{self.path.name}.quarantine before the next append")
            )
            self._pending_line = line
        self._pending_tail = pending

    def _index_block(self, block: bytes, offset: int) -> bool:
        """Index complete lines ``block`` (starting at byte ``offset``) in bulk, or return ``False`` having changed
        nothing so that the caller indexes them one by one with :meth:`_index_line`.

        The bulk path takes only what it can prove gives the same index as the per-line path: every line a JSON
        object (parsed alone, so a record can never straddle lines) whose ``message_id`` is a plain integer, the ids
        strictly increasing from the last one indexed, and the subclass's records accepted as a whole by
        :meth:`_on_records`. That is every block this store writes; anything else (a blank or bad line, a legacy or
        out-of-order id) takes the per-line path, which records problems with their line numbers. Every step here
        is one C-level pass over the block (``map``, ``accumulate``) instead of Python code per line: that halves
        the cost of a cold index, which is what a fresh kernel's first query pays.
        """
        # No fast_parse_exact scan here: orjson's rounding of a long integer cannot reach this path's result (such
        # an id comes back a float and is refused; content must be text), so only the per-line path and record
        # reads, which keep whole records, need it.
        lines = block.split(b"\n")
        lines.pop()  # the block ends with a newline: the last piece is empty
        # Above the highest id so far (not merely the last one): then no id of the block repeats an earlier one. For
        # a file whose ids only go up the two are the same.
        plain = plain_records(lines, self._next_id - 1)
        if plain is None:
            return False
        records, ids = plain
        if not self._on_records(records, ids):
            return False
        if self._id_pos is not None:  # ids went down earlier in the file: first positions are kept in a dict
            self._id_pos.update(zip(ids, range(len(self._ids), len(self._ids) + len(ids))))
        # Line i starts after the i lines (and i newlines) before it.
        starts = accumulate(map(len, lines), initial=0)
        self._offsets.extend(map(operator.add, starts, range(offset, offset + len(lines))))
        self._ids.extend(ids)
        self._next_id = max(self._next_id, ids[-1] + 1)
        self._lineno += len(lines)
        self.stats.lines_indexed += len(lines)
        self.stats.lines_bulk += len(lines)
        return True

    def _on_records(self, records: list[dict[str, Any]], ids: list[int]) -> bool:
        """Subclass hook for the bulk path: take ``records`` (with their ``ids``) as a whole and return ``True``, or
        change nothing and return ``False`` to have them indexed one by one through :meth:`_on_record`."""
        for record, message_id in zip(records, ids):
            self._on_record(record, message_id)
        return True

    def _index_line(self, raw: bytes, offset: int) -> None:
        self._lineno += 1
        if not raw.strip():
            return
        record: Any = NOT_PARSED
        if orjson_suits(raw):
            try:
                record = fast_loads(raw)
            except FAST_ERRORS:
                pass
        if record is NOT_PARSED:
            # orjson accepts a strict subset of what the standard parser does (it refuses NaN and escaped lone
            # surrogates), so the standard parser has the last word: same lines accepted, big integers exact.
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._problem(ProblemKind.INVALID_UTF8, f"not UTF-8 ({exc.reason} at byte {exc.start}); line skipped")
                return
            try:
                record = json.loads(text)
            except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the parser's stack
                self._problem(ProblemKind.MALFORMED_JSON, f"not JSON ({type(exc).__name__}: {str(exc)[:200]}); "
                                                          "line skipped")
                return
        if not isinstance(record, dict):
            self._problem(ProblemKind.NOT_AN_OBJECT, f"a JSON {type(record).__name__}, not an object; line skipped")
            return
        given = usable_id(record.get("message_id"))
        if given is None:
            message_id = self._next_id
            self._legacy_ids += 1
        else:
            message_id = given
        if self._ids_sorted:
            repeated = False
            if self._ids and message_id <= self._ids[-1]:
                # The first id that does not go up: from here on, first positions (and repeats) need a dict.
                repeated = self._ids[bisect.bisect_left(self._ids, message_id)] == message_id
                self._ids_sorted = False
                self._id_pos = dict(zip(self._ids, range(len(self._ids))))  # strictly increasing so far: no repeats
        else:
            if self._id_pos is None:
                self._id_pos = {}
                for pos, mid in enumerate(self._ids):
                    self._id_pos.setdefault(mid, pos)
            repeated = message_id in self._id_pos
        if repeated:
            self._duplicates += 1
            if len(self._duplicate_lines) < 10:
                self._duplicate_lines.append((self._lineno, message_id))
        self._next_id = max(self._next_id, message_id + 1)
        self._offsets.append(offset)
        self._ids.append(message_id)
        if self._id_pos is not None:
            self._id_pos.setdefault(message_id, len(self._ids) - 1)
        self.stats.lines_indexed += 1
        self._on_record(record, message_id)

    def _problem(self, kind: ProblemKind, detail: str) -> None:
        self._problems.append(Problem(str(self.path), kind, self._lineno, detail))

    def _warn_new_problems(self, before: int) -> None:
        fresh = [p for p in self._problems[before:] if p.kind.skips_data and p.kind is not ProblemKind.UNTERMINATED_TAIL]
        if fresh:
            lines = ", ".join(str(p.line) for p in fresh[:10]) + (" ..." if len(fresh) > 10 else "")
            warnings.warn(
                MemoryDataWarning(
                    f"{self.path}: skipped {len(fresh)} unreadable line(s) (line {lines}); the rest was read. "
                    "See UserMemory.problems() for details."
                ),
                stacklevel=4,
            )

    def _count_read(self, n: int) -> None:
        self.stats.bytes_read += n
        self.stats.reads += 1

    def _findings(self) -> list[Problem]:
        """What indexing and repairs found, as problems (caller holds the lock, index up to date)."""
        found = list(self._repairs) + list(self._problems)
        if self._legacy_ids:
            found.append(
                Problem(str(self.path), ProblemKind.LEGACY_ID_NORMALISED, 0,
                        "lines without a usable message_id were given the running next id", self._legacy_ids)
            )
        if self._duplicates:
            shown = ", ".join(f"line {line} (#{mid})" for line, mid in self._duplicate_lines)
            more = " ..." if self._duplicates > len(self._duplicate_lines) else ""
            found.append(
                Problem(str(self.path), ProblemKind.DUPLICATE_ID, self._duplicate_lines[0][0],
                        f"{self._duplicates} line(s) repeat the message_id of an earlier line (a hand-merged "
                        f"file?): {shown}{more}; every line is kept, a window finds the first line with an id, "
                        f"and appends go on from the highest id (next: {self._next_id})", self._duplicates)
            )
        return found

    def _position_of(self, message_id: int) -> int | None:
        """Index (0-based, file order) of the first record with ``message_id`` (caller holds the lock)."""
        if self._ids_sorted:
            pos = bisect.bisect_left(self._ids, message_id)
            return pos if pos < len(self._ids) and self._ids[pos] == message_id else None
        if self._id_pos is None:
            self._id_pos = {}
            for pos, mid in enumerate(self._ids):
                self._id_pos.setdefault(mid, pos)
        return self._id_pos.get(message_id)
