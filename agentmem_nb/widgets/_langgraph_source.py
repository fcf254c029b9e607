"""A LangGraph agent's memory as the inspector's and the timeline's source: a checkpointer's threads, a store's items.

``MemoryInspector`` and ``ToolTimeline`` take, in place of our :class:`~agentmem_nb.store.MemoryStore`, a LangGraph
checkpointer (``InMemorySaver``, ``SqliteSaver``, ``PostgresSaver`` …), a ``BaseStore`` (``InMemoryStore``,
``SqliteStore``, ``PostgresStore``, :class:`~agentmem_nb.langgraph_store.AgentMemStore`), a compiled graph (its
``checkpointer`` and ``store``), or a :class:`LangGraphSource` naming both::

    MemoryInspector(agent)                  # the graph create_agent / StateGraph.compile returned
    MemoryInspector(LangGraphSource(checkpointer=saver, store=store))
    ToolTimeline(saver)

What each becomes:

- the checkpointer's **threads are the sessions**: the ``sessions`` layer is their messages (scope: one thread),
  ``tool_calls`` their tool calls, ``threads`` one row per thread, ``checkpoints`` how each state evolved;
- the store's **namespaces are a layer**: ``store`` lists the items (scope: a namespace or any prefix of one, written
  with dots, ``"users.alice"`` — LangGraph forbids a dot inside a label, so the text names one tuple).

Everything is read through the public functions of :mod:`agentmem_nb.frames.langgraph` (``checkpointer_messages``
and ``checkpointer_tool_calls`` — what ``frames.session_messages`` / ``frames.tool_calls`` run for a checkpointer —,
``thread_messages``, ``thread_tool_calls``, ``threads``, ``checkpoint_history``, ``store_items``,
``store_namespaces``): the widgets show what a notebook gets from those; no other reader of a saver exists here. A search is the store's exact search — a
casefolded substring, hits oldest first, the last ``limit`` of them — and the window around a message hit is
positional in its thread, as ``MessageFile.window`` is (anchor included, sides clamped to ``MAX_WINDOW_SIDE``).

A trace (the timeline's "Trace") is the run that made a call: from the thread's user message before it to the next
one, one span per superstep that wrote a message, timed by the checkpoints (a checkpoint is written when its step
ends, so the step before's checkpoint marks its start). It is drawn by the dialogue-log trace view
(:mod:`agentmem_nb.widgets.trace`), so the run is handed to it as the log line that turn would have been.

A LangGraph source is **read only** here: the graph writes its checkpoints and the application its store, so the
inspector's edit and redact controls stay hidden and say why (:data:`READ_ONLY`).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np
import pandas as pd

from agentmem_nb.frames import contains_casefold
from agentmem_nb.frames import langgraph as lg
from agentmem_nb.frames._time import frame_zone
from agentmem_nb.messages import ToolCall
from agentmem_nb.store import DialogueEntry, MemoryStore
from agentmem_nb.widgets._cells import one_line, shorten
from agentmem_nb.widgets._inspector_data import Found, InspectorHit, InspectorWindow, row_hit, row_window
from agentmem_nb.widgets.trace_data import TraceData, trace_of

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.pregel import Pregel
    from langgraph.store.base import BaseStore

    from agentmem_nb.frames import LayerFollower
    from agentmem_nb.store import UserMemory

__all__ = ["LangGraphSource", "LangGraphLike", "LangGraphData", "langgraph_source", "our_store", "READ_ONLY",
           "LANGGRAPH_LAYERS", "run_trace"]

READ_ONLY = ("read only: a LangGraph checkpointer and store are shown as they are — change a thread through your graph "
             "(graph.update_state) and an item through your store (store.put / store.delete), then press Refresh")
"""Why the inspector's edit controls are hidden over a LangGraph source (shown in its caption)."""

