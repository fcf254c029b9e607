"""Every item of a LangGraph store under a namespace prefix, read from the store's own data: ``frames.store_items``'s
fast path.

Why: ``BaseStore.search`` pages through the items and ``InMemoryStore`` walks from its first item for every page,
scoring each (1.3 s of the 2.5 s a 100k-item frame took, ``benchmarks/LANGGRAPH.md``). Here ``InMemoryStore`` is read
from its dict of namespaces (``_data``: namespace → key → ``Item``), and ``SqliteStore`` / ``PostgresStore`` by one
``SELECT`` over their ``store`` table through the store's own cursor (its lock, its pool). The rows are what
``search`` gives — the same values, the same ``created_at`` / ``updated_at`` — pinned by
``tests/frames/test_frames_langgraph_stores.py``.

A store is read this way only when it is exactly one of those types and has no TTL configured (a search refreshes
and omits expired items under a TTL: that stays the store's business); anything else returns ``None`` and the caller
pages through ``search``, as it does when the read fails the way a change of the private parts used here would
(``_data``, ``_cursor``, ``_deserializer``, the row readers of ``langgraph.store.*.base``; see ``_lg_readers.fast``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

from agentmem_nb.frames._lg_readers import fast

__all__ = ["StoreRow", "store_rows"]

StoreRow = tuple[tuple[str, ...], str, Any, _dt.datetime, _dt.datetime]
"""(namespace, key, value, created_at, updated_at)."""


def _kind(store: object) -> tuple[str, str]:
    kind = type(store)
    return kind.__module__, kind.__name__


def store_rows(store: object, prefix: tuple[str, ...]) -> list[StoreRow] | None:
    """The items under ``prefix`` (any order), or ``None`` when this store is read through ``search`` instead."""
    kind = _kind(store)
    if kind == ("langgraph.store.memory", "InMemoryStore"):
        return fast(lambda: _memory_rows(store, prefix))
    if getattr(store, "ttl_config", None):
        return None  # search refreshes or omits expired items under a TTL: read the store's way
    if kind == ("langgraph.store.sqlite.base", "SqliteStore"):
        return fast(lambda: _sqlite_rows(store, prefix))
    if kind == ("langgraph.store.postgres.base", "PostgresStore"):
        return fast(lambda: _postgres_rows(store, prefix))
    return None


def _memory_rows(store: Any, prefix: tuple[str, ...]) -> list[StoreRow]:
    width = len(prefix)
    return [(item.namespace, item.key, item.value, item.created_at, item.updated_at)
            for namespace, items in list(store._data.items())  # the store's own dict: namespace -> key -> Item
            if namespace[:width] == prefix
            for item in list(items.values())]


def _prefix_sql(prefix: tuple[str, ...], mark: str) -> tuple[str, tuple[Any, ...]]:
    """The namespace itself or one below it (the stores keep a namespace as its labels joined by ``.``, and a label
    cannot hold a ``.``): compared as text, so no pattern character in a label can widen it."""
    if not prefix:
        return "TRUE", ()
    path = ".".join(prefix)
    return (f"(prefix = {mark} OR substr(prefix, 1, CAST({mark} AS integer)) = {mark})",
            (path, len(path) + 1, path + "."))


def _sqlite_rows(store: Any, prefix: tuple[str, ...]) -> list[StoreRow]:
    from langgraph.store.sqlite.base import _json_loads  # the store's own value reader

    condition, params = _prefix_sql(prefix, "?")
    with store._cursor(transaction=False) as cur:  # the store's own: sets it up and holds its lock
        cur.execute(f"SELECT prefix, key, value, created_at, updated_at FROM store WHERE {condition}", params)
        rows: Sequence[Any] = cur.fetchall()
    load = store._deserializer or _json_loads
    # as langgraph's _row_to_item and Item read a row (a value not yet a dict through the loader, a text time through
    # fromisoformat), without building 100k Items (0.9 s of a 100k-item frame)
    return [(tuple(ns.split(".")), key, value if isinstance(value, dict) else load(value), _moment(created),
             _moment(updated)) for ns, key, value, created, updated in rows]


def _moment(value: Any) -> _dt.datetime:
    return _dt.datetime.fromisoformat(value) if isinstance(value, str) else value


def _postgres_rows(store: Any, prefix: tuple[str, ...]) -> list[StoreRow]:
    from langgraph.store.postgres.base import _decode_ns_bytes, _row_to_item  # the store's own row readers

    condition, params = _prefix_sql(prefix, "%s")
    with store._cursor() as cur:  # the store's own: its connection or pool, dict rows
        cur.execute(f"SELECT prefix, key, value, created_at, updated_at FROM store WHERE {condition}", params)
        rows = cur.fetchall()
    loader = store._deserializer
    items = [_row_to_item(_decode_ns_bytes(row["prefix"]), row, loader=loader) for row in rows]
    return [(item.namespace, item.key, item.value, item.created_at, item.updated_at) for item in items]
