"""The problems report: what was wrong in a user's files and what the store did about it.

Reading never raises on bad data. Each file keeps a list of :class:`Problem` records; ``UserMemory.problems()``
gathers them, and a :class:`~agentmem_nb.errors.MemoryDataWarning` is issued when lines are skipped or moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from agentmem_nb.errors import UnsafeFileError

__all__ = ["ProblemKind", "Problem", "problem_for_error"]


class ProblemKind(str, Enum):
    """What kind of damage or legacy shape was met."""

    MALFORMED_JSON = "malformed_json"  # line skipped
    INVALID_UTF8 = "invalid_utf8"  # line skipped
    NOT_AN_OBJECT = "not_an_object"  # line skipped (a JSON list, number, ...)
    UNTERMINATED_TAIL = "unterminated_tail"  # last line without newline, not read; the next append quarantines it
    TORN_TAIL_QUARANTINED = "torn_tail_quarantined"  # moved to {file}.quarantine before an append
    MISSING_NEWLINE_REPAIRED = "missing_newline_repaired"  # complete last line without newline: newline added
    LEGACY_ID_NORMALISED = "legacy_id_normalised"  # missing / non-positive / junk message_id given the running id
    DUPLICATE_ID = "duplicate_id"  # a message_id already used by an earlier line (a hand-merged file); line kept
    BAD_TIMESTAMP = "bad_timestamp"  # unparseable ts, previous line's time used
    CORRUPT_DOCUMENT_REBUILT = "corrupt_document_rebuilt"  # conversations.json kept as .bak and rebuilt
    MEMORY_UNDECODABLE = "memory_undecodable"  # memory.md is not UTF-8: read with U+FFFD, every write refused
    MEMORY_UNREADABLE = "memory_unreadable"  # memory.md cannot be opened (permissions, a directory, ...)
    HISTORY_OUT_OF_STEP = "history_out_of_step"  # memory.md is not the last recorded version; the next change repairs
    HISTORY_REPAIRED = "history_repaired"  # a change made outside the store (hand edit, crash) was recorded as a repair
    HISTORY_DAMAGED = "history_damaged"  # a recorded version cannot be rebuilt from memory.history.jsonl
    UNSAFE_FILE = "unsafe_file"  # a link, FIFO, socket, device, or a folder where a file belongs: never opened
    UNREADABLE_FILE = "unreadable_file"  # the file exists but cannot be opened or read (permissions, I/O error)
    QUARANTINE_FILE = "quarantine_file"  # {layer}.quarantine holds fragments cut from a layer by earlier repairs
    ORPHANED_TEMP_FILE = "orphaned_temp_file"  # .{file}.XXXXXXXX.tmp left by a write that was killed
    INVALID_CONVERSATION_KEY = "invalid_conversation_key"  # a conversations.json key that is no session id: not listed
    INVALID_FACT_EVENT = "invalid_fact_event"  # a facts.jsonl event that names no fact or lacks its fields: skipped

    @property
    def skips_data(self) -> bool:
        """True when the problem means a line is not part of what reads return."""
        return self in {
            ProblemKind.MALFORMED_JSON,
            ProblemKind.INVALID_UTF8,
            ProblemKind.NOT_AN_OBJECT,
            ProblemKind.UNTERMINATED_TAIL,
            ProblemKind.TORN_TAIL_QUARANTINED,
            ProblemKind.UNSAFE_FILE,
            ProblemKind.UNREADABLE_FILE,
            ProblemKind.INVALID_FACT_EVENT,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding. ``line`` is the 1-based line number (0 when the finding is about the whole file);
    ``count`` aggregates repeated findings of the same kind (legacy rows are reported once per file, with a count)."""

    path: str
    kind: ProblemKind
    line: int
    detail: str
    count: int = 1

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        many = f" (x{self.count})" if self.count > 1 else ""
        return f"{where}: {self.kind.value}{many}: {self.detail}"


def problem_for_error(path: Path, exc: Exception) -> Problem:
    """The finding for a file that could not be read at all: ``exc`` is an
    :class:`~agentmem_nb.errors.UnsafeFileError` (reported at the entry it names) or another error (an ``OSError``
    such as a permission error, a ``StoreError``) reported at ``path``."""
    if isinstance(exc, UnsafeFileError):
        return Problem(str(exc.path), ProblemKind.UNSAFE_FILE, 0, f"{exc.found}: {exc.advice}")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return Problem(str(path), ProblemKind.UNREADABLE_FILE, 0,
                   f"cannot be read ({type(exc).__name__}: {reason}); nothing in it was read: fix its permissions "
                   "(or the disk) and check again")
