"""Full loads of large, clean message files in columns with pyarrow's JSON reader — or a refusal that says why.

The exact path (``_read`` + ``messages._scan``) turns every record into Python objects, about 3 µs a record: too slow
for a million messages. For a *full* load (from position 0, without ``meta``) of a file of at least
:data:`FAST_MIN_BYTES`, :func:`read_columns` instead reads the file with ``pyarrow.json`` (C++, only the fields a
frame shows: ``ts``, ``role``, ``content``, ``tags``, ``message_id``, ``meta.session_id``,
``meta.tool_calls[].name``) and converts the columns with numpy and pyarrow compute.

It is used only where its result is provably the exact path's. Everything below is checked, and the first failure
raises :class:`Refused` (the caller then reads the file the exact way, silently — the reason is kept in
``ReadStats.refusals``):

* **Lines.** The file ends with a newline (no unterminated tail), every line starts with ``{`` (no blank,
  whitespace-only, BOM-prefixed or non-object line) and holds exactly one JSON value (rows = lines). So every line
  is one record the store's index keeps, in file order.
* **Bytes.** The whole file is valid UTF-8 (pyarrow does not validate strings, nor look into fields it ignores; the
  store skips a line with invalid UTF-8 anywhere).
* **Parser differences.** pyarrow's parser (RapidJSON) accepts ``Inf``, ``-Inf`` and ``-NaN``, which the standard
  parser refuses (it accepts ``NaN``, ``Infinity``, ``-Infinity``): any ``Inf`` not followed by ``inity`` in a value
  position (after ``:``, ``,`` or ``[`` and optional whitespace, or right after ``-``) and any ``-NaN`` refuses the
  file; text in a string that looks like one ("Note: Info") refuses it too (slower, never wrong). RapidJSON parses
  nesting of any depth, orjson and the standard parser do not: a line of 1 KiB or more with 512 or more brackets
  refuses the file.
  Lone surrogate escapes (``"\\ud800"``), duplicate keys, numbers out of range and values of another type than
  declared (a number as ``content``, a dict as ``tags``, text as ``message_id``...) make pyarrow itself fail.
* **Ids.** Every ``message_id`` is an integer with ``1 <= id < 2**53``, strictly increasing: the store's index then
  keeps each given id unchanged (no legacy, out-of-order or duplicate ids to normalise).
* **Tags.** Lists of strings with no null item and no NUL character (missing or null ``tags`` are fine).

Everything else is converted by the exact path's own rules: a missing or null ``role`` is ``"unknown"``, a missing
or null ``content`` is ``""``, timestamps go through the same canonical vectorised parser and ``parse_ts`` for the
rest, with the same fill rule for unreadable ones; tool calls count entries that are objects with a string ``name``.

The bytes come from the store's scan (:meth:`~agentmem_nb.store.MessageFile.raw_lines`: the whole file under its
shared lock, so a writer appending at the same time waits and no line is read half written), in segments of
:data:`SEGMENT_BYTES` ending at a newline: memory stays at the size of the result plus a few segments. The scan's
cursor comes back with the columns, so a follower asks the same scan what was appended since. :data:`WORKERS`
threads check and parse the next segments while the calling thread converts the oldest.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentmem_nb.frames._time import canonical_rows_us, fill_missing_us, parse_rest_us, parse_ts_us
from agentmem_nb.errors import StoreError
from agentmem_nb.store import Cursor, MessageFile
from agentmem_nb.store.jsonl import MESSAGE_ID_LIMIT, RawLines, loads_record

try:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj
except ImportError:  # pragma: no cover - pyarrow is a declared dependency; without it every load is exact
    pa = pc = pj = None

__all__ = ["FAST_MIN_BYTES", "SEGMENT_BYTES", "BLOCK_BYTES", "Refused", "TooSmall", "FastColumns", "read_columns"]

FAST_MIN_BYTES = 1 << 20
"""Smallest file read in columns. Measured on the benchmark's messages (a cold read, index included, best of 5):
64 KiB 3.5 ms exact / 3.7 ms columnar, 256 KiB 6.4 / 5.7, 1 MiB 21 / 13, 4 MiB 80 / 35, 16 MiB 296 / 69. Below
1 MiB the gain is a few milliseconds: the small files people edit and test with stay on the exact path."""

SEGMENT_BYTES = 8 << 20
"""Bytes checked and parsed at a time (each segment ends at a newline)."""

BLOCK_BYTES = 1 << 20
"""pyarrow's block size (the unit it parses; at least the longest line of the segment is used)."""

