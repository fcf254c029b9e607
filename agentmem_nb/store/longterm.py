"""Long-term memory: ``memory.md`` (the whole text) and ``memory.history.jsonl`` (every change, so nothing is lost).

Why it looks like this:

* **Read-modify-write happens under the lock.** ``write(read() + line)`` from two processes loses one of the lines
  (106 of 240 in a 4-process test): both read the same text. :meth:`LongTermMemory.edit` applies a function to the
  current text while holding the user's directory lock; ``write(text, expected_version=N)`` is a compare-and-swap
  that raises :class:`~agentmem_nb.errors.VersionConflict` instead of overwriting a change it did not see.
* **The file first, then its history; a mismatch is repaired, not hidden.** ``memory.md`` is replaced atomically
  (temp file + rename) and only then is the change appended to the history, so a crash or a full disk can never leave
  a recorded version the file never had. A crash between the two steps (or an edit by hand) leaves a file that is not
  the last recorded version: every record carries a hash of its text, so the next change (or :meth:`current`) notices,
  first records the file's text as a ``source="repair"`` version, and ``problems()`` reports it. If the history append
  fails (a full disk), the file is put back and the call raises: a failed change changes nothing.
* **History grows with the size of each change.** A record stores the splice that turns the previous text into the
  new one (``at``, ``cut``, ``insert``: the common prefix and suffix are left out, so an appended note costs its own
  length whatever the size of ``memory.md``). A full copy of the text (a checkpoint) is written when the deltas since
  the last one add up to the size of the text, so checkpoints cost at most as much as the deltas (history stays linear
  in the total change) and rebuilding any version reads one checkpoint and less than a text's worth of deltas.
  Measured with 2,000 notes of 40 characters (86 kB of text): 0.8 MB of history, where full before/after texts
  took 172 MB.
* **Old histories still read.** Records written with full ``before``/``after`` texts (this project's earlier format)
  are checkpoints as they stand; a new delta record may follow them.
* **A file that is not UTF-8 is never rewritten.** Decoding cp1252 ("Besançon") as UTF-8 with replacement characters
  and writing that back destroyed the original bytes, history included. :meth:`read` still returns the text with
  U+FFFD in place of the bad bytes, so the prompt and the widgets show what they can, but every write refuses with
  :class:`~agentmem_nb.errors.UndecodableMemoryFile` (naming the file and the fix) and ``problems()`` reports it.

Record shapes in ``memory.history.jsonl`` (one JSON object a line, ``message_id`` = version number)::

    {"ts", "source", "at", "cut", "insert", "sha", "message_id"}           a delta on the previous version's text
    {"ts", "source", "before", "at", "cut", "insert", "sha", ...}           the first change of a pre-existing file
    {"ts", "source", "after", "sha", "message_id"}                          a checkpoint (also every repair)
    {"ts", "source", "before", "after", "message_id"}                       the earlier format: a checkpoint too

``sha`` is the BLAKE2b-128 hex digest of the version's UTF-8 text; ``at``/``cut`` count code points.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, overload

from agentmem_nb.errors import StoreError, UndecodableMemoryFile, UnsafeFileError, VersionConflict
from agentmem_nb.store._fs import atomic_write, directory_lock, read_file
from agentmem_nb.store.jsonl import Durability, JsonlFile
from agentmem_nb.store.problems import Problem, ProblemKind, problem_for_error
from agentmem_nb.timeutil import Clock, format_ts, parse_ts

__all__ = ["MemoryVersion", "MemorySnapshot", "MemoryHistory", "LongTermMemory", "note_edit"]

# What one delta record costs on disk besides its inserted text (keys, ts, hash, id): counted toward the next
# checkpoint so that many tiny deletions (no inserted text at all) still get a checkpoint now and then.
_RECORD_OVERHEAD = 160


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One change of ``memory.md``. ``version`` is its 1-based number in the history."""

    version: int
    ts: _dt.datetime | None
    source: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class MemorySnapshot:
    """The text of ``memory.md`` now and the version that names it (see :meth:`LongTermMemory.current`).

    ``version`` is the number of the change whose ``after`` is exactly ``text`` — ``0`` for the text before any
    recorded change (empty, or a file written before the history began) — so ``LongTermMemory.text_at(version)``
    gives ``text`` back later. ``None`` when no version can name it: the file is not UTF-8 (``text`` then holds
    U+FFFD for the bad bytes) or the history could not be written to record a change made outside the store.
    """

    version: int | None
    text: str


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


