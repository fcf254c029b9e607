"""A LangGraph agent's memory as DataFrames: checkpointer threads and ``BaseStore`` items.

Many agents explored in a notebook keep their memory outside our folder: each thread's state, step by step, in a
checkpointer (``InMemorySaver``, ``SqliteSaver``, ``PostgresSaver``) and long-term items in a ``BaseStore``
(``InMemoryStore``, ``SqliteStore``, ``PostgresStore``, or :class:`~agentmem_nb.langgraph_store.AgentMemStore`). The
functions here read any of them through LangGraph's public API (``BaseCheckpointSaver.list`` and ``BaseStore.search``
/ ``list_namespaces``), and LangGraph's own savers and stores faster from their own data when that gives the same
frame (``_lg_readers``, ``_lg_stores``; see below)::

    frames.threads(checkpointer)                         # one row per thread
    frames.session_messages(checkpointer, "thread-1")    # the thread's messages, with the step that wrote each
    frames.tool_calls(checkpointer, session="thread-1")  # one row per tool call, its output matched by call id
    frames.checkpoint_history(checkpointer, "thread-1")  # get_state_history as rows
    frames.store_items(store, namespace_prefix=("users",))

The message and tool-call frames carry the columns of the store's frames (:data:`MESSAGE_COLUMNS`,
:data:`TOOL_COLUMNS`; ``session_id`` is the thread id, ``message_id`` the 1-based position in the thread's latest
message list, ``user_id`` is missing) plus LangGraph's own: ``step``, ``checkpoint_id`` (the first checkpoint whose
state held the message: the step that wrote it), ``lc_id`` (the message's own id), ``name``, ``tool_call_id``.
``ts`` is that checkpoint's time. The rows are the latest state's messages: one a later step removed is not shown.

How a thread is read: a checkpoint holds the whole state, not what changed, and ``list()`` decodes every one, so the
public walk (:func:`_walk_rows`: the first checkpoint whose state held each message) costs the square of the steps
(9.2 s at 1,000 steps). ``InMemorySaver``, ``SqliteSaver`` and ``PostgresSaver`` are read instead by a reader of their
own tables (``_lg_readers``): each checkpoint's id, parent, step and time, the writes filed under it, and the latest
state once, replayed through ``add_messages``' rules — linear in the steps, and the same frame (pinned by
``tests/frames/test_frames_langgraph_readers.py``). Any other saver, and any thread a reader does not understand
(a forked history, another reducer …), is read by the public walk. ``benchmarks/LANGGRAPH.md`` has the figures.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from agentmem_nb.frames._lg_readers import MemoryReader, Point, fast, place, reader_for
from agentmem_nb.frames._lg_stores import StoreRow, store_rows
from agentmem_nb.frames._text import text_array
from agentmem_nb.frames._time import NAT_US, frame_zone, us_to_series

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
    from langgraph.store.base import BaseStore

__all__ = [
    "LANGGRAPH_MESSAGE_COLUMNS",
    "LANGGRAPH_TOOL_COLUMNS",
    "CHECKPOINT_COLUMNS",
    "STORE_COLUMNS",
    "is_checkpointer",
    "is_store",
    "threads",
    "message_text",
    "message_role",
    "FirstWritten",
    "fast",  # the rule for reads of LangGraph's internals (None when they moved), for the chat over a graph too
    "thread_messages",
    "thread_tool_calls",
    "checkpoint_history",
    "store_items",
    "store_namespaces",
]

_BASE_MESSAGE_COLUMNS = ("ts", "user_id", "session_id", "day", "message_id", "role", "content", "n_tool_calls", "tags")
LANGGRAPH_MESSAGE_COLUMNS = (*_BASE_MESSAGE_COLUMNS, "step", "checkpoint_id", "lc_id", "name", "tool_call_id",
                             "tool_calls")
"""Columns of :func:`thread_messages`: the store frames' message columns, then LangGraph's."""

_BASE_TOOL_COLUMNS = ("ts", "user_id", "session_id", "message_id", "turn", "call_index", "tool", "call_id", "input",
                      "input_text", "output", "output_len", "status", "duration_ms", "source")
LANGGRAPH_TOOL_COLUMNS = (*_BASE_TOOL_COLUMNS, "step", "checkpoint_id")
"""Columns of :func:`thread_tool_calls`: the store frames' tool-call columns, then LangGraph's."""

CHECKPOINT_COLUMNS = ("ts", "thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "step", "source",
                      "n_messages", "channels", "values")
"""Columns of :func:`checkpoint_history` (one row per checkpoint, oldest first)."""

STORE_COLUMNS = ("namespace", "key", "value", "created_at", "updated_at")
"""The first columns of :func:`store_items` (one column per top-level value field may follow)."""

_ROLES = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system", "function": "tool",
          "remove": "remove"}
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def is_checkpointer(source: object) -> bool:
    """True for a LangGraph checkpointer (any ``BaseCheckpointSaver``: memory, SQLite, PostgreSQL, yours)."""
    try:
        from langgraph.checkpoint.base import BaseCheckpointSaver
    except ImportError:  # pragma: no cover - langgraph is a declared dependency
        return False
    return isinstance(source, BaseCheckpointSaver)


def is_store(source: object) -> bool:
    """True for a LangGraph ``BaseStore`` (memory, SQLite, PostgreSQL, or ours)."""
    try:
        from langgraph.store.base import BaseStore
    except ImportError:  # pragma: no cover - langgraph is a declared dependency
        return False
    return isinstance(source, BaseStore)


def _require_checkpointer(source: object, what: str) -> None:
    if not is_checkpointer(source):
        raise TypeError(f"{what}: expected a LangGraph checkpointer (InMemorySaver, SqliteSaver, PostgresSaver …), got "
                        f"{type(source).__name__}; pass the checkpointer the graph was compiled with "
                        "(graph.checkpointer)")


def _thread_config(thread_id: str) -> dict[str, Any]:
    if not isinstance(thread_id, str) or not thread_id:
        raise ValueError(f"thread_id={thread_id!r}: give the thread id the graph was run with "
                         "(config={'configurable': {'thread_id': ...}}); frames.threads(checkpointer) lists them")
    return {"configurable": {"thread_id": thread_id}}


def _root_tuples(checkpointer: BaseCheckpointSaver[Any], thread_id: str) -> list[CheckpointTuple]:
    """The thread's top-level checkpoints, oldest first (a subgraph's own checkpoints have a non-empty namespace)."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    found = list(checkpointer.list(config))  # type: ignore[arg-type]  # RunnableConfig is a TypedDict of this shape
    found.reverse()  # list() gives newest first; ids are monotonic, so the reverse is the order of writing
    return found