def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


WORKERS = max(1, min(2, _cpus()))
"""Threads that check and parse segments (pyarrow's own threads are not used: segments already run in parallel).
Two, or one on a single core, where a second would only contend with the caller's conversions. (On the shared
2-core machine this was tuned on, two workers used both cores when they were free — 1M messages in 2.7 s wall for
4.7 s of CPU — and one worker was ~15% faster while another process kept a core busy.)"""

_LONG_LINE = 1024  # a line this long may nest deep enough to matter ...
_MANY_BRACKETS = 512  # ... if it has this many opening brackets (orjson stops at depth 1024, json near 1000)
_OPEN = ord("{")
_VALUE_BEFORE = frozenset(b":,[")  # what precedes a value, whitespace aside
_SPACE = frozenset(b" \t\r\n")


class Refused(Exception):  # a verdict, not an error: the exact path reads the file instead
    """The file cannot be read in columns with a provably identical result; the message says why."""


class TooSmall(Refused):
    """The file is below the size where reading it in columns pays (not worth recording as a refusal)."""


@dataclass(slots=True)
class FastColumns:
    """The columns of one message file, as the exact path would compute them."""

    ids: np.ndarray  # int64
    ts_us: np.ndarray  # int64 µs since the epoch, unreadable times already filled
    role: Any  # pa.ChunkedArray of string, no nulls
    content: Any  # pa.ChunkedArray of string, no nulls
    tags: np.ndarray  # object: a tuple per row (equal lists share one tuple)
    session_id: Any  # pa.ChunkedArray of string with nulls (``meta.session_id``), or None when not asked for
    n_tool_calls: np.ndarray  # int64
    calls: list[tuple[int, list[Any]]]  # (row, raw meta.tool_calls) when asked for
    end: int  # bytes read: the file's size when read (it ends with a newline)
    cursor: Cursor  # the store's scan cursor after these bytes: pass it to the scan to see what came after

    def __len__(self) -> int:
        return len(self.ids)


def _schema(with_session_id: bool) -> Any:
    meta = [("tool_calls", pa.list_(pa.struct([("name", pa.string())])))]
    if with_session_id:
        meta.insert(0, ("session_id", pa.string()))
    return pa.schema([
        ("ts", pa.string()),
        ("role", pa.string()),
        ("content", pa.string()),
        ("tags", pa.list_(pa.string())),
        ("meta", pa.struct(meta)),
        ("message_id", pa.int64()),
    ])


# ---------------------------------------------------------------------------------------------------- byte checks


def _check_utf8(segment: memoryview) -> None:
    offsets = pa.py_buffer(np.array([0, len(segment)], dtype=np.int64))
    whole = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(segment)])
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        raise Refused("not valid UTF-8 (the store skips such lines)") from None


