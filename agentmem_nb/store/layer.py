"""A message layer: one session thread or one day, with keyword search and anchor windows.

Search keeps a compact in-memory copy of every message's casefolded content (UTF-8 bytes joined by NUL) next to the
line index — built by the first search, then extended as lines arrive — so a keyword lookup is a C-speed ``rfind``
walking back from the newest message: finding the last ``limit`` hits touches only as much text as it must, and
nothing is re-read from disk except the hits themselves.
UTF-8 is self-synchronising, so a byte substring match is a character substring match (CJK included).

The layer **wraps** its line file (``_file``, a :class:`~agentmem_nb.store.jsonl.JsonlFile` with this module's index
hooks) instead of inheriting it: the raw line API (append a dict, with no ``ts`` and no day copy) stays internal, and
what a layer offers is the store contract's (:class:`agentmem_nb.store.contract.MessageLayer`): append a message
(with its time and its day copy), get, window, search, and ``scan`` for bulk readers.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import json
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Any

from agentmem_nb.identifiers import check_day
from agentmem_nb.items import LayerKind
from agentmem_nb.messages import EPOCH, Message, ToolCall, message_from_record
from agentmem_nb.store import index_cache
from agentmem_nb.store.index_cache import CachedText
from agentmem_nb.store.jsonl import Durability, IOStats, JsonlFile, LineBlock, RawLines
from agentmem_nb.store.scan import Cursor, Scan
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.timeutil import Clock, day_of, format_ts, parse_ts, system_clock, to_zone

__all__ = ["Appended", "LayerKind", "Window", "MessageFile", "MAX_WINDOW_SIDE", "MAX_SEARCH_LIMIT"]

MAX_WINDOW_SIDE = 50
"""The store's hard cap: ``before`` and ``after`` of any window are clamped to this, whoever asks (a window is for
context around an anchor, not for bulk export). The agent's tools offer the model less, ``TOOL_WINDOW_SIDE_CAP`` in
:mod:`agentmem_nb.agent.tools`; the neighbours a search brings are ``DEFAULT_BEFORE``/``DEFAULT_AFTER`` in
:mod:`agentmem_nb.retrieval.retriever`."""

MAX_SEARCH_LIMIT = 500
"""The most hits (or, for a ranked search, messages) one search returns."""

_SEPARATOR = b"\x00"


def _folded(text: str) -> bytes:
    """The searchable form of a text (content and keyword alike): casefolded UTF-8 without NUL, the separator.

    NUL becomes U+FFFF (a noncharacter) on both sides, so a keyword with NUL still matches only content with NUL,
    never across two messages or a space; lone surrogates (JSON escapes such as \\ud800) keep their own bytes
    instead of all turning into "?".
    """
    return text.casefold().replace("\x00", "\uffff").encode("utf-8", errors="surrogatepass")


@dataclass(frozen=True, slots=True)
class Window:
    """The messages around an anchor, anchor included, in file order.

    ``reason`` is empty when the anchor was found; otherwise it says why ``messages`` is empty.
    """

    anchor_id: int
    messages: tuple[Message, ...]
    before: int
    after: int
    reason: str = ""

    @property
    def anchor(self) -> Message | None:
        """The anchor message itself, if found."""
        return next((m for m in self.messages if m.message_id == self.anchor_id), None)

    def __bool__(self) -> bool:
        return bool(self.messages)


def _readable_ts(raw: object, zone: _dt.tzinfo | None) -> bool:
    """Whether ``parse_ts`` will accept ``raw`` — without the cost of converting every line to the zone while
    indexing (only a moment at the calendar's edge can fail the conversion, so only those are converted)."""
    if not isinstance(raw, str):
        return False
    try:
        moment = _dt.datetime.fromisoformat(raw)
    except ValueError:
        return False
    return 1 < moment.year < 9999 or parse_ts(raw, zone)[0] is not None


def _all_plainly_readable(raw: list[object]) -> bool:
    """Whether every ``ts`` is an ISO string away from the calendar's edges: ``_readable_ts`` is then true for each
    (checked in one C-level pass; the edge years need the zone conversion, so they take the per-record path)."""
    if set(map(type, raw)) != {str}:
        return False
    try:
        # ignore: `raw` is list[object], but every item is a str (checked above).
        years: set[int] = set(map(_YEAR, map(_dt.datetime.fromisoformat, raw)))  # type: ignore[arg-type]
    except ValueError:
        return False
    return 1 < min(years) and max(years) < 9999


_YEAR = attrgetter("year")


def _fold_block(records: list[dict[str, Any]], text: bytearray | CachedText, starts: array[int]) -> bool:
    """Append the searchable form (:func:`_folded` + separator) of every record's content to ``text``, and where
    each starts to ``starts``, in one pass; return ``False`` having appended nothing when some content is not a
    string or holds a NUL (the per-record path handles those)."""
    contents: list[Any] = list(map(dict.get, records, repeat("content")))  # JSON values: strs once checked below
    if set(map(type, contents)) != {str}:
        return False
    # Each content folded on its own (casefold sizes its work buffer for the worst case, so one call on a megabyte
    # of text would allocate and fault in tens of megabytes). casefold works character by character, never makes
    # or removes a NUL, and NUL (the separator) is the only character that encodes to a zero byte.
    joined = "\x00".join(map(str.casefold, contents))
    if joined.count("\x00") != len(contents) - 1:  # a NUL inside some content: _folded's replacement needed
        return False
    folded = joined.encode("utf-8", errors="surrogatepass") + _SEPARATOR
    base = len(text)
    starts.append(base)
    at = folded.find(_SEPARATOR)
    while at + 1 < len(folded):  # one find() per record: C-speed search, no Python work per byte
        starts.append(base + at + 1)
        at = folded.find(_SEPARATOR, at + 1)
    text.extend(folded)
    return True


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


@dataclass(frozen=True, slots=True)
class Appended:
    """What an append wrote: the session line and the daily line (each with its own id)."""

    session: Message
    daily: Message


class _MessageLines(JsonlFile):
    """A layer's line file: the raw line API, with the layer's index hooks (private: the layer is the API)."""

    def __init__(self, layer: MessageFile, path: Path, *, durability: Durability, base: Path | None) -> None:
        self._layer = layer
        super().__init__(path, durability=durability, base=base)

    def _on_reset(self) -> None:
        self._layer._on_reset()

    def _on_record(self, record: dict[str, Any], message_id: int) -> None:
        self._layer._on_record(record, message_id)

    def _on_records(self, records: list[dict[str, Any]], ids: list[int]) -> bool:
        return self._layer._on_records(records, ids)

    def _cache_state(self) -> dict[str, Any]:
        return self._layer._cache_state()

    def _adopt_cached(self, state: object) -> bool:
        return self._layer._adopt_cached(state)


class MessageFile:
    """``sessions/{id}.jsonl`` or ``daily/{day}.jsonl``: messages with anchors.

    A session layer appends a message with its time and its day copy, the same path as :meth:`UserMemory.append`:

    >>> # store.user("alice").session("s1").append("user", "I moved to Lyon")
    >>> # store.user("alice").session("s1").search("lyon")
    """

    def __init__(
        self,
        path: Path,
        *,
        kind: LayerKind,
        key: str,
        zone: _dt.tzinfo | None,
        durability: Durability = "flush",
        base: Path | None = None,
        clock: Clock = system_clock,
        day_layer: Callable[[str], MessageFile] | None = None,
    ) -> None:
        self.kind = kind
        self._want_text = False
        self.key = key  # the session id or the day
        self.zone = zone
        self.clock = clock
        self._day_layer = day_layer  # day -> that day's layer, for the day copy (a session layer of a user)
        self._file = _MessageLines(self, path, durability=durability, base=base)
        self._file._cache_path = partial(index_cache.cache_path, path)  # the index and search text persist

    def __repr__(self) -> str:
        return f"MessageFile(kind={self.kind!r}, key={self.key!r}, path={str(self.path)!r})"

    # ------------------------------------------------------------------ the file underneath

    @property
    def path(self) -> Path:
        """The layer's file."""
        return self._file.path

    @property
    def stats(self) -> IOStats:
        """What reading and indexing this file cost (bytes and reads, for cost tests and benchmarks)."""
        return self._file.stats

    @property
    def _lock(self) -> threading.RLock:
        return self._file._lock

    @property
    def _inode(self) -> tuple[int, int] | None:
        return self._file._inode

    @property
    def _ids(self) -> array[int]:
        return self._file._ids

    def _problem(self, kind: ProblemKind, detail: str) -> None:
        self._file._problem(kind, detail)

    def __len__(self) -> int:
        return len(self._file)

    @property
    def next_id(self) -> int:
        """The id the next append will get if nobody else appends first."""
        return self._file.next_id

    def sync(self) -> None:
        """Bring the index up to date with the file (reads only bytes not indexed yet)."""
        self._file.sync()

    def problems(self) -> list[Problem]:
        """What was wrong with this file; never raises (see :meth:`JsonlFile.problems`)."""
        return self._file.problems()

    def position_of(self, message_id: int) -> int | None:
        """Index (0-based, file order) of the first message with ``message_id``; ``None`` if absent."""
        return self._file.position_of(message_id)

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, record)`` at positions ``start <= i < stop``, for bulk readers (one contiguous read)."""
        return self._file.read_records(start, stop)

    def read_at(self, positions: list[int]) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, record)`` at arbitrary positions (one seek each), for bulk readers."""
        return self._file.read_at(positions)

    def scan(self, since: Cursor | None = None) -> Scan:
        """What changed since ``since``: see :meth:`JsonlFile.scan` (the one rule for appended / rewritten /
        truncated lives there)."""
        return self._file.scan(since)

    def line_blocks(self, start: int = 0, stop: int | None = None, *, block_bytes: int = 1 << 20
                    ) -> Iterator[LineBlock]:
        """Raw lines of the records at positions ``start <= i < stop``, in blocks (:meth:`JsonlFile.line_blocks`)."""
        return self._file.line_blocks(start, stop, block_bytes=block_bytes)

    def raw_lines(self, since: Cursor | None = None) -> AbstractContextManager[RawLines]:
        """Complete lines appended since ``since``, without the index (:meth:`JsonlFile.raw_lines`)."""
        return self._file.raw_lines(since)

    # ------------------------------------------------------------------ append

    def append(
        self,
        role: str,
        content: str = "",
        *,
        tags: Iterable[str] = (),
        meta: Mapping[str, Any] | None = None,
        tool_calls: Sequence[ToolCall] = (),
        ts: _dt.datetime | None = None,
        day: str | None = None,
    ) -> Appended:
        """Write one message to this session and its day copy to the day file; returns both as read back.

        ``ts`` defaults to the store's clock; ``day`` lets a caller pin the day file (a turn that crosses midnight
        stays in one day), by default the day of ``ts`` in the user's zone. Only a session is appended to: a day
        file gets its lines as the copies of session messages.
        """
        if not isinstance(role, str):
            raise TypeError(f"append(role, content): role must be text, got {type(role).__name__} {role!r:.80}; "
                            "pass the role and the text, e.g. session.append('user', 'hello') — the store adds the "
                            "time, the id and the day copy")
        if self.kind != "session" or self._day_layer is None:
            raise TypeError(f"{self.kind} {self.key!r}: a day file is written through a session (each message gets "
                            "its day copy): use store.user(user_id).session(session_id).append(role, content)")
        moment = to_zone(ts or self.clock(), self.zone)
        day = check_day(day) if day is not None else day_of(moment, self.zone)
        extra = dict(meta or {})
        if tool_calls:
            extra["tool_calls"] = [call.to_dict() for call in tool_calls]
        extra["session_id"] = self.key
        line = {"ts": format_ts(moment), "role": str(role), "content": str(content)}
        tags = list(tags)
        daily = self._day_layer(day)
        # A day file the store would refuse (a link, a FIFO) is refused before the session line is written, so a
        # refused append leaves neither half behind. (The session file is checked by its own open, which comes first.)
        # The check holds the day file's lock until its line is written, and a day file already open (a kept
        # descriptor, see _fs.KeptFile) is checked once, not again by its append.
        with daily._file.checked_for_append() as checked:
            session_record = self._file.append({**line, "tags": ["session", *tags], "meta": extra})
            daily_record = daily._file.append({**line, "tags": ["daily", *tags], "meta": extra}, checked=checked)
        return Appended(session=self._message(session_record["message_id"], session_record),
                        daily=daily._message(daily_record["message_id"], daily_record))

    # ------------------------------------------------------------------ index hooks

    def _on_reset(self) -> None:
        # Casefolded content of every record, NUL-separated, with where each record starts. Built on the first
        # search, not while indexing: a window or a tail (the agent's context, a cold open) never pays for it.
        # Once searched, the text is kept through index rebuilds and filled by the same pass that builds the index.
        self._text: bytearray | CachedText | None = bytearray() if self._want_text else None
        self._text_starts = array("q")
        self._last_good_ts: object = None  # the raw ts of the last readable line; parsed only when a bad one needs it
        # id -> time to show for a line whose ts is unreadable (the last good one before it), so a window or a search
        # hit shows the same time as a full read, whichever line the read starts at. Only bad lines are stored.
        self._fallback_ts: dict[int, _dt.datetime] = {}
        self._text_saved = 0  # records whose search text is known to be in the persisted cache

    def _on_record(self, record: dict[str, Any], message_id: int) -> None:
        if self._text is not None:
            self._add_text(self._text, record)
        raw_ts = record.get("ts")
        if _readable_ts(raw_ts, self.zone):
            self._last_good_ts = raw_ts
        else:
            self._problem(ProblemKind.BAD_TIMESTAMP, f"unreadable ts {raw_ts!r}; the previous line's time is used")
            previous, _ = parse_ts(self._last_good_ts, self.zone)
            self._fallback_ts.setdefault(message_id, previous or EPOCH)

    def _on_records(self, records: list[dict[str, Any]], ids: list[int]) -> bool:
        # The bulk form of _on_record for a block of plain records: every ts readable without a calendar-edge check,
        # every content a string without NUL. Anything else goes back to the per-record path, which reports it.
        raw_ts = list(map(dict.get, records, repeat("ts")))
        if not _all_plainly_readable(raw_ts):
            return False
        if self._text is not None and not _fold_block(records, self._text, self._text_starts):
            return False
        self._last_good_ts = raw_ts[-1]
        return True

    def _cache_state(self) -> dict[str, Any]:
        return {"last_good_ts": self._last_good_ts}

    def _adopt_cached(self, state: object) -> bool:
        if not isinstance(state, dict) or not isinstance(state.get("last_good_ts"), (str, type(None))):
            return False
        self._last_good_ts = state["last_good_ts"]
        self._text = None  # the search text of the cached records comes from its own cache, or is built, on use
        return True

    def _add_text(self, text: bytearray | CachedText, record: dict[str, Any]) -> None:
        content = record.get("content")
        if not isinstance(content, str):
            # Search what a read shows: message_from_record renders non-text content as JSON (str() would give
            # Python's repr, e.g. {'k': 'v'}, and '"k"' would not be found in the content it displays).
            content = "" if content is None else json.dumps(content, ensure_ascii=False)
        self._text_starts.append(len(text))
        text.extend(_folded(content))
        text.extend(_SEPARATOR)

    def _search_text(self) -> tuple[bytearray | CachedText, array[int]]:
        """The search text, built from the indexed records on first use (caller holds the lock, index synced);
        from then on the index hook extends it as records arrive. A persisted copy (index_cache) stands in for the
        records it covers."""
        if self._text is None:
            text: bytearray | CachedText
            cached = index_cache.load_search_text(self._file)
            text, self._text_starts = cached or (bytearray(), array("q"))
            self._text_saved = len(self._text_starts) if cached else 0
            total = len(self._ids)
            for start in range(len(self._text_starts), total, 4096):
                records = [record for _mid, record in self.read_records(start, min(total, start + 4096))]
                if not _fold_block(records, text, self._text_starts):
                    for record in records:
                        self._add_text(text, record)
            self._text = text
        self._text_saved = index_cache.keep_search_text(self._file, self._text, self._text_starts, self._text_saved)
        return self._text, self._text_starts

    # ------------------------------------------------------------------ conversion

    def _message(self, message_id: int, record: dict[str, Any], fallback: _dt.datetime = EPOCH) -> Message:
        if self.kind == "session":
            msg = message_from_record(record, message_id=message_id, zone=self.zone, fallback_ts=fallback,
                                      session_id=self.key)
        else:
            msg = message_from_record(record, message_id=message_id, zone=self.zone, fallback_ts=fallback,
                                      day=self.key)
        return msg

    def _messages(self, pairs: list[tuple[int, dict[str, Any]]]) -> list[Message]:
        out: list[Message] = []
        fallback = EPOCH
        for mid, record in pairs:
            msg = self._message(mid, record, self._fallback_ts.get(mid, fallback))
            fallback = msg.ts
            out.append(msg)
        return out

    # ------------------------------------------------------------------ reads

    def messages(self) -> list[Message]:
        """Every readable message, in file order (reads the whole file: prefer window/search/recent)."""
        return self._messages(list(self._file.iter_records()))

    def head(self, count: int) -> list[Message]:
        """The first ``count`` messages, in file order."""
        return self._messages(self.read_records(0, max(0, count)))

    def tail(self, count: int) -> list[Message]:
        """The last ``count`` messages, in file order."""
        self.sync()
        total = len(self._ids)
        count = max(0, count)
        return self._messages(self.read_records(total - count, total)) if count else []

    def recent(self, rounds: int = 3) -> list[Message]:
        """The last ``rounds`` rounds (a round is a user message and its reply: ``2 * rounds`` messages)."""
        return self.tail(2 * max(0, rounds))

    def get(self, message_id: int) -> Message | None:
        """The message with this id, or ``None``."""
        pos = self.position_of(message_id)
        return None if pos is None else self._messages(self.read_records(pos, pos + 1))[0]

    def window(self, message_id: int, before: int = 2, after: int = 2) -> Window:
        """The anchor and up to ``before`` messages before it and ``after`` after it (positional, clamped).

        ``before``/``after`` are clamped to ``0..MAX_WINDOW_SIDE``. An unknown anchor gives an empty window whose
        ``reason`` says so; nothing raises.
        """
        before = _clamp(int(before), 0, MAX_WINDOW_SIDE)
        after = _clamp(int(after), 0, MAX_WINDOW_SIDE)
        pos = self.position_of(message_id)
        if pos is None:
            total = len(self)
            where = f"{self.kind} {self.key!r}"
            if total == 0:
                reason = f"{where} has no messages"
            else:
                reason = (f"no message #{message_id} in {where} (ids run from {self._ids[0]} to {self._ids[-1]}); "
                          "search first and use a message_id from a hit")
            return Window(message_id, (), before, after, reason)
        records = self.read_records(pos - before, pos + after + 1)
        return Window(message_id, tuple(self._messages(records)), before, after)

    def search(self, keyword: str, *, limit: int = 20) -> list[Message]:
        """Messages whose content contains ``keyword`` (casefolded substring), the **last** ``limit`` of them,
        in chronological order. An empty keyword returns the last ``limit`` messages.

        Whitespace around the keyword is not part of it (``" 找工作 "`` finds 找工作), as in the original demo: this
        is the one place the rule lives, so every keyword search (user, tools, retrieval, CLI) goes through it.
        """
        limit = _clamp(int(limit), 0, MAX_SEARCH_LIMIT)
        with self._lock:
            if not self._want_text:
                self._want_text = True
                if self._inode is None and self._text is None:
                    self._text = bytearray()  # never indexed: let the one indexing pass fill the search text too
        self.sync()
        needle = _folded(keyword.strip())  # str.strip: Unicode spaces too (U+3000, the CJK full-width one)
        if not needle:
            return self.tail(limit)
        positions: list[int] = []
        with self._lock:
            text, starts = self._search_text()
            end = len(text)
            while len(positions) < limit:
                found = text.rfind(needle, 0, end)
                if found < 0:
                    break
                pos = bisect.bisect_right(starts, found) - 1
                positions.append(pos)
                end = starts[pos]  # continue before this message: one hit per message
        positions.reverse()
        return self._messages(self.read_at(positions))

    def first_and_last(self) -> tuple[Message, Message] | None:
        """The first and last messages (cheap: two positional reads). ``None`` for an empty layer."""
        total = len(self)
        if not total:
            return None
        first = self._messages(self.read_records(0, 1))[0]
        last = self._messages(self.read_records(total - 1, total))[0]
        return first, last