def _utc(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text)


_EPOCH_AWARE = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_US = _dt.timedelta(microseconds=1)


def _zone_series(moments: Sequence[_dt.datetime | None], zone: _dt.tzinfo) -> Any:
    # SqliteStore hands back naive datetimes (its rows keep UTC without an offset): read them as UTC (microseconds
    # since the epoch counted from a naive epoch, not a replace() per value: 200k of them cost 0.6 s in a 100k frame)
    micros = [NAT_US if m is None else (m - (_EPOCH_NAIVE if m.tzinfo is None else _EPOCH_AWARE)) // _US
              for m in moments]
    return us_to_series(micros, zone).array


def message_text(value: Any) -> str:
    """A LangChain message content as text: a string as is, content blocks' text parts joined (as ``.text`` joins
    them), anything else as JSON. Shared with the chat over a graph (``agent.graph_chat``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):  # content blocks: the text parts, as langchain's .text joins them
        parts = [b if isinstance(b, str) else b.get("text", "") for b in value
                 if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")]
        if parts:
            return "".join(p for p in parts if isinstance(p, str))
    return _ENCODE(value)


def message_role(message: Any) -> str:
    """The role of a LangChain message in our words (``human`` → ``user``, ``ai`` → ``assistant``, …)."""
    kind = getattr(message, "type", None)
    if isinstance(kind, str):
        return _ROLES.get(kind, kind)
    return "unknown"


class FirstWritten:
    """Where each message id first appeared: (step, checkpoint id, time)."""

    __slots__ = ("first",)

    def __init__(self) -> None:
        self.first: dict[str, tuple[int, str, _dt.datetime]] = {}

    def walk(self, tuples: Iterable[CheckpointTuple], channel: str) -> list[Any]:
        """Walk checkpoints oldest first; return the last one's message list."""
        latest: list[Any] = []
        first = self.first
        last_version: object = object()
        for tup in tuples:
            checkpoint = tup.checkpoint
            version = checkpoint.get("channel_versions", {}).get(channel)
            messages = checkpoint["channel_values"].get(channel)
            if not isinstance(messages, list):
                continue
            latest = messages
            if version is not None and version == last_version:
                continue  # the channel did not change at this step: nothing new to place
            last_version = version
            where: tuple[int, str, _dt.datetime] | None = None
            for message in messages:
                mid = getattr(message, "id", None)
                if mid is None or mid in first:
                    continue
                if where is None:
                    step = tup.metadata.get("step", -1) if tup.metadata else -1
                    where = (int(step), checkpoint["id"], _utc(checkpoint["ts"]))
                first[mid] = where
        return latest


