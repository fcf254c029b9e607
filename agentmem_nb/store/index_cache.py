"""The line index and the search text of a message file, kept beside the data as a cache for the next process.

Why: every new process used to rebuild a layer's index from the whole file before its first read — parse every line
for its byte offset and id, then (on the first keyword search) fold every message's content. At 1M messages (a
240 MB session file) the issue measured 4.4 s and 302 MiB for a fresh process's first keyword hit (2.1 s at 100k).
A process that finds a valid cache instead copies two int64 arrays (16 MB at 1M), checks them, maps the folded text,
and parses only the lines appended since the cache was written. Measured with ``benchmarks/bench_cold.py`` (fresh
processes, 1M messages, shared 2-core machine; ``benchmarks/COLD.md``): first window 9.2 s / 50 MiB without the
cache (2-3 s on a quiet machine), 20 ms / 41 MiB with it (3 kB of the data file read, no line parsed); first keyword
search 4.4 s / 134 MiB without, 55 ms / 51 MiB with.

Where: ``{user}/.index/{sessions|daily}/{file}.lines`` (ids and offsets) and ``….text`` (where each message's
folded text starts, then the text). The user folder is the data's home, so the cache travels, is backed up and is
deleted with it; the name is hidden, so ``MemoryStore.users()`` skips it, and the folder check finds nothing to
report in it but what it reports anywhere (a link, an orphaned temporary file of an interrupted write).

Never the source of truth:

* **Checked against the file by the store's rule before use.** A cache records the file's identity (device,
  inode), the indexed end, and the bytes just before that end (which must end a line: the rule the line index
  applies to itself on every catch-up, ``LineIndex._catch_up`` by :mod:`~agentmem_nb.store.scan`) and the file's
  first bytes. It is used only if the file is the same one, at least that long, and holds those same bytes there:
  then the file only grew since, and the index reads the rest from the cache's end as it would after its own last
  read. Anything else — another file
  (a copied folder, a replaced file), a file rewritten or truncated, a cache from an older format, cut short or
  damaged — is ignored silently and the index is built from the file, exactly as with no cache.
* **Only a clean index is kept**: every line a record with an increasing plain id, every ``ts`` readable, nothing
  skipped (every file this store writes). A file with legacy ids, duplicates or bad lines is rebuilt each time,
  which keeps the per-line findings (``problems()``) and their line numbers in one place: the indexer.
* **Atomic, concurrent-safe, crash-safe.** A cache file is written whole with
  :func:`~agentmem_nb.store._fs.atomic_write` (a temporary file renamed over the old one), so a reader sees an old
  snapshot or a new one, never a mix; two writers just race to put down equally valid snapshots. Every snapshot
  describes bytes that appends never change. It is written without fsync and checksummed (CRC-32 of everything after
  its header, checked on load): a cache lost, cut short or damaged (a power cut, a disk error) is a cache miss. A
  writer killed mid-write leaves a temporary file that no reader opens and the folder check reports as an orphan.
* **The blind spot is the store's own**: an in-place edit of earlier bytes that keeps every length and the bytes
  compared is seen neither by the live index (``LineIndex._catch_up``) nor by the cache.
* **Never through a link**: opened with the store's primitives below the store root, like every data file.

Memory: the id and offset arrays are copied into the index's own arrays (16 bytes a message); the folded text is
mapped, never read whole. A keyword search walks it backwards from the newest message through the mapping
(:class:`CachedText`), a window at a time, handing the pages it passed back to the kernel, so a scan of the whole
text (an absent keyword) keeps the resident size near one window, not the text's size (about 120 MB at 1M).
Records appended after the cache was written are folded into an ordinary ``bytearray`` tail, as before.

Small files (below :data:`MIN_RECORDS`) get no cache: rebuilding them costs a few milliseconds, and a read of a
small file writes nothing.
"""

from __future__ import annotations

import bisect
import json
import mmap
import os
import struct
import zlib
from array import array
from pathlib import Path
from typing import Any

from agentmem_nb.errors import StoreError
from agentmem_nb.store._fs import atomic_write, flocked, open_file
from agentmem_nb.store.scan import CURSOR_TAIL, Cursor, change_since

__all__ = ["CachedText", "MIN_RECORDS", "cache_path", "load_lines", "save_lines", "load_text", "save_text",
           "file_signature", "signature_matches", "write_cache", "open_cache", "payload_intact", "read_into",
           "user_cache_folder"]

MIN_RECORDS = 2048
"""Files with fewer records are not cached (their index is rebuilt in milliseconds)."""

