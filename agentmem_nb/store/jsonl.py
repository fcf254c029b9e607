"""An append-only JSONL file with per-file ``message_id`` anchors: the building block of every layer.

Why it looks like this:

* **Append costs the same at line 10 and at line 10 million, and gives the id a full read would.** The rule is the
  original demo's running one: next = 1 + the highest id so far, a line without a usable id taking next. So the next
  id depends on *every* explicit id in the file, and no tail alone can prove it: ``cat a.jsonl b.jsonl`` gives a tail
  that looks exactly like a store-written file's, yet a's ids may be higher. What a tail can prove it from is a line
  that vouches for everything before it: each line this store appends records ``byte_offset``, where it starts; its
  id was the running next of exactly those bytes, under the lock. A line whose ``byte_offset`` is where it really
  starts is such an anchor (a merge or an edit that moves bytes breaks the equality), and the next id is the anchor's
  id + 1 carried through the few lines after it by the rule. With no anchor in the last chunk (a file never appended
  by this store, a merge, hand-written lines at the end) the whole file is indexed once, the exact rule; the next
  append writes a fresh anchor, so each process pays that at most once per file. (What neither path sees is an
  in-place edit of earlier bytes that keeps every length: the index assumes the same, see :mod:`agentmem_nb.store.scan`.)
* **Writers never interleave or share an id**, threads or processes: the whole line goes out in one ``write`` on an
  ``O_APPEND`` descriptor while an exclusive ``flock`` on the file is held, and the id is chosen under that lock.
* **A crash mid-write loses nothing acknowledged.** A last line without its newline is not read; before the next
  append it is moved (bytes intact, base64) to ``{file}.quarantine`` and the file is cut back to its last newline. A
  complete JSON object that merely lacks the newline (a hand edit) gets its newline instead.
* **Reads never raise on bad data.** Malformed lines are skipped and recorded as :class:`Problem`\\ s; legacy rows
  get ids by the original rule (a missing or non-positive id takes the running next id; next = max(next, id + 1)).
  An id that an earlier line already has (a hand merge) is kept, and reported as ``DUPLICATE_ID``.
* **Reads after the first are incremental.** The index (byte offset and id of every line) is extended from the
  last indexed byte, so a reader following a growing file reads each byte once.
* **One rule says what changed since a reader last looked**, the one in :mod:`agentmem_nb.store.scan` (a cursor:
  which file, where its last complete line ended, the bytes before that). The index follows the file by it with its
  own cursor, and so does every bulk reader (frames, the follower, the retrieval index) through :meth:`JsonlFile.scan`,
  :meth:`JsonlFile.line_blocks` and :meth:`JsonlFile.raw_lines`: the format is read here and nowhere else.

The index covers complete lines only, and the only bytes ever removed are an incomplete tail, so every index in
every process stays valid across another process's repair.
"""

from __future__ import annotations

import base64
import bisect
import json
import operator
import os
import stat
import threading
import warnings
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate, islice, repeat
from pathlib import Path
from typing import Any, Literal

from agentmem_nb.errors import MemoryDataWarning, StoreError
from agentmem_nb.messages import parse_message_id
from agentmem_nb.store import index_cache
from agentmem_nb.store._fs import KeptFile, check_file, flocked, open_file
from agentmem_nb.store.problems import Problem, ProblemKind, problem_for_error
from agentmem_nb.store.scan import CURSOR_TAIL, Change, Cursor, Scan, change_since, moved_tail

__all__ = [
    "Durability", "IOStats", "IndexSnapshot", "JsonlFile", "LineBlock", "MESSAGE_ID_LIMIT", "RawLines",
    "fast_parse_exact", "loads_record", "plain_records",
]

try:  # Indexing is dominated by JSON parsing; orjson parses a line 3-5x faster than the standard library.
    import orjson

    _fast_loads: Callable[[bytes], Any] = orjson.loads
    _FAST_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)
except ImportError:  # pragma: no cover - orjson is a declared dependency; the store still works without it
    _fast_loads = json.loads
    _FAST_ERRORS = (ValueError,)

Durability = Literal["flush", "fsync"]
"""``"flush"``: each line is handed to the OS before append returns (survives a process crash).
``"fsync"``: each line is also forced to stable storage (survives power loss; much slower)."""