_BLOCK = 1 << 16


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix: block by block (C comparisons of 64K slices, not a Python loop per character),
    then by halving inside the first block that differs. O(prefix) work and O(block) extra memory."""
    n = min(len(a), len(b))
    i = 0
    while i < n:
        j = min(n, i + _BLOCK)
        if a[i:j] != b[i:j]:
            lo, hi = i, j - 1  # the prefix ends somewhere in [i, j)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if a[i:mid] == b[i:mid]:
                    lo = mid
                else:
                    hi = mid - 1
            return lo
        i = j
    return n


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most ``limit``: the mirror of :func:`_common_prefix`."""
    la, lb = len(a), len(b)
    i = 0
    while i < limit:
        j = min(limit, i + _BLOCK)
        if a[la - j:la - i] != b[lb - j:lb - i]:
            lo, hi = i, j - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if a[la - mid:la - i] == b[lb - mid:lb - i]:
                    lo = mid
                else:
                    hi = mid - 1
            return lo
        i = j
    return limit


def _splice_of(before: str, after: str) -> tuple[int, int, str]:
    """``(at, cut, insert)`` with ``after == before[:at] + insert + before[at + cut:]`` and the common prefix and
    suffix left out."""
    at = _common_prefix(before, after)
    tail = _common_suffix(before, after, min(len(before), len(after)) - at)  # the suffix may not overlap the prefix
    return at, len(before) - at - tail, after[at:len(after) - tail]


class _Replay:
    """A text being rebuilt from records. Appends (the common case: a new note) are collected and joined once, so
    replaying n appended notes costs O(total length), not O(n * length)."""

    __slots__ = ("_text", "_parts", "_length")

    def __init__(self, text: str) -> None:
        self._text = text
        self._parts: list[str] = []
        self._length = len(text)

    def text(self) -> str:
        if self._parts:
            self._text = "".join([self._text, *self._parts])
            self._parts = []
        return self._text

    def splice(self, at: int, cut: int, insert: str) -> None:
        if at == self._length and cut == 0:
            self._parts.append(insert)
        else:
            text = self.text()
            self._text = text[:at] + insert + text[at + cut:]
        self._length += len(insert) - cut


def _text_field(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) else None


def _splice_fields(record: dict[str, Any], base_length: int) -> tuple[int, int, str]:
    at, cut, insert = record.get("at"), record.get("cut"), record.get("insert")
    if (type(at) is not int or type(cut) is not int or not isinstance(insert, str) or at < 0 or cut < 0
            or at + cut > base_length):
        raise ValueError(f"splice at={at!r} cut={cut!r} does not fit a text of {base_length} characters")
    return at, cut, insert


def _apply(record: dict[str, Any], previous: _Replay) -> _Replay:
    """The text after ``record``, given the text before it (``previous``, which may be consumed)."""
    after = _text_field(record, "after")
    if after is not None:
        return _Replay(after)
    before = _text_field(record, "before")
    base = _Replay(before) if before is not None else previous
    base.splice(*_splice_fields(record, base._length))
    return base


def _is_checkpoint(record: dict[str, Any]) -> bool:
    """Whether the text after ``record`` can be rebuilt from the record alone."""
    return isinstance(record.get("after"), str) or isinstance(record.get("before"), str)


class _HistoryFile(JsonlFile):
    """``memory.history.jsonl`` with a small index of its own, kept up to date by the base class as lines are read:
    where the checkpoints are, which records are repairs, and how much delta has piled up since the last checkpoint."""

    def _on_reset(self) -> None:
        self.checkpoints: list[int] = []  # positions of records whose text needs no earlier record
        self.repairs: list[int] = []  # positions of source="repair" records
        self.since_checkpoint = 0  # bytes of delta (plus record overhead) since the last checkpoint

    def _on_record(self, record: dict[str, Any], message_id: int) -> None:
        self._note(record, len(self._ids) - 1)  # called after the base class indexed the record

    def _on_records(self, records: list[dict[str, Any]], ids: list[int]) -> bool:
        base = len(self._ids)  # the bulk path calls this before it extends the index
        for i, record in enumerate(records):
            self._note(record, base + i)
        return True

    def _note(self, record: dict[str, Any], position: int) -> None:
        if _is_checkpoint(record):
            self.checkpoints.append(position)
            self.since_checkpoint = 0
        else:
            insert = record.get("insert")
            self.since_checkpoint += (len(insert) if isinstance(insert, str) else 0) + _RECORD_OVERHEAD
        if record.get("source") == "repair":
            self.repairs.append(position)