LANGGRAPH_LAYERS: dict[str, str] = {
    "sessions": "Threads' messages",
    "tool_calls": "Tool calls",
    "threads": "Threads",
    "checkpoints": "Checkpoints",
    "store": "Store items",
}
"""The layers of a LangGraph source (the first four need a checkpointer, ``store`` a store)."""

_SHOWN: dict[str, tuple[str, ...]] = {
    "sessions": ("ts", "session_id", "message_id", "step", "role", "name", "content", "n_tool_calls"),
    "tool_calls": ("ts", "session_id", "turn", "step", "tool", "input_text", "output", "output_len", "status"),
    "threads": ("thread_id", "n_checkpoints", "first_ts", "last_ts", "last_step"),
    "checkpoints": ("ts", "thread_id", "step", "source", "channels", "n_messages", "checkpoint_id"),
    "store": ("namespace", "key", "value", "updated_at", "created_at"),
}
_SEARCHED: dict[str, tuple[str, ...]] = {
    "tool_calls": ("tool", "input_text", "output"),
    "threads": ("thread_id",),
    "checkpoints": ("thread_id", "source", "checkpoint_id"),
}
_HIT_CHARS = 110
_ROLE_IN_TRACE = {"user": "human", "assistant": "ai"}  # the trace view's names for the roles (LangChain's)
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str, sort_keys=True).encode


LangGraphLike: TypeAlias = "LangGraphSource | BaseCheckpointSaver[Any] | BaseStore | Pregel[Any, Any, Any, Any]"
"""What the widgets accept as a LangGraph agent's memory (see :func:`langgraph_source`)."""


@dataclass(frozen=True, slots=True, eq=False)
class LangGraphSource:
    """A LangGraph agent's memory: its ``checkpointer`` (threads), its ``store`` (long-term items), or both.

    ``zone`` is the zone times are shown in (default: the machine's); ``channel`` the state key holding the
    messages (``"messages"`` for ``create_agent`` and ``MessagesState``).

    >>> # MemoryInspector(LangGraphSource(checkpointer=saver, store=store))
    """

    checkpointer: Any = None
    store: Any = None
    zone: _dt.tzinfo | None = None
    channel: str = "messages"

    def __post_init__(self) -> None:
        if self.checkpointer is None and self.store is None:
            raise ValueError("LangGraphSource needs a checkpointer=, a store=, or both (the graph's "
                             "graph.checkpointer and graph.store)")
        if self.checkpointer is not None and not lg.is_checkpointer(self.checkpointer):
            raise TypeError(f"checkpointer: expected a LangGraph checkpointer (InMemorySaver, SqliteSaver, "
                            f"PostgresSaver …), got {type(self.checkpointer).__name__}")
        if self.store is not None and not lg.is_store(self.store):
            raise TypeError(f"store: expected a LangGraph BaseStore (InMemoryStore, SqliteStore, PostgresStore, "
                            f"AgentMemStore …), got {type(self.store).__name__}")

    @property
    def label(self) -> str:
        """What a view's caption calls it: ``"InMemorySaver + InMemoryStore"``."""
        return " + ".join(type(part).__name__ for part in (self.checkpointer, self.store) if part is not None)


def langgraph_source(source: object) -> LangGraphSource | None:
    """``source`` as a :class:`LangGraphSource` — a checkpointer, a ``BaseStore``, a compiled graph (its checkpointer
    and store) or a ``LangGraphSource`` — or ``None`` when it is none of them (our ``MemoryStore``)."""
    if isinstance(source, LangGraphSource):
        return source
    if isinstance(source, MemoryStore):  # ours: answered without importing LangGraph (a notebook may not need it)
        return None
    if lg.is_checkpointer(source):
        return LangGraphSource(checkpointer=source)
    if lg.is_store(source):
        return LangGraphSource(store=source)
    if _is_graph(source):
        saver, store = getattr(source, "checkpointer", None), getattr(source, "store", None)
        saver = saver if lg.is_checkpointer(saver) else None  # compile(checkpointer=True/False) keeps a flag
        store = store if lg.is_store(store) else None
        if saver is None and store is None:
            raise ValueError(f"this {type(source).__name__} was compiled without a checkpointer or a store, so it "
                             "keeps no memory to show: compile it with checkpointer=InMemorySaver() (or "
                             "create_agent(..., checkpointer=..., store=...))")
        return LangGraphSource(checkpointer=saver, store=store)
    return None


