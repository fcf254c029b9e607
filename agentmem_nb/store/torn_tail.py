"""A last line without its newline: how an append repairs what a crashed writer left.

**A crash mid-write loses nothing acknowledged.** A last line without its newline is not read; before the next
append it is moved (bytes intact, base64) to ``{file}.quarantine`` and the file is cut back to its last newline. A
complete JSON object that merely lacks the newline (a hand edit) gets its newline instead.

Readers never see the fragment: the index covers complete lines only (an unfinished last line is reported as
``UNTERMINATED_TAIL`` and not read), and the only bytes ever removed are such a fragment, so every index in every
process stays valid across another process's repair. The repair runs under the file's exclusive lock, from
:meth:`agentmem_nb.store.jsonl.JsonlFile.append`.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentmem_nb.store._fs import open_file
from agentmem_nb.store.lines import TAIL_CHUNK
from agentmem_nb.store.problems import Problem, ProblemKind

if TYPE_CHECKING:
    from agentmem_nb.store.jsonl import JsonlFile

__all__ = ["repair_tail", "last_newline_before", "quarantine", "write_all"]


def repair_tail(lines: JsonlFile, fd: int, size: int) -> int:
    """Deal with a last line that lacks its newline (the file is ``size`` bytes); returns the file size
    afterwards. Caller holds the lock."""
    if size == 0:
        return 0
    last = os.pread(fd, 1, size - 1)
    lines._count_read(1)
    if last == b"\n":
        return size
    cut = last_newline_before(fd, size, lines._count_read) + 1
    fragment = os.pread(fd, size - cut, cut)
    lines._count_read(len(fragment))
    try:
        complete = isinstance(json.loads(fragment.decode("utf-8")), dict)
    except (ValueError, RecursionError):
        complete = False
    if complete:
        write_all(fd, b"\n")
        lines._repairs.append(Problem(str(lines.path), ProblemKind.MISSING_NEWLINE_REPAIRED, 0,
                                      f"a complete last line had no newline; added one at byte {size}"))
        return size + 1
    quarantine(lines, fragment, cut)
    os.ftruncate(fd, cut)
    if lines.durability == "fsync":
        os.fsync(fd)
    lines._problems = [p for p in lines._problems if p.kind is not ProblemKind.UNTERMINATED_TAIL]
    lines._repairs.append(
        Problem(str(lines.path), ProblemKind.TORN_TAIL_QUARANTINED, 0,
                f"{len(fragment)} bytes of an unfinished last line at byte {cut} moved to "
                f"{lines.path.name}.quarantine")
    )
    lines._pending_tail = False
    return cut


def last_newline_before(fd: int, end: int, count_read: Callable[[int], None] | None = None) -> int:
    """Offset of the last ``\\n`` before ``end``, or -1. Reads backwards in small chunks, each told to
    ``count_read`` (if given)."""
    position = end
    while position > 0:
        size = min(TAIL_CHUNK, position)
        position -= size
        chunk = os.pread(fd, size, position)
        if count_read is not None:
            count_read(len(chunk))
        found = chunk.rfind(b"\n")
        if found >= 0:
            return position + found
    return -1


def quarantine(lines: JsonlFile, fragment: bytes, offset: int) -> None:
    """Keep ``fragment`` (found at byte ``offset``) in ``{file}.quarantine``, bytes intact, on stable storage."""
    from agentmem_nb.timeutil import format_ts, system_clock  # local: keeps the hot path import-free

    entry = {
        "quarantined_at": format_ts(system_clock()),
        "file": lines.path.name,
        "offset": offset,
        "length": len(fragment),
        "bytes_b64": base64.b64encode(fragment).decode("ascii"),
        "text": fragment.decode("utf-8", errors="replace"),
    }
    target = lines.path.with_name(lines.path.name + ".quarantine")
    fd = open_file(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, base=lines.base, mode=0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())  # the fragment must be safe before the data file is cut


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