def _thread_rows(checkpointer: BaseCheckpointSaver[Any], thread_id: str, channel: str
                 ) -> tuple[list[Any], list[tuple[int, str, _dt.datetime] | None]]:
    from agentmem_nb.frames.messages import _gc_paused  # here: messages imports this module

    reader = reader_for(checkpointer)
    if reader is not None:  # the saver's own tables, linear in the steps (``_lg_readers``); None: not understood
        with _gc_paused():  # thousands of decoded messages, no cycles: no collection pass every 700 objects
            log = fast(lambda: reader.thread_log(thread_id, channel))  # fast(): None if LangGraph's internals moved
            placed = place(log) if log is not None else None
        if placed is not None:
            return placed
    return _walk_rows(checkpointer, thread_id, channel)


def _walk_rows(checkpointer: BaseCheckpointSaver[Any], thread_id: str, channel: str
               ) -> tuple[list[Any], list[tuple[int, str, _dt.datetime] | None]]:
    """The public walk: every checkpoint through ``list()`` (any saver; quadratic in the steps)."""
    tuples = _root_tuples(checkpointer, thread_id)
    written = FirstWritten()
    latest = written.walk(tuples, channel)
    return latest, [written.first.get(getattr(m, "id", None) or "") for m in latest]


def thread_messages(
    checkpointer: BaseCheckpointSaver[Any],
    thread_id: str,
    *,
    channel: str = "messages",
    zone: _dt.tzinfo | None = None,
) -> pd.DataFrame:
    """The messages of one thread's latest state, in order (:data:`LANGGRAPH_MESSAGE_COLUMNS`).

    ``channel`` names the state key that holds the messages (``"messages"`` for ``create_agent`` and
    ``MessagesState``). ``zone`` is the zone of ``ts`` (default: the machine's). Reached through
    ``frames.session_messages(checkpointer, thread_id)``.
    """
    _require_checkpointer(checkpointer, "thread_messages")
    _thread_config(thread_id)
    latest, where = _thread_rows(checkpointer, thread_id, channel)
    return _messages_frame(latest, where, thread_id=thread_id, zone=frame_zone(zone))


def _messages_frame(latest: list[Any], where: list[tuple[int, str, _dt.datetime] | None], *, thread_id: str,
                    zone: _dt.tzinfo) -> pd.DataFrame:
    count = len(latest)
    ts = _zone_series([w[2] if w else None for w in where], zone)
    calls = [list(getattr(m, "tool_calls", None) or ()) for m in latest]
    calls_col = np.empty(count, dtype=object)
    calls_col[:] = calls
    tags = np.empty(count, dtype=object)
    tags[:] = [()] * count
    days = pd.Series(ts).dt.strftime("%Y-%m-%d")
    return pd.DataFrame({
        "ts": ts,
        "user_id": text_array([None] * count),
        "session_id": text_array([thread_id] * count),
        "day": text_array([None if pd.isna(d) else d for d in days]),
        "message_id": np.arange(1, count + 1, dtype=np.int64),
        "role": text_array([message_role(m) for m in latest]),
        "content": text_array([message_text(getattr(m, "content", None)) for m in latest]),
        "n_tool_calls": np.asarray([len(c) for c in calls], dtype=np.int64),
        "tags": tags,
        "step": pd.array([w[0] if w else None for w in where], dtype="Int64"),
        "checkpoint_id": text_array([w[1] if w else None for w in where]),
        "lc_id": text_array([getattr(m, "id", None) for m in latest]),
        "name": text_array([getattr(m, "name", None) for m in latest]),
        "tool_call_id": text_array([getattr(m, "tool_call_id", None) for m in latest]),
        "tool_calls": calls_col,
    })