def _check_tokens(segment: memoryview, raw: np.ndarray) -> None:
    """Refuse the bare tokens RapidJSON accepts and the standard parser does not (see the module docstring).

    Vectorised: the capital letters ``I`` and ``N`` are found with numpy, and only an ``Inf``/``-NaN`` among them is
    looked at closely (text such as "Info:" costs a look, and at worst a refusal; never a wrong frame)."""
    letters = np.flatnonzero(raw[:-3] == ord("N"))
    if len(letters):
        near = letters[letters > 0]
        if ((raw[near - 1] == ord("-")) & (raw[near + 1] == ord("a")) & (raw[near + 2] == ord("N"))).any():
            raise Refused("a -NaN token (or the text '-NaN'): pyarrow would accept what the store refuses")
    letters = np.flatnonzero(raw[:-3] == ord("I"))
    if not len(letters):
        return
    for at in letters[(raw[letters + 1] == ord("n")) & (raw[letters + 2] == ord("f"))].tolist():
        if segment[at : at + 8].tobytes() == b"Infinity":
            continue
        if at and segment[at - 1] == ord("-"):  # "-Inf" (the sign is part of the token: no space allowed)
            raise Refused("a -Inf token (or the text '-Inf'): pyarrow would accept what the store refuses")
        before = at - 1
        while before >= 0 and segment[before] in _SPACE:
            before -= 1
        if before >= 0 and segment[before] in _VALUE_BEFORE:
            raise Refused("an Inf token (or text like ': Inf'): pyarrow would accept what the store refuses")


