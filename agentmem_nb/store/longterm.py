"""Long-term memory: ``memory.md`` (the whole text) and ``memory.history.jsonl`` (every change, so nothing is lost).

``memory.md`` is replaced atomically (temp file + rename). Each change appends ``{ts, source, before, after}`` to the
history, under the user's directory lock so two processes adding notes at once both keep theirs.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path

from agentmem_nb.errors import StoreError
from agentmem_nb.store._fs import atomic_write, directory_lock
from agentmem_nb.store.jsonl import Durability, JsonlFile
from agentmem_nb.timeutil import Clock, format_ts, parse_ts

__all__ = ["MemoryVersion", "LongTermMemory"]


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One change of ``memory.md``. ``version`` is its 1-based number in the history."""

    version: int
    ts: _dt.datetime | None
    source: str
    before: str
    after: str


class LongTermMemory:
    """``memory.md`` of one user, with history and restore.

    >>> # lt = store.user("alice").long_term; lt.add_note("prefers tea"); lt.history()[-1].after
    """

    def __init__(self, directory: Path, *, clock: Clock, zone: _dt.tzinfo | None, durability: Durability) -> None:
        self.directory = directory
        self.path = directory / "memory.md"
        self._history = JsonlFile(directory / "memory.history.jsonl", durability=durability)
        self._clock = clock
        self._zone = zone
        self._fsync = durability == "fsync"

    def read(self) -> str:
        """The whole text (empty if there is none yet)."""
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
        except UnicodeDecodeError:
            return self.path.read_bytes().decode("utf-8", errors="replace")

    @property
    def version(self) -> int:
        """The number of the last recorded change of the text (0: none yet), to refer to it instead of copying it.

        Incremental: after the first call in a process only the history appended since is read.
        """
        return self._history.next_id - 1

    def lines(self) -> list[str]:
        """Non-empty lines of the text."""
        return [line for line in self.read().splitlines() if line.strip()]

    def write(self, text: str, *, source: str = "user") -> MemoryVersion | None:
        """Replace the whole text; returns the recorded change (``None`` if the text did not change)."""
        if not isinstance(text, str):
            raise StoreError(f"long-term memory must be text, got {type(text).__name__}")
        with directory_lock(self.directory):
            before = self.read()
            if before == text:
                return None
            return self._commit(before, text, source)

    def add_note(self, note: str, *, source: str = "remember_note") -> MemoryVersion | None:
        """Append ``note`` as a ``- note`` line (skipped when the same line is already there)."""
        note = " ".join(str(note).split())
        if not note:
            return None
        with directory_lock(self.directory):
            before = self.read()
            line = f"- {note}"
            if line in before.splitlines():
                return None
            after = before + ("" if not before or before.endswith("\n") else "\n") + line + "\n"
            return self._commit(before, after, source)

    def _commit(self, before: str, after: str, source: str) -> MemoryVersion:
        try:
            data = after.encode("utf-8")  # before anything is written: a text that cannot be stored changes nothing
        except UnicodeEncodeError as exc:
            raise StoreError(f"long-term memory text has an unencodable character {after[exc.start]!r} at position "
                             f"{exc.start}: remove it (lone surrogates cannot be stored as UTF-8)") from None
        now = self._clock()
        # History first: if we crash between the two steps, the change is recorded and restorable.
        record = self._history.append({"ts": format_ts(now.astimezone(self._zone) if self._zone else now.astimezone()),
                                       "source": source, "before": before, "after": after})
        atomic_write(self.path, data, fsync=self._fsync)
        return MemoryVersion(record["message_id"], now, source, before, after)

    def history(self) -> list[MemoryVersion]:
        """Every recorded change, oldest first."""
        out = []
        for version, record in self._history.iter_records():
            ts, _ = parse_ts(record.get("ts"), self._zone)
            out.append(MemoryVersion(version, ts, str(record.get("source", "")),
                                     str(record.get("before", "")), str(record.get("after", ""))))
        return out

    def restore(self, version: int, *, which: str = "after") -> MemoryVersion | None:
        """Make the text what it was after (or before) change number ``version``; itself a recorded change."""
        if which not in ("after", "before"):
            raise StoreError(f"which={which!r}: use 'after' or 'before'")
        pos = self._history.position_of(version)
        if pos is None:
            known = [v.version for v in self.history()]
            raise StoreError(f"no long-term memory version {version}; known versions: {known[:20]}")
        _, record = self._history.read_records(pos, pos + 1)[0]
        return self.write(str(record.get(which, "")), source=f"restore:{version}:{which}")

    def problems(self):  # noqa: ANN201 - list[Problem], imported lazily by the caller
        return self._history.problems()
