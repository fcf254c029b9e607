"""The next ``message_id`` from a file's tail, without reading the file: the ``byte_offset`` anchor.

**Append costs the same at line 10 and at line 10 million, and gives the id a full read would.** The rule is the
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

The warm path (an index already built) needs none of this: the next id is the index's. This is the cold path of
:meth:`agentmem_nb.store.jsonl.JsonlFile.append`, the first append of a process to a file it has not read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from agentmem_nb.store.lines import TAIL_CHUNK, usable_id

__all__ = ["ANCHOR_KEY", "next_id_from_tail", "tail_record", "is_anchor"]

ANCHOR_KEY = "byte_offset"
"""The key of a store-written line that says where the line starts (the tail's proof, see the module docstring)."""


def tail_record(raw: bytes) -> dict[str, Any] | None:
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


def is_anchor(record: dict[str, Any], given: int | None, offset: int) -> bool:
    """Whether ``record`` (starting at byte ``offset``, with usable id ``given``) was appended by this store at the
    place it still is: then ``given`` was the running next id of every byte before it."""
    stated = record.get(ANCHOR_KEY)
    return given is not None and type(stated) is int and stated == offset



def next_id_from_tail(fd: int, size: int, count_read: Callable[[int], None]) -> int | None:
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
        step = min(TAIL_CHUNK, position)
        position -= step
        chunk = os.pread(fd, step, position)
        count_read(len(chunk))
        if position > 0 and b"\n" not in chunk:
            pieces.insert(0, chunk)  # still inside one long line: keep reading back without re-joining
            continue
        data = chunk + b"".join(pieces)
        lines = data.split(b"\n")
        # Where each piece starts in the file: piece k after k pieces and their newlines.
        starts = list(accumulate((len(piece) + 1 for piece in lines), initial=position))
        first = 1 if position > 0 else 0  # the first piece is the end of a line that starts further back
        for n in range(len(lines) - 1, first - 1, -1):
            record = tail_record(lines[n])
            if record is None:
                continue
            given = usable_id(record.get("message_id"))
            if given is not None and is_anchor(record, given, starts[n]):  # (an anchor always has an id)
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
