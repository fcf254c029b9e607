"""The problems report: what was wrong in a user's files and what the store did about it.

Reading never raises on bad data. Each file keeps a list of :class:`Problem` records; ``UserMemory.problems()``
gathers them, and a :class:`~agentmem_nb.errors.MemoryDataWarning` is issued when lines are skipped or moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["ProblemKind", "Problem"]


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

    @property
    def skips_data(self) -> bool:
        """True when the problem means a line is not part of what reads return."""
        return self in {
            ProblemKind.MALFORMED_JSON,
            ProblemKind.INVALID_UTF8,
            ProblemKind.NOT_AN_OBJECT,
            ProblemKind.UNTERMINATED_TAIL,
            ProblemKind.TORN_TAIL_QUARANTINED,
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