CACHE_FOLDER = ".index"
_LINES_MAGIC = b"AMLINES1"
_TEXT_MAGIC = b"AMTEXT01"
_PREFIX = struct.Struct("<8sQ")  # magic, header length
_EDGE = CURSOR_TAIL  # bytes compared at the start of the file and before the indexed end (the cursor's tail)
_SCAN_WINDOW = 8 << 20  # bytes of mapped text searched at a time (and then given back to the kernel)
_CHECK_WINDOW = 1 << 20  # bytes read at a time to checksum a cache (one buffer, reused)


def user_cache_folder(user_directory: Path) -> Path:
    """The hidden folder of a user's caches (this module's and the retrieval index's)."""
    return user_directory / CACHE_FOLDER


def cache_path(data_path: Path, suffix: str) -> Path:
    """Where the cache of ``{user}/{folder}/{file}`` lives: ``{user}/.index/{folder}/{file}.{suffix}``."""
    return data_path.parent.parent / CACHE_FOLDER / data_path.parent.name / f"{data_path.name}.{suffix}"


# ---------------------------------------------------------------------------------------------- the file's signature


def file_signature(fd: int, end: int) -> dict[str, Any] | None:
    """What a cache of the first ``end`` bytes of the open file ``fd`` records about it; ``None`` when those bytes do
    not end a line (no cache can describe them)."""
    st = os.fstat(fd)
    if end <= 0 or st.st_size < end:
        return None
    tail = os.pread(fd, min(_EDGE, end), end - min(_EDGE, end))
    head = os.pread(fd, min(_EDGE, end), 0)
    if not tail.endswith(b"\n"):
        return None
    return {"dev": st.st_dev, "ino": st.st_ino, "end": end, "head": head.hex(), "tail": tail.hex()}


def signature_matches(fd: int, header: dict[str, Any]) -> bool:
    """Whether the open file ``fd`` is the file ``header`` describes, grown by appends at most: the store's one
    change rule (:func:`~agentmem_nb.store.scan.change_since` on the cursor the header records says "unchanged" or
    "appended"), and, because a cache outlives the process that wrote it, the same first bytes too."""
    end, dev, ino = header.get("end"), header.get("dev"), header.get("ino")
    if type(end) is not int or end <= 0 or type(dev) is not int or type(ino) is not int:
        return False
    try:
        cursor = Cursor((dev, ino), end, bytes.fromhex(str(header.get("tail"))))
    except ValueError:
        return False
    if change_since(fd, os.fstat(fd), cursor)[0] not in ("unchanged", "appended"):
        return False
    found = file_signature(fd, end)
    return found is not None and found["head"] == header.get("head") and found["tail"] == header.get("tail")


# ---------------------------------------------------------------------------------------------- reading and writing


def write_cache(path: Path, base: Path, magic: bytes, header: dict[str, Any], pieces: list[Any]) -> bool:
    """Write a cache file (``magic``, ``header``, then ``pieces`` back to back, checksummed) atomically; ``False``
    when it cannot be written (the caller goes on without it)."""
    return _write(path, base, _pack(magic, header, *pieces))


def open_cache(path: Path, base: Path, magic: bytes) -> tuple[int, dict[str, Any], int] | None:
    """``(fd, header, payload offset)`` of a cache written by :func:`write_cache` with ``magic``, if it is whole
    (size and checksum); ``None`` otherwise. The caller closes ``fd``."""
    opened = _open_cache(path, base, magic)
    if opened is None:
        return None
    fd, header, start = opened
    try:
        if payload_intact(fd, start, header):
            return opened
    except OSError:  # vanished midway: a miss
        pass
    os.close(fd)
    return None


def _pack(magic: bytes, header: dict[str, Any], *payload: bytes | bytearray | memoryview) -> list[Any]:
    crc = 0
    for piece in payload:
        crc = zlib.crc32(piece, crc)
    encoded = json.dumps({**header, "crc32": crc}, sort_keys=True).encode("ascii")
    encoded += b" " * (-(len(encoded) + _PREFIX.size) % 8)  # arrays start 8-byte aligned
    return [_PREFIX.pack(magic, len(encoded)), encoded, *payload]


def _write(path: Path, base: Path, pieces: list[Any]) -> bool:
    """Write a cache file atomically; ``False`` (nothing changed) where it cannot be written: a read-only folder,
    a full disk, a link in the way — a cache is optional, the read it serves already has its answer."""
    try:
        atomic_write(path, pieces, fsync=False, base=base)
    except (StoreError, OSError):  # StoreError names the path (UnsafeFileError included); nothing is lost
        return False
    return True