def thread_tool_calls(
    checkpointer: BaseCheckpointSaver[Any],
    thread_id: str,
    *,
    channel: str = "messages",
    zone: _dt.tzinfo | None = None,
) -> pd.DataFrame:
    """One row per tool call an assistant message of the thread asked for (:data:`LANGGRAPH_TOOL_COLUMNS`).

    ``output`` and ``status`` come from the tool message that answers the call (matched by call id, never by name);
    a call not answered yet (an interrupted run) has an empty output and status ``"pending"``. ``turn`` and
    ``message_id`` are the asking message's position; ``source`` is ``"langgraph"``.
    """
    _require_checkpointer(checkpointer, "thread_tool_calls")
    _thread_config(thread_id)
    latest, where = _thread_rows(checkpointer, thread_id, channel)
    return _tool_frame(latest, where, thread_id=thread_id, zone=frame_zone(zone))


def _tool_frame(latest: list[Any], where: list[tuple[int, str, _dt.datetime] | None], *, thread_id: str,
                zone: _dt.tzinfo) -> pd.DataFrame:
    answers: dict[str, Any] = {}
    for message in latest:
        call_id = getattr(message, "tool_call_id", None)
        if getattr(message, "type", None) == "tool" and isinstance(call_id, str):
            answers.setdefault(call_id, message)
    rows: list[tuple[int, int, dict[str, Any], Any]] = []
    for position, message in enumerate(latest):
        for index, call in enumerate(getattr(message, "tool_calls", None) or ()):
            rows.append((position, index, call, answers.get(call.get("id") or "")))
    inputs = np.empty(len(rows), dtype=object)
    inputs[:] = [dict(r[2].get("args") or {}) for r in rows]
    outputs = [message_text(r[3].content) if r[3] is not None else "" for r in rows]
    statuses = [(getattr(r[3], "status", None) or "success") if r[3] is not None else "pending" for r in rows]
    at = [where[r[0]] for r in rows]
    ids = [r[0] + 1 for r in rows]
    return pd.DataFrame({
        "ts": _zone_series([w[2] if w else None for w in at], zone),
        "user_id": text_array([None] * len(rows)),
        "session_id": text_array([thread_id] * len(rows)),
        "message_id": pd.array(ids, dtype="Int64"),
        "turn": np.asarray(ids, dtype=np.int64),
        "call_index": np.asarray([r[1] for r in rows], dtype=np.int64),
        "tool": text_array([str(r[2].get("name", "")) for r in rows]),
        "call_id": text_array([r[2].get("id") for r in rows]),
        "input": inputs,
        "input_text": text_array([_ENCODE(i) for i in inputs]),
        "output": text_array(outputs),
        "output_len": np.asarray([len(o) for o in outputs], dtype=np.int64),
        "status": text_array(statuses),
        "duration_ms": np.full(len(rows), np.nan),
        "source": text_array(["langgraph"] * len(rows)),
        "step": pd.array([w[0] if w else None for w in at], dtype="Int64"),
        "checkpoint_id": text_array([w[1] if w else None for w in at]),
    })


def threads(checkpointer: BaseCheckpointSaver[Any], *, zone: _dt.tzinfo | None = None) -> pd.DataFrame:
    """One row per thread the checkpointer holds: ``thread_id``, ``n_checkpoints`` (top level), ``first_ts``,
    ``last_ts`` and ``last_step`` (NA when the newest checkpoint's metadata has no step); newest ``last_ts`` first
    (ties by thread id)."""
    _require_checkpointer(checkpointer, "threads")
    reader = reader_for(checkpointer)
    found = fast(reader.all_points) if reader is not None else None
    seen = _threads_seen(checkpointer) if found is None else _points_seen(found)
    ordered = sorted(seen.items(), key=lambda kv: (-kv[1][2].timestamp(), kv[0]))
    zone = frame_zone(zone)
    return pd.DataFrame({
        "thread_id": text_array([t for t, _ in ordered]),
        "n_checkpoints": np.asarray([r[0] for _, r in ordered], dtype=np.int64),
        "first_ts": _zone_series([r[1] for _, r in ordered], zone),
        "last_ts": _zone_series([r[2] for _, r in ordered], zone),
        "last_step": pd.array([r[3] for _, r in ordered], dtype="Int64"),
    })


