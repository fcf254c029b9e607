"""Bulk reads of a layer file through the store's scan: the store's line index decides *which* lines exist and what
their ids are, and the store parses them (:meth:`~agentmem_nb.store.MessageFile.line_blocks`: a block whose lines
are all records goes to ``orjson`` as one JSON array, anything else line by line, exactly as the index parsed it).
This module only turns the blocks into ``(ids, records)`` chunks for the frame builder and counts what they cost.

A layer that is not a file (PostgreSQL's) has no lines: its records come through the contract's one bulk reader,
``read_records(start, stop)`` at the positions its ``scan()`` names, :data:`RECORD_STEP` at a time (one statement
each); ``bytes_read`` then stays 0 and ``records`` counts what was read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentmem_nb.store import MessageFile
from agentmem_nb.store.contract import MessageLayer

__all__ = ["ReadStats", "record_chunks", "CHUNK_BYTES", "RECORD_STEP"]

CHUNK_BYTES = 1 << 20
"""Bytes per read and parse: large enough to amortise per-call costs, small enough to keep peak memory flat
(orjson builds its whole document tree before making Python objects: ~15x the input, transiently)."""

RECORD_STEP = 8192
"""Records per ``read_records`` call for a layer that is not a file (a database round trip each)."""


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


def record_chunks(
    file: MessageFile | MessageLayer,
    *,
    start: int = 0,
    stop: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    stats: ReadStats | None = None,
) -> Iterator[tuple[np.ndarray, list[dict[str, Any]]]]:
    """``(message_ids, records)`` for positions ``start <= i < stop`` of ``file``, in file order, in chunks."""
    stats = stats if stats is not None else ReadStats()
    if not isinstance(file, MessageFile):
        yield from _layer_chunks(file, start=start, stop=stop, stats=stats)
        return
    for block in file.line_blocks(start, stop, block_bytes=chunk_bytes):
        stats.bytes_read += len(block.data)
        records = block.records()
        if block.whole:
            stats.fast_chunks += 1
        else:
            stats.slow_chunks += 1
        stats.records += len(records)
        yield np.array(block.ids, dtype=np.int64), records


def _layer_chunks(layer: MessageLayer, *, start: int, stop: int | None,
                  stats: ReadStats) -> Iterator[tuple[np.ndarray, list[dict[str, Any]]]]:
    """``record_chunks`` of a layer that is not a file, through ``scan()`` and ``read_records``."""
    if stop is None:
        stop = layer.scan().stop
    for at in range(start, stop, RECORD_STEP):
        pairs = layer.read_records(at, min(stop, at + RECORD_STEP))
        stats.records += len(pairs)
        stats.slow_chunks += 1
        if pairs:
            yield np.array([mid for mid, _ in pairs], dtype=np.int64), [record for _, record in pairs]
