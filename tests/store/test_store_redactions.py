"""Redaction events: a message hidden from view is recorded as an event; its line is never rewritten."""

from __future__ import annotations

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.errors import InvalidIdentifier, MemoryDataWarning, StoreError
from agentmem_nb.items import ItemKey


def test_a_redaction_is_an_event_and_the_message_line_is_kept(store: MemoryStore) -> None:
    mem = store.user("alice")
    written = mem.append("s1", "user", "my card number is 4111 1111 1111 1111")
    before = mem.session("s1").path.read_bytes()
    event = mem.redactions.add(ItemKey("session", "s1", written.session.message_id), reason="card number",
                               source="inspector")
    assert event.redaction_id == 1 and event.reason == "card number" and event.source == "inspector"
    assert event.ts is not None and event.item == ("session", "s1", written.session.message_id)
    assert mem.session("s1").path.read_bytes() == before  # never silently rewritten
    assert mem.redactions.active() == {event.item: event}
    # a new store object reads the same events back (they are on disk)
    again = MemoryStore(store.root, zone="Asia/Shanghai").user("alice").redactions
    assert again.events() == [event]


def test_every_redaction_is_kept_in_order(store: MemoryStore) -> None:
    red = store.user("alice").redactions
    first = red.add(ItemKey("session", "s1", 1), reason="one")
    second = red.add(ItemKey("daily", "2026-04-08", 3), reason="two")
    third = red.add(ItemKey("session", "s1", 1), reason="one, again")
    assert [e.redaction_id for e in red.events()] == [1, 2, 3]
    assert red.active()[first.item] == third and red.active()[second.item] == second


@pytest.mark.parametrize("item, reason, error, match", [
    (ItemKey("session", "s1", 1), "  ", StoreError, "give a reason"),
    (ItemKey("session", "../x", 1), "r", InvalidIdentifier, "session"),
    (ItemKey("daily", "2026-4-8", 1), "r", InvalidIdentifier, "day"),
    (ItemKey("session", "s1", 0), "r", StoreError, "integers from 1"),
    (ItemKey("other", "s1", 1), "r", StoreError, "'session' or 'daily'"),  # type: ignore[arg-type]
])
def test_bad_redactions_are_refused_and_write_nothing(store: MemoryStore, item, reason, error, match) -> None:
    red = store.user("alice").redactions
    with pytest.raises(error, match=match):
        red.add(item, reason=reason)
    assert red.events() == [] and not red.file.path.exists()


def test_an_unreadable_line_is_a_problem_not_an_error(store: MemoryStore) -> None:
    mem = store.user("alice")
    mem.redactions.add(ItemKey("session", "s1", 1), reason="r")
    with open(mem.redactions.file.path, "ab") as f:
        f.write(b"{not json\n")
    with pytest.warns(MemoryDataWarning, match="redactions.jsonl"):
        assert len(mem.redactions.events()) == 1
    assert any("redactions.jsonl" in str(p.path) for p in mem.problems())


def test_reads_fold_only_the_redactions_appended_since_the_last_read(store: MemoryStore, monkeypatch) -> None:
    mem = store.user("alice")
    for i in range(1, 41):
        mem.append("s1", "user", f"message {i} about tea")
    for i in range(1, 31):
        mem.redactions.add(ItemKey("session", "s1", i), reason=f"r{i}")
    red = mem.redactions
    read: list[int] = []
    real = red.file.read_records

    def counting(start: int, stop: int):
        read.append(stop - start)
        return real(start, stop)

    real_iter = red.file.iter_records

    def counting_iter(*args, **kwargs):
        for record in real_iter(*args, **kwargs):
            read.append(1)
            yield record

    monkeypatch.setattr(red.file, "read_records", counting)
    monkeypatch.setattr(red.file, "iter_records", counting_iter)
    mem.session_window("s1", 35, 2, 2)
    mem.search_session("s1", "tea")
    first = sum(read)
    for _ in range(5):  # every later search and window reads no event again
        mem.search_session("s1", "tea")
        mem.session_window("s1", 35, 2, 2)
    assert sum(read) == first <= 30
    mem.redactions.add(ItemKey("session", "s1", 31), reason="one more")
    assert mem.redactions.active()[ItemKey("session", "s1", 31)].reason == "one more"
    assert sum(read) == first + 1  # only the new event


def test_a_redactions_file_replaced_by_as_many_lines_is_read_again(store: MemoryStore) -> None:
    mem = store.user("alice")
    mem.redactions.add(ItemKey("session", "s1", 1), reason="first")
    assert set(mem.redactions.active()) == {ItemKey("session", "s1", 1)}
    path = mem.redactions.file.path
    text = path.read_text(encoding="utf-8").replace('"target_id": 1', '"target_id": 2').replace(
        '"target_id":1', '"target_id":2')
    assert text != path.read_text(encoding="utf-8")
    replacement = path.with_name("replacement.tmp")
    replacement.write_text(text, encoding="utf-8")
    replacement.replace(path)  # another file of the same size: a restore from a backup, an editor's save
    assert set(mem.redactions.active()) == {ItemKey("session", "s1", 2)}