def our_store(source: object) -> MemoryStore:
    """``source`` when it is our :class:`~agentmem_nb.store.MemoryStore` — of any backend: ``MemoryStore(
    "postgresql://…")`` is a ``PostgresStore``, which is no subclass but keeps the store contract
    (:class:`~agentmem_nb.store.contract.Store`) — a ``TypeError`` naming what a view takes otherwise."""
    from agentmem_nb.store.contract import Store

    if not isinstance(source, (MemoryStore, Store)):
        raise TypeError(f"expected a MemoryStore, or a LangGraph agent's memory (a compiled graph, a checkpointer, a "
                        f"BaseStore, a LangGraphSource), got {type(source).__name__}: for one user's memory pass "
                        "its store (MemoryStore(root)) and user_id=")
    return cast("MemoryStore", source)  # the views use the contract's names only (as they did before this check)


def _is_graph(source: object) -> bool:
    import sys

    if "langgraph.pregel" not in sys.modules:  # nothing imported LangGraph, so this cannot be one of its graphs
        return False
    from langgraph.pregel import Pregel

    return isinstance(source, Pregel)


def namespace_text(namespace: tuple[str, ...]) -> str:
    """A namespace as the scope picker names it (``("users", "alice")`` → ``"users.alice"``)."""
    return ".".join(namespace)


