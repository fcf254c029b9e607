"""Our store as a LangGraph ``BaseStore``: a LangGraph app keeps its long-term memory in agentmem_nb.

::

    from agentmem_nb import MemoryStore
    from agentmem_nb.langgraph_store import AgentMemStore

    store = AgentMemStore(MemoryStore("memory").user("alice"))   # or MemoryStore("postgresql://…").user("alice")
    graph = create_agent(model, tools, checkpointer=saver, store=store)
    store.put(("alice", "prefs"), "food", {"likes": "pizza"})
    store.search(("alice",), filter={"likes": "pizza"})

Where it keeps items, and why. Every ``put`` (and every delete, a ``put`` of ``None``) is one message appended to a
session layer of the user (``langgraph-store`` by default) through the store contract's ``append`` — never a raw file
write — so the adapter inherits what the contract already guarantees on both backends: ids that never repeat
under any number of writers (threads, processes, hosts on PostgreSQL), a whole line per write under the layer's
lock, the refusal to open a link or FIFO inside the user folder, torn tails quarantined. The message's ``meta.store``
holds the namespace, key and value; its ``content`` a readable line (``users/alice food: {"likes": "pizza"}``), so
the inspector and the store's keyword search show the items like any thread (and, by the contract's rule, each
write has its day copy in the day file).

The current items are the log replayed: the last write of each ``(namespace, key)`` wins, a delete removes it;
``created_at`` is the time of the first write since the item last did not exist, ``updated_at`` that of the last.
The adapter follows its layer through the contract's ``scan(since=cursor)`` before each batch, so what another
process wrote is seen at the next call and an unchanged layer costs no read; a rewritten layer is replayed whole.
The log is never compacted: every value an item ever had stays readable in the layer (the price is a layer that
grows with every write, ``benchmarks/LANGGRAPH.md`` has the figures).

Operations follow LangGraph's store semantics as its own tests state them (``tests/test_langgraph_store.py`` runs
the same checks against ``InMemoryStore``): a batch answers its reads from the state before the batch and then
applies its writes (the last write of a key in a batch wins); search matches a namespace prefix label by label,
filters by exact values (nested dicts, lists) and ``$eq $ne $gt $gte $lt $lte``, newest ``updated_at`` first, with
``limit``/``offset``; ``list_namespaces`` takes prefix and suffix conditions with ``"*"`` for one label, ``max_depth``,
``limit``/``offset``. There is no vector index: a ``query`` ranks the matches by the share of its words found in the
value (casefolded), the score on each :class:`~langgraph.store.base.SearchItem`. No TTL (``supports_ttl = False``).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store import Cursor
from agentmem_nb.store.contract import MessageLayer, UserStore
from agentmem_nb.timeutil import parse_ts

__all__ = ["AgentMemStore", "STORE_SESSION", "STORE_ROLE"]

STORE_SESSION = "langgraph-store"
"""The session layer the items are kept in unless told otherwise."""

STORE_ROLE = "store"
"""The role of an item's message in that layer."""

_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=False).encode


_Spaces = dict[tuple[str, ...], dict[str, Item]]
"""The current items by namespace, then key (a search under a prefix visits only the namespaces under it)."""


@dataclass(slots=True)
class _State:
    """The items as replayed from the layer up to ``cursor`` (``count`` records read)."""

    spaces: _Spaces
    cursor: Cursor
    count: int


def _check_labels(namespace: tuple[str, ...], *, allow_empty: bool) -> None:
    """LangGraph's namespace rule, checked for ops handed to ``batch`` directly (its friendly methods check first)."""
    if not isinstance(namespace, tuple):
        raise InvalidNamespaceError(f"namespace {namespace!r}: give a tuple of strings, e.g. ('users', 'alice')")
    if not namespace and not allow_empty:
        raise InvalidNamespaceError("namespace (): an item's namespace needs at least one label, e.g. ('memories',)")
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"namespace {namespace!r}: label {label!r} is not allowed; labels are non-empty strings without '.' "
                "or NUL")


