"""Conformance: ``scan(since=cursor)`` — one rule for "unchanged / appended / rewritten / truncated"."""

from __future__ import annotations

import pytest
from contract_backends import Backend, capability

from agentmem_nb.store.contract import MessageLayer, Store


def _thread(store: Store, count: int) -> MessageLayer:
    user = store.user("alice")
    for i in range(count):
        user.append("s1", "user", f"message {i}")
    return user.session("s1")


def _contents(layer: MessageLayer, start: int, stop: int) -> list[str]:
    return [record["content"] for _mid, record in layer.read_records(start, stop)]


def test_the_first_scan_sees_everything_then_nothing(store: Store) -> None:
    empty = store.user("alice").session("s1").scan()
    assert (empty.change, empty.start, empty.stop) == ("unchanged", 0, 0)
    layer = _thread(store, 3)
    first = layer.scan()
    assert (first.change, first.start, first.stop) == ("appended", 0, 3)
    assert _contents(layer, first.start, first.stop) == ["message 0", "message 1", "message 2"]
    again = layer.scan(first.cursor)
    assert (again.change, again.start, again.stop) == ("unchanged", 3, 3)
    assert again.cursor == first.cursor


def test_appends_are_named_by_position_from_any_reader(backend: Backend, store: Store) -> None:
    layer = _thread(store, 2)
    cursor = layer.scan().cursor
    other = backend.reopen(store).user("alice")  # another writer
    other.append("s1", "assistant", "from elsewhere")
    other.append("s1", "user", "and again")
    grown = layer.scan(cursor)
    assert (grown.change, grown.start, grown.stop) == ("appended", 2, 4)
    assert _contents(layer, grown.start, grown.stop) == ["from elsewhere", "and again"]
    # A second reader with its own cursor is not disturbed by the first one's scans.
    assert backend.reopen(store).user("alice").session("s1").scan(cursor).start == 2


def test_a_rewrite_behind_the_store_starts_over(backend: Backend, store: Store) -> None:
    rewrite = capability(backend, "rewrite")
    layer = _thread(store, 3)
    cursor = layer.scan().cursor
    rewrite(layer)
    store.user("alice").append("s1", "user", "one more")  # a rewrite followed by growth is still a rewrite
    changed = layer.scan(cursor)
    assert (changed.change, changed.start, changed.stop) == ("rewritten", 0, 4)
    assert _contents(layer, 0, 4) == ["MESSAGE 0", "MESSAGE 1", "MESSAGE 2", "one more"]
    assert [m.content for m in layer.search("message 1")] == ["MESSAGE 1"]  # the layer's own reads agree


def test_a_cut_is_truncated(backend: Backend, store: Store) -> None:
    truncate = capability(backend, "truncate")
    layer = _thread(store, 3)
    cursor = layer.scan().cursor
    truncate(layer)
    cut = layer.scan(cursor)
    assert (cut.change, cut.start, cut.stop) == ("truncated", 0, 2)
    assert layer.scan(cut.cursor).change == "unchanged"


def test_a_cursor_from_another_layer_is_not_taken_for_this_one(store: Store) -> None:
    one = _thread(store, 3)
    store.user("alice").append("s2", "user", "short")
    two = store.user("alice").session("s2")
    assert two.scan(one.scan().cursor).change in ("rewritten", "truncated")


@pytest.mark.filterwarnings("ignore::agentmem_nb.errors.MemoryDataWarning")  # the broken entry, announced once
def test_positions_count_readable_messages_on_both_sides_of_a_broken_entry(backend: Backend, store: Store) -> None:
    """A broken entry takes no position (on files a broken line is not indexed): a reader that stopped before it
    is told that exactly the messages appended since are new, where they are, and positions agree everywhere."""
    layer = _thread(store, 3)
    first = layer.scan()
    capability(backend, "corrupt")(layer)
    store.user("alice").append("s1", "user", "message 3")
    store.user("alice").append("s1", "user", "message 4")
    later = layer.scan(first.cursor)
    assert (later.change, later.start, later.stop) == ("appended", 3, 5)
    assert _contents(layer, later.start, later.stop) == ["message 3", "message 4"]
    ids = [mid for mid, _record in layer.read_records(0, later.stop)]
    assert len(ids) == 5 and [layer.position_of(mid) for mid in ids] == [0, 1, 2, 3, 4]
    assert [record["content"] for _mid, record in layer.read_at([4, 0, 3])] == ["message 4", "message 0", "message 3"]
