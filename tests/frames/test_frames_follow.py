"""LayerFollower: frames that grow with the files, reading only what was appended (asserted in bytes)."""

from __future__ import annotations

import datetime as _dt

import pytest
from frames_testlib import at, build_user, turn

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb import frames as F

pytestmark = pytest.mark.usefixtures("reader")  # every test: exact and columnar reader


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


def test_follower_frames_equal_fresh_loads(mem) -> None:
    follower = F.LayerFollower(mem)
    assert follower.sessions().equals(F.session_messages(mem))
    assert follower.days().equals(F.daily_messages(mem))
    assert follower.session("s1").equals(F.session_messages(mem, "s1"))
    assert follower.daily("2026-04-07").equals(F.daily_messages(mem, "2026-04-07"))
    assert follower.log().equals(F.dialogue_log(mem))
    assert follower.tool_calls().equals(F.tool_calls(mem))
    assert follower.tool_calls(source="sessions").equals(F.tool_calls(mem, source="sessions"))


def test_refresh_reads_only_the_appended_lines(mem) -> None:
    follower = F.LayerFollower(mem)
    follower.sessions(), follower.log(), follower.tool_calls(source="sessions")
    path = mem.directory / "sessions" / "s1.jsonl"
    size_before = path.stat().st_size
    read_before = follower.stats.bytes_read
    file_read_before = mem.session("s1").stats.bytes_read
    turn(mem, "s1", "and my cat?", "Your cat is called Tom.", at(9, 8),
         (ToolCall("search_session", {"keyword": "cat"}, "none", id="c9"),))
    new_bytes = path.stat().st_size - size_before
    sessions = follower.sessions()
    assert sessions.equals(F.session_messages(mem))
    # This object read exactly the new lines of s1; the store's index read no more than them (and its small checks).
    assert follower.stats.bytes_read - read_before == new_bytes
    assert mem.session("s1").stats.bytes_read - file_read_before <= new_bytes + 4096
    # Nothing changed in the other threads: nothing read there.
    before_untouched = follower.stats.bytes_read
    follower.session("s2")
    assert follower.stats.bytes_read == before_untouched
    assert follower.tool_calls(source="sessions").equals(F.tool_calls(mem, source="sessions"))
    assert follower.log().equals(F.dialogue_log(mem))
    assert follower.tool_calls().equals(F.tool_calls(mem))
    assert follower.tool_calls()["call_id"].iloc[-1] == "c9"


def test_new_threads_and_days_appear(mem) -> None:
    follower = F.LayerFollower(mem)
    assert "s4" not in set(follower.sessions()["session_id"])
    turn(mem, "s4", "new thread", "hello", at(10, 12))
    assert "s4" in set(follower.sessions()["session_id"])
    assert "2026-04-10" in set(follower.days()["day"])
    assert follower.days().equals(F.daily_messages(mem))


def test_a_rewritten_file_is_read_again(mem, tmp_path) -> None:
    follower = F.LayerFollower(mem)
    follower.session("s1")
    path = mem.directory / "sessions" / "s1.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    # Replace the file (new inode) with a longer one whose early records differ.
    replacement = tmp_path / "s1.jsonl"
    replacement.write_bytes(lines[2] + lines[3] + lines[0] + lines[1] + lines[2])
    replacement.replace(path)
    assert follower.session("s1").equals(F.session_messages(mem, "s1"))
    # A shorter file is read again too.
    replacement.write_bytes(lines[0])
    replacement.replace(path)
    assert list(follower.session("s1")["message_id"]) == [1]


def test_an_unreadable_first_new_time_takes_the_last_known_one(mem) -> None:
    follower = F.LayerFollower(mem)
    last = follower.session("s1")["ts"].iloc[-1]
    path = mem.directory / "sessions" / "s1.jsonl"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"ts": "not a time", "role": "user", "content": "late", "message_id": 50}\n')
    frame = follower.session("s1")
    assert frame["ts"].iloc[-1] == last
    assert frame.equals(F.session_messages(mem, "s1"))
    assert mem.session("s1").get(50).ts == last.to_pydatetime()


def test_unknown_tool_source(mem) -> None:
    with pytest.raises(ValueError, match="sessions"):
        F.LayerFollower(mem).tool_calls(source="nope")  # type: ignore[arg-type]


def test_seed_data_follows(seed_root) -> None:
    mem = MemoryStore(seed_root, zone="Asia/Shanghai").user("demo-user")
    follower = F.LayerFollower(mem)
    assert follower.sessions().equals(F.session_messages(mem))
    assert follower.log().equals(F.dialogue_log(mem))
    mem.append("13ad7636b4b8", "user", "again", ts=_dt.datetime(2026, 4, 9, 8, tzinfo=_dt.timezone.utc))
    assert follower.sessions().equals(F.session_messages(mem))


