"""What a warm append and a warm window cost, in operations: files opened (the interpreter's audit events) and
``stat`` calls (counted by wrapping ``os.stat``/``lstat``/``fstat``), never seconds.

A layer used again keeps the descriptor its safe open returned and checks, with one ``lstat`` per step of the
path, that the path still leads to it (``store._fs.KeptFile``): a warm two-file append and a window open nothing.
The refusals that check must keep (a folder moved out and linked back, a hard link made since, a forked child that
would share the parent's lock) are tested here too, with real links and a real fork.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore, StoreError, UserMemory
from agentmem_nb.errors import UnsafeFileError
from agentmem_nb.store import JsonlFile

_recording: list[Counter[str]] = []  # the counter of the measurement running now (audit hooks cannot be removed)


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _recording and event in ("open", "os.mkdir", "os.listdir"):
        _recording[-1][event] += 1


sys.addaudithook(_audit)


@pytest.fixture
def count(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[], object]], Counter[str]]]:
    """``count(call)``: the opens, folder operations and stat calls ``call`` made."""

    def wrap(name: str) -> None:
        real = getattr(os, name)

        def counted(*args: object, **kwargs: object) -> object:
            if _recording:
                _recording[-1][name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(os, name, counted)

    for name in ("stat", "lstat", "fstat"):
        wrap(name)

    def run(call: Callable[[], object]) -> Counter[str]:
        found: Counter[str] = Counter()
        _recording.append(found)
        try:
            call()
        finally:
            _recording.pop()
        return found

    yield run


def _warm(tmp_path: Path) -> UserMemory:
    mem = MemoryStore(tmp_path / "store", zone="UTC").user("alice")
    for i in range(50):
        mem.append("s1", "user", f"message {i}")
    mem.session("s1").window(25, 2, 2)
    return mem


def test_a_warm_append_opens_no_file_and_stats_each_step_once(tmp_path: Path, count) -> None:
    """Two lines (the session's and the day copy) for: per file one ``lstat`` of each path step (alice, the folder,
    the file) and one ``fstat`` under the lock; no open, no mkdir, no walk. Before the kept descriptor: 11 opens."""
    mem = _warm(tmp_path)
    found = count(lambda: mem.append("s1", "user", "one more"))
    assert found["open"] == 0 and found["os.mkdir"] == 0, found
    assert found["lstat"] == 6 and found["fstat"] == 2 and found["stat"] == 0, found
    assert [m.content for m in mem.session("s1").tail(2)] == ["message 49", "one more"]


def test_a_warm_window_opens_no_file(tmp_path: Path, count) -> None:
    """"Unchanged" from one ``stat`` of the path, then the read checks its kept descriptor (one ``lstat`` a step)
    and reads with one ``pread``. Before: a safe open (a walk of four opens) for the read."""
    mem = _warm(tmp_path)
    layer = mem.session("s1")
    window = None

    def read() -> None:
        nonlocal window
        window = layer.window(30, 2, 2)

    found = count(read)
    assert found["open"] == 0 and found["stat"] == 1 and found["lstat"] == 3 and found["fstat"] == 0, found
    assert window is not None and [m.message_id for m in window.messages] == [28, 29, 30, 31, 32]


def test_the_first_append_after_another_writer_reads_what_it_wrote(tmp_path: Path) -> None:
    """The kept descriptor is the file itself: a line another store object wrote is seen by the warm index."""
    mem = _warm(tmp_path)
    other = MemoryStore(tmp_path / "store", zone="UTC").user("alice")
    other.append("s1", "user", "from another writer")
    written = mem.append("s1", "user", "after it")
    assert written.session.message_id == 52
    assert [m.content for m in mem.session("s1").tail(2)] == ["from another writer", "after it"]


@pytest.mark.parametrize("moved", ["alice", "alice/sessions"])
def test_a_kept_file_whose_folder_moved_out_behind_a_link_is_refused(tmp_path: Path, moved: str) -> None:
    """The descriptor is still the store's own file, but it now lives outside the memory folder, reached through a
    link: a cold store would refuse it, so the kept one does too (the path's steps are checked, not only the file)."""
    mem = _warm(tmp_path)
    root = tmp_path / "store"
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rename(root / moved, outside / "moved")
    os.symlink(outside / "moved", root / moved)
    before = sorted(p.read_bytes() for p in outside.rglob("*.jsonl"))
    with pytest.raises(UnsafeFileError) as info:
        mem.append("s1", "user", "must not reach the moved file")
    assert Path(info.value.path) == root / moved
    with pytest.raises(UnsafeFileError):
        mem.session("s1").read_records(0, 5)
    assert sorted(p.read_bytes() for p in outside.rglob("*.jsonl")) == before


def test_a_kept_file_hard_linked_since_is_refused(tmp_path: Path) -> None:
    mem = _warm(tmp_path)
    session = tmp_path / "store" / "alice" / "sessions" / "s1.jsonl"
    outside = tmp_path / "outside.jsonl"
    os.link(session, outside)
    before = outside.read_bytes()
    with pytest.raises(UnsafeFileError) as info:
        mem.append("s1", "user", "must not change the other name")
    assert "hard link" in info.value.found
    assert outside.read_bytes() == before


def test_a_kept_day_file_swapped_for_a_link_refuses_the_append_before_the_session_line(tmp_path: Path) -> None:
    mem = _warm(tmp_path)
    day = next((tmp_path / "store" / "alice" / "daily").iterdir())
    lines = (tmp_path / "store" / "alice" / "sessions" / "s1.jsonl").read_bytes().count(b"\n")
    day.rename(tmp_path / "day-outside.jsonl")
    os.symlink(tmp_path / "day-outside.jsonl", day)
    with pytest.raises(UnsafeFileError):
        mem.append("s1", "user", "neither half")
    assert (tmp_path / "store" / "alice" / "sessions" / "s1.jsonl").read_bytes().count(b"\n") == lines


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_share_the_parents_descriptor_or_its_lock(tmp_path: Path) -> None:
    """A descriptor kept before a fork is shared with the child, and ``flock`` locks belong to the shared open
    file: two writers on it would not exclude each other. The child's append opens the file afresh, so a lock the
    parent holds on its descriptor conflicts with the child's (checked with a non-blocking lock, synchronised by
    pipes: no sleeps)."""
    mem = _warm(tmp_path)
    mem.append("s1", "user", "kept in the parent")
    parent_fd = mem.session("s1")._file._kept.fd
    assert parent_fd is not None
    to_parent_r, to_parent_w = os.pipe()
    to_child_r, to_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: append, say so, wait for the parent's lock, then probe it from our descriptor
        code = 1
        try:
            mem.append("s1", "user", "from the child")
            child_fd = mem.session("s1")._file._kept.fd
            os.write(to_parent_w, b"a")
            os.read(to_child_r, 1)
            try:
                fcntl.flock(child_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                code = 2  # got it: the child's descriptor shares the parent's lock
            except BlockingIOError:
                code = 0
        finally:
            os._exit(code)
    os.read(to_parent_r, 1)
    fcntl.flock(parent_fd, fcntl.LOCK_SH)
    try:
        os.write(to_child_w, b"b")
        _, status = os.waitpid(pid, 0)
    finally:
        fcntl.flock(parent_fd, fcntl.LOCK_UN)
    assert os.waitstatus_to_exitcode(status) == 0
    assert [m.content for m in mem.session("s1").tail(2)] == ["kept in the parent", "from the child"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to list a process's descriptors")
def test_a_forked_child_closes_its_copies_of_the_parents_kept_descriptors(tmp_path: Path) -> None:
    """A child that never writes (a worker of a fork pool) holds no descriptor to the parent's layer files: kept
    copies would keep the parent's open files, and any lock on them, referenced for the child's whole life."""
    mem = _warm(tmp_path)
    mem.append("s1", "user", "kept in the parent")
    kept_path = os.path.realpath(mem.session("s1").path)
    assert mem.session("s1")._file._kept.fd is not None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            open_files = []
            for name in os.listdir("/proc/self/fd"):
                try:
                    open_files.append(os.readlink(f"/proc/self/fd/{name}"))
                except OSError:  # the listing's own descriptor, gone by now
                    continue
            os.write(write_end, str(open_files.count(kept_path)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    held_by_child = int(os.read(read_end, 16))
    os.close(read_end)
    os.waitpid(pid, 0)
    assert held_by_child == 0
    assert [m.content for m in mem.session("s1").tail(1)] == ["kept in the parent"]  # the parent's is untouched
    mem.append("s1", "user", "and the parent goes on")
    assert mem.session("s1")._file._kept.fd is not None


def test_a_line_file_outside_its_base_is_refused_when_used_not_when_made(tmp_path: Path) -> None:
    """Making the object opens nothing (as before descriptors were kept); the first use refuses the path."""
    lines = JsonlFile(tmp_path / "elsewhere" / "a.jsonl", base=tmp_path / "store")
    with pytest.raises(StoreError, match="not inside"):
        lines.append({"content": "x"})
    assert not (tmp_path / "elsewhere").exists()
