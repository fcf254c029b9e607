"""``conversations.json``: registered at creation, touched every turn, listed newest first, rebuilt when corrupt."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from agentmem_nb import UserMemory
from agentmem_nb.identifiers import check_session_id
from agentmem_nb.store import ProblemKind


def _document(mem: UserMemory) -> dict[str, dict[str, str]]:
    return json.loads(mem.conversations.path.read_text(encoding="utf-8"))


def test_create_registers_the_conversation_immediately(mem: UserMemory, clock) -> None:
    moment = clock.now
    created = mem.conversations.create("s1", title="Trip to Lyon")
    assert mem.session_ids() == []  # no message yet, the conversation exists anyway
    entry = _document(mem)["s1"]
    assert entry["title"] == "Trip to Lyon"
    assert created.created_at == created.updated_at == moment
    assert [c.session_id for c in mem.conversations.list()] == ["s1"]


def test_create_without_an_id_makes_a_valid_new_one(mem: UserMemory) -> None:
    first, second = mem.conversations.create(), mem.conversations.create()
    assert first.session_id != second.session_id
    assert check_session_id(first.session_id) == first.session_id
    assert set(_document(mem)) == {first.session_id, second.session_id}


def test_create_again_keeps_created_at_and_only_fills_a_missing_title(mem: UserMemory) -> None:
    first = mem.conversations.create("s1")
    again = mem.conversations.create("s1", title="named later")
    assert again.created_at == first.created_at and again.title == "named later"
    assert mem.conversations.create("s1", title="not this one").title == "named later"


def test_touch_updates_updated_at_and_keeps_created_at(mem: UserMemory) -> None:
    created = mem.conversations.create("s1")
    touched = mem.conversations.touch("s1", title="first question")
    assert touched.created_at == created.created_at
    assert touched.updated_at > created.updated_at
    assert touched.title == "first question"
    assert mem.conversations.touch("s1", title="ignored").title == "first question"
    assert mem.conversations.rename("s1", "renamed").title == "renamed"
    implicit = mem.conversations.touch("s2")  # a turn in a conversation nobody created first still lists it
    assert implicit.created_at == implicit.updated_at and implicit.title == ""


def test_list_is_newest_first(mem: UserMemory) -> None:
    for session_id in ["a", "b", "c"]:
        mem.conversations.create(session_id)
    mem.conversations.touch("a")
    assert [c.session_id for c in mem.conversations.list()] == ["a", "c", "b"]


TIES = {
    "b": {"title": "", "created_at": "2026-04-08T10:00:00+08:00", "updated_at": "2026-04-08T12:00:00+08:00"},
    "a": {"title": "", "created_at": "2026-04-08T11:00:00+08:00", "updated_at": "2026-04-08T04:00:00+00:00"},
    "c": {"title": "", "created_at": "2026-04-08T10:00:00+08:00", "updated_at": "2026-04-08T12:00:00+08:00"},
    "newest": {"title": "", "created_at": "2026-04-08T09:00:00", "updated_at": "2026-04-08T13:00:00"},
    "no-times": {"title": "legacy"},
}


def test_ties_are_broken_the_same_way_whatever_the_file_order(mem: UserMemory) -> None:
    orders = set()
    for keys in itertools.permutations(TIES):
        mem.directory.mkdir(parents=True, exist_ok=True)
        mem.conversations.path.write_text(json.dumps({k: TIES[k] for k in keys}), encoding="utf-8")
        orders.add(tuple(c.session_id for c in mem.conversations.list()))
    # 12:00+08:00 and 04:00Z are one instant: a tie, broken by created_at, then by session id
    assert orders == {("newest", "b", "c", "a", "no-times")}


@pytest.mark.parametrize(
    "garbage",
    [b"\x00\xff\xfe not json at all", b'["a", "JSON", "list"]', b'{"s1": {"title": "cut', b"", b"null"],
    ids=["bytes", "list", "truncated", "empty", "null"],
)
def test_a_corrupt_file_is_kept_as_bak_and_rebuilt_from_sessions(mem: UserMemory, garbage: bytes) -> None:
    mem.append("s1", "user", "  Where did I   leave my keys? ")
    mem.append("s1", "assistant", "In the kitchen.")
    mem.append("s2", "assistant", "Hello!")
    mem.append("s2", "user", "Plan my trip to Lyon next week please, with trains and museums")
    mem.conversations.path.write_bytes(garbage)

    listed = {c.session_id: c for c in mem.conversations.list()}

    backup = mem.conversations.path.with_name("conversations.json.bak")
    assert backup.read_bytes() == garbage
    assert set(listed) == {"s1", "s2"}
    s1 = mem.session("s1").messages()
    assert (listed["s1"].created_at, listed["s1"].updated_at) == (s1[0].ts, s1[-1].ts)
    assert listed["s1"].title == "Where did I leave my keys?"
    assert listed["s2"].title.startswith("Plan my trip to Lyon") and len(listed["s2"].title) <= 30
    assert set(_document(mem)) == {"s1", "s2"}  # a valid document was written back
    problems = [p for p in mem.problems() if p.kind is ProblemKind.CORRUPT_DOCUMENT_REBUILT]
    assert len(problems) == 1 and "conversations.json.bak" in problems[0].detail
    assert not [name for name in os.listdir(mem.directory) if name.endswith(".tmp")]


def test_a_write_to_a_corrupt_file_rebuilds_first_and_keeps_the_rest(mem: UserMemory) -> None:
    mem.append("old", "user", "an old thread")
    mem.directory.joinpath("conversations.json").write_bytes(b"{{{{")
    mem.conversations.create("new", title="fresh")
    assert set(_document(mem)) == {"old", "new"}
    assert Path(mem.directory / "conversations.json.bak").read_bytes() == b"{{{{"


def test_reading_a_missing_file_creates_nothing(mem: UserMemory) -> None:
    assert mem.conversations.list() == [] and mem.conversations.get("s1") is None
    assert not mem.directory.exists()


def test_a_title_with_a_lone_surrogate_is_stored_and_read_back_exactly(mem: UserMemory) -> None:
    title = "notes \ud800 and 蓝莓"  # a str can hold one (from a JSON "\ud800" escape); UTF-8 cannot
    mem.conversations.create("s1", title=title)
    mem.conversations.rename("s1", title + "!")
    assert mem.conversations.get("s1").title == title + "!"
    assert json.loads(mem.conversations.path.read_bytes())["s1"]["title"] == title + "!"
