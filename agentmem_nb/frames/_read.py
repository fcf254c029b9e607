"""Bulk reads of a layer file through the store's own line index.

The store's index (byte offset and normalised ``message_id`` of every readable line) decides *which* lines exist and
what their ids are, so skipped lines and legacy ids are exactly the store's. This module only decides *how fast* the
bytes of those lines become dicts:

* the bytes are read in large contiguous chunks (one ``pread`` each, memory bounded by the chunk size);
* a chunk whose lines are all readable records (the usual case: its newline count equals its record count) is parsed
  as one JSON array by ``orjson`` — one call instead of one per line;
* otherwise (a skipped line or a blank line inside the chunk, an integer long enough for orjson to round it), or when
  ``orjson`` refuses something the standard parser accepts (``NaN``, lone surrogates), each record is parsed on its
  own by the store's own ``loads_record`` — exactly as the store parsed the line.

The index comes from ``JsonlFile.index_snapshot``, a consistent copy taken under the file's lock.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentmem_nb.store import JsonlFile
from agentmem_nb.store.jsonl import fast_parse_exact, loads_record

try:  # orjson is 3-5x faster than json for this; it is optional (a transitive dependency of langgraph today).
    import orjson

    _fast_loads: Any = orjson.loads
    _FastError: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)
except ImportError:  # pragma: no cover - exercised only where orjson is absent
    orjson = None  # type: ignore[assignment]
    _fast_loads = json.loads
    _FastError = (ValueError,)

__all__ = ["ReadStats", "record_chunks", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20
"""Bytes per read and parse: large enough to amortise per-call costs, small enough to keep peak memory flat
(orjson builds its whole document tree before making Python objects: ~15x the input, transiently)."""

_PUBLIC_STEP = 4096


@dataclass(slots=True)
class ReadStats:
    """What bulk reads cost (tests assert on bytes, never on seconds)."""

    bytes_read: int = 0
    records: int = 0
    fast_chunks: int = 0
    slow_chunks: int = 0
    columnar_files: int = 0
    """Full loads done in columns by pyarrow (``_fast``); the others went through the store's index."""
    refusals: list[str] = field(default_factory=list)
    """``"path: reason"`` for each file large enough for the columnar reader that it refused (read exactly)."""


def _index_snapshot(file: JsonlFile, start: int, stop: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """``(ids, offsets, end)`` as numpy arrays; ``offsets`` has one extra entry (see ``JsonlFile.index_snapshot``)."""
    snap = file.index_snapshot(start, stop)
    return (np.frombuffer(snap.ids, dtype=np.int64).copy(), np.frombuffer(snap.offsets, dtype=np.int64).copy(),
            snap.end)


def record_chunks(
    file: JsonlFile,
    *,
    start: int = 0,
    stop: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    stats: ReadStats | None = None,
) -> Iterator[tuple[np.ndarray, list[dict[str, Any]]]]:
    """``(message_ids, records)`` for positions ``start <= i < stop`` of ``file``, in file order, in chunks."""
    stats = stats if stats is not None else ReadStats()
    ids, offsets, _end = _index_snapshot(file, start, stop)
    total = len(ids)
    if not total:
        return
    fd = file.open_for_reading()  # never through a link, never a FIFO (store._fs)
    try:
        i = 0
        while i < total:
            # Records i..j-1 fill about chunk_bytes (at least one record, however long).
            j = int(np.searchsorted(offsets, offsets[i] + chunk_bytes, side="right")) - 1
            j = min(total, max(j, i + 1))
            first, last = int(offsets[i]), int(offsets[j])
            blob = os.pread(fd, last - first, first)
            stats.bytes_read += len(blob)
            records = _parse_chunk(blob, offsets[i:j] - first, stats)
            stats.records += len(records)
            yield ids[i:j], records
            i = j
    finally:
        os.close(fd)


def _parse_chunk(blob: bytes, starts: np.ndarray, stats: ReadStats) -> list[dict[str, Any]]:
    count = len(starts)
    # Every record's span ends with its own newline; if the chunk holds no other newline, the chunk is exactly the
    # records, one per line (no skipped or blank line between them) and can be parsed as one array.
    if blob.count(b"\n") == count and fast_parse_exact(blob):
        try:
            records = _fast_loads(b"[" + blob[:-1].replace(b"\n", b",") + b"]")
        except _FastError:
            records = None
        if records is not None and len(records) == count:
            stats.fast_chunks += 1
            return records
    stats.slow_chunks += 1
    out = []
    for offset in starts.tolist():
        line = blob[offset : blob.index(b"\n", offset)]
        out.append(loads_record(line))  # exactly as the store parsed it
    return out
