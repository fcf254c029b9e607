"""Bad data in a layer file: the rest still reads, each problem is reported with its line, ids stay unique."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from store_testlib import add_bytes, line, model_of

from agentmem_nb import MemoryDataWarning, MemoryStore, UserMemory
from agentmem_nb.store import ProblemKind

# One line per kind of damage the issue lists, between good lines. Line numbers are 1-based.
DAMAGED = [
    line({"ts": "2026-04-08T10:00:00+08:00", "role": "user", "content": "first", "message_id": 1}),  # 1
    b'{"ts": "2026-04-08T10:00:01+08:00", "role": "user", "content": "cut\n',  # 2 malformed JSON
    b'{"role": "user", "content": "\xff\xfe bytes", "message_id": 2}\n',  # 3 not UTF-8
    b'["a", "JSON", "list"]\n',  # 4 not an object
    line({"ts": "2026-04-08T10:00:02+08:00", "role": "user", "content": "junk id", "message_id": "abc"}),  # 5
    line({"ts": "2026-04-08T10:00:03+08:00", "role": "user", "content": "negative id", "message_id": -3}),  # 6
    b"\n",  # 7 blank: not a problem
    line({"ts": "not a time", "role": "assistant", "content": "bad ts", "message_id": 7}),  # 8
    line({"ts": "2026-04-08T10:00:05", "role": "user", "content": "naive ts"}),  # 9 legacy: no id
]


@pytest.fixture
def damaged(mem: UserMemory) -> Path:
    path = mem.directory / "sessions" / "s1.jsonl"
    add_bytes(path, b"".join(DAMAGED))
    return path


def test_the_rest_of_a_damaged_file_reads(mem: UserMemory, damaged: Path) -> None:
    with pytest.warns(MemoryDataWarning, match=r"skipped 3 unreadable line\(s\) \(line 2, 3, 4\)"):
        got = mem.session("s1").messages()
    expected = model_of(damaged.read_bytes())
    assert [m.content for m in got] == ["first", "junk id", "negative id", "bad ts", "naive ts"]
    assert [m.message_id for m in got] == expected.ids == [1, 2, 3, 7, 8]


def test_problems_name_each_line_and_kind(mem: UserMemory, damaged: Path) -> None:
    with pytest.warns(MemoryDataWarning):
        problems = mem.problems()
    by_kind = {(p.kind, p.line) for p in problems}
    assert {
        (ProblemKind.MALFORMED_JSON, 2),
        (ProblemKind.INVALID_UTF8, 3),
        (ProblemKind.NOT_AN_OBJECT, 4),
        (ProblemKind.BAD_TIMESTAMP, 8),
    } <= by_kind
    legacy = [p for p in problems if p.kind is ProblemKind.LEGACY_ID_NORMALISED]
    assert [(p.count, p.path) for p in legacy] == [(3, str(damaged))]  # "abc", -3 and the missing id
    assert all(p.path == str(damaged) for p in problems)
    assert "s1.jsonl:3: invalid_utf8" in "\n".join(map(str, problems))


def test_warning_is_issued_once_per_new_problem(mem: UserMemory, damaged: Path) -> None:
    with pytest.warns(MemoryDataWarning):
        len(mem.session("s1"))
    # The suite turns AgentMemWarning into errors: a second read of the same damage must stay quiet.
    assert len(mem.session("s1")) == 5
    add_bytes(damaged, b"{oops\n")
    with pytest.warns(MemoryDataWarning, match="line 10"):
        assert len(mem.session("s1")) == 5


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_next_append_keeps_ids_unique_and_increasing(store: MemoryStore, damaged: Path, warm: bool) -> None:
    mem = store.user("alice")
    if warm:
        with pytest.warns(MemoryDataWarning):
            len(mem.session("s1"))
    written = [mem.append("s1", "user", f"after {i}").session.message_id for i in range(3)]
    assert written == [9, 10, 11]
    reread = MemoryStore(store.root, zone="Asia/Shanghai").user("alice").session("s1")
    with pytest.warns(MemoryDataWarning):
        ids = [m.message_id for m in reread.messages()]
    assert ids == [1, 2, 3, 7, 8, 9, 10, 11]
    assert model_of(damaged.read_bytes()).ids == ids


def test_bad_timestamp_takes_the_previous_time_on_every_read_path(mem: UserMemory, damaged: Path) -> None:
    layer = mem.session("s1")
    with pytest.warns(MemoryDataWarning):
        messages = layer.messages()
    full = {m.message_id: m for m in messages}
    assert full[7].ts == full[3].ts  # line 8 ("not a time") shows the time of the line before it
    assert layer.window(7, 0, 0).messages == (full[7],)
    assert layer.search("bad ts") == [full[7]]
    assert layer.get(7) == full[7]


def test_naive_and_legacy_rows_read_as_aware_messages(mem: UserMemory, damaged: Path) -> None:
    with pytest.warns(MemoryDataWarning):
        naive = mem.session("s1").get(8)
    assert naive is not None and naive.content == "naive ts"
    assert naive.ts.utcoffset() is not None and naive.ts.isoformat() == "2026-04-08T10:00:05+08:00"


@pytest.mark.parametrize(
    "raw",
    [
        {"message_id": 10**20},  # larger than any index can hold
        {"message_id": True},
        {"message_id": 3.0},
        {"message_id": None},
        {"message_id": [4]},
        {"message_id": " 5"},
        {"message_id": "0"},
    ],
    ids=repr,
)
def test_junk_ids_take_the_running_next_id(mem: UserMemory, raw: dict[str, object]) -> None:
    path = mem.directory / "sessions" / "s1.jsonl"
    add_bytes(path, line({"content": "a", "message_id": 4}) + line({"content": "junk", **raw}))
    assert [m.message_id for m in mem.session("s1").messages()] == [4, 5]
    assert MemoryStore(mem.store.root).user("alice").append("s1", "user", "x").session.message_id == 6  # cold
    assert mem.append("s1", "user", "y").session.message_id == 7  # warm


def test_non_text_content_is_shown_and_searched_as_json(mem: UserMemory) -> None:
    path = mem.directory / "sessions" / "s1.jsonl"
    add_bytes(path, line({"content": {"city": "里昂"}, "message_id": 1}) + line({"content": None, "message_id": 2}))
    layer = mem.session("s1")
    assert [m.content for m in layer.messages()] == ['{"city": "里昂"}', ""]
    assert [m.message_id for m in layer.search('"city": "里昂"')] == [1]


def test_nul_and_lone_surrogates_round_trip_and_search_exactly(mem: UserMemory) -> None:
    for text in ["a\x00b", "a b", "x\ud800y", "x?y"]:
        mem.append("s1", "user", text)
    raw = mem.session("s1").path.read_bytes()
    for each in raw.splitlines():
        json.loads(each.decode("utf-8"))  # every line is valid UTF-8 JSON
    layer = MemoryStore(mem.store.root).user("alice").session("s1")
    assert [m.content for m in layer.messages()] == ["a\x00b", "a b", "x\ud800y", "x?y"]
    assert [m.content for m in layer.search("a\x00b")] == ["a\x00b"]
    assert [m.content for m in layer.search("a b")] == ["a b"]
    assert [m.content for m in layer.search("\ud800")] == ["x\ud800y"]
    assert [m.content for m in layer.search("?")] == ["x?y"]


def test_search_of_a_layer_without_a_file_finds_nothing(mem: UserMemory) -> None:
    assert mem.search_session("never-written", "x") == []
    assert mem.search_daily("x", day="2026-01-01") == []
    assert mem.search_daily("x") == []
    assert not mem.directory.exists()


def test_out_of_order_hand_written_ids_cold_append(mem: UserMemory) -> None:
    """Ids going down near the tail make a cold append fall back to the full rule once (the store never writes them
    so; a hand merge does)."""
    path = mem.directory / "sessions" / "s1.jsonl"
    add_bytes(path, line({"content": "a", "message_id": 10}) + line({"content": "b", "message_id": 3}))
    cold = MemoryStore(mem.store.root).user("alice")
    assert cold.append("s1", "user", "x").session.message_id == 11


def test_out_of_order_hand_written_ids_warm_append(mem: UserMemory) -> None:
    path = mem.directory / "sessions" / "s1.jsonl"
    add_bytes(path, line({"content": "a", "message_id": 10}) + line({"content": "b", "message_id": 3}))
    assert len(mem.session("s1")) == 2
    assert mem.append("s1", "user", "x").session.message_id == 11
    assert [m.message_id for m in mem.session("s1").messages()] == [10, 3, 11]
    assert mem.session("s1").window(3, 1, 1).messages[0].content == "a"  # positional, whatever the id order


def test_problems_of_a_clean_user_are_empty(mem: UserMemory) -> None:
    mem.append("s1", "user", "hello")
    mem.long_term.add_note("likes tea")
    mem.conversations.create("s1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mem.problems() == []


def test_the_tail_skips_what_the_reader_skips_so_cold_and_warm_agree(store: MemoryStore) -> None:
    # A UTF-8 byte-order mark (a file saved by Notepad) makes a line unreadable as JSON text for the reader;
    # the cold path, which reads ids from the tail, must not count it either.
    path = store.root / "alice" / "sessions" / "s1.jsonl"
    bom_line = b"\xef\xbb\xbf" + line({"content": "b", "message_id": 5})
    add_bytes(path, line({"content": "a", "message_id": 1}) + bom_line)
    assert MemoryStore(store.root).user("alice").append("s1", "user", "cold").session.message_id == 2
    with pytest.warns(MemoryDataWarning, match="line 2"):
        assert [m.message_id for m in store.user("alice").session("s1").messages()] == [1, 2]
    assert store.user("alice").append("s1", "user", "warm").session.message_id == 3