def _matches(value: Any, wanted: Any) -> bool:
    """Whether a stored value passes one filter entry (exact JSON equality, nested dicts, comparison operators)."""
    if isinstance(wanted, dict):
        operators = [k for k in wanted if isinstance(k, str) and k.startswith("$")]
        if operators:
            return all(_compare(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(wanted)
                and all(_matches(a, b) for a, b in zip(value, wanted)))
    return bool(value == wanted)


def _compare(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return False
        try:
            left, right = float(value), float(operand)
        except (TypeError, ValueError):
            return False
        return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]
    raise InvalidArgument(f"filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte")


def _label_match(labels: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return all(p == "*" or p == label for label, p in zip(labels, pattern))


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        return _label_match(namespace[: len(path)], path)
    if condition.match_type == "suffix":
        return _label_match(namespace[len(namespace) - len(path):], path)
    raise InvalidArgument(f"match_type {condition.match_type!r}: use 'prefix' or 'suffix'")


class AgentMemStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items live in an agentmem_nb user's store (files or PostgreSQL).

    ``user`` is a :class:`~agentmem_nb.store.contract.UserStore` (``MemoryStore(root).user(user_id)``);
    ``session_id`` the layer the items are written to. Thread-safe; several processes may share the layer.
    """

    supports_ttl = False

    def __init__(self, user: UserStore, *, session_id: str = STORE_SESSION) -> None:
        if not isinstance(user, UserStore):
            raise InvalidArgument(f"AgentMemStore(user): expected a user of the store (MemoryStore(root).user(id)), "
                                  f"got {type(user).__name__}")
        self._user = user
        self._layer: MessageLayer = user.session(session_id)  # checks the id: the store's rule
        self._zone = getattr(getattr(user, "store", None), "zone", None)
        self._lock = threading.Lock()
        self._state = _State({}, Cursor(), 0)  # replayed at the first call

    def __repr__(self) -> str:
        return f"AgentMemStore(user_id={self._user.user_id!r}, session_id={self._layer.key!r})"

    @property
    def layer(self) -> MessageLayer:
        """The session layer the items are kept in (every write, in order)."""
        return self._layer

    # ------------------------------------------------------------------ replay

    def _refresh(self) -> _Spaces:
        """Bring the items up to what the layer holds now (only what was appended since the last look is read)."""
        state = self._state
        scan = self._layer.scan(state.cursor)
        if scan.change == "unchanged":
            return state.spaces
        spaces: _Spaces = {} if scan.change in ("rewritten", "truncated") else state.spaces
        for _, record in self._layer.read_records(scan.start, scan.stop):
            self._apply(spaces, record)
        self._state = _State(spaces, scan.cursor, scan.stop)
        return spaces

    def _apply(self, spaces: _Spaces, record: Mapping[str, Any]) -> None:
        meta = record.get("meta")
        entry = meta.get("store") if isinstance(meta, dict) else None
        if record.get("role") != STORE_ROLE or not isinstance(entry, dict):
            return  # a line someone else wrote into the layer: not an item
        namespace, key, value = entry.get("namespace"), entry.get("key"), entry.get("value")
        if not isinstance(namespace, list) or not all(isinstance(n, str) for n in namespace) or not isinstance(key, str):
            return
        space = tuple(namespace)
        if value is None:
            bucket = spaces.get(space)
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del spaces[space]  # a namespace is listed while it holds an item
            return
        if not isinstance(value, dict):
            return
        moment, _ = parse_ts(record.get("ts"), self._zone)
        moment = moment or _dt.datetime.now(_dt.timezone.utc)
        bucket = spaces.setdefault(space, {})
        before = bucket.get(key)
        bucket[key] = Item(value=value, key=key, namespace=space,
                           created_at=before.created_at if before is not None else moment, updated_at=moment)

    # ------------------------------------------------------------------ batch

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph store operations: reads see the state before the batch, then its writes are applied."""
        ops = list(ops)
        for op in ops:
            if isinstance(op, (GetOp, PutOp)):
                _check_labels(op.namespace, allow_empty=False)
            elif isinstance(op, SearchOp):
                _check_labels(op.namespace_prefix, allow_empty=True)
            elif isinstance(op, ListNamespacesOp):
                for condition in op.match_conditions or ():
                    _check_labels(tuple(condition.path), allow_empty=True)
            else:
                raise InvalidArgument(f"{type(op).__name__}: not a store operation (GetOp, PutOp, SearchOp, "
                                      "ListNamespacesOp)")
        writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                if op.value is not None:
                    self._encode(op)  # refuse what cannot be stored before anything of the batch is written
                writes[(op.namespace, op.key)] = op
        with self._lock:
            spaces = self._refresh()
            results: list[Result] = []
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(spaces.get(op.namespace, {}).get(op.key))
                elif isinstance(op, SearchOp):
                    results.append(self._search(spaces, op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(spaces, op))
                else:
                    results.append(None)
            if writes:
                with self._user.transaction():
                    for op in writes.values():
                        self._write(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (the store's reads and writes block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _encode(self, op: PutOp) -> str:
        try:
            return _ENCODE(dict(op.value or {}))
        except (TypeError, ValueError) as error:
            raise InvalidArgument(f"put {op.namespace!r} {op.key!r}: the value must be JSON (dicts, lists, strings, "
                                  f"numbers, booleans, null): {error}") from None

    def _write(self, op: PutOp) -> None:
        label = "/".join(op.namespace)
        if op.value is None:
            content = f"{label} {op.key}: deleted"
            value: dict[str, Any] | None = None
        else:
            content = f"{label} {op.key}: {self._encode(op)}"
            value = dict(op.value)
        self._layer.append(STORE_ROLE, content, tags=("langgraph",),
                           meta={"store": {"namespace": list(op.namespace), "key": op.key, "value": value}})

    def _search(self, spaces: _Spaces, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        size = len(prefix)
        wanted = list((op.filter or {}).items())
        found = [item for ns, bucket in spaces.items() if ns[:size] == prefix for item in bucket.values()
                 if all(_matches(item.value.get(k), v) for k, v in wanted)]
        found.sort(key=lambda item: item.updated_at, reverse=True)
        scores: list[float | None] = [None] * len(found)
        if op.query:
            words = [w for w in op.query.casefold().split() if w]
            texts = [_ENCODE(item.value).casefold() for item in found]
            ranked = sorted(range(len(found)), key=lambda i: -sum(w in texts[i] for w in words))
            found = [found[i] for i in ranked]
            scores = [sum(w in texts[i] for w in words) / max(len(words), 1) for i in ranked]
        start = max(op.offset, 0)
        stop = start + max(op.limit, 0)
        return [SearchItem(namespace=item.namespace, key=item.key, value=item.value, created_at=item.created_at,
                           updated_at=item.updated_at, score=score)
                for item, score in zip(found[start:stop], scores[start:stop])]

    @staticmethod
    def _list_namespaces(spaces: _Spaces, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names = set(spaces)
        if op.match_conditions:
            names = {ns for ns in names if all(_namespace_matches(ns, c) for c in op.match_conditions)}
        if op.max_depth is not None:
            names = {ns[: op.max_depth] for ns in names}
        ordered = sorted(names)
        start = max(op.offset, 0)
        return ordered[start: start + max(op.limit, 0)]
