"""Per-saver readers of a LangGraph thread's *writes*: the linear path behind the thread frames of ``frames.langgraph``.

Why this exists: a checkpoint holds the whole state, so ``BaseCheckpointSaver.list()`` decodes about n²/2 messages
for a thread of n steps (9.2 s at 1,000 steps, ``benchmarks/LANGGRAPH.md``). What each step *added* is stored apart,
as the writes of the step's tasks, filed under the checkpoint the step started from. A reader here reads, for one
thread's top-level namespace:

* every checkpoint's id, parent, step and time, without its state (InMemorySaver keeps the state in ``blobs`` apart;
  SQLite keeps it inline, so only the first bytes of the blob, where ``ts`` lies, are parsed; PostgreSQL's JSONB
  column is asked for ``ts`` alone);
* the values written to the messages channel under each checkpoint, decoded with the saver's own ``serde``;
* the latest checkpoint's message list, decoded once.

:func:`place` then replays the writes in the order LangGraph applies them (``writes_sort_key``) through the rules of
``add_messages`` — kept as an index by id, so a step costs what it wrote, not the length of the list — and gives each
message of the latest state the first checkpoint whose state held it, which is what the public walk gives. Messages
written without an id get a random one from ``add_messages`` (a different one each run), so the replay matches the
latest list *by position*, checking type and content.

Anything a reader does not understand makes it answer ``None`` and the caller falls back to the public walk over
``list()`` (exact, quadratic): a saver subclass (its storage may differ; readers are chosen by exact type), a forked
history (not one chain of parents), a serializer whose type tag is not ``msgpack`` where bytes are parsed, an
``Overwrite`` or a removal of an unknown id, a channel whose version did not move though writes were filed, a latest
value that is not a list, and above all a replay whose result is not the latest list (another reducer than
``add_messages``, ``format="langchain-openai"``, a message replaced through an id the reducer gave it …). Equality
with the public walk is pinned by ``tests/frames/test_frames_langgraph_readers.py``.

The readers (and ``_lg_stores``) use LangGraph's private parts: ``InMemorySaver.storage``'s layout, the SQL tables,
``PostgresSaver._cursor``. A LangGraph release that changes them makes a read fail, not give a wrong frame: the
callers run each fast read through :func:`fast`, which turns the errors such a change raises into ``None``, so the
public walk reads the thread instead.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

__all__ = ["Point", "ThreadLog", "MemoryReader", "reader_for", "place", "message_counts", "fast", "MISSING"]

_T = TypeVar("_T")

MISSING: Any = object()
"""The channel holds nothing at a checkpoint (or the saver cannot say cheaply, for :attr:`Point.version`)."""

Where = tuple[int, str, _dt.datetime]


@dataclass(frozen=True, slots=True)
class Point:
    """One top-level checkpoint of a thread, without its state."""

    id: str
    parent: str | None
    step: int | None  # None: the metadata has no step (the thread frame shows NA; the replay places it at -1)
    ts: str
    version: Any  # the messages channel's version here; MISSING when the saver cannot tell without decoding the state


@dataclass(frozen=True, slots=True)
class ThreadLog:
    """What the replay needs: the checkpoints oldest first, the channel's writes, and its latest value."""

    points: list[Point]
    writes: dict[str, list[Any]]  # checkpoint id -> values written to the channel under it, in the order applied
    latest: Any  # the last checkpoint's channel value, MISSING when absent


class Reader(Protocol):
    """What a per-saver reader offers (``None``: not understood here, read through the public API instead)."""

    def thread_log(self, thread_id: str, channel: str) -> ThreadLog | None: ...

    def all_points(self) -> dict[str, list[Point]] | None: ...


def _step(metadata: Any) -> int | None:
    step = metadata.get("step") if metadata else None
    return None if step is None else int(step)