class LangGraphData:
    """The inspector's reads over a :class:`LangGraphSource` (the same questions
    :class:`~agentmem_nb.widgets._inspector_data.InspectorData` answers for our store; ``mem`` and ``follower`` are
    not used: a LangGraph source has no users)."""

    read_only = READ_ONLY

    def __init__(self, source: LangGraphSource) -> None:
        self.source = source
        self.zone = frame_zone(source.zone)
        self.layers = {k: v for k, v in LANGGRAPH_LAYERS.items()
                       if (source.store if k == "store" else source.checkpointer) is not None}
        self.default_layer = "sessions" if source.checkpointer is not None else "store"

    @property
    def label(self) -> str:
        """Who the caption names in place of a user."""
        return self.source.label

    def users(self) -> list[str]:
        """None: threads are the sessions, not users."""
        return []

    def shown(self, view: str) -> tuple[str, ...]:
        """The columns a view's table shows."""
        return _SHOWN[view]

    # ------------------------------------------------------------------ reads

    def thread_ids(self) -> list[str]:
        """Every thread of the checkpointer, newest first."""
        if self.source.checkpointer is None:
            return []
        return [str(t) for t in lg.threads(self.source.checkpointer, zone=self.zone)["thread_id"]]

    def messages(self, thread: str | None) -> pd.DataFrame:
        """One thread's messages, or every thread's ordered by time (``None``): ``frames.session_messages``."""
        return lg.checkpointer_messages(self.source.checkpointer, thread or None, channel=self.source.channel,
                                        zone=self.zone)

    def tool_calls(self, thread: str | None = None) -> pd.DataFrame:
        """One thread's tool calls, or every thread's ordered by time (``None``): ``frames.tool_calls``."""
        return lg.checkpointer_tool_calls(self.source.checkpointer, thread or None, channel=self.source.channel,
                                          zone=self.zone)

    def namespaces(self) -> list[str]:
        """Every namespace of the store and every prefix of one, as dotted text, sorted."""
        if self.source.store is None:
            return []
        found = lg.store_namespaces(self.source.store)["namespace"]
        return sorted({namespace_text(ns[:depth]) for ns in found for depth in range(1, len(ns) + 1)})

    # ------------------------------------------------------------------ the inspector's questions

    def check_scope(self, layer: str, scope: str) -> str | None:
        """``scope`` validated for ``layer``: a thread id, or a dotted namespace (prefix) for ``store``."""
        if layer not in self.layers:
            raise ValueError(f"unknown layer {layer!r}: this source has {', '.join(self.layers)}")
        if layer == "threads":
            raise ValueError(f"scope {scope!r} does not apply to the 'threads' layer: use None")
        if not isinstance(scope, str) or not scope:
            raise ValueError(f"scope={scope!r}: give a thread id (frames.threads(checkpointer) lists them)"
                             if layer != "store" else f"scope={scope!r}: give a namespace such as 'users.alice'")
        return scope

    def layer_frame(self, mem: UserMemory | None, follower: LayerFollower | None, layer: str,
                    scope: str | None) -> pd.DataFrame:
        """The layer, scope applied."""
        if layer == "sessions":
            return self.messages(scope)
        if layer == "tool_calls":
            return self.tool_calls(scope)
        if layer == "threads":
            return lg.threads(self.source.checkpointer, zone=self.zone)
        if layer == "checkpoints":
            ids = [scope] if scope else self.thread_ids()
            parts = [lg.checkpoint_history(self.source.checkpointer, t, channel=self.source.channel, zone=self.zone)
                     for t in ids]
            return _by_time(parts) if parts else pd.DataFrame(columns=list(lg.CHECKPOINT_COLUMNS))
        prefix = tuple(scope.split(".")) if scope else ()
        return lg.store_items(self.source.store, namespace_prefix=prefix, zone=self.zone)

    def scope_options(self, mem: UserMemory | None, layer: str, scope: str | None) -> list[tuple[str, str]]:
        """The scope picker's choices (``""``: everything)."""
        if layer == "threads":
            return []
        known = self.namespaces() if layer == "store" else self.thread_ids()
        if scope and scope not in known:
            known.append(scope)
        everything = "all namespaces" if layer == "store" else "all threads"
        return [(everything, ""), *((k, k) for k in known)]

    def redacted(self, mem: UserMemory | None, frame: pd.DataFrame, layer: str) -> pd.DataFrame:
        """The frame as shown (nothing is redacted in a LangGraph source)."""
        return frame

    def find(self, mem: UserMemory | None, frame: pd.DataFrame, layer: str, scope: str | None, text: str, *,
             limit: int) -> Found:
        """Rows whose text holds ``text`` (casefolded substring): the last ``limit`` of them, oldest first, and how
        many match in all."""
        needle = text.strip()
        if not needle or not len(frame):
            return Found((), 0, "keyword")
        mask = np.zeros(len(frame), dtype=bool)
        for texts in self._searched(frame, layer):
            mask |= contains_casefold(texts, needle).to_numpy()
        matches = np.flatnonzero(mask)
        positions = matches[-limit:].tolist()
        if layer == "sessions":
            hits = tuple(self._message_hit(frame, rank, pos) for rank, pos in enumerate(positions, start=1))
        else:
            hits = tuple(self.row_hit(frame, layer, layer, rank, pos) for rank, pos in enumerate(positions, start=1))
        return Found(hits, int(len(matches)), "keyword")

    def _searched(self, frame: pd.DataFrame, layer: str) -> list[pd.Series]:
        if layer == "sessions":
            return [frame["content"]]
        if layer == "store":  # the namespace and the value are tuples and dicts: searched as the text shown
            return [frame["key"], pd.Series([namespace_text(ns) for ns in frame["namespace"]], index=frame.index),
                    pd.Series([_ENCODE(v) for v in frame["value"]], index=frame.index)]
        return [frame[c] for c in _SEARCHED[layer]]

    def _message_hit(self, frame: pd.DataFrame, rank: int, position: int) -> InspectorHit:
        row = frame.iloc[position]
        thread, mid = str(row["session_id"]), int(row["message_id"])
        ts = None if pd.isna(row["ts"]) else row["ts"].to_pydatetime()
        when = f"[{ts.strftime('%Y-%m-%d %H:%M')}] " if ts is not None else ""
        label = f"#{mid} {when}{thread} {row['role']}: {one_line(row['content'])}"
        return InspectorHit(rank, "sessions", thread, mid, ts, shorten(label, _HIT_CHARS), "", thread)

    def row_hit(self, frame: pd.DataFrame, view: str, layer: str, rank: int, position: int) -> InspectorHit:
        """The hit naming row ``position`` of a non-message layer."""
        return row_hit(frame, _SHOWN[view], layer, rank, position)

    def session_message_id(self, follower: LayerFollower | None, hit: InspectorHit) -> int | None:
        """The message a hit names in its thread (its position there)."""
        return hit.anchor if hit.layer == "sessions" else None

    def window_for(self, mem: UserMemory | None, frame: pd.DataFrame, hit: InspectorHit, before: int,
                   after: int) -> InspectorWindow:
        """The messages around a message hit, in its thread (positional, anchor included, clamped at both ends);
        the neighbouring rows for the other layers."""
        if hit.layer != "sessions" or not hit.key:
            return row_window(frame, hit, before, after)
        thread = frame[frame["session_id"] == hit.key] if len(frame) else frame
        if not len(thread):  # the frame shown may be another scope's: read the thread itself
            thread = self.messages(hit.key)
        ids = thread["message_id"].to_numpy()
        if hit.anchor not in ids:
            return InspectorWindow(hit, before, after, thread.iloc[0:0], -1,
                                   f"thread {hit.key!r} has no message #{hit.anchor} any more "
                                   f"({len(thread)} messages): search again")
        low, high = hit.anchor - before, hit.anchor + after
        window = thread[(ids >= low) & (ids <= high)].reset_index(drop=True)
        return InspectorWindow(hit, before, after, window,
                               int(np.flatnonzero(window["message_id"].to_numpy() == hit.anchor)[0]))

    # ------------------------------------------------------------------ the timeline's trace

    def run_trace(self, thread: str, message_id: int) -> TraceData:
        """The trace of the run that wrote message ``message_id`` of ``thread`` (see :func:`run_trace`)."""
        return run_trace(self.source, thread, message_id, zone=self.zone)