def note_edit(note: str) -> Callable[[str], str] | None:
    """The edit that adds ``note`` as a ``- note`` line (unchanged text when that line is already there); ``None``
    for a blank note. The one rule of ``add_note``, for every backend."""
    note = " ".join(str(note).split())
    if not note:
        return None
    line = f"- {note}"

    def append_line(before: str) -> str:
        if line in before.splitlines():
            return before
        return before + ("" if not before or before.endswith("\n") else "\n") + line + "\n"

    return append_line


class VersionSource(Protocol):
    """What a :class:`MemoryHistory` reads its versions from (a backend's long-term memory)."""

    @property
    def path(self) -> object: ...

    def _version_at(self, position: int) -> MemoryVersion: ...

    def _iter_versions(self, length: int) -> Iterator[MemoryVersion]: ...


class MemoryHistory(Sequence[MemoryVersion]):
    """Every recorded change of ``memory.md``, oldest first — a lazy sequence, fixed at the length it had when
    :meth:`LongTermMemory.history` made it.

    Iterating rebuilds the versions one after the other from the deltas (memory: one text at a time, not every
    version at once); indexing (``history[-1]``) rebuilds one version from the nearest checkpoint. It compares equal
    to a list of the same :class:`MemoryVersion` values.
    """

    def __init__(self, owner: VersionSource, length: int) -> None:
        self._owner = owner
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> MemoryVersion: ...

    @overload
    def __getitem__(self, index: slice) -> list[MemoryVersion]: ...

    def __getitem__(self, index: int | slice) -> MemoryVersion | list[MemoryVersion]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(f"history index {index} out of range ({self._length} versions)")
        return self._owner._version_at(position)

    def __iter__(self) -> Iterator[MemoryVersion]:
        return self._owner._iter_versions(self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MemoryHistory | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compares by content, like a list

    def __repr__(self) -> str:
        return f"MemoryHistory({self._owner.path}, {self._length} versions)"


class LongTermMemory:
    """``memory.md`` of one user, with history and restore.

    >>> # lt = store.user("alice").long_term
    >>> # lt.add_note("prefers tea"); lt.edit(lambda text: text.replace("tea", "green tea"), source="edit")
    >>> # lt.history()[-1].after, lt.current().version
    """

    def __init__(self, directory: Path, *, clock: Clock, zone: _dt.tzinfo | None, durability: Durability,
                 name: str = "memory.md") -> None:
        # ``name``: the same versioned document under another file, e.g. the agent's standing instructions
        # (``instructions.md`` with ``instructions.history.jsonl``, see UserMemory.instructions).
        self.directory = directory
        self.path = directory / name
        self._history = _HistoryFile(directory / f"{Path(name).stem}.history.jsonl", durability=durability,
                                     base=directory.parent)
        self._clock = clock
        self._zone = zone
        self._fsync = durability == "fsync"

    # ------------------------------------------------------------------ reading the text

    def _read_bytes(self) -> bytes:
        """The file's bytes (empty if there is none); other failures become a StoreError naming the file."""
        try:
            return read_file(self.path, base=self.directory.parent)  # never through a link (see store._fs)
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror or exc} — check that it is a readable file "
                             "(not a folder) and its permissions") from exc

    def _read_strict(self) -> tuple[str, bytes]:
        data = self._read_bytes()
        try:
            return data.decode("utf-8"), data
        except UnicodeDecodeError as exc:
            raise UndecodableMemoryFile(self.path, exc.start, exc.reason) from None

    def read(self) -> str:
        """The whole text (empty if there is none yet), exactly as stored (no newline translation).

        A file that is not UTF-8 is returned with U+FFFD in place of the bytes that do not decode, so the prompt and
        the widgets show what can be shown; that text is for display only: every write refuses such a file (see
        :class:`~agentmem_nb.errors.UndecodableMemoryFile`) and ``problems()`` reports it. A file that cannot be
        read at all (permissions, a folder) raises :class:`~agentmem_nb.errors.StoreError` naming it.
        """
        return self._read_bytes().decode("utf-8", errors="replace")

    def lines(self) -> list[str]:
        """Non-empty lines of the text."""
        return [line for line in self.read().splitlines() if line.strip()]

    def current(self) -> MemorySnapshot:
        """The text now and the number of the version it is, read together under the lock (cheap: one read of the
        file and of the last history record).

        Use it to refer to long-term memory by version instead of copying it (a dialogue log line can keep
        ``version`` and get the text back with :meth:`text_at`), and for compare-and-swap with
        ``write(text, expected_version=snapshot.version)``. If the file was changed outside the store (an edit by
        hand, a crash between writing the file and its history), its text is first recorded as a repair version, so
        the number always names exactly this text. See :class:`MemorySnapshot` for when ``version`` is ``None``.
        """
        if not self.directory.exists():
            return MemorySnapshot(0, "")  # nothing yet; the lock would create the user's folder
        with directory_lock(self.directory):
            try:
                text, data = self._read_strict()
            except UndecodableMemoryFile:
                return MemorySnapshot(None, self.read())
            try:
                return MemorySnapshot(self._recorded_version(text, data), text)
            except (OSError, StoreError):  # the history cannot be written (read-only folder, full disk): no number names the text
                return MemorySnapshot(None, text)

    # ------------------------------------------------------------------ changing the text

    def write(self, text: str, *, source: str = "user", expected_version: int | None = None) -> MemoryVersion | None:
        """Replace the whole text; returns the recorded change (``None`` if the text did not change).

        With ``expected_version`` (from :meth:`current`), the write happens only if the text is still that version;
        otherwise it raises :class:`~agentmem_nb.errors.VersionConflict` and writes nothing. To change the text
        based on what it holds, prefer :meth:`edit`.
        """
        if not isinstance(text, str):
            raise StoreError(f"long-term memory must be text, got {type(text).__name__}")
        with directory_lock(self.directory):
            before, data = self._read_strict()
            if expected_version is not None:
                actual = self._recorded_version(before, data)
                if actual != expected_version:
                    raise VersionConflict(self.path, expected_version, actual)
            if before == text:
                return None
            return self._commit(before, data, text, source)

    def edit(self, change: Callable[[str], str], *, source: str = "user") -> MemoryVersion | None:
        """Replace the text with ``change(text)``, read and written under the user's lock, so a change made by another
        thread or process at the same time is never lost. Returns the recorded change (``None`` if none).

        >>> # lt.edit(lambda text: text + "- likes tea\\n", source="notebook")
        """
        with directory_lock(self.directory):
            before, data = self._read_strict()
            after = change(before)
            if not isinstance(after, str):
                raise StoreError(f"edit: the function must return the new text as str, got {type(after).__name__}; "
                                 "nothing was written")
            if after == before:
                return None
            return self._commit(before, data, after, source)

    def add_note(self, note: str, *, source: str = "remember_note") -> MemoryVersion | None:
        """Append ``note`` as a ``- note`` line (skipped when the same line is already there)."""
        append_line = note_edit(note)
        return None if append_line is None else self.edit(append_line, source=source)

    def _commit(self, before: str, before_data: bytes, after: str, source: str) -> MemoryVersion:
        """Record ``before -> after``. The caller holds the lock and read ``before`` (whose bytes are
        ``before_data``) from the file."""
        try:
            data = after.encode("utf-8")  # before anything is written: a text that cannot be stored changes nothing
        except UnicodeEncodeError as exc:
            raise StoreError(f"long-term memory text has an unencodable character {after[exc.start]!r} at position "
                             f"{exc.start}: remove it (lone surrogates cannot be stored as UTF-8)") from None
        self._recorded_version(before, before_data)  # a change made outside the store is recorded first
        now = self._clock()
        record: dict[str, Any] = {"ts": format_ts(now.astimezone(self._zone) if self._zone else now.astimezone()),
                                  "source": source}
        at, cut, insert = _splice_of(before, after)
        self._history.sync()
        with self._history._lock:
            since = self._history.since_checkpoint
            first = not self._history._ids
        if first and before:
            record["before"] = before  # a file written before the history began: keep the original
        if since + len(insert) + _RECORD_OVERHEAD >= len(after):
            record["after"] = after  # a checkpoint: the deltas since the last one add up to the text's size
        else:
            record.update(at=at, cut=cut, insert=insert)
        record["sha"] = _digest(data)
        # The file first: a crash before the history append leaves a file the next change records as a repair, never
        # a recorded version the file did not get.
        # atomic_write leaves the file as it was on failure and raises a StoreError naming it and the fix.
        atomic_write(self.path, data, fsync=self._fsync, base=self.directory.parent)
        try:
            written = self._history.append(record)
        except (OSError, StoreError) as exc:  # a full disk, or a history file the store refuses to open
            try:
                atomic_write(self.path, before_data, fsync=self._fsync, base=self.directory.parent)
                undone = "it was put back as it was"
            except StoreError:  # the disk refuses this too: the next change or current() records the file as a repair
                undone = "it could not be put back either; the next change records it as a repair"
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise StoreError(f"could not record the change of {self.path} in {self._history.path.name}: "
                             f"{reason}; {undone} (check free space and the folder's permissions)") from exc
        return MemoryVersion(written["message_id"], now, source, before, after)

    def _recorded_version(self, text: str, data: bytes) -> int:
        """The version whose text is ``text`` (the file's, read under the lock by the caller): the last recorded one
        when its hash matches, 0 when nothing is recorded yet, else a repair version recorded now."""
        count = len(self._history)
        if not count:
            return 0
        (version, record), = self._history.read_records(count - 1, count) or [(0, {})]
        if self._record_digest(record, count - 1) == _digest(data):
            return version
        repair = {"ts": format_ts(self._now()), "source": "repair", "after": text, "sha": _digest(data)}
        repaired: int = self._history.append(repair)["message_id"]  # the id append chose and wrote
        return repaired

    def _record_digest(self, record: dict[str, Any], position: int) -> str | None:
        sha = record.get("sha")
        if isinstance(sha, str):
            return sha
        after = _text_field(record, "after")
        if after is not None:  # the earlier format: no hash, the full text
            return _digest(after.encode("utf-8", errors="surrogatepass"))
        try:
            return _digest(self._version_at(position).after.encode("utf-8", errors="surrogatepass"))
        except StoreError:
            return None

    def _now(self) -> _dt.datetime:
        now = self._clock()
        return now.astimezone(self._zone) if self._zone else now.astimezone()

    # ------------------------------------------------------------------ versions

    def history(self) -> MemoryHistory:
        """Every recorded change, oldest first, as a lazy sequence (see :class:`MemoryHistory`): iterate it to walk
        every version with one text in memory at a time; ``history()[n]`` rebuilds one version."""
        return MemoryHistory(self, len(self._history))

    def version(self, version: int) -> MemoryVersion:
        """Change number ``version`` with its texts, rebuilt from the nearest checkpoint (it does not replay the
        history from its beginning)."""
        return self._version_at(self._position(version))

    def text_at(self, version: int) -> str:
        """The text of ``memory.md`` as version ``version`` left it; ``0`` is the text before the first recorded change
        (see :meth:`current`)."""
        if version == 0:
            if not len(self._history):
                return self.read()
            return self._version_at(0).before
        return self.version(version).after

    def restore(self, version: int, *, which: str = "after") -> MemoryVersion | None:
        """Make the text what it was after (or before) change number ``version``; itself a recorded change."""
        if which not in ("after", "before"):
            raise StoreError(f"which={which!r}: use 'after' or 'before'")
        old = self.version(version)
        return self.write(old.after if which == "after" else old.before, source=f"restore:{version}:{which}")

    def _position(self, version: int) -> int:
        position = self._history.position_of(version) if type(version) is int else None
        if position is None:
            known = [v for v, _ in zip(self._versions(), range(20))]
            raise StoreError(f"no long-term memory version {version!r}; known versions: {known}")
        return position

    def _versions(self) -> Iterator[int]:
        snapshot = self._history.index_snapshot()
        return iter(snapshot.ids.tolist())

    def _version_at(self, position: int) -> MemoryVersion:
        history = self._history
        history.sync()
        with history._lock:
            checkpoints = list(history.checkpoints)
        # The nearest checkpoint at or before the record before `position`: it gives that record's text (the
        # `before` of this one) without going back further.
        start = 0
        for candidate in reversed(checkpoints):
            if candidate <= max(position - 1, 0):
                start = candidate
                break
        records = history.read_records(start, position + 1)
        if len(records) != position + 1 - start:
            raise StoreError(f"{history.path} changed while version at position {position} was read; try again")
        text = _Replay("")
        previous = ""
        for i, (version, record) in enumerate(records):
            if start + i == position:
                previous = text.text()
            text = self._step(record, text, version)
        version, record = records[-1]
        return self._make_version(version, record, previous, self._checked(record, text.text(), version), position)

    def _checked(self, record: dict[str, Any], after: str, version: int) -> str:
        """``after`` if it is the text ``record`` recorded (its hash matches): a damaged line earlier in the history
        (skipped on read) would make the deltas after it rebuild a wrong text, and a wrong version is worse than
        none."""
        sha = record.get("sha")
        if isinstance(sha, str) and _digest(after.encode("utf-8", errors="surrogatepass")) != sha:
            raise StoreError(f"{self._history.path}: version {version} cannot be rebuilt exactly (a line before it "
                             "is damaged, see problems()); the versions from the next checkpoint on are intact")
        return after

    def _step(self, record: dict[str, Any], text: _Replay, version: int) -> _Replay:
        try:
            return _apply(record, text)
        except ValueError as exc:
            raise StoreError(f"{self._history.path}: version {version} cannot be replayed ({exc}); it and the "
                             "versions up to the next checkpoint cannot be rebuilt — see problems()") from None

    def _make_version(self, version: int, record: dict[str, Any], previous: str, after: str,
                      position: int) -> MemoryVersion:
        ts, _ = parse_ts(record.get("ts"), self._zone)
        before = _text_field(record, "before")
        return MemoryVersion(version, ts, str(record.get("source", "")),
                             previous if before is None else before, after)

    def _iter_versions(self, length: int) -> Iterator[MemoryVersion]:
        text = _Replay("")
        for position, (version, record) in enumerate(self._history.iter_records()):
            if position >= length:
                return
            previous = text.text()
            text = self._step(record, text, version)
            yield self._make_version(version, record, previous, self._checked(record, text.text(), version),
                                     position)

    # ------------------------------------------------------------------ problems

    def problems(self) -> list[Problem]:
        """What is wrong with ``memory.md`` and its history (never raises): a file that is not UTF-8 or cannot be
        read, a file that is not the last recorded version (repaired by the next change), repairs recorded so far,
        and the history file's own problems (bad lines)."""
        try:
            found = list(self._history.problems())
        except OSError as exc:  # the history file cannot be read (a folder, permissions): report, never raise
            found = [Problem(str(self._history.path), ProblemKind.HISTORY_DAMAGED, 0,
                             f"cannot read it: {exc.strerror or exc}")]
        path = str(self.path)
        try:
            data = self._read_bytes()
        except UnsafeFileError as exc:  # a link or special file: the finding the folder check makes too (reported once)
            return found + [problem_for_error(self.path, exc)]
        except StoreError as exc:
            return found + [Problem(path, ProblemKind.MEMORY_UNREADABLE, 0, str(exc))]
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            found.append(Problem(path, ProblemKind.MEMORY_UNDECODABLE, 0,
                                 str(UndecodableMemoryFile(self.path, exc.start, exc.reason))
                                 + "; until then it is shown with replacement characters and every change is refused"))
            return found
        try:
            return found + self._history_problems(path, data)
        except OSError as exc:  # the history file itself cannot be read (a folder, permissions): report, never raise
            return found + [Problem(str(self._history.path), ProblemKind.HISTORY_DAMAGED, 0,
                                    f"cannot read it: {exc.strerror or exc}")]

    def _history_problems(self, path: str, data: bytes) -> list[Problem]:
        found: list[Problem] = []
        count = len(self._history)
        with self._history._lock:
            repairs = list(self._history.repairs)
        if repairs:
            versions = self._history.index_snapshot().ids.tolist()
            shown = ", ".join(str(versions[p]) for p in repairs[:10]) + (" ..." if len(repairs) > 10 else "")
            found.append(Problem(path, ProblemKind.HISTORY_REPAIRED, 0,
                                 f"memory.md was changed outside the store (an edit by hand, or a crash between "
                                 f"writing it and its history); recorded as repair version(s) {shown}",
                                 len(repairs)))
        if count:
            try:
                (version, record), = self._history.read_records(count - 1, count)
                expected = self._record_digest(record, count - 1)
            except (ValueError, StoreError) as exc:  # ValueError: the record vanished while read (no single row)
                found.append(Problem(str(self._history.path), ProblemKind.HISTORY_DAMAGED, 0, str(exc)))
                return found
            if expected is None:
                found.append(Problem(str(self._history.path), ProblemKind.HISTORY_DAMAGED, 0,
                                     f"version {version} cannot be rebuilt from the history"))
            elif expected != _digest(data):
                found.append(Problem(path, ProblemKind.HISTORY_OUT_OF_STEP, 0,
                                     f"memory.md is not the last recorded version ({version}): it was changed outside "
                                     "the store; the next change records its text as a repair version first"))
        return found
