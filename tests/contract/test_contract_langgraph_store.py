"""``AgentMemStore`` behaves as LangGraph's own store tests expect a ``BaseStore`` to behave.

Each check runs against LangGraph's ``InMemoryStore`` (the reference: the expectation is proven there first) and
against the adapter on every backend of the conformance suite (files; PostgreSQL under ``-m postgres``). The checks
were written after reading ``libs/checkpoint-sqlite/tests/test_store.py`` and ``libs/checkpoint/tests/test_store.py``
of langchain-ai/langgraph (batch order, get/put/delete, search by prefix, filter and page, list_namespaces by
prefix/suffix/wildcard/depth, label boundaries) — the same expectations, not their code; vector search is left out
(the adapter has no embedding index).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from contract_backends import BACKENDS
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.langgraph_store import AgentMemStore
from agentmem_nb.timeutil import system_clock

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["reference", "files", pytest.param("postgres", marks=pytest.mark.postgres)])
def lg(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "reference":
        yield InMemoryStore()
        return
    backend = BACKENDS[request.param]
    store = backend.open(tmp_path, system_clock)
    yield AgentMemStore(store.user("alice"))
    if backend.cleanup is not None:
        backend.cleanup()


def test_batch_answers_in_op_order(lg: Any) -> None:
    lg.put(("test", "foo"), "key1", {"data": "value1"})
    lg.put(("test", "bar"), "key2", {"data": "value2"})
    results = lg.batch([
        GetOp(("test", "foo"), "key1"),
        PutOp(("test", "bar"), "key2", {"data": "value2"}),
        SearchOp(("test",), filter={"data": "value1"}),
        ListNamespacesOp(),
        GetOp(("test",), "key3"),
    ])
    assert len(results) == 5
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[0].namespace == ("test", "foo") and results[0].key == "key1"
    assert results[1] is None
    assert [(i.key, i.value) for i in results[2]] == [("key1", {"data": "value1"})]
    assert {("test", "foo"), ("test", "bar")} <= set(results[3])
    assert results[4] is None
    again = lg.batch([SearchOp(("test",), limit=5), GetOp(("test", "bar"), "key2"), ListNamespacesOp(limit=5),
                      PutOp(("test",), "key3", {"data": "value3"}), GetOp(("test", "foo"), "key1")])
    assert len(again[0]) == 2 and again[1].value == {"data": "value2"} and again[3] is None
    assert again[4].value == {"data": "value1"}
    assert lg.get(("test",), "key3").value == {"data": "value3"}


def test_reads_in_a_batch_see_the_state_before_its_writes(lg: Any) -> None:
    results = lg.batch([PutOp(("n",), "k", {"v": 1}), GetOp(("n",), "k")])
    assert results == [None, None]
    assert lg.get(("n",), "k").value == {"v": 1}
    lg.batch([PutOp(("n",), "k", {"v": 2}), PutOp(("n",), "k", {"v": 3})])  # the last write of a key wins
    assert lg.get(("n",), "k").value == {"v": 3}


def test_put_get_update_delete(lg: Any) -> None:
    ns = ("test", "documents")
    lg.put(ns, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = lg.get(ns, "doc1")
    assert item.namespace == ns and item.key == "doc1"
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    assert item.created_at is not None and item.updated_at is not None
    lg.put(ns, "doc1", {"title": "Updated"})
    updated = lg.get(ns, "doc1")
    assert updated.value == {"title": "Updated"} and updated.updated_at >= item.updated_at
    assert lg.get(("test", "other"), "doc1") is None
    lg.delete(ns, "doc1")
    assert lg.get(ns, "doc1") is None
    assert lg.search(("test",)) == []


def test_batch_put_with_none_deletes(lg: Any) -> None:
    lg.put(("test",), "key3", {"data": "old"})
    assert lg.batch([PutOp(("test",), "key1", {"data": "value1"}), PutOp(("test",), "key2", {"data": "value2"}),
                     PutOp(("test",), "key3", None)]) == [None, None, None]
    assert lg.get(("test",), "key1").value == {"data": "value1"}
    assert lg.get(("test",), "key2").value == {"data": "value2"}
    assert lg.get(("test",), "key3") is None


def test_delete_of_a_missing_key_is_quiet(lg: Any) -> None:
    lg.put(("somebody",), "k", {"v": 1})
    lg.delete(("nobody",), "nothing")
    assert lg.get(("nobody",), "nothing") is None
    assert lg.get(("somebody",), "k").value == {"v": 1}


def test_search_prefix_filter_and_pages(lg: Any) -> None:
    data = [(("test", "docs"), "doc1", {"title": "First", "author": "Alice", "tags": ["important"]}),
            (("test", "docs"), "doc2", {"title": "Second", "author": "Bob", "tags": ["draft"]}),
            (("test", "images"), "img1", {"title": "Image", "author": "Alice", "tags": ["final"]})]
    for ns, key, value in data:
        lg.put(ns, key, value)
    assert len(lg.search(("test",))) == 3
    docs = lg.search(("test", "docs"))
    assert sorted(i.key for i in docs) == ["doc1", "doc2"] and all(i.namespace == ("test", "docs") for i in docs)
    assert sorted(i.key for i in lg.search(("test",), filter={"author": "Alice"})) == ["doc1", "img1"]
    assert [i.key for i in lg.search(("test",), filter={"tags": ["draft"]})] == ["doc2"]
    first, second = lg.search(("test",), limit=2), lg.search(("test",), limit=2, offset=2)
    assert len(first) == 2 and len(second) == 1
    assert {i.key for i in first}.isdisjoint({i.key for i in second})
    assert {i.key for i in first} | {i.key for i in second} == {"doc1", "doc2", "img1"}


def test_filter_operators_and_booleans(lg: Any) -> None:
    for key, score, active in [("a", 1.5, True), ("b", 4.99, False), ("c", 7, True)]:
        lg.put(("items",), key, {"score": score, "active": active, "meta": {"color": "red" if active else "blue"}})

    def keys(**filters: Any) -> list[str]:
        return sorted(i.key for i in lg.search(("items",), filter=filters))

    assert keys(score={"$gt": 4.99}) == ["c"]
    assert keys(score={"$gte": 4.99}) == ["b", "c"]
    assert keys(score={"$lt": 4.99}) == ["a"]
    assert keys(score={"$lte": 4.99, "$gt": 1.5}) == ["b"]
    assert keys(score={"$ne": 7}) == ["a", "b"]
    assert keys(score={"$eq": 7}) == ["c"]
    assert keys(active=True) == ["a", "c"]
    assert keys(active=False) == ["b"]
    assert keys(meta={"color": "red"}) == ["a", "c"]
    assert keys(active=True, score={"$gt": 2}) == ["c"]
    assert keys(missing="x") == []


def test_search_prefix_stops_at_label_boundaries(lg: Any) -> None:
    for ns in [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"), ("foo2",),
               ("Foo",), ("user_1",), ("a%b",), ("star*",), ("starX",)]:
        lg.put(ns, "k", {"v": 1})

    def spaces(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {i.namespace for i in lg.search(prefix, limit=100)}

    assert spaces(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert spaces(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert spaces(("fo",)) == set()
    assert spaces(("Foo",)) == {("Foo",)}
    assert spaces(("star*",)) == {("star*",)}  # a "*" inside a search prefix is a plain character
    assert len(spaces(())) == 11


def test_list_namespaces(lg: Any) -> None:
    pref = "p"
    spaces = [(pref, "test", "documents", "public", pref), (pref, "test", "documents", "private", pref),
              (pref, "test", "images", "public", pref), (pref, "test", "images", "private", pref),
              (pref, "prod", "documents", "public", pref), (pref, "prod", "documents", "some", "nesting", "public", pref),
              (pref, "prod", "documents", "private", pref)]
    for ns in spaces:
        lg.put(ns, "dummy", {"content": "dummy"})
    assert len(lg.list_namespaces(prefix=(pref, "test"))) == 4
    assert len(lg.list_namespaces(prefix=(pref, "test", "documents"))) == 2
    assert len(lg.list_namespaces(suffix=("public", pref))) == 4
    assert len(lg.list_namespaces(prefix=(pref, "test"), suffix=("public", pref))) == 2
    assert len(lg.list_namespaces(prefix=(pref, "*", "documents"))) == 5
    assert len(lg.list_namespaces(suffix=("*", "public", pref))) == 4
    assert lg.list_namespaces(suffix=("some", "*", "public", pref)) == [spaces[5]]
    assert all(len(ns) <= 3 for ns in lg.list_namespaces(max_depth=3))
    assert sorted(lg.list_namespaces(max_depth=3)) == [(pref, "prod", "documents"), (pref, "test", "documents"),
                                                       (pref, "test", "images")]
    deep = lg.list_namespaces(max_depth=4, prefix=(pref, "*", "documents"))
    assert len(set(deep)) == len(deep) == 5
    assert len(lg.list_namespaces(prefix=(pref,), limit=3)) == 3
    assert len(lg.list_namespaces(prefix=(pref,), offset=3)) == len(spaces) - 3
    assert set(lg.list_namespaces(prefix=(pref,))) == set(spaces)
    assert lg.list_namespaces() == sorted(spaces)
    results = lg.batch([ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),))])
    assert results[0] == []  # every namespace here ends in pref, none in "public"


def test_list_namespaces_label_boundaries(lg: Any) -> None:
    for ns in [("foo",), ("foo", "child"), ("foobar",), ("uid", "users", "alice"), ("uid", "users", "malice"),
               ("uid", "a", "b", "alice"), ("users", "alice\n")]:
        lg.put(ns, "k", {"v": 1})
    assert set(lg.list_namespaces(prefix=["foo"])) == {("foo",), ("foo", "child")}
    assert set(lg.list_namespaces(suffix=["alice"])) == {("uid", "users", "alice"), ("uid", "a", "b", "alice")}
    assert set(lg.list_namespaces(prefix=["uid", "*", "alice"])) == {("uid", "users", "alice")}


def test_non_ascii_and_nested_values_round_trip(lg: Any) -> None:
    value = {"text": "这是中文", "nested": {"list": [1, 2.5, None, True, {"k": "Это"}]}, "emoji": "🙂"}
    lg.put(("user_123", "memories"), "1", value)
    assert lg.get(("user_123", "memories"), "1").value == value
    assert lg.search(("user_123",), filter={"text": "这是中文"})[0].key == "1"


@pytest.mark.parametrize("namespace", [("a.b",), ("",), ("ok", "")])
def test_bad_namespace_labels_are_refused(lg: Any, namespace: tuple[str, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        lg.put(namespace, "k", {"v": 1})
    assert lg.list_namespaces() == []


def test_async_methods(lg: Any) -> None:
    async def run() -> None:
        await lg.aput(("a",), "k", {"v": 1})
        assert (await lg.aget(("a",), "k")).value == {"v": 1}
        assert [i.key for i in await lg.asearch(("a",))] == ["k"]
        assert await lg.alist_namespaces() == [("a",)]
        await lg.adelete(("a",), "k")
        assert await lg.aget(("a",), "k") is None

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------------- ours only


@pytest.fixture
def files_store(tmp_path: Path) -> Any:
    return BACKENDS["files"].open(tmp_path, system_clock)


def test_a_value_that_is_not_json_is_refused_and_nothing_written(files_store: Any) -> None:
    lg = AgentMemStore(files_store.user("alice"))
    with pytest.raises(InvalidArgument, match="'bad'.*JSON"):
        lg.batch([PutOp(("n",), "good", {"v": 1}), PutOp(("n",), "bad", {"v": object()})])
    assert len(lg.layer) == 0 and lg.get(("n",), "good") is None


@pytest.mark.parametrize("namespace", [("a.b",), ("",), ("ok", ""), ("nul\x00",)])
def test_ops_handed_straight_to_batch_are_checked(files_store: Any, namespace: tuple[str, ...]) -> None:
    # (InMemoryStore checks only in its friendly methods; SqliteStore checks batch ops too, as we do.)
    lg = AgentMemStore(files_store.user("alice"))
    with pytest.raises(InvalidNamespaceError, match="label"):
        lg.batch([PutOp(("fine",), "k", {"v": 1}), PutOp(namespace, "k", {"v": 1})])
    assert len(lg.layer) == 0


def test_a_deleted_or_never_written_namespace_is_not_listed(files_store: Any) -> None:
    # (InMemoryStore lists a namespace once anything asked for it, even a get; the SQL stores list only namespaces
    # that hold items, as we do.)
    lg = AgentMemStore(files_store.user("alice"))
    lg.get(("asked",), "k")
    lg.put(("gone",), "k", {"v": 1})
    lg.delete(("gone",), "k")
    assert lg.list_namespaces() == []


def test_created_at_kept_across_updates_and_reset_by_a_delete(files_store: Any) -> None:
    lg = AgentMemStore(files_store.user("alice"))
    lg.put(("n",), "k", {"v": 1})
    first = lg.get(("n",), "k")
    lg.put(("n",), "k", {"v": 2})
    second = lg.get(("n",), "k")
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    lg.delete(("n",), "k")
    lg.put(("n",), "k", {"v": 3})
    assert lg.get(("n",), "k").created_at >= second.updated_at
    # every write is a message of the layer: nothing is lost, and it reads like any thread
    assert [m.content for m in lg.layer.messages()] == ['n k: {"v": 1}', 'n k: {"v": 2}', "n k: deleted",
                                                        'n k: {"v": 3}']
    assert [m.message_id for m in lg.layer.messages()] == [1, 2, 3, 4]


def test_a_second_store_object_sees_the_writes(files_store: Any) -> None:
    one = AgentMemStore(files_store.user("alice"))
    two = AgentMemStore(BACKENDS["files"].reopen(files_store).user("alice"))
    one.put(("n",), "k", {"v": 1})
    assert two.get(("n",), "k").value == {"v": 1}
    two.delete(("n",), "k")
    assert one.get(("n",), "k") is None


_CHILD = """
import sys
from agentmem_nb import MemoryStore
from agentmem_nb.langgraph_store import AgentMemStore
store = AgentMemStore(MemoryStore(sys.argv[1], zone="Asia/Shanghai").user("alice"))
for i in range(int(sys.argv[2])):
    store.put(("shared", sys.argv[3]), f"k{i}", {"i": i, "by": sys.argv[3]})