@pytest.mark.parametrize("reader", ["columnar"], indirect=True)  # columnar loads only
def test_after_a_columnar_load_refreshes_follow_bytes_not_the_index(mem) -> None:
    viewer = MemoryStore(mem.store.root, zone=mem.store.zone).user(mem.user_id)  # a notebook; mem is the agent
    follower = F.LayerFollower(viewer)
    first = follower.session("s1")
    assert follower.stats.columnar_files == 1 and first.equals(F.session_messages(mem, "s1"))
    file = viewer.session("s1")
    path = mem.directory / "sessions" / "s1.jsonl"
    for minute in (1, 2):  # two refreshes, each reading exactly the appended bytes
        size, read = path.stat().st_size, follower.stats.bytes_read
        turn(mem, "s1", f"more {minute}", "ok", at(9, 9, minute),
             (ToolCall("search_session", {"keyword": "x"}, "none", id=f"n{minute}"),))
        assert follower.session("s1").equals(F.session_messages(mem, "s1"))
        assert follower.stats.bytes_read - read == path.stat().st_size - size
    assert file.stats.bytes_read == 0 and file.stats.lines_indexed == 0  # the store's index was never needed
    assert follower.tool_calls(source="sessions").equals(F.tool_calls(mem, source="sessions"))
    # A line the store would normalise (no id): the follower hands over to the store's index, and stays right.
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"ts": "2026-04-09T10:00:00+08:00", "role": "user", "content": "legacy"}\n\n')
    assert follower.session("s1").equals(F.session_messages(mem, "s1"))
    assert file.stats.lines_indexed > 0
    turn(mem, "s1", "after legacy", "ok", at(9, 11))
    assert follower.session("s1").equals(F.session_messages(mem, "s1"))
    assert list(follower.session("s1")["content"])[-3:] == ["legacy", "after legacy", "ok"]


@pytest.mark.parametrize("reader", ["columnar"], indirect=True)  # columnar loads only
def test_a_columnar_load_then_a_torn_tail_then_its_completion(mem) -> None:
    follower = F.LayerFollower(mem)
    rows = len(follower.session("s1"))
    path = mem.directory / "sessions" / "s1.jsonl"
    line = '{"ts": "2026-04-09T10:00:00.000000+08:00", "role": "user", "content": "late", "message_id": 90}\n'
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line[:30])
    assert len(follower.session("s1")) == rows  # a half-written line is not read
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line[30:])
    frame = follower.session("s1")
    assert len(frame) == rows + 1 and frame.equals(F.session_messages(mem, "s1"))


def test_tool_calls_first_asked_for_after_messages_then_followed(mem) -> None:
    follower = F.LayerFollower(mem)
    follower.sessions()  # messages only: the calls are read when first asked for
    turn(mem, "s1", "a", "b", at(9, 8), (ToolCall("search_session", {"keyword": "a"}, "none", id="c10"),))
    assert follower.tool_calls(source="sessions").equals(F.tool_calls(mem, source="sessions"))
    assert follower.sessions().equals(F.session_messages(mem))
    path = mem.directory / "sessions" / "s1.jsonl"
    size, read = path.stat().st_size, follower.stats.bytes_read
    turn(mem, "s1", "c", "d", at(9, 9), (ToolCall("remember_note", {"note": "d"}, "saved", id="c11"),))
    calls = follower.tool_calls(source="sessions")
    assert calls.equals(F.tool_calls(mem, source="sessions")) and calls["call_id"].iloc[-1] == "c11"
    assert follower.stats.bytes_read - read == path.stat().st_size - size


@pytest.mark.parametrize("reader", ["columnar"], indirect=True)  # columnar loads only
def test_a_file_rewritten_in_place_after_a_columnar_load_is_read_again(mem) -> None:
    follower = F.LayerFollower(mem)
    follower.session("s1")
    path = mem.directory / "sessions" / "s1.jsonl"
    data = path.read_bytes()
    inode = path.stat().st_ino
    # Same inode, longer, and still a newline where the old end was: only the changed bytes before it tell.
    extra = data.splitlines(keepends=True)[0].replace(b'"message_id": 1', b'"message_id": 9')
    edited = data.replace(b"Lyon", b"Lyom") + extra
    with open(path, "r+b") as handle:
        handle.write(edited)
    assert path.stat().st_ino == inode and edited[len(data) - 1 : len(data)] == b"\n"
    frame = follower.session("s1")
    assert frame.equals(F.session_messages(mem, "s1"))
    assert "Lyom" in frame["content"].iloc[0] and len(frame) == 5


def test_a_same_length_rewrite_then_an_append_by_another_writer_is_read_again(mem) -> None:
    """The follower asks the store's scan (one rule: the bytes before its cursor unchanged) — not whether the last
    record it read still has its id, which an in-place edit that keeps every id and length passes."""
    follower = F.LayerFollower(mem)
    before = follower.session("s1")
    path = mem.directory / "sessions" / "s1.jsonl"
    data = path.read_bytes()
    assert b"Lyon" in data
    with open(path, "r+b") as handle:  # same inode, same length, every id where it was
        handle.write(data.replace(b"Lyon", b"Lyom"))
    other = MemoryStore(mem.store.root, zone=mem.store.zone).user(mem.user_id)
    other.append("s1", "user", "one more", ts=_dt.datetime(2026, 4, 9, 12, 0, tzinfo=before["ts"].iloc[-1].tzinfo))
    frame = follower.session("s1")
    fresh = MemoryStore(mem.store.root, zone=mem.store.zone).user(mem.user_id)
    assert frame.equals(F.session_messages(fresh, "s1"))
    assert frame["content"].str.contains("Lyom").any() and not frame["content"].str.contains("Lyon").any()
    assert len(frame) == len(before) + 1