def _open_cache(path: Path, base: Path, magic: bytes) -> tuple[int, dict[str, Any], int] | None:
    """``(fd, header, where the payload starts)`` of a cache file, or ``None`` if it is absent or not one of ours.
    The caller closes ``fd``."""
    try:
        fd = open_file(path, os.O_RDONLY, base=base)
    except (StoreError, OSError):  # absent (the usual miss), a link, no permission: all mean "no cache"
        return None
    try:
        prefix = os.pread(fd, _PREFIX.size, 0)
        if len(prefix) != _PREFIX.size:
            raise ValueError("short")
        found, length = _PREFIX.unpack(prefix)
        if found != magic or length > 1 << 20:
            raise ValueError("foreign")
        raw = os.pread(fd, length, _PREFIX.size)
        header = json.loads(raw)
        if len(raw) != length or not isinstance(header, dict):
            raise ValueError("damaged header")
    except (ValueError, OSError):  # cut short, damaged, another format: a miss, rebuilt by the caller
        os.close(fd)
        return None
    return fd, header, _PREFIX.size + length


def payload_intact(fd: int, start: int, header: dict[str, Any]) -> bool:
    """Whether the payload (everything after the header) has the checksum the header records: a cache damaged in
    the middle is a miss, not a wrong answer. Read a megabyte at a time into one buffer (about 4 ms per 16 MB), so a
    large text is checked without becoming resident."""
    size = os.fstat(fd).st_size - start
    buffer = bytearray(min(size, _CHECK_WINDOW))
    view = memoryview(buffer)
    crc, position = 0, start
    while position < start + size:
        got = os.preadv(fd, [view[: min(len(buffer), start + size - position)]], position)
        if got <= 0:
            return False
        crc = zlib.crc32(view[:got], crc)
        position += got
    return crc == header.get("crc32")


def read_into(fd: int, offset: int, typecode: str, count: int) -> array[int] | None:
    """``count`` items of ``typecode`` at ``offset`` read straight into an array (no intermediate copy, nothing
    mapped); ``None`` if cut short."""
    out = array(typecode, [0]) * count
    size = out.itemsize * count
    if count and os.preadv(fd, [memoryview(out).cast("B")], offset) != size:
        return None
    return out


def _read_int64(fd: int, offset: int, count: int) -> array[int] | None:
    return read_into(fd, offset, "q", count)


def _count(header: dict[str, Any], key: str) -> int | None:
    value = header.get(key)
    return value if type(value) is int and value >= 0 else None


def save_lines(path: Path, base: Path, signature: dict[str, Any], ids: array[int], offsets: array[int],
               state: dict[str, Any]) -> bool:
    """Keep a clean index (ids and offsets of the lines in the signature's first ``end`` bytes) for the next process."""
    header = {**signature, "count": len(ids), "state": state}
    return _write(path, base, _pack(_LINES_MAGIC, header, memoryview(ids).cast("B"), memoryview(offsets).cast("B")))


def load_lines(path: Path, base: Path, data_fd: int) -> tuple[dict[str, Any], array[int], array[int]] | None:
    """``(header, ids, offsets)`` of the cache at ``path`` if it describes the open data file ``data_fd`` (see
    :func:`signature_matches`) and is whole; ``None`` otherwise."""
    opened = _open_cache(path, base, _LINES_MAGIC)
    if opened is None:
        return None
    fd, header, start = opened
    try:
        count = _count(header, "count")
        if count is None or not isinstance(header.get("state"), dict) or not signature_matches(data_fd, header):
            return None
        if os.fstat(fd).st_size != start + 16 * count or not payload_intact(fd, start, header):
            return None
        ids = _read_int64(fd, start, count)
        offsets = _read_int64(fd, start + 8 * count, count)
        if ids is None or offsets is None or not _plausible(ids, offsets, header["end"]):
            return None
        return header, ids, offsets
    except OSError:  # the cache vanished or failed to read midway: a miss
        return None
    finally:
        os.close(fd)


def _plausible(ids: array[int], offsets: array[int], end: int) -> bool:
    """The ends of a loaded index fit the file (the checksum vouches for the rest)."""
    return not ids or (ids[0] >= 1 and 0 <= offsets[0] and offsets[-1] < end)