def _points_seen(found: dict[str, list[Point]]) -> dict[str, list[Any]]:
    """:func:`threads`' rows from a reader's checkpoints (no state decoded)."""
    seen: dict[str, list[Any]] = {}
    for thread, points in found.items():
        last = max(points, key=lambda p: p.id)
        seen[thread] = [len(points), min(_utc(p.ts) for p in points), _utc(last.ts), last.step, last.id]
    return seen


def _threads_seen(checkpointer: BaseCheckpointSaver[Any]) -> dict[str, list[Any]]:
    """:func:`threads`' rows through ``list(None)``: every checkpoint's state decoded (any saver)."""
    seen: dict[str, list[Any]] = {}
    for tup in checkpointer.list(None):
        conf = tup.config.get("configurable", {})
        if conf.get("checkpoint_ns", ""):
            continue
        thread = str(conf.get("thread_id"))
        moment = _utc(tup.checkpoint["ts"])
        step = (tup.metadata or {}).get("step")
        row = seen.get(thread)
        if row is None:
            seen[thread] = [1, moment, moment, step, tup.checkpoint["id"]]
            continue
        row[0] += 1
        if moment < row[1]:
            row[1] = moment
        if tup.checkpoint["id"] > row[4]:
            row[2], row[3], row[4] = moment, step, tup.checkpoint["id"]
    return seen


def checkpoint_history(
    checkpointer: BaseCheckpointSaver[Any],
    thread_id: str,
    *,
    channel: str = "messages",
    subgraphs: bool = False,
    zone: _dt.tzinfo | None = None,
) -> pd.DataFrame:
    """``get_state_history`` as rows, oldest first (:data:`CHECKPOINT_COLUMNS`): how the state evolved.

    ``channels`` is the state keys written since the previous checkpoint; ``values`` the state's values other than
    the message list (a dict per row). The nodes a step runs next are not kept by the checkpointer alone (the graph
    decides them): ``graph.get_state_history(config)`` has them as ``next``. ``subgraphs=True`` includes the checkpoints a
    subgraph kept in its own namespace (``checkpoint_ns``).
    """
    _require_checkpointer(checkpointer, "checkpoint_history")
    config = _thread_config(thread_id)
    reader = reader_for(checkpointer)
    from agentmem_nb.frames.messages import _gc_paused  # here: messages imports this module

    with _gc_paused():  # as in _thread_rows
        read = (fast(lambda: reader.history(thread_id, channel))
                if not subgraphs and isinstance(reader, MemoryReader) else None)  # None: not understood, walk instead
    if read is not None:
        entries: Iterable[tuple[str, Any, Any, str | None, int, Mapping[str, Any]]] = (
            ("", checkpoint, metadata, parent, count, values) for checkpoint, metadata, parent, count, values in read)
    else:
        entries = _walked_history(checkpointer, thread_id, config, channel, subgraphs=subgraphs)
    return _history_frame(_history_rows(entries, thread_id), zone=zone)