def fast(read: Callable[[], _T | None]) -> _T | None:
    """``read()`` — a read of a saver's or store's own data —, or ``None`` when it fails the way a change of the
    LangGraph internals it relies on fails (the caller then reads through the public API, which is exact)."""
    changed: tuple[type[BaseException], ...] = (AttributeError, ImportError, KeyError, TypeError, ValueError,
                                                 sqlite3.Error)
    psycopg = sys.modules.get("psycopg")  # a psycopg error can only come from a psycopg already imported
    if psycopg is not None:
        changed += (psycopg.Error,)
    try:
        return read()
    except changed:  # narrow on purpose: a private attribute or module gone, a column or a row layout changed; the
        return None  # public walk gives the same frame, slower (an error of the public API then still surfaces)


def _sort_key(task_path: str, task_id: str, idx: int) -> tuple[str, str, int]:
    from langgraph.checkpoint.base import writes_sort_key

    return writes_sort_key(task_path, task_id, idx)


# ---------------------------------------------------------------------------------------------------- InMemorySaver


class MemoryReader:
    """``InMemorySaver``: ``storage[thread][ns][id] = (checkpoint without values, metadata, parent)``, the values in
    ``blobs[(thread, ns, channel, version)]``, the writes in ``writes[(thread, ns, id)][(task, idx)]``."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver

    def _points(self, thread_id: str, channel: str) -> list[Point] | None:
        serde = self.saver.serde
        found = self.saver.storage.get(thread_id, {}).get("", {})  # .get: storage is a defaultdict; never create
        points = []
        for cid in sorted(found):
            checkpoint_b, metadata_b, parent = found[cid]
            checkpoint = serde.loads_typed(checkpoint_b)  # small: the values were popped into blobs by put()
            if checkpoint.get("id") != cid:
                return None
            points.append(Point(cid, parent, _step(serde.loads_typed(metadata_b)), checkpoint["ts"],
                                checkpoint.get("channel_versions", {}).get(channel, MISSING)))
        return points

    def thread_log(self, thread_id: str, channel: str) -> ThreadLog | None:
        points = self._points(thread_id, channel)
        if points is None:
            return None
        serde = self.saver.serde
        writes: dict[str, list[Any]] = {}
        for point in points[:-1]:  # writes filed under the last checkpoint are pending: in no state yet
            stored = self.saver.writes.get((thread_id, "", point.id))
            if not stored:
                continue
            ordered = sorted(stored.items(), key=lambda kv: _sort_key(kv[1][3], kv[0][0], kv[0][1]))
            values = [serde.loads_typed(w[2]) for _, w in ordered if w[1] == channel]
            if values:
                writes[point.id] = values
        latest = MISSING
        if points and points[-1].version is not MISSING:
            blob = self.saver.blobs.get((thread_id, "", channel, points[-1].version))
            if blob is not None and blob[0] != "empty":
                latest = serde.loads_typed(blob)
        return ThreadLog(points, writes, latest)

    def history(self, thread_id: str, channel: str) -> list[tuple[Any, Any, str | None, int, dict[str, Any]]] | None:
        """Each top-level checkpoint, oldest first: (checkpoint without values, metadata, parent id, messages held,
        the other channels' values) — the message counts from the replay, each other value decoded once per version
        (so two rows where a channel did not change share one object, as they share one blob)."""
        log = self.thread_log(thread_id, channel)
        counts = message_counts(log) if log is not None else None
        if log is None or counts is None:
            return None
        serde, blobs = self.saver.serde, self.saver.blobs
        found = self.saver.storage.get(thread_id, {}).get("", {})
        decoded: dict[tuple[str, Any], Any] = {}
        rows = []
        for point, count in zip(log.points, counts):
            checkpoint_b, metadata_b, parent = found[point.id]
            checkpoint = serde.loads_typed(checkpoint_b)
            values: dict[str, Any] = {}
            for name, version in checkpoint.get("channel_versions", {}).items():
                if name == channel or name.startswith(("branch:", "__")):
                    continue  # the frame leaves these out of ``values``
                if (name, version) not in decoded:
                    blob = blobs.get((thread_id, "", name, version))
                    decoded[name, version] = MISSING if blob is None or blob[0] == "empty" else serde.loads_typed(blob)
                if decoded[name, version] is not MISSING:
                    values[name] = decoded[name, version]
            rows.append((checkpoint, serde.loads_typed(metadata_b), parent, count, values))
        return rows

    def all_points(self) -> dict[str, list[Point]] | None:
        out: dict[str, list[Point]] = {}
        for thread_id in list(self.saver.storage):
            points = self._points(thread_id, "messages")
            if points is None:
                return None
            if points:
                out[str(thread_id)] = points
        return out


# ---------------------------------------------------------------------------------------------------- SqliteSaver

_TS_PREFIX = 256  # bytes of a checkpoint blob read for its time: "v", "id" and "ts" come first (create_checkpoint)


def _msgpack_head(data: bytes) -> dict[str, Any] | None:
    """The leading scalar entries of a msgpack map (the checkpoint's ``v``, ``id``, ``ts``), or ``None``.

    Only what ``create_checkpoint`` writes first is understood: a map header, string keys, and unsigned integers or
    strings as values. Parsing stops at the first other value (``channel_values``)."""
    out: dict[str, Any] = {}
    if not data:
        return None
    head = data[0]
    if 0x80 <= head <= 0x8F:
        pos = 1
    elif head == 0xDE:
        pos = 3
    elif head == 0xDF:
        pos = 5
    else:
        return None

    def scalar(pos: int) -> tuple[Any, int] | None:
        if pos >= len(data):
            return None
        b = data[pos]
        if b <= 0x7F:
            return b, pos + 1
        if 0xA0 <= b <= 0xBF:
            n, start = b & 0x1F, pos + 1
        elif b == 0xD9 and pos + 1 < len(data):
            n, start = data[pos + 1], pos + 2
        elif b == 0xDA and pos + 2 < len(data):
            n, start = int.from_bytes(data[pos + 1:pos + 3], "big"), pos + 3
        elif b in (0xCC, 0xCD, 0xCE):
            width = {0xCC: 1, 0xCD: 2, 0xCE: 4}[b]
            if pos + width >= len(data):
                return None
            return int.from_bytes(data[pos + 1:pos + 1 + width], "big"), pos + 1 + width
        else:
            return None
        if start + n > len(data):
            return None
        return data[start:start + n].decode("utf-8"), start + n

    while True:
        key = scalar(pos)
        if key is None or not isinstance(key[0], str):
            return out
        value = scalar(key[1])
        if value is None:
            return out
        out[key[0]] = value[0]
        pos = value[1]


class SqliteReader:
    """``SqliteSaver``: tables ``checkpoints`` (the whole checkpoint inline, msgpack) and ``writes``, read by SQL over
    the saver's connection under its lock (``saver.cursor``)."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver

    @staticmethod
    def _point(row: Sequence[Any]) -> Point | None:
        cid, parent, type_, head, step = row
        if type_ != "msgpack" or not isinstance(head, bytes):
            return None  # another serializer (json, encrypted …): its bytes are not ours to parse
        fields = _msgpack_head(head)
        if fields is None or not isinstance(fields.get("ts"), str) or fields.get("id", cid) != cid:
            return None
        return Point(cid, parent, None if step is None else int(step), fields["ts"], MISSING)

    _POINTS = (f"SELECT checkpoint_id, parent_checkpoint_id, type, substr(checkpoint, 1, {_TS_PREFIX}), "
               "json_extract(CAST(metadata AS TEXT), '$.step') FROM checkpoints ")

    def thread_log(self, thread_id: str, channel: str) -> ThreadLog | None:
        serde = self.saver.serde
        with self.saver.cursor(transaction=False) as cur:
            # read once cursor() has run setup(), which finds whether an old read-only database lacks the column
            task_path = "task_path" if getattr(self.saver, "_has_task_path", True) else "''"
            cur.execute(self._POINTS + "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
                        (str(thread_id),))
            points = []
            for row in cur.fetchall():
                point = self._point(row)
                if point is None:
                    return None
                points.append(point)
            cur.execute(f"SELECT checkpoint_id, task_id, {task_path}, idx, type, value FROM writes "
                        "WHERE thread_id = ? AND checkpoint_ns = '' AND channel = ?", (str(thread_id), channel))
            rows = cur.fetchall()
            latest = MISSING
            if points:
                cur.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
                            "AND checkpoint_id = ?", (str(thread_id), points[-1].id))
                found = cur.fetchone()
                if found is not None:
                    latest = serde.loads_typed((found[0], found[1]))["channel_values"].get(channel, MISSING)
        return ThreadLog(points, _group_writes(rows, points, serde), latest)

    def all_points(self) -> dict[str, list[Point]] | None:
        out: dict[str, list[Point]] = {}
        with self.saver.cursor(transaction=False) as cur:
            cur.execute("SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, "
                        f"substr(checkpoint, 1, {_TS_PREFIX}), json_extract(CAST(metadata AS TEXT), '$.step') "
                        "FROM checkpoints WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id")
            for row in cur.fetchall():
                point = self._point(row[1:])
                if point is None:
                    return None
                out.setdefault(str(row[0]), []).append(point)
        return out


def _group_writes(rows: Sequence[Sequence[Any]], points: list[Point], serde: Any) -> dict[str, list[Any]]:
    """``(checkpoint_id, task_id, task_path, idx, type, value)`` rows → the decoded values under each checkpoint but
    the last, in the order LangGraph applies them."""
    applied = {p.id for p in points[:-1]}
    grouped: dict[str, list[Sequence[Any]]] = {}
    for row in rows:
        if row[0] in applied:
            grouped.setdefault(row[0], []).append(row)
    return {cid: [serde.loads_typed((r[4], bytes(r[5]) if r[5] is not None else b""))
                  for r in sorted(found, key=lambda r: _sort_key(r[2], r[1], int(r[3])))]
            for cid, found in grouped.items()}


# ---------------------------------------------------------------------------------------------------- PostgresSaver


class PostgresReader:
    """``PostgresSaver``: ``checkpoints`` (JSONB without the non-scalar values), ``checkpoint_blobs`` (a channel's
    value per version) and ``checkpoint_writes``, read by SQL through the saver's own cursor (its lock, pool or
    pipeline)."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self.saver._cursor() as cur:  # the saver's own: takes its lock and handles a pool or a pipeline
            yield cur

    _POINTS = ("SELECT thread_id, checkpoint_id, parent_checkpoint_id, checkpoint->>'ts' AS ts, "
               "metadata->'step' AS step, checkpoint->'channel_versions'->>%s AS version FROM checkpoints ")

    @staticmethod
    def _point(row: Any) -> Point | None:
        if not isinstance(row["ts"], str):
            return None
        version = row["version"] if row["version"] is not None else MISSING
        return Point(row["checkpoint_id"], row["parent_checkpoint_id"],
                     None if row["step"] is None else int(row["step"]), row["ts"], version)

    def thread_log(self, thread_id: str, channel: str) -> ThreadLog | None:
        serde = self.saver.serde
        with self._cursor() as cur:
            cur.execute(self._POINTS + "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id",
                        (channel, thread_id))
            points = []
            for row in cur.fetchall():
                point = self._point(row)
                if point is None:
                    return None
                points.append(point)
            cur.execute("SELECT checkpoint_id, task_id, task_path, idx, type, blob FROM checkpoint_writes "
                        "WHERE thread_id = %s AND checkpoint_ns = '' AND channel = %s", (thread_id, channel))
            rows = [(r["checkpoint_id"], r["task_id"], r["task_path"], r["idx"], r["type"], r["blob"])
                    for r in cur.fetchall()]
            latest = MISSING
            if points and points[-1].version is not MISSING:
                cur.execute("SELECT type, blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = '' "
                            "AND channel = %s AND version = %s", (thread_id, channel, points[-1].version))
                found = cur.fetchone()
                if found is None:
                    return None  # a value kept inline in the JSONB (a scalar, a delta snapshot): not a message list
                if found["type"] != "empty":
                    latest = serde.loads_typed((found["type"], bytes(found["blob"])))
        return ThreadLog(points, _group_writes(rows, points, serde), latest)

    def all_points(self) -> dict[str, list[Point]] | None:
        out: dict[str, list[Point]] = {}
        with self._cursor() as cur:
            cur.execute(self._POINTS + "WHERE checkpoint_ns = '' ORDER BY thread_id, checkpoint_id", ("messages",))
            for row in cur.fetchall():
                point = self._point(row)
                if point is None:
                    return None
                out.setdefault(str(row["thread_id"]), []).append(point)
        return out


def reader_for(saver: object) -> Reader | None:
    """The reader of ``saver``'s exact type, or ``None`` (then the public walk reads it).

    By exact type: a subclass may keep its data elsewhere (a ``PersistentDict`` factory still fills the same dicts,
    so ``InMemorySaver`` with any factory is read)."""
    kind = type(saver)
    module, name = kind.__module__, kind.__name__
    if (module, name) == ("langgraph.checkpoint.memory", "InMemorySaver"):
        return MemoryReader(saver)
    if (module, name) == ("langgraph.checkpoint.sqlite", "SqliteSaver"):
        return SqliteReader(saver)
    if (module, name) == ("langgraph.checkpoint.postgres", "PostgresSaver"):
        return PostgresReader(saver)
    return None


# ---------------------------------------------------------------------------------------------------- replay


def _messages(value: Any) -> list[Any]:
    """A written value as ``add_messages`` sees its right side: a list of messages (dicts and tuples converted)."""
    from langchain_core.messages import BaseMessage, BaseMessageChunk, convert_to_messages, message_chunk_to_message

    items = value if isinstance(value, list) else [value]
    if all(isinstance(m, BaseMessage) and not isinstance(m, BaseMessageChunk) for m in items):
        return list(items)
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]


_MINTED = "\x00replayed-"  # the replay's stand-in for an id add_messages drew at random (no real id has a NUL)


def _likeness(message: Any) -> tuple[str, str]:
    return type(message).__name__, repr(message.content)


def _resolve(message: Any, unresolved: dict[tuple[str, str], list[str]], index: dict[str, int],
             first: dict[str, int]) -> int | None:
    """The position of the id-less message a later write names by the random id the run gave it, or ``None``.

    A subgraph (or a node) that returns the whole list writes back, by their real ids, messages the parent's reducer
    gave ids to: the one id-less message of the same type and content is that message. Two alike: which one is not
    knowable here, so the replay gives up; a wrong pick would merge two messages, which the final comparison with
    the latest list (one message short) catches."""
    candidates = [mid for mid in unresolved.get(_likeness(message), ()) if mid in index]
    if not candidates:
        return None
    if len(candidates) > 1:
        raise _Unplaceable
    placeholder = candidates[0]
    unresolved[_likeness(message)].remove(placeholder)
    at = index.pop(placeholder)
    index[message.id] = at
    first[message.id] = first[placeholder]
    return at


class _Unplaceable(Exception):
    """The writes do not replay the way this module understands: fall back to the public walk."""


def place(log: ThreadLog) -> tuple[list[Any], list[Where | None]] | None:
    """The latest message list and, for each message, (step, checkpoint id, time) of the first checkpoint that held
    it; ``None`` when the log does not replay to the latest list (the caller reads the public way).

    Two tries at most: first every id a write names that the replay does not know is a new message; if that does not
    give the latest list, such an id may be one the run gave an id-less message (a subgraph handing the whole list
    back), which :func:`_resolve` pairs with it. Not the other way round: LangGraph may save a step's writes after the
    reducer gave them their ids (writes saved in the background), and such a write is a new message."""
    replayed = _replay(log, resolve=False) or _replay(log, resolve=True)
    return None if replayed is None else (replayed[0], replayed[1])


def message_counts(log: ThreadLog) -> list[int] | None:
    """How many messages each checkpoint's state held (the replay's, checked against the latest list), or ``None``."""
    replayed = _replay(log, resolve=False) or _replay(log, resolve=True)
    return None if replayed is None else replayed[2]


def _replay(log: ThreadLog, *, resolve: bool) -> tuple[list[Any], list[Where | None], list[int]] | None:
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.types import Overwrite

    points = log.points
    if not points:
        return [], [], []
    if not isinstance(log.latest, list):
        return None  # channel absent at the end, or not a plain list (a DeltaChannel snapshot …)
    for before, after in zip(points, points[1:]):
        if after.parent != before.id:
            return None  # a fork (update_state or a replay from an older checkpoint): not one chain to replay
    state: list[Any] = []  # None where a message was removed (compacted on REMOVE_ALL and at the end)
    index: dict[str, int] = {}  # message id -> position in state
    first: dict[str, int] = {}  # message id -> index of the first point whose state held it
    given: set[str] = set()  # ids present in what was written (the rest were given by the replay)
    unresolved: dict[tuple[str, str], list[str]] = {}  # the replay's ids whose real (random) id is not known yet
    minted = 0
    live = 0  # messages in state
    counts: list[int] = []  # messages held at each point
    try:
        for i, point in enumerate(points[:-1]):
            counts.append(live)  # the state at point i: what the writes filed under the points before it made
            values = log.writes.get(point.id)
            if not values:
                continue
            after = points[i + 1]
            if after.version is not MISSING and after.version == point.version:
                return None  # writes filed but the channel did not move: they were not applied
            for value in values:
                if isinstance(value, Overwrite) or (isinstance(value, dict) and "__overwrite__" in value):
                    return None
                right = _messages(value)
                remove_all: int | None = None
                for position, message in enumerate(right):
                    if message.id is None:
                        minted += 1
                        # what add_messages gives a random uuid; on a copy, so a second try starts from the log as read
                        message = right[position] = message.model_copy(update={"id": f"{_MINTED}{minted}"})
                        unresolved.setdefault(_likeness(message), []).append(message.id)
                    else:
                        given.add(message.id)
                    if isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES:
                        remove_all = position
                if remove_all is not None:
                    state = right[remove_all + 1:]
                    live = len(state)
                    index = {m.id: n for n, m in enumerate(state)}
                    for message in state:
                        first.setdefault(message.id, i + 1)
                    continue
                removed: set[str] = set()
                for message in right:
                    mid: str = message.id  # every message here has an id by now (given, or minted above)
                    at = index.get(mid)
                    if (resolve and at is None and unresolved and not isinstance(message, RemoveMessage)
                            and not message.id.startswith(_MINTED)):
                        at = _resolve(message, unresolved, index, first)
                    if at is not None:
                        if isinstance(message, RemoveMessage):
                            removed.add(mid)
                        else:
                            removed.discard(mid)
                            state[at] = message
                    else:
                        if isinstance(message, RemoveMessage):
                            raise _Unplaceable  # add_messages raises here: the run did not go this way
                        index[message.id] = len(state)
                        live += 1
                        state.append(message)
                        first.setdefault(message.id, i + 1)
                for mid in removed:
                    state[index.pop(mid)] = None
                    live -= 1
    except _Unplaceable:
        return None
    counts.append(live)
    replayed = [m for m in state if m is not None]
    latest = log.latest
    if len(replayed) != len(latest):
        return None
    where: list[Where | None] = []
    for mine, theirs in zip(replayed, latest):
        if type(mine) is not type(theirs) or mine.content != theirs.content:
            return None
        if mine.id != getattr(theirs, "id", None) and (mine.id in given or not isinstance(theirs.id, str)):
            return None  # an id the run chose differs from the state's: not the same message
        point = points[first[mine.id]]
        step = -1 if point.step is None else point.step  # the public walk's rule for a checkpoint without a step
        where.append((step, point.id, _dt.datetime.fromisoformat(point.ts)))
    return latest, where, counts