def save_text(path: Path, base: Path, signature: dict[str, Any], count: int, starts: array[int],
              text: bytearray | CachedText) -> bool:
    """Keep the folded search text of the first ``count`` records (those in the signature's first ``end`` bytes)."""
    header = {**signature, "count": count, "text_length": len(text)}
    pieces = text.pieces() if isinstance(text, CachedText) else [text]
    return _write(path, base, _pack(_TEXT_MAGIC, header, memoryview(starts).cast("B")[: 8 * count], *pieces))


def load_text(path: Path, base: Path, data_fd: int, offsets: array[int]) -> tuple[CachedText, array[int]] | None:
    """``(text, starts)`` of the cached search text if it describes the open data file and the first records of
    ``offsets`` (the live index of that file); the text is mapped, not read. ``None`` otherwise."""
    opened = _open_cache(path, base, _TEXT_MAGIC)
    if opened is None:
        return None
    fd, header, start = opened
    try:
        count, length = _count(header, "count"), _count(header, "text_length")
        if count is None or length is None or not signature_matches(data_fd, header):
            return None
        # The cache covers exactly the records that start before its end, so they are the index's first `count`.
        if bisect.bisect_left(offsets, header["end"]) != count:
            return None
        text_at = start + 8 * count
        if os.fstat(fd).st_size != text_at + length or not payload_intact(fd, start, header):
            return None
        starts = _read_int64(fd, start, count)
        if starts is None or (count and (starts[0] != 0 or starts[-1] >= length)):
            return None
        mapped = _map(fd, text_at, length)
        return CachedText(mapped, text_at, length), starts
    except (OSError, ValueError):  # vanished midway, cannot be mapped: a miss
        return None
    finally:
        os.close(fd)


def _map(fd: int, offset: int, length: int) -> mmap.mmap | None:
    if not length:
        return None
    aligned = offset - offset % mmap.ALLOCATIONGRANULARITY
    return mmap.mmap(fd, length + offset - aligned, prot=mmap.PROT_READ, offset=aligned)


class CachedText:
    """The folded search text: a mapped prefix from the cache, then an in-memory tail for records indexed since.

    It offers what :class:`~agentmem_nb.store.layer.MessageFile` does with its ``bytearray`` — ``len``, ``extend`` and
    ``rfind(needle, start, end)`` — so the search code is the same for both. A match never spans the prefix and the
    tail (the needle holds no NUL and every message ends with one), so each part is searched on its own.
    """

    __slots__ = ("_map", "_skip", "_base", "_tail")

    def __init__(self, mapped: mmap.mmap | None, file_offset: int, length: int) -> None:
        self._map = mapped
        self._skip = file_offset % mmap.ALLOCATIONGRANULARITY  # the text's first byte within the mapping
        self._base = length
        self._tail = bytearray()

    def __len__(self) -> int:
        return self._base + len(self._tail)

    def extend(self, data: bytes | bytearray) -> None:
        """Append ``data`` (the folded text of records indexed after the cache was written)."""
        self._tail += data

    def pieces(self) -> list[Any]:
        """The whole text as buffers (for writing it to a new cache without joining it in memory)."""
        if self._map is None:
            return [self._tail]
        return [memoryview(self._map)[self._skip : self._skip + self._base], self._tail]

    def rfind(self, needle: bytes, start: int, end: int) -> int:
        """Highest index ``i`` with ``start <= i`` and ``i + len(needle) <= end`` where ``needle`` occurs; -1."""
        base = self._base
        if end > base:
            found = self._tail.rfind(needle, max(0, start - base), end - base)
            if found >= 0:
                return base + found
            end = base
        if self._map is None or end - start < len(needle):
            return -1
        return self._rfind_mapped(needle, start, end)

    def _rfind_mapped(self, needle: bytes, start: int, end: int) -> int:
        """Search the mapped prefix backwards a window at a time, giving each window's pages back to the kernel
        once searched (they stay in the page cache): resident memory stays near one window however far it goes."""
        mapped, skip = self._map, self._skip
        assert mapped is not None
        hi = end + skip
        lo_limit = start + skip
        while True:
            lo = max(lo_limit, hi - _SCAN_WINDOW)
            found = mapped.rfind(needle, lo, hi)
            if found >= 0:
                return found - skip
            _release(mapped, lo, hi)
            if lo == lo_limit:
                return -1
            hi = lo + len(needle) - 1  # a match that starts before lo and ends after it is in the next window