_CHUNK = 1 << 20
_TAIL_CHUNK = 4096
# Ids live in signed 64-bit arrays. Beyond 2**53 (the largest integer every JSON reader keeps exact) an id is junk,
# which leaves room for the running next id (at most 2**53 + number of lines) to stay within 64 bits.
_ID_LIMIT = 2**53
MESSAGE_ID_LIMIT = _ID_LIMIT
"""Ids at or above this are junk to the store (read as a missing id): a columnar reader refuses such a file."""


_NOT_PARSED = object()

ANCHOR_KEY = "byte_offset"
"""The key of a store-written line that says where the line starts (see the module docstring: the tail's proof)."""


def _tail_record(raw: bytes) -> dict[str, Any] | None:
    """The record of a line as the indexer reads it, or ``None`` for a line the indexer skips."""
    if not raw.strip():
        return None
    try:
        # Decode as the indexer does: json.loads(bytes) would also accept a UTF-8 BOM or UTF-16 text, lines the
        # index skips, and the cold and warm paths would then disagree on the next id.
        record = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        return None
    return record if isinstance(record, dict) else None


def _is_anchor(record: dict[str, Any], given: int | None, offset: int) -> bool:
    """Whether ``record`` (starting at byte ``offset``, with usable id ``given``) was appended by this store at the
    place it still is: then ``given`` was the running next id of every byte before it."""
    stated = record.get(ANCHOR_KEY)
    return given is not None and type(stated) is int and stated == offset


# orjson turns an integer beyond 64 bits into a float, silently dropping digits, where the standard parser keeps it
# exact. Such an integer has at least 19 digits in a row, so bytes with a run that long go to the standard parser
# (a long number in a message's text only costs that line the slower parser). The scan maps every digit to "0" and
# looks for nineteen of them: two C passes, about 40x faster than the regular expression \d{19}.
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def fast_parse_exact(raw: bytes) -> bool:
    """Whether orjson parses ``raw`` exactly as the standard parser would, wherever both accept it."""
    return _LONG_RUN not in raw.translate(_DIGITS_TO_ZERO)


# orjson needs about 12 bytes of working memory per byte of a line (a 3 MB message peaked at 38 MB), the standard
# parser about 2: a line longer than this goes to the standard parser, whose result is the reference anyway. Such
# lines are rare (a pasted document), so the speed orjson brings to ordinary lines is kept.
_LONG_LINE = 1 << 16


def _orjson_suits(raw: bytes) -> bool:
    return len(raw) <= _LONG_LINE and fast_parse_exact(raw)


def loads_record(raw: bytes) -> Any:
    """Parse a line the index accepted, the way the index parsed it: orjson where it is exact, the standard parser
    for what orjson refuses (NaN, escaped lone surrogates) or would round (integers beyond 64 bits), and for a long
    line (memory, see ``_LONG_LINE``). Raises ``ValueError`` for a line neither accepts."""
    if _orjson_suits(raw):
        try:
            return _fast_loads(raw)
        except _FAST_ERRORS:
            pass
    return json.loads(raw.decode("utf-8"))


def plain_records(lines: list[bytes], previous: int) -> tuple[list[dict[str, Any]], list[int]] | None:
    """``(records, ids)`` when every line is what this store writes — a JSON object (each parsed alone, so no record
    straddles lines) whose ``message_id`` is a plain integer, strictly increasing from ``previous`` and below the id
    limit — so the index keeps exactly these records with exactly these ids; ``None`` for anything the per-line rules
    must judge (a blank, bad or legacy line, an out-of-order id). One C-level pass per step, no Python per line.

    orjson parses here: a long integer it would round can only be an id (then a float, refused) or sit in fields the
    caller must check itself (see :func:`fast_parse_exact`)."""
    if max(map(len, lines), default=0) > _LONG_LINE:
        return None  # parsed alone by the standard parser, see _LONG_LINE
    try:
        records = list(map(_fast_loads, lines))
    except _FAST_ERRORS:
        return None
    if not records or set(map(type, records)) != {dict}:
        return None
    ids: list[Any] = list(map(dict.get, records, repeat("message_id")))  # JSON values: ints once checked below
    if set(map(type, ids)) != {int}:  # bool, float, str and missing ids follow the per-line rules
        return None
    if ids[0] <= previous or ids[-1] >= _ID_LIMIT or not all(map(operator.lt, ids, islice(ids, 1, None))):
        return None
    return records, ids