print(len(store.search(("shared",), limit=1000)))
"""


def test_items_persist_across_processes(files_store: Any) -> None:
    root = str(files_store.root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [subprocess.Popen([sys.executable, "-c", _CHILD, root, "40", name], env=env, stdout=subprocess.PIPE,
                                 text=True) for name in ("p1", "p2")]
    outputs = [child.communicate(timeout=120)[0] for child in children]
    assert all(child.returncode == 0 for child in children), outputs
    here = AgentMemStore(files_store.user("alice"))
    items = here.search(("shared",), limit=1000)
    assert len(items) == 80
    assert {(i.namespace[1], i.value["i"]) for i in items} == {(p, i) for p in ("p1", "p2") for i in range(40)}
    ids = [m.message_id for m in here.layer.messages()]
    assert ids == list(range(1, 81))  # two writers, one id each, none shared


def test_refuses_what_is_not_a_user() -> None:
    with pytest.raises(InvalidArgument, match="MemoryStore"):
        AgentMemStore("memory/alice")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["files", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_layer_cut_behind_the_store_is_replayed_whole(name: str, tmp_path: Path) -> None:
    # A restore from an older backup drops the last write: the items are what the remaining writes say.
    backend = BACKENDS[name]
    store = backend.open(tmp_path, system_clock)
    try:
        lg = AgentMemStore(store.user("alice"))
        lg.put(("n",), "k", {"v": 1})
        lg.put(("n",), "other", {"v": 9})
        lg.put(("n",), "k", {"v": 2})
        lg.put(("late",), "k", {"v": 3})
        assert lg.get(("late",), "k").value == {"v": 3}
        assert backend.truncate is not None
        backend.truncate(lg.layer)
        assert lg.get(("late",), "k") is None  # the write that was cut is gone, not kept from before the cut
        assert lg.list_namespaces() == [("n",)]
        assert lg.get(("n",), "k").value == {"v": 2}
        assert sorted(i.key for i in lg.search(("n",))) == ["k", "other"]
    finally:
        if backend.cleanup is not None:
            backend.cleanup()