def _release(mapped: mmap.mmap, lo: int, hi: int) -> None:
    page = mmap.PAGESIZE
    first = -(-lo // page) * page
    last = hi // page * page
    if last > first and hasattr(mmap, "MADV_DONTNEED"):
        mapped.madvise(mmap.MADV_DONTNEED, first, last - first)


# ---------------------------------------------------------------------------------------------- the hooks


def _clean(layer: Any) -> bool:
    """Whether ``layer``'s index is one a cache may keep (see the module docstring: nothing for the indexer to
    report, ids strictly increasing)."""
    return (layer._ids_sorted and not layer._problems and not layer._legacy_ids and not layer._duplicates
            and not layer._pending_tail)


def _due(count: int, saved: int) -> bool:
    """Whether an index of ``count`` records is worth writing over a cache of ``saved``: large enough to be worth
    keeping, and grown by a quarter since (so a growing file is rewritten a logarithmic number of times)."""
    return count >= MIN_RECORDS and count - saved >= max(1, saved // 4)


def adopt_lines(layer: Any, fd: int) -> bool:
    """Give the empty index of ``layer`` (a ``JsonlFile``) the cached one, if it describes the open file ``fd``;
    the caller then reads on from the cache's end. Called under the file's shared lock. ``False``: nothing changed."""
    if layer._cache_path is None or not layer._cache_trusted:
        return False
    loaded = load_lines(layer._cache_path("lines"), layer.base, fd)
    if loaded is None:
        return False
    header, ids, offsets = loaded
    state = header["state"]
    lineno = state.get("lineno")
    if type(lineno) is not int or lineno < len(ids) or not layer._adopt_cached(state.get("layer")):
        return False
    layer._count_read(2 * min(_EDGE, header["end"]))  # the signature's two reads of the data file
    layer._ids, layer._offsets = ids, offsets
    layer._end = header["end"]
    layer._tail = bytes.fromhex(header["tail"])  # the index's own cursor (store.scan): the bytes just checked
    layer._lineno = lineno
    layer._next_id = ids[-1] + 1 if ids else 1  # a clean index: no legacy ids, ids increasing
    layer._cache_saved = len(ids)
    return True


def keep_lines(layer: Any, fd: int) -> None:
    """Write ``layer``'s index to its cache if it is clean and has grown enough since the cache was written.
    Called under the file's shared lock, right after a catch-up on the open file ``fd``."""
    count = len(layer._ids)
    if layer._cache_path is None or not _due(count, layer._cache_saved) or not _clean(layer):
        return
    layer._cache_saved = count  # also on failure: a read-only folder is not retried on every read
    signature = file_signature(fd, layer._end)
    if signature is not None:
        state = {"lineno": layer._lineno, "layer": layer._cache_state()}
        save_lines(layer._cache_path("lines"), layer.base, signature, layer._ids, layer._offsets, state)


def load_search_text(lines: Any) -> tuple[CachedText, array[int]] | None:
    """The cached search text of a layer's line file ``lines`` (index synced; caller holds its lock) for its first
    records, or ``None``."""
    if lines._cache_path is None or not lines._cache_trusted or len(lines._ids) < MIN_RECORDS:
        return None
    try:
        fd = lines.open_for_reading()
    except (StoreError, OSError):  # gone or unsafe since the sync: the search rebuilds and reports as it would
        return None
    try:
        loaded = load_text(lines._cache_path("text"), lines.base, fd, lines._offsets)
    finally:
        os.close(fd)
    if loaded is not None:
        lines._count_read(2 * _EDGE)  # the signature's two reads (a cached file is far longer than this)
    return loaded


def keep_search_text(lines: Any, text: Any, starts: array[int], saved: int) -> int:
    """Write a layer's search text (``text``, with where each record ``starts``) to the cache of its line file
    ``lines`` if it has grown enough since ``saved`` records were kept (caller holds the lock and has just synced;
    the text covers every indexed record). Returns the number of records now known to be kept."""
    count = len(starts)
    if lines._cache_path is None or not _due(count, saved) or not _clean(lines):
        return saved
    if count != len(lines._ids):
        return count  # not every record folded (cannot happen after a sync; kept out rather than trusted)
    try:
        fd = lines.open_for_reading()
    except (StoreError, OSError):  # the search already has its answer; the next one tries again
        return count
    try:
        with flocked(fd, exclusive=False):  # no rewrite slips between the index's end and the signature
            st = os.fstat(fd)
            signature = file_signature(fd, lines._end) if (st.st_dev, st.st_ino) == lines._inode else None
    finally:
        os.close(fd)
    if signature is not None:
        save_text(lines._cache_path("text"), lines.base, signature, count, starts, text)
    return count
