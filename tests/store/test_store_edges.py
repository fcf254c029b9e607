"""Edge cases found in review: each test failed before its fix."""

from __future__ import annotations

import json

import pytest

from agentmem_nb import MemoryDataWarning, MemoryStore, StoreError
from agentmem_nb.store import ProblemKind


def test_a_second_corruption_keeps_the_first_backup(store: MemoryStore) -> None:
    user = store.user("u")
    user.append("s1", "user", "hello")
    path = user.directory / "conversations.json"
    path.write_bytes(b"first garbage")
    assert [c.session_id for c in user.conversations.list()] == ["s1"]
    path.write_bytes(b"[second garbage]")
    assert [c.session_id for c in store.user("u").conversations.list()] == ["s1"]
    backups = sorted(p.name for p in user.directory.glob("conversations.json.bak*"))
    assert backups == ["conversations.json.bak", "conversations.json.bak.2"]
    assert (user.directory / "conversations.json.bak").read_bytes() == b"first garbage"
    assert (user.directory / "conversations.json.bak.2").read_bytes() == b"[second garbage]"
    assert [p.kind for p in user.conversations.problems()].count(ProblemKind.CORRUPT_DOCUMENT_REBUILT) == 2


def test_a_timestamp_at_the_edge_of_the_calendar_does_not_break_reads(store: MemoryStore) -> None:
    user = store.user("u")
    user.append("s1", "user", "before")
    path = user.session("s1").path
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"ts": "9999-12-31T23:59:59.999999+00:00", "role": "user", "content": "edge"}) + "\n")
    fresh = MemoryStore(store.root, zone="Asia/Shanghai").user("u")
    assert [m.content for m in fresh.session("s1").messages()] == ["before", "edge"]
    assert ProblemKind.BAD_TIMESTAMP in {p.kind for p in fresh.session("s1").problems()}


def test_unstorable_long_term_text_changes_nothing(store: MemoryStore) -> None:
    lt = store.user("u").long_term
    lt.add_note("tea")
    with pytest.raises(StoreError, match="position"):
        lt.write("bad \ud800 text")
    assert lt.read() == "- tea\n"
    assert len(lt.history()) == 1


def test_cold_append_after_a_very_long_last_line_reads_it_once(store: MemoryStore) -> None:
    user = store.user("u")
    user.append("s1", "user", "x" * 300_000)
    layer = MemoryStore(store.root, zone="Asia/Shanghai").user("u").session("s1")
    written = layer._file.append({"role": "user", "content": "next"})  # the raw line file: no day copy
    assert written["message_id"] == 2
    # The tail is read backwards once: about the line's length, not a multiple of it.
    assert layer.stats.bytes_read < 300_000 + 3 * 4096


def test_a_deeply_nested_line_is_skipped_not_raised(store: MemoryStore) -> None:
    user = store.user("u")
    user.append("s1", "user", "hello")
    with open(user.session("s1").path, "a", encoding="utf-8") as handle:
        handle.write("[" * 100_000 + "\n")
    fresh = MemoryStore(store.root, zone="Asia/Shanghai").user("u")
    with pytest.warns(MemoryDataWarning):
        assert [m.content for m in fresh.search_session("s1", "hello")] == ["hello"]
    assert fresh.append("s1", "user", "again").session.message_id == 2
    assert [p.kind for p in fresh.session("s1").problems()] == [ProblemKind.MALFORMED_JSON]


def test_a_hand_merged_tail_never_reuses_an_id(store: MemoryStore) -> None:
    user = store.user("u")
    path = user.session("s1").path
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps({"ts": "2026-04-08T10:00:00+08:00", "role": "user", "content": f"m{i}",
                                        "message_id": i}) + "\n" for i in (1, 2, 3, 4, 5, 3)), encoding="utf-8")
    cold = MemoryStore(store.root, zone="Asia/Shanghai").user("u")
    assert cold.append("s1", "user", "new").session.message_id == 6
    assert cold.session("s1").get(6).content == "new"


def test_a_file_rewritten_in_place_is_reindexed_not_misread(store: MemoryStore) -> None:
    user = store.user("u")
    for text in ("I moved to Lyon", "hi", "ok"):
        user.append("s1", "user", text)
    layer = user.session("s1")
    assert len(layer) == 3
    path = layer.path
    data = path.read_bytes().replace(b"I moved to Lyon", b"I moved to Lyon, France")
    with open(path, "r+b") as handle:  # what an editor that truncates and rewrites does: same inode
        handle.seek(0)
        handle.truncate()
        handle.write(data)
    assert [m.content for m in layer.tail(3)] == ["I moved to Lyon, France", "hi", "ok"]
    assert [m.content for m in layer.window(2, 1, 1).messages] == ["I moved to Lyon, France", "hi", "ok"]
    assert layer.problems() == []


def test_an_in_place_rewrite_that_keeps_every_length_is_seen_once_the_file_grows(store: MemoryStore) -> None:
    """The index follows the file by the cursor rule (the bytes before its end unchanged), not by one newline: an
    editor's save that keeps every line's length, then another writer's append, re-indexes instead of searching
    stale text. (A rewrite that keeps the file's exact size is not seen until the file changes size: the rule's
    documented blind spot, which costs no read when nothing changed.)"""
    user = store.user("u")
    for i in range(3):
        user.append("s1", "user", f"message {i}")
    layer = user.session("s1")
    assert len(layer.search("message")) == 3  # the search text is built
    path = layer.path
    path.write_bytes(path.read_bytes().replace(b"message", b"changed"))  # same length, same newlines
    MemoryStore(store.root, zone=store.zone).user("u").append("s1", "user", "message 3")  # another writer
    assert [m.content for m in layer.search("changed")] == ["changed 0", "changed 1", "changed 2"]
    assert [m.content for m in layer.search("message")] == ["message 3"]