def _usable_id(raw: object) -> int | None:
    """``parse_message_id``, but an id too large for the index counts as junk (like ``"abc"``): storing it would
    raise OverflowError and make every read of the file fail."""
    given = parse_message_id(raw)
    return given if given is not None and given < _ID_LIMIT else None


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
                records = _fast_loads(b"[" + self.data[:-1].replace(b"\n", b",") + b"]")
            except _FAST_ERRORS:
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


@dataclass(slots=True)
class IOStats:
    """Counters for complexity tests and benchmarks (bytes, not seconds: stable on a noisy machine)."""

    bytes_read: int = 0
    reads: int = 0
    lines_indexed: int = 0
    lines_bulk: int = 0  # of lines_indexed, those taken by the bulk path (a whole block of plain records at once)


class JsonlFile:
    """One JSONL layer file. Subclasses add meaning to records (see ``MessageFile``).

    Instances keep an in-memory index and are meant to be long-lived and shared (``UserMemory`` caches them).
    All public methods are thread-safe.

    Every folder below ``base`` (default: the file's own folder) and the file itself are opened without following a
    link, and only a regular file is read or written (see :mod:`agentmem_nb.store._fs`); anything else raises
    :class:`~agentmem_nb.errors.UnsafeFileError` naming it, and :meth:`problems` reports it instead.
    """

    def __init__(self, path: Path, *, durability: Durability = "flush", base: Path | None = None) -> None:
        if durability not in ("flush", "fsync"):
            raise StoreError(f"unknown durability {durability!r}: use 'flush' or 'fsync'")
        self.path = path
        self.base = path.parent if base is None else base
        self.durability: Durability = durability
        self.stats = IOStats()
        self._repairs: list[Problem] = []  # what appends repaired or quarantined; outlives index rebuilds
        self._lock = threading.RLock()
        # Where a persisted copy of the index lives, by suffix (set by layers that keep one; see index_cache), and
        # whether it may be used: a read that found the indexed bytes changed stops trusting it in this process.
        self._cache_path: Callable[[str], Path] | None = None
        self._cache_trusted = True
        # The descriptor the last safe open returned, used again while the path still leads to it (see _fs): a warm
        # append or window walks no folders.
        self._kept = KeptFile(path, base=self.base, owner=self)
        self._reset_index(inode=None)

    # ------------------------------------------------------------------ index

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

    def sync(self) -> None:
        """Bring the index up to date with the file (reads only bytes not indexed yet)."""
        with self._lock:
            if self._unchanged_by_path():
                return
            try:
                fd = self._kept.acquire(write=False)
            except FileNotFoundError:
                if self._inode is not None:
                    self._reset_index(inode=None)
                return
            try:
                # A shared lock keeps us from reading a line while a writer is still putting it down.
                with flocked(fd, exclusive=False):
                    self._catch_up(fd)
                    self._keep_cache(fd)
            finally:
                self._kept.release()

    def _keep_cache(self, fd: int) -> None:
        """After a catch-up on ``fd`` (under its shared lock): persist the index if it is due (see index_cache)."""
        if self._cache_path is not None:
            index_cache.keep_lines(self, fd)

    def _unchanged_by_path(self) -> bool:
        """The change rule's "unchanged" (same file, same size: nothing to read) told by one ``stat`` of the path
        instead of the safe open's walk, the common case of a window or a search on a file nobody appended to.
        Safe: whatever the path now leads through, a file with the indexed identity *is* the file indexed, a plain
        regular one with one name; anything else (another file, a link to elsewhere) takes the safe open, which
        refuses it. Caller holds ``_lock``."""
        if self._inode is None or self._pending_tail:
            return False
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return ((st.st_dev, st.st_ino) == self._inode and st.st_size == self._end and stat.S_ISREG(st.st_mode)
                and st.st_nlink == 1)

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
            chunk = os.pread(fd, min(_CHUNK, st.st_size - position), position)
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
        record: Any = _NOT_PARSED
        if _orjson_suits(raw):
            try:
                record = _fast_loads(raw)
            except _FAST_ERRORS:
                pass
        if record is _NOT_PARSED:
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
        given = _usable_id(record.get("message_id"))
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

    # ------------------------------------------------------------------ queries on the index

    def __len__(self) -> int:
        self.sync()
        return len(self._ids)

    @property
    def next_id(self) -> int:
        """The id the next append will get if nobody else appends first."""
        self.sync()
        return self._next_id

    def open_for_reading(self) -> int:
        """A read-only descriptor of the file (the caller closes it), opened under the store's rule: never through
        a link, never a FIFO or device. ``FileNotFoundError`` when there is no file yet."""
        return open_file(self.path, os.O_RDONLY, base=self.base)

    def problems(self) -> list[Problem]:
        """What was wrong with this file (after bringing the index up to date). Never raises: a file that cannot
        be read at all (a link, a FIFO, no permission, ...) is itself the finding."""
        try:
            self.sync()
        except (StoreError, OSError) as exc:  # UnsafeFileError, PermissionError, EIO: reported, as promised
            with self._lock:
                return [*self._repairs, problem_for_error(self.path, exc)]
        with self._lock:
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

    def position_of(self, message_id: int) -> int | None:
        """Index (0-based, file order) of the first record with ``message_id``; ``None`` if absent."""
        self.sync()
        with self._lock:
            if self._ids_sorted:
                pos = bisect.bisect_left(self._ids, message_id)
                return pos if pos < len(self._ids) and self._ids[pos] == message_id else None
            if self._id_pos is None:
                self._id_pos = {}
                for pos, mid in enumerate(self._ids):
                    self._id_pos.setdefault(mid, pos)
            return self._id_pos.get(message_id)

    def index_snapshot(self, start: int = 0, stop: int | None = None) -> IndexSnapshot:
        """Ids and byte offsets of positions ``start <= i < stop`` (after bringing the index up to date), for bulk
        readers such as :mod:`agentmem_nb.frames` that parse many lines at once. ``offsets`` has one extra entry:
        where the line after the last one starts."""
        self.sync()
        with self._lock:
            total = len(self._ids)
            stop = total if stop is None else max(0, min(stop, total))
            start = max(0, min(start, stop))
            after = self._offsets[stop] if stop < total else self._end
            return IndexSnapshot(self._ids[start:stop], self._offsets[start:stop] + array("q", [after]), self._end)

    # ------------------------------------------------------------------ scan: what bulk readers use

    def scan(self, since: Cursor | None = None) -> Scan:
        """What changed since ``since`` (default: the start, so every record is new), after bringing the index up to
        date: the :class:`Scan` names the change, the positions of the new records and the cursor to pass next time.
        Read the records with :meth:`line_blocks` (in bulk) or :meth:`read_records`. Never reads a byte when nothing
        changed; one :data:`CURSOR_TAIL` look otherwise.

        >>> # s = f.scan(); ... later: s = f.scan(s.cursor); new = f.read_records(s.start, s.stop)
        """
        since = Cursor() if since is None else since
        with self._lock:
            try:
                fd = self._kept.acquire(write=False)
            except FileNotFoundError:
                if self._inode is not None:
                    self._reset_index(inode=None)
                return Scan("truncated" if since.end else "unchanged", 0, 0, Cursor())
            try:
                with flocked(fd, exclusive=False):
                    change = self._change_since(fd, os.fstat(fd), since)
                    self._catch_up(fd)
                    self._keep_cache(fd)  # as sync does: a process that only scans (ranks) keeps the index too
            finally:
                self._kept.release()
            stop = len(self._ids)
            start = bisect.bisect_left(self._offsets, since.end) if change in ("appended", "unchanged") else 0
            return Scan(change, min(start, stop), stop, self._cursor())

    def line_blocks(self, start: int = 0, stop: int | None = None, *,
                    block_bytes: int = _CHUNK) -> Iterator[LineBlock]:
        """The raw lines of the indexed records at positions ``start <= i < stop``, in file order, in blocks of about
        ``block_bytes`` (at least one record each): one ``pread`` a block, memory bounded by the block size. The
        index (a consistent copy taken first) decides which lines are records and what their ids are."""
        snap = self.index_snapshot(start, stop)
        ids, offsets = snap.ids, snap.offsets
        total = len(ids)
        if not total:
            return
        fd = self.open_for_reading()
        try:
            i = 0
            while i < total:
                # Records i..j-1 fill about block_bytes (at least one record, however long).
                j = bisect.bisect_right(offsets, offsets[i] + block_bytes, lo=i + 1) - 1
                j = min(total, max(j, i + 1))
                first, last = offsets[i], offsets[j]
                data = os.pread(fd, last - first, first)
                yield LineBlock(ids[i:j], offsets[i:j], data)
                i = j
        finally:
            os.close(fd)

    @contextmanager
    def raw_lines(self, since: Cursor | None = None) -> Iterator[RawLines]:
        """The complete lines appended since ``since`` (default: the start — the whole file), read **without** the
        index, for readers that parse a whole file their own faster way (pyarrow's columns) or check new lines
        cheaply (:meth:`RawLines.as_written`). The file's shared lock is held until the ``with`` block ends, so every
        line read is complete and stays put. Not counted in :attr:`stats` (see ``RawLines.bytes_read``)."""
        since = Cursor() if since is None else since
        try:
            fd = self.open_for_reading()
        except FileNotFoundError:
            yield RawLines("truncated" if since.end else "unchanged", 0, 0, 0, Cursor(), None, 0, self.path)
            return
        try:
            with flocked(fd, exclusive=False):
                st = os.fstat(fd)
                change, checked = change_since(fd, st, since)
                start = since.end if change in ("appended", "unchanged") else 0
                tail = since.tail if start else b""
                end = start
                if st.st_size > start:
                    # Just past the last complete line: an unterminated last line is no record yet (as for the index).
                    end = st.st_size
                    if os.pread(fd, 1, end - 1) != b"\n":
                        end = max(start, self._last_newline_before(fd, end, counted=False) + 1)
                    if end > start:
                        look = min(CURSOR_TAIL, end - start)
                        tail = moved_tail(tail, os.pread(fd, look, end - look))
                        checked += 1 + look
                yield RawLines(change, start, end, st.st_size, Cursor((st.st_dev, st.st_ino), end, tail), fd, checked,
                               self.path)
        finally:
            os.close(fd)

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, record)`` for positions ``start <= i < stop`` — one contiguous read, whatever the file size."""
        return self._fresh(lambda: self._read_records_once(start, stop))

    def read_at(self, positions: list[int]) -> list[tuple[int, dict[str, Any]]]:
        """Records at arbitrary positions (for search hits); one seek per record."""
        return self._fresh(lambda: self._read_at_once(positions))

    def _fresh(self, read: Callable[[], list[tuple[int, dict[str, Any]]]]) -> list[tuple[int, dict[str, Any]]]:
        """Run ``read``; if the indexed bytes no longer parse (the file was rewritten in place, or replaced, since it
        was indexed) rebuild the index once and read again rather than raise."""
        try:
            return read()
        except (ValueError, IndexError, FileNotFoundError):
            with self._lock:
                self._cache_trusted = False  # the bytes changed unseen: no persisted copy may stand in for them
                self._reset_index(inode=None)
            self.sync()
            try:
                return read()
            except (ValueError, IndexError, FileNotFoundError):
                return []  # changed again while we read: report nothing rather than something wrong

    def _read_records_once(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        with self._lock:
            start = max(0, start)
            stop = min(stop, len(self._ids))
            if start >= stop:
                return []
            first = self._offsets[start]
            last = self._offsets[stop] if stop < len(self._offsets) else self._end
            ids = self._ids[start:stop].tolist()
            offsets = self._offsets[start:stop].tolist()
            fd = self._kept.acquire(write=False)
            try:
                blob = os.pread(fd, last - first, first)
            finally:
                self._kept.release()
        self._count_read(len(blob))
        out = []
        for i, (mid, offset) in enumerate(zip(ids, offsets)):
            end = (offsets[i + 1] if i + 1 < len(offsets) else len(blob) + first) - first
            # Stop at the record's own newline: skipped lines (malformed, blank, ...) may lie between two records,
            # and parsing them along with the record would make the read raise.
            newline = blob.find(b"\n", offset - first, end)
            line = blob[offset - first : newline if newline >= 0 else end]
            out.append((mid, loads_record(line)))
        return out

    def _read_at_once(self, positions: list[int]) -> list[tuple[int, dict[str, Any]]]:
        if not positions:
            return []  # no hits: do not open the file, which may not exist (a search of a day nobody wrote)
        with self._lock:
            fd = self._kept.acquire(write=False)
            try:
                return self._read_lines_at(fd, positions)
            finally:
                self._kept.release()

    def _read_lines_at(self, fd: int, positions: list[int]) -> list[tuple[int, dict[str, Any]]]:
        out = []
        for pos in positions:
            offset = self._offsets[pos]
            mid = self._ids[pos]
            # The line ends at the next record's start at the latest (skipped lines may lie between).
            stop = self._offsets[pos + 1] if pos + 1 < len(self._offsets) else self._end
            blob = os.pread(fd, min(stop - offset, _TAIL_CHUNK), offset)
            if b"\n" not in blob and len(blob) < stop - offset:  # a long line: read the rest of it at once
                blob += os.pread(fd, stop - offset - len(blob), offset + len(blob))
            newline = blob.find(b"\n")
            line = blob if newline < 0 else blob[: newline + 1]
            self._count_read(len(line))
            out.append((mid, loads_record(line)))
        return out

    def iter_records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every readable record in file order, normalised ids attached (streams; memory stays flat)."""
        self.sync()
        total = len(self._ids)
        step = 4096
        for start in range(0, total, step):
            yield from self.read_records(start, min(total, start + step))

    # ------------------------------------------------------------------ append

    @contextmanager
    def checked_for_append(self) -> Iterator[bool]:
        """Hold this file's lock while checking that an append would not be refused (raises
        :class:`~agentmem_nb.errors.UnsafeFileError` as the append would, creating nothing), for a caller that must
        know before writing another file first. Yields what to pass as ``checked`` to :meth:`append` inside the
        block: a kept descriptor verified now is not verified again."""
        with self._lock:
            verified = self._kept.verify()
            if not verified:
                check_file(self.path, base=self.base)
            yield verified

    def append(self, record: dict[str, Any], *, checked: bool = False) -> dict[str, Any]:
        """Append ``record`` with the next ``message_id`` and return it as written.

        The id is chosen under an exclusive lock from the file's tail (constant work), the line is written with a
        single ``write``, and with ``durability="fsync"`` it is on stable storage before this returns. ``checked``:
        from :meth:`checked_for_append`, whose block this call is in.
        """
        with self._lock:
            fd = self._kept.acquire(write=True, create=True, verified=checked)
            try:
                with flocked(fd, exclusive=True):
                    return self._append_locked(fd, record)
            finally:
                self._kept.release()

    def _append_locked(self, fd: int, record: dict[str, Any]) -> dict[str, Any]:
        """The append itself, on ``fd`` under both locks (this object's and the file's exclusive ``flock``)."""
        st = os.fstat(fd)
        inode = (st.st_dev, st.st_ino)
        size = st.st_size
        if size != self._end or inode != self._inode or self._pending_tail or size == 0:
            size = self._repair_tail(fd, size)
        # else: the index ends here, just past a complete line: no unfinished last line to repair
        if size == 0 and (self._inode != inode or self._ids):
            self._reset_index(inode=inode)  # a new (or emptied) file: the index is trivially complete
        warm = self._inode == inode
        if warm and size != self._end:
            self._catch_up(fd)  # reads only what other writers appended since
        next_id = self._next_id if warm else self._next_id_from_tail(fd, size)
        if next_id is None:  # ids out of order near the tail: apply the full rule, once
            self._reset_index(inode=inode)
            self._catch_up(fd)
            warm, next_id = True, self._next_id
        written = dict(record)
        written.pop("message_id", None)
        written.pop(ANCHOR_KEY, None)
        written["message_id"] = next_id
        written[ANCHOR_KEY] = size  # where this line starts: the proof a later cold append reads
        try:
            data = (json.dumps(written, ensure_ascii=False) + "\n").encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (a str may hold one, e.g. from a JSON "\ud800" escape) has no UTF-8
            # form: write \u escapes instead, still valid JSON that reads back as the same str.
            data = (json.dumps(written) + "\n").encode("ascii")
        self._write_all(fd, data)
        if self.durability == "fsync":
            os.fsync(fd)
        if warm:
            self._index_line(data[:-1], size)
            self._end = size + len(data)
            self._tail = moved_tail(self._tail, data)
        return written

    @staticmethod
    def _write_all(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]

    def _repair_tail(self, fd: int, size: int) -> int:
        """Deal with a last line that lacks its newline (the file is ``size`` bytes); returns the file size
        afterwards. Caller holds the lock."""
        if size == 0:
            return 0
        last = os.pread(fd, 1, size - 1)
        self._count_read(1)
        if last == b"\n":
            return size
        cut = self._last_newline_before(fd, size) + 1
        fragment = os.pread(fd, size - cut, cut)
        self._count_read(len(fragment))
        try:
            complete = isinstance(json.loads(fragment.decode("utf-8")), dict)
        except (ValueError, RecursionError):
            complete = False
        if complete:
            self._write_all(fd, b"\n")
            self._repairs.append(Problem(str(self.path), ProblemKind.MISSING_NEWLINE_REPAIRED, 0,
                                          f"a complete last line had no newline; added one at byte {size}"))
            return size + 1
        self._quarantine(fragment, cut)
        os.ftruncate(fd, cut)
        if self.durability == "fsync":
            os.fsync(fd)
        self._problems = [p for p in self._problems if p.kind is not ProblemKind.UNTERMINATED_TAIL]
        self._repairs.append(
            Problem(str(self.path), ProblemKind.TORN_TAIL_QUARANTINED, 0,
                    f"{len(fragment)} bytes of an unfinished last line at byte {cut} moved to "
                    f"{self.path.name}.quarantine")
        )
        self._pending_tail = False
        return cut

    def _last_newline_before(self, fd: int, end: int, *, counted: bool = True) -> int:
        """Offset of the last ``\\n`` before ``end``, or -1. Reads backwards in small chunks."""
        position = end
        while position > 0:
            size = min(_TAIL_CHUNK, position)
            position -= size
            chunk = os.pread(fd, size, position)
            if counted:
                self._count_read(len(chunk))
            found = chunk.rfind(b"\n")
            if found >= 0:
                return position + found
        return -1

    def _quarantine(self, fragment: bytes, offset: int) -> None:
        from agentmem_nb.timeutil import format_ts, system_clock  # local: keeps the hot path import-free

        entry = {
            "quarantined_at": format_ts(system_clock()),
            "file": self.path.name,
            "offset": offset,
            "length": len(fragment),
            "bytes_b64": base64.b64encode(fragment).decode("ascii"),
            "text": fragment.decode("utf-8", errors="replace"),
        }
        target = self.path.with_name(self.path.name + ".quarantine")
        fd = open_file(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, base=self.base, mode=0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())  # the fragment must be safe before the data file is cut

    def _next_id_from_tail(self, fd: int, size: int) -> int | None:
        """The next id from the tail, when the tail can prove it; ``None`` when it cannot (the caller then indexes
        the whole file once, the exact rule).

        The proof is the last anchor (a store-written line still at the ``byte_offset`` it states): its id was the
        running next id of every byte before it, so the rule carried forward from there over the lines after it
        gives the answer. A tail that reaches the start of the file proves it with no anchor at all. Reads one small
        chunk in the normal case (a long last line is read whole); caller holds the lock and has repaired the tail.
        """
        position = size
        pieces: list[bytes] = []  # the unfinished first line of what was read so far, in file order
        after: list[int | None] = []  # the usable id (None: none) of each record after the anchor, last first
        while position > 0:
            step = min(_TAIL_CHUNK, position)
            position -= step
            chunk = os.pread(fd, step, position)
            self._count_read(len(chunk))
            if position > 0 and b"\n" not in chunk:
                pieces.insert(0, chunk)  # still inside one long line: keep reading back without re-joining
                continue
            data = chunk + b"".join(pieces)
            lines = data.split(b"\n")
            # Where each piece starts in the file: piece k after k pieces and their newlines.
            starts = list(accumulate((len(piece) + 1 for piece in lines), initial=position))
            first = 1 if position > 0 else 0  # the first piece is the end of a line that starts further back
            for n in range(len(lines) - 1, first - 1, -1):
                record = _tail_record(lines[n])
                if record is None:
                    continue
                given = _usable_id(record.get("message_id"))
                if given is not None and _is_anchor(record, given, starts[n]):  # (an anchor always has an id)
                    next_id = given + 1
                    break
                after.append(given)
            else:
                if position > 0:
                    # No anchor in the lines read: whatever lies further back may hold a higher id. Rather than read
                    # back line by line, index the whole file (what a warm append would have done) and stop guessing.
                    return None
                next_id = 1  # the whole file was read: the rule from its start
            for given in reversed(after):
                next_id = max(next_id, (next_id if given is None else given) + 1)
            return next_id
        return 1  # an empty file