def run_trace(source: LangGraphSource, thread: str, message_id: int, *, zone: _dt.tzinfo | None = None) -> TraceData:
    """The run of ``thread`` that wrote message ``message_id``, as a trace: the turn from the user message before it
    to the next one; each superstep that wrote a message is a span from the checkpoint before it to its own (a
    model step for an assistant message, with what it was given; one tool span per tool message of a tools step).

    Raises ``LookupError`` when the thread has no such message.
    """
    if source.checkpointer is None:
        raise LookupError("a trace needs the checkpointer (LangGraphSource(checkpointer=...)): a store keeps no runs")
    zone = frame_zone(zone if zone is not None else source.zone)
    saver, channel = source.checkpointer, source.channel
    messages = lg.thread_messages(saver, thread, channel=channel, zone=zone)
    ids = messages["message_id"].to_numpy()
    if int(message_id) not in ids:
        raise LookupError(f"thread {thread!r} has no message #{message_id} ({len(messages)} messages): the call's "
                          "row names a message the thread no longer holds; press Refresh")
    roles = messages["role"].to_numpy(dtype=object)
    users = ids[roles == "user"]
    first = int(users[users <= message_id].max()) if (users <= message_id).any() else 1
    later = users[users > message_id]
    end = int(later.min()) if len(later) else int(ids.max()) + 1
    turn = messages[(ids >= first) & (ids < end)].reset_index(drop=True)
    history = lg.checkpoint_history(saver, thread, channel=channel, zone=zone)
    times = {int(s): t for s, t in zip(history["step"], history["ts"]) if not pd.isna(s)}

    epoch = next(iter(times.values())) if times else None

    def at(step: int) -> float:  # milliseconds from the thread's first checkpoint (differences of exact times)
        return float((times[step] - epoch).total_seconds() * 1000.0)

    question = turn.iloc[0]
    asked = int(question["step"]) if question["role"] == "user" and not pd.isna(question["step"]) else None
    steps = sorted({int(s) for s in turn["step"].dropna()} - ({asked} if asked is not None else set()))
    starts = [s for s in times if asked is not None and s < asked]
    zero = at(max(starts)) if starts else at(asked) if asked is not None else at(steps[0]) if steps else 0.0
    calls_frame = lg.thread_tool_calls(saver, thread, channel=channel, zone=zone)
    answered = {str(c): (o, st) for c, o, st in zip(calls_frame["call_id"], calls_frame["output"],
                                                     calls_frame["status"])}
    raw_steps: list[dict[str, Any]] = []
    tool_calls: list[ToolCall] = []
    tool_starts: list[float] = []
    previous_model = 1  # the first model step was given the whole thread so far; each later one, what came since
    for step in steps:
        before = [s for s in times if s < step]
        start, stop = (at(max(before)) if before else zero) - zero, at(step) - zero
        rows = turn[turn["step"] == step]
        for _, row in rows.iterrows():
            if row["role"] == "assistant":
                upto = int(row["message_id"])
                given = messages[(ids >= previous_model) & (ids < upto)]
                previous_model = upto
                raw_steps.append({"step": len(raw_steps) + 1, "start_ms": start, "ms": stop - start,
                                  "given": [_given(g) for _, g in given.iterrows()]})
            elif row["role"] == "tool":
                call_id = str(row["tool_call_id"])
                output, status = answered.get(call_id, (row["content"], "success"))
                asked_for = _call_args(turn, call_id)
                tool_calls.append(ToolCall(str(row["name"] or "tool"), asked_for, str(output), call_id,
                                           str(status), stop - start))
                tool_starts.append(start)
    pending = calls_frame[(calls_frame["status"] == "pending") & (calls_frame["turn"] >= first)
                          & (calls_frame["turn"] < end)]
    total = (at(steps[-1]) - zero) if steps else 0.0
    replies = turn[(turn["role"] == "assistant") & (turn["n_tool_calls"] == 0)]
    entry = DialogueEntry(
        entry_id=first, ts=question["ts"].to_pydatetime() if not pd.isna(question["ts"]) else None,
        session_id=thread, user_message=str(question["content"]) if question["role"] == "user" else "",
        assistant_reply=str(replies["content"].iloc[-1]) if len(replies) else "", tool_calls=tuple(tool_calls),
        timings_ms={"agent": total, "total": total},
        assistant_message_id=int(replies["message_id"].iloc[-1]) if len(replies) else None,
        trace={"graph_start_ms": 0.0, "steps": raw_steps, "tool_starts": tool_starts,
               **({"cancelled": True} if len(pending) else {})})
    return trace_of(entry)


def _given(row: pd.Series) -> dict[str, Any]:
    calls = row["tool_calls"]
    return {"role": _ROLE_IN_TRACE.get(str(row["role"]), str(row["role"])), "content": str(row["content"]),
            "tool_calls": list(calls) if isinstance(calls, (list, tuple)) else [],
            "name": "" if pd.isna(row["name"]) else str(row["name"])}


def _call_args(turn: pd.DataFrame, call_id: str) -> dict[str, Any]:
    for calls in turn["tool_calls"]:
        for call in calls if isinstance(calls, (list, tuple)) else ():
            if isinstance(call, dict) and call.get("id") == call_id:
                return dict(call.get("args") or {})
    return {}


def _by_time(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Several threads' frames as one, ordered by time (stable: a thread's own order is kept)."""
    kept = [p for p in parts if len(p)]
    if not kept:
        return parts[0]
    if len(kept) == 1:
        return kept[0]
    return pd.concat(kept, ignore_index=True).sort_values("ts", kind="stable", ignore_index=True)
