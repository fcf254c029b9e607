"""``frames.store_items`` reads ``InMemoryStore``, ``SqliteStore`` and ``PostgresStore`` from their own data
(``agentmem_nb.frames._lg_stores``) and gives the frame ``BaseStore.search`` gives, without searching."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pandas as pd
import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from agentmem_nb import frames
from agentmem_nb.frames import _lg_stores
from agentmem_nb.frames import langgraph as lg
from langgraph_testlib import KINDS, make_store


@pytest.fixture(params=KINDS)
def lg_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    yield from make_store(request.param, tmp_path)


def _fill(store: Any) -> None:
    # labels with the pattern characters of LIKE and GLOB, a case twin, a longer sibling and a deeper namespace:
    # a prefix must match the namespace or one below it, nothing else
    for ns in [("users", "alice"), ("users", "alice", "deep"), ("users", "bob"), ("usersX",), ("Users",),
               ("a%b",), ("a_b",), ("a*b", "c?"), ("a[b]",), ("axb",)]:
        for i in range(3):
            store.put(ns, f"k{i}", {"text": f"{'/'.join(ns)} {i}", "n": i, "ok": i % 2 == 0})
    store.put(("users", "alice"), "k1", {"text": "changed", "n": 10, "ok": None})  # created_at != updated_at
    store.put(("docs",), "nested", {"title": "A", "tags": ["x", "y"]})
    store.delete(("users", "bob"), "k2")


PREFIXES = [(), ("users",), ("users", "alice"), ("Users",), ("a%b",), ("a_b",), ("a*b",), ("a*b", "c?"), ("a[b]",),
            ("docs",), ("nobody",)]


@pytest.mark.parametrize("prefix", PREFIXES, ids=lambda p: "/".join(p) or "all")
def test_store_items_equal_the_search_frame(lg_store: Any, prefix: tuple[str, ...]) -> None:
    _fill(lg_store)
    assert _lg_stores.store_rows(lg_store, prefix) is not None  # read from the store's own data
    expected = lg._store_frame(lg._searched_rows(lg_store, prefix), fields=None, zone=None)
    got = frames.store_items(lg_store, namespace_prefix=prefix)
    pd.testing.assert_frame_equal(got, expected)
    if prefix == ("users",):
        assert got["namespace"].tolist() == [("users", "alice")] * 3 + [("users", "alice", "deep")] * 3 + [
            ("users", "bob")] * 2
        assert "changed" in got["text"].tolist()
    for fields in (True, False):
        pd.testing.assert_frame_equal(
            frames.store_items(lg_store, namespace_prefix=prefix, fields=fields),
            lg._store_frame(lg._searched_rows(lg_store, prefix), fields=fields, zone=None))


def test_store_items_do_not_search(lg_store: Any) -> None:
    """The store's search is not called: InMemoryStore's walks every item for each page (1.3 s at 100k items)."""
    _fill(lg_store)
    kind = type(lg_store)  # a spy on the class (InMemoryStore has slots): every search and listing goes through batch
    with mock.patch.object(kind, "batch", autospec=True, side_effect=kind.batch) as batch:
        assert len(frames.store_items(lg_store)) == 30
        assert batch.call_count == 0
        names = frames.store_namespaces(lg_store)
        assert batch.call_count == 1  # list_namespaces; the items are counted from the store's data
    assert names["n_items"].sum() == 30


def test_a_store_with_a_ttl_is_searched(tmp_path: Any) -> None:
    conn = sqlite3.connect(tmp_path / "ttl.db", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, ttl={"default_ttl": 60, "refresh_on_read": True})
    store.setup()
    store.put(("a",), "k", {"v": 1})
    assert _lg_stores.store_rows(store, ()) is None  # search refreshes the TTL: the store's business
    assert frames.store_items(store)["v"].tolist() == [1]
    conn.close()


def test_a_store_subclass_is_searched() -> None:
    class Mine(InMemoryStore):
        pass

    store = Mine()
    store.put(("a",), "k", {"v": 1})
    assert _lg_stores.store_rows(store, ()) is None
    assert frames.store_items(store)["v"].tolist() == [1]


def test_a_store_whose_langgraph_internals_changed_is_searched(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    conn = sqlite3.connect(tmp_path / "changed.db", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, deserializer=json.loads)  # search then needs no module-level reader of langgraph's
    store.setup()
    _fill(store)
    expected = lg._store_frame(lg._searched_rows(store, ("users",)), fields=None, zone=None)
    # a LangGraph release without the private value reader _lg_stores imports
    monkeypatch.delattr("langgraph.store.sqlite.base._json_loads")
    with pytest.raises(ImportError):
        _lg_stores._sqlite_rows(store, ("users",))
    assert _lg_stores.store_rows(store, ("users",)) is None
    pd.testing.assert_frame_equal(frames.store_items(store, namespace_prefix=("users",)), expected)
    conn.close()
