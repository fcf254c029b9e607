"""Bulk reads of a layer file through the store's scan: the store's line index decides *which* lines exist and what
their ids are, and the store parses them (:meth:`~agentmem_nb.store.MessageFile.line_blocks`: a block whose lines
are all records goes to ``orjson`` as one JSON array, anything else line by line, exactly as the index parsed it).
This module only turns the blocks into ``(ids, records)`` chunks for the frame builder and counts what they cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentmem_nb.store import MessageFile

__all__ = ["ReadStats", "record_chunks", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20
"""Bytes per read and parse: large enough to amortise per-call costs, small enough to keep peak memory flat
(orjson builds its whole document tree before making Python objects: ~15x the input, transiently)."""


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
    file: MessageFile,
    *,
    start: int = 0,
    stop: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    stats: ReadStats | None = None,
) -> Iterator[tuple[np.ndarray, list[dict[str, Any]]]]:
    """``(message_ids, records)`` for positions ``start <= i < stop`` of ``file``, in file order, in chunks."""
    stats = stats if stats is not None else ReadStats()
    for block in file.line_blocks(start, stop, block_bytes=chunk_bytes):
        stats.bytes_read += len(block.data)
        records = block.records()
        if block.whole:
            stats.fast_chunks += 1
        else:
            stats.slow_chunks += 1
        stats.records += len(records)
        yield np.array(block.ids, dtype=np.int64), records