def _walked_history(checkpointer: BaseCheckpointSaver[Any], thread_id: str, config: dict[str, Any], channel: str, *,
                    subgraphs: bool) -> Iterator[tuple[str, Any, Any, str | None, int, Mapping[str, Any]]]:
    """:func:`checkpoint_history`'s entries through ``list()`` (any saver): every state decoded."""
    if not subgraphs:
        tuples = _root_tuples(checkpointer, thread_id)
    else:
        tuples = sorted(checkpointer.list(config), key=lambda t: t.checkpoint["id"])  # type: ignore[arg-type]
    for tup in tuples:
        values = tup.checkpoint["channel_values"]
        messages = values.get(channel)
        yield (str(tup.config.get("configurable", {}).get("checkpoint_ns", "")), tup.checkpoint, tup.metadata,
               (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
               len(messages) if isinstance(messages, list) else 0,
               {k: v for k, v in values.items() if k != channel and not k.startswith("branch:")
                and not k.startswith("__")})


def _history_rows(entries: Iterable[tuple[str, Any, Any, str | None, int, Mapping[str, Any]]], thread_id: str
                  ) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    previous: dict[str, Mapping[str, Any]] = {}
    for ns, checkpoint, metadata, parent, count, values in entries:
        versions = checkpoint.get("channel_versions", {})
        before = previous.get(ns, {})
        changed = tuple(sorted(k for k, v in versions.items() if before.get(k) != v and not k.startswith("branch:")
                               and not k.startswith("__")))
        previous[ns] = dict(versions)
        rows.append((_utc(checkpoint["ts"]), thread_id, ns, checkpoint["id"], parent,
                     (metadata or {}).get("step"), (metadata or {}).get("source"), count, changed, dict(values)))
    return rows


def _history_frame(rows: list[tuple[Any, ...]], *, zone: _dt.tzinfo | None) -> pd.DataFrame:
    frame = {name: [r[i] for r in rows] for i, name in enumerate(CHECKPOINT_COLUMNS)}
    zone = frame_zone(zone)
    objects = {}
    for name in ("channels", "values"):
        col = np.empty(len(rows), dtype=object)
        col[:] = frame[name]
        objects[name] = col
    return pd.DataFrame({
        "ts": _zone_series(frame["ts"], zone),
        "thread_id": text_array(frame["thread_id"]),
        "checkpoint_ns": text_array(frame["checkpoint_ns"]),
        "checkpoint_id": text_array(frame["checkpoint_id"]),
        "parent_checkpoint_id": text_array(frame["parent_checkpoint_id"]),
        "step": pd.array(frame["step"], dtype="Int64"),
        "source": text_array(frame["source"]),
        "n_messages": np.asarray(frame["n_messages"], dtype=np.int64),
        **objects,
    })


# ---------------------------------------------------------------------------------------------------- stores

_PAGE = 10_000  # namespaces per list_namespaces call
_ITEM_PAGE = 100_000  # items in the first search call (then doubled): one pass for most stores


def _items(store: BaseStore, prefix: tuple[str, ...]) -> Iterator[Any]:
    """Every item under ``prefix``, paged (a store's search returns ``limit`` items at a time).

    Each page is twice the last: ``InMemoryStore`` walks its items from the first for every page (``offset`` is a
    skip, not a seek), so fixed pages cost the square of the item count (3 s at 100k items), doubling ones a few
    passes."""
    offset, limit = 0, _ITEM_PAGE
    while True:
        page = store.search(prefix, limit=limit, offset=offset)
        yield from page
        if len(page) < limit:
            return
        offset += len(page)
        limit *= 2


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat(values: list[Any]) -> bool:
    """Whether every value is a dict of scalars (then each top-level field becomes a column)."""
    if not values or set(map(type, values)) != {dict}:
        return False
    return set(map(type, chain.from_iterable(map(dict.values, values)))) <= _SCALARS


def store_items(
    store: BaseStore,
    *,
    namespace_prefix: Sequence[str] = (),
    fields: bool | None = None,
    zone: _dt.tzinfo | None = None,
) -> pd.DataFrame:
    """Every item of a LangGraph ``BaseStore`` under ``namespace_prefix`` (:data:`STORE_COLUMNS`), ordered by
    namespace then key.

    ``namespace`` is the tuple; ``value`` the stored dict. When every value is flat (its fields are strings, numbers,
    booleans or null) each top-level field also becomes a column of its own, named after the field (``fields=True``
    forces them for flat-enough values, ``False`` leaves them out); a field named like a fixed column is left in
    ``value`` only.

    >>> # frames.store_items(store, namespace_prefix=("users", "alice"))
    """
    if not is_store(store):
        raise TypeError(f"store_items: expected a LangGraph BaseStore (InMemoryStore, SqliteStore, PostgresStore, "
                        f"AgentMemStore …), got {type(store).__name__}")
    from agentmem_nb.frames.messages import _gc_paused  # here: messages imports this module

    prefix = tuple(namespace_prefix)
    with _gc_paused():  # 100k rows of tuples, no cycles: a collection pass every 700 of them cost a third of the time
        rows = store_rows(store, prefix)  # the store's own data when it is one we know (``_lg_stores``), else search
        if rows is None:
            rows = _searched_rows(store, prefix)
        return _store_frame(rows, fields=fields, zone=zone)


def _searched_rows(store: BaseStore, prefix: tuple[str, ...]) -> list[StoreRow]:
    """The items under ``prefix`` through ``BaseStore.search`` (any store)."""
    return [(tuple(i.namespace), i.key, i.value, i.created_at, i.updated_at) for i in _items(store, prefix)]


def _store_frame(rows: list[StoreRow], *, fields: bool | None, zone: _dt.tzinfo | None) -> pd.DataFrame:
    by_namespace: dict[tuple[str, ...], list[StoreRow]] = {}
    for row in rows:  # ordered by namespace then key: grouped first, so most comparisons are of keys alone
        by_namespace.setdefault(row[0], []).append(row)
    by_key = itemgetter(1)
    found = [row for ns in sorted(by_namespace) for row in sorted(by_namespace[ns], key=by_key)]
    values = [row[2] for row in found]
    namespaces = np.empty(len(found), dtype=object)
    namespaces[:] = [row[0] for row in found]
    value_col = np.empty(len(found), dtype=object)
    value_col[:] = values
    zone = frame_zone(zone)
    data: dict[str, Any] = {
        "namespace": namespaces,
        "key": text_array([row[1] for row in found]),
        "value": value_col,
        "created_at": _zone_series([row[3] for row in found], zone),
        "updated_at": _zone_series([row[4] for row in found], zone),
    }
    if fields if fields is not None else _flat(values):
        names: dict[str, None] = {}
        for value in values:
            if isinstance(value, dict):
                names.update(dict.fromkeys(value))
        for name in names:
            if name not in data:
                data[name] = [v.get(name) if isinstance(v, dict) else None for v in values]
    return pd.DataFrame(data)


def store_namespaces(store: BaseStore, *, prefix: Sequence[str] = (), max_depth: int | None = None) -> pd.DataFrame:
    """The namespaces of a store (``namespace`` tuple, ``depth``, ``n_items``), sorted."""
    if not is_store(store):
        raise TypeError(f"store_namespaces: expected a LangGraph BaseStore, got {type(store).__name__}")
    found: list[tuple[str, ...]] = []
    offset = 0
    while True:
        page = store.list_namespaces(prefix=tuple(prefix) or None, max_depth=max_depth, limit=_PAGE, offset=offset)
        found += page
        if len(page) < _PAGE:
            break
        offset += len(page)
    counts: dict[tuple[str, ...], int] = {}
    rows = store_rows(store, tuple(prefix))
    for row in rows if rows is not None else _searched_rows(store, tuple(prefix)):
        ns = row[0]
        key = ns[:max_depth] if max_depth is not None else ns
        counts[key] = counts.get(key, 0) + 1
    ordered = sorted(set(map(tuple, found)))
    col = np.empty(len(ordered), dtype=object)
    col[:] = ordered
    return pd.DataFrame({
        "namespace": col,
        "depth": np.asarray([len(ns) for ns in ordered], dtype=np.int64),
        "n_items": np.asarray([counts.get(ns, 0) for ns in ordered], dtype=np.int64),
    })


# ---------------------------------------------------------------------------------------------------- dispatch


def given_checkpointer(source: object) -> bool:
    """Whether ``source`` is a checkpointer, without importing LangGraph when nothing has (then it cannot be one)."""
    import sys

    return "langgraph.checkpoint.base" in sys.modules and is_checkpointer(source)


def _thread_ids(checkpointer: BaseCheckpointSaver[Any], session: str | Iterable[str] | None) -> list[str]:
    if session is None:
        return sorted(threads(checkpointer)["thread_id"].tolist())
    return [session] if isinstance(session, str) else list(session)


def _concat(parts: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    if not parts:
        return empty
    frame = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    if len(parts) > 1:
        frame = frame.sort_values("ts", kind="stable", ignore_index=True)
    return frame


def checkpointer_messages(checkpointer: BaseCheckpointSaver[Any], session: str | Iterable[str] | None, *,
                          zone: _dt.tzinfo | None = None, channel: str = "messages") -> pd.DataFrame:
    """The messages of one thread, several, or all of them (``None``), ordered by time across threads."""
    zone = frame_zone(zone)
    parts = [thread_messages(checkpointer, t, channel=channel, zone=zone) for t in _thread_ids(checkpointer, session)]
    return _concat(parts, _messages_frame([], [], thread_id="", zone=zone))


def checkpointer_tool_calls(checkpointer: BaseCheckpointSaver[Any], session: str | Iterable[str] | None, *,
                            zone: _dt.tzinfo | None = None, channel: str = "messages") -> pd.DataFrame:
    """The tool calls of one thread, several, or all of them (``None``), ordered by time across threads."""
    zone = frame_zone(zone)
    parts = [thread_tool_calls(checkpointer, t, channel=channel, zone=zone)
             for t in _thread_ids(checkpointer, session)]
    return _concat(parts, _tool_frame([], [], thread_id="", zone=zone))
