"""An append-only JSONL layer file: its I/O — opening, locking, reading records, appending — over its line index.

The building block of every layer. One concept a module:

* :mod:`~agentmem_nb.store.lines` — how one line is parsed (orjson where exact) and which ids count;
* :mod:`~agentmem_nb.store.line_index` — the in-memory index (offset and id of every record, problems found);
* :mod:`~agentmem_nb.store.anchors` — the next id from the tail (``byte_offset``) for a cold append;
* :mod:`~agentmem_nb.store.torn_tail` — the repair of a last line a crashed writer left;
* :mod:`~agentmem_nb.store.bulk` — what bulk readers get (index snapshots, blocks of lines, raw new lines);
* this module — :class:`JsonlFile`, which opens the file (:mod:`agentmem_nb.store._fs`), locks it and ties them up.

Why it looks like this:

* **Append costs the same at line 10 and at line 10 million, and gives the id a full read would**: from the index
  when it is warm, from the tail's anchor when cold (:mod:`~agentmem_nb.store.anchors`).
* **Writers never interleave or share an id**, threads or processes: the whole line goes out in one ``write`` on an
  ``O_APPEND`` descriptor while an exclusive ``flock`` on the file is held, and the id is chosen under that lock.
* **A warm operation walks no folders.** The descriptor of the last safe open is kept and checked with one
  ``lstat`` per path step (:class:`~agentmem_nb.store._fs.KeptFile`); a warm append skips the torn-tail check when the
  file ends where the index does (the index ends just past a newline).
* **A crash mid-write loses nothing acknowledged** (:mod:`~agentmem_nb.store.torn_tail`); **reads never raise on bad
  data** and **are incremental** (:mod:`~agentmem_nb.store.line_index`).
* **One rule says what changed since a reader last looked**, the one in :mod:`agentmem_nb.store.scan` (a cursor:
  which file, where its last complete line ended, the bytes before that). The index follows the file by it with its
  own cursor, and so does every bulk reader (frames, the follower, the retrieval index) through :meth:`JsonlFile.scan`,
  :meth:`JsonlFile.line_blocks` and :meth:`JsonlFile.raw_lines`: the format is read here and nowhere else.
"""

from __future__ import annotations

import bisect
import json
import os
import stat
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from agentmem_nb.errors import StoreError
from agentmem_nb.store import index_cache
from agentmem_nb.store._fs import KeptFile, check_file, flocked, open_file
from agentmem_nb.store.anchors import ANCHOR_KEY, next_id_from_tail
from agentmem_nb.store.bulk import IndexSnapshot, LineBlock, RawLines
from agentmem_nb.store.line_index import CHUNK, IOStats, LineIndex
from agentmem_nb.store.lines import (  # re-exported: the names the package has always imported from here
    MESSAGE_ID_LIMIT,
    TAIL_CHUNK,
    fast_parse_exact,
    loads_record,
    plain_records,
)
from agentmem_nb.store.problems import Problem, problem_for_error
from agentmem_nb.store.scan import CURSOR_TAIL, Cursor, Scan, change_since, moved_tail
from agentmem_nb.store.torn_tail import last_newline_before, repair_tail, write_all

__all__ = [
    "ANCHOR_KEY", "Durability", "IOStats", "IndexSnapshot", "JsonlFile", "LineBlock", "MESSAGE_ID_LIMIT", "RawLines",
    "fast_parse_exact", "loads_record", "plain_records",
]

Durability = Literal["flush", "fsync"]
"""``"flush"``: each line is handed to the OS before append returns (survives a process crash).
``"fsync"``: each line is also forced to stable storage (survives power loss; much slower)."""


class JsonlFile(LineIndex):
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
        self.base = path.parent if base is None else base
        self.durability: Durability = durability
        # The descriptor the last safe open returned, used again while the path still leads to it (see _fs): a warm
        # append or window walks no folders.
        self._kept = KeptFile(path, base=self.base, owner=self)
        super().__init__(path)

    # ------------------------------------------------------------------ following the file

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
            return self._findings()

    def position_of(self, message_id: int) -> int | None:
        """Index (0-based, file order) of the first record with ``message_id``; ``None`` if absent."""
        self.sync()
        with self._lock:
            return self._position_of(message_id)

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
                    block_bytes: int = CHUNK) -> Iterator[LineBlock]:
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
                        end = max(start, last_newline_before(fd, end) + 1)
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
            blob = os.pread(fd, min(stop - offset, TAIL_CHUNK), offset)
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
            size = repair_tail(self, fd, size)
        # else: the index ends here, just past a complete line: no unfinished last line to repair
        if size == 0 and (self._inode != inode or self._ids):
            self._reset_index(inode=inode)  # a new (or emptied) file: the index is trivially complete
        warm = self._inode == inode
        if warm and size != self._end:
            self._catch_up(fd)  # reads only what other writers appended since
        next_id = self._next_id if warm else next_id_from_tail(fd, size, self._count_read)
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
        write_all(fd, data)
        if self.durability == "fsync":
            os.fsync(fd)
        if warm:
            self._index_line(data[:-1], size)
            self._end = size + len(data)
            self._tail = moved_tail(self._tail, data)
        return written