def _line_bounds(segment: memoryview, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the lines of a segment that ends with a newline (``ends`` = index of each newline);
    refuses a line that does not start with ``{`` or may nest too deep."""
    ends = np.flatnonzero(raw == 10)
    starts = np.empty(len(ends), dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    first = raw[starts]  # each segment ends with a newline, so every start is inside it
    bad = np.flatnonzero(first != _OPEN)
    if len(bad):
        raise Refused(f"a line that does not start with '{{' (blank, indented, BOM or not an object) at byte "
                      f"{int(starts[bad[0]])} of a segment")
    for i in np.flatnonzero(ends - starts >= _LONG_LINE).tolist():
        line = bytes(segment[starts[i] : ends[i]])
        if line.count(b"{") + line.count(b"[") >= _MANY_BRACKETS:
            raise Refused("a line with 512+ brackets (may nest deeper than the store's parsers allow)")
    return starts, ends


# ---------------------------------------------------------------------------------------------------- columns


def _parse(segment: memoryview, schema: Any, longest: int) -> Any:
    try:
        return pj.read_json(
            pa.BufferReader(pa.py_buffer(segment)),
            # a block must hold a whole line: pyarrow refuses a line that straddles two blocks
            read_options=pj.ReadOptions(use_threads=False, block_size=max(BLOCK_BYTES, longest + 1)),
            parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore",
                                          newlines_in_values=False),
        )
    except (pa.ArrowException, ValueError) as exc:
        raise Refused(f"pyarrow refused a value: {str(exc)[:200]}") from None


def _ts_us(column: Any, zone: _dt.tzinfo | None) -> np.ndarray:
    """int64 µs of a string column (``NAT_US`` = unreadable or null), exactly as ``parse_ts_us``: the canonical
    vectorised parser on the string bytes when every value has the canonical 32 bytes, ``parse_ts`` for the rest."""
    chunk = column.combine_chunks()  # 32 bytes a row: cheap, and one vectorised pass instead of one per block
    count = len(chunk)
    out = None
    if chunk.null_count == 0 and count:
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=count + 1, offset=4 * chunk.offset)
        if offsets[-1] - offsets[0] == 32 * count and (np.diff(offsets) == 32).all():
            data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=32 * count, offset=int(offsets[0]))
            out = canonical_rows_us(data.reshape(count, 32))
    if out is None:  # nulls or other lengths: the store's general rule, vectorised where the shape allows
        return parse_ts_us(chunk.to_pylist(), zone)
    parse_rest_us(out, lambda i: chunk[i].as_py(), zone)
    return out


class _TagTuples:
    """``Message.tags`` per row from a list<string> column: equal lists share one tuple."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[str, ...]] = {}

    def __call__(self, column: Any) -> np.ndarray:
        lists = column.combine_chunks()  # a few bytes a row: one pass per segment, not one per block
        values = lists.flatten()
        if values.null_count:
            raise Refused("a null inside tags")
        if len(values) and pc.any(pc.match_substring(values, "\x00")).as_py():
            raise Refused("a NUL character inside a tag")
        # NUL-joined text is a faithful key now (no tag holds NUL); empty and missing lists are ().
        encoded = pc.dictionary_encode(pc.binary_join(lists, "\x00"))
        keys = encoded.dictionary.to_pylist()
        lookup = np.empty(len(keys) + 1, dtype=object)
        lookup[: len(keys)] = [self._tuple(k) for k in keys]
        lookup[len(keys)] = ()
        codes = encoded.indices.fill_null(len(keys)).to_numpy(zero_copy_only=False).astype(np.int64)
        empty = pc.fill_null(pc.equal(pc.list_value_length(lists), 0), True)
        codes[empty.to_numpy(zero_copy_only=False)] = len(keys)
        tags: np.ndarray = lookup[codes]
        return tags

    def _tuple(self, key: str) -> tuple[str, ...]:
        found = self.cache.get(key)
        if found is None:
            found = self.cache[key] = tuple(key.split("\x00"))
        return found


def _tool_call_counts(meta: Any, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n_tool_calls, rows with a non-empty tool_calls list)`` of a struct array: a call counts when it is an
    object with a string ``name`` (``ToolCall.from_raw``'s rule). Works on the raw offsets, so a null list counts 0
    whatever its backing range."""
    calls = pc.struct_field(meta, "tool_calls")
    offsets = calls.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    spans = np.diff(offsets)
    valid = calls.is_valid().to_numpy(zero_copy_only=False)
    lengths = np.where(valid, spans, 0)
    if not lengths.any():
        return lengths, np.empty(0, dtype=np.int64)
    named = pc.struct_field(calls.values, "name").is_valid().to_numpy(zero_copy_only=False)
    named = named[offsets[0] : offsets[-1]]
    parents = np.repeat(np.arange(rows), spans)
    counts = np.bincount(parents[named & valid[parents]], minlength=rows).astype(np.int64)
    return counts, np.flatnonzero(lengths)


@dataclass(slots=True)
class _Parts:
    ids: list[np.ndarray] = field(default_factory=list)
    ts: list[np.ndarray] = field(default_factory=list)
    role: list[Any] = field(default_factory=list)
    content: list[Any] = field(default_factory=list)
    tags: list[np.ndarray] = field(default_factory=list)
    session_id: list[Any] = field(default_factory=list)
    n_tool_calls: list[np.ndarray] = field(default_factory=list)
    calls: list[tuple[int, list[Any]]] = field(default_factory=list)
    rows: int = 0


def _absorb(parts: _Parts, table: Any, segment: memoryview, bounds: tuple[np.ndarray, np.ndarray], *,
            zone: _dt.tzinfo | None, tags: _TagTuples, with_session_id: bool, calls: bool) -> None:
    starts, ends = bounds
    rows = table.num_rows
    if rows != len(starts):
        raise Refused(f"{len(starts)} lines gave {rows} JSON values (a line holds more than one)")
    ids = table.column("message_id")
    if ids.null_count:
        raise Refused("a line without an integer message_id (the store gives it a running id)")
    parts.ids.append(ids.to_numpy())
    parts.ts.append(_ts_us(table.column("ts"), zone))
    role = table.column("role")
    parts.role.extend((pc.fill_null(role, "unknown") if role.null_count else role).chunks)
    content = table.column("content")
    parts.content.extend((pc.fill_null(content, "") if content.null_count else content).chunks)
    parts.tags.append(tags(table.column("tags")))
    meta = table.column("meta").combine_chunks()  # small: only the session id and the tool names are in it
    if with_session_id:
        parts.session_id.append(pc.struct_field(meta, "session_id"))
    counts, with_calls = _tool_call_counts(meta, rows)
    parts.n_tool_calls.append(counts)
    if calls:
        for row in with_calls.tolist():
            record = loads_record(bytes(segment[starts[row] : ends[row]]))
            parts.calls.append((parts.rows + row, record["meta"]["tool_calls"]))
    parts.rows += rows


def _finish(parts: _Parts, *, with_session_id: bool, end: int, cursor: Cursor) -> FastColumns:
    ids = np.concatenate(parts.ids)
    if ids[0] < 1 or ids[-1] >= MESSAGE_ID_LIMIT or not (np.diff(ids) > 0).all():
        raise Refused("message ids not all in 1..2**53 and strictly increasing (the store normalises those)")
    return FastColumns(
        ids=ids,
        ts_us=fill_missing_us(np.concatenate(parts.ts)),
        role=pa.chunked_array(parts.role, type=pa.string()),
        content=pa.chunked_array(parts.content, type=pa.string()),
        tags=np.concatenate(parts.tags),
        session_id=pa.chunked_array(parts.session_id, type=pa.string()) if with_session_id else None,
        n_tool_calls=np.concatenate(parts.n_tool_calls),
        calls=parts.calls,
        end=end,
        cursor=cursor,
    )


def read_columns(file: MessageFile, *, calls: bool = False) -> FastColumns:
    """Every record of ``file`` in columns, or :class:`Refused` (see the module docstring)."""
    if pj is None:
        raise Refused("pyarrow is not installed")
    # The whole file, under its shared lock until the with block ends: appends wait, every line read stays put.
    with file.raw_lines() as raw:
        if raw.cursor.file is None:
            raise Refused("no such file")
        if raw.size < FAST_MIN_BYTES:
            raise TooSmall(f"{raw.size} bytes: below FAST_MIN_BYTES ({FAST_MIN_BYTES})")
        if raw.end != raw.size:
            raise Refused("the last line has no newline (an unterminated tail)")
        with_session_id = file.kind == "daily"
        try:
            return _read_all(raw, schema=_schema(with_session_id), zone=file.zone, with_session_id=with_session_id,
                             calls=calls)
        except pa.ArrowException as exc:  # a limit of a compute function: read the file exactly instead
            raise Refused(f"pyarrow: {str(exc)[:200]}") from None
        except StoreError as exc:  # the file shrank under a writer that ignores the lock
            raise Refused(str(exc)) from None


def _check_and_parse(segment: memoryview, schema: Any) -> tuple[tuple[np.ndarray, np.ndarray], Any]:
    """A segment's line bounds and its table, or :class:`Refused` (run in a worker thread: numpy and pyarrow
    release the GIL for most of it)."""
    raw = np.frombuffer(segment, dtype=np.uint8)
    _check_utf8(segment)
    _check_tokens(segment, raw)
    bounds = _line_bounds(segment, raw)
    return bounds, _parse(segment, schema, int((bounds[1] - bounds[0]).max()) + 1)


@dataclass(slots=True)
class _Pending:
    work: Future[tuple[tuple[np.ndarray, np.ndarray], Any]]
    segment: memoryview


def _read_all(raw: RawLines, *, schema: Any, zone: _dt.tzinfo | None, with_session_id: bool,
              calls: bool) -> FastColumns:
    parts = _Parts()
    tags = _TagTuples()

    def take(done: _Pending) -> None:
        bounds, table = done.work.result()
        _absorb(parts, table, done.segment, bounds, zone=zone, tags=tags, with_session_id=with_session_id,
                calls=calls)

    # Workers check and parse the next segments (numpy and pyarrow release the GIL) while this thread converts the
    # oldest one, in file order. At most WORKERS + 1 segments and their tables are alive at once.
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="frames-json") as pool:
        pending: list[_Pending] = []
        try:
            for segment in raw.blocks(SEGMENT_BYTES):
                pending.append(_Pending(pool.submit(_check_and_parse, segment, schema), segment))
                if len(pending) > WORKERS:
                    take(pending.pop(0))
            while pending:
                take(pending.pop(0))
        finally:
            for waiting in pending:
                waiting.work.cancel()
    if not parts.ids:
        raise Refused("no lines")
    return _finish(parts, with_session_id=with_session_id, end=raw.end, cursor=raw.cursor)
