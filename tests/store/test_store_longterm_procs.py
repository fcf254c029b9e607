"""Long-term memory across real processes: read-modify-write loses nothing, and a writer killed between replacing
``memory.md`` and recording the change leaves a history that agrees with the file (repaired and reported).

Run as a script, this module is the worker process (``python test_store_longterm_procs.py COMMAND ...``). Workers
print ``ready``, wait for a line on stdin so that all of them start together, then print one line per acknowledged
change (after the call returned). No sleeps: the crash worker stops itself at the dangerous point and says so, and
the parent kills it with SIGKILL right then.
"""

from __future__ import annotations

import errno
import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------- the worker side


def _worker(argv: list[str]) -> int:
    from agentmem_nb import MemoryStore
    from agentmem_nb.errors import VersionConflict

    command, root, count, tag = argv[0], argv[1], int(argv[2]), argv[3]
    long_term = MemoryStore(root, zone="Europe/Paris").user("alice").long_term
    if command == "crash":
        return _crash(long_term, tag)
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        line = f"- {tag} {i}\n"
        if command == "edit":
            long_term.edit(lambda text, line=line: text + line, source=tag)
        elif command == "cas":  # compare-and-swap: re-read and retry when another writer came first
            while True:
                seen = long_term.current()
                try:
                    long_term.write(seen.text + line, source=tag, expected_version=seen.version)
                    break
                except VersionConflict:
                    continue
        print(line.strip(), flush=True)  # acknowledged: the call returned
    return 0


def _crash(long_term, note: str) -> int:  # noqa: ANN001 - a LongTermMemory, imported in the worker only
    """Add ``note``, but stop between the change's two steps (replacing memory.md, appending to its history),
    whichever order they run in, and wait there to be killed."""
    import agentmem_nb.store.longterm as longterm_module

    done: list[str] = []

    def step(name: str, real):  # noqa: ANN001, ANN202 - test-only wrapper
        def run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            if done:  # the other step is complete and this one has not started: the dangerous point
                print(f"between {done[0]} and {name}", flush=True)
                sys.stdin.readline()  # the parent kills us here
            result = real(*args, **kwargs)
            done.append(name)
            return result
        return run

    longterm_module.atomic_write = step("file", longterm_module.atomic_write)
    long_term._history.append = step("history", long_term._history.append)
    long_term.add_note(note)
    print("finished without stopping", flush=True)
    return 1


# ---------------------------------------------------------------------- the test side


def _start(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, __file__, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=str(REPO))


def _run_together(commands: list[list[str]]) -> list[str]:
    """Start the workers, let them go at once, return every line they acknowledged."""
    workers = [_start(*command) for command in commands]
    for worker in workers:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
    acknowledged = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        acknowledged += out.splitlines()
    return acknowledged


def _assert_consistent(long_term) -> None:  # noqa: ANN001
    history = list(long_term.history())
    assert all(later.before == earlier.after for earlier, later in itertools.pairwise(history))
    assert history[-1].after == long_term.read()
    assert [v.version for v in history] == list(range(1, len(history) + 1))


@pytest.mark.parametrize("command", ["edit", "cas"])
def test_concurrent_read_modify_write_loses_nothing_acknowledged(tmp_path: Path, command: str) -> None:
    """The pattern notebook 04 used to teach, write(read() + line), lost 106 of 240 lines with 4 processes."""
    from agentmem_nb import MemoryStore

    root, count, tags = tmp_path / "memory", 30, ["p0", "p1", "p2", "p3"]
    acknowledged = _run_together([[command, str(root), str(count), tag] for tag in tags])
    long_term = MemoryStore(root, zone="Europe/Paris").user("alice").long_term
    lines = long_term.lines()
    assert len(acknowledged) == len(tags) * count
    assert sorted(lines) == sorted(acknowledged)  # every acknowledged line, each once
    for tag in tags:  # and each process's lines in the order it wrote them
        assert [line for line in lines if line.startswith(f"- {tag} ")] == [f"- {tag} {i}" for i in range(count)]
    _assert_consistent(long_term)
    assert len(long_term.history()) == len(tags) * count


def test_a_writer_killed_between_file_and_history_leaves_them_agreeing(tmp_path: Path) -> None:
    from agentmem_nb import MemoryStore, ProblemKind

    root = tmp_path / "memory"
    MemoryStore(root, zone="Europe/Paris").user("alice").long_term.add_note("acknowledged before the crash")
    worker = _start("crash", str(root), "0", "being written when killed")
    assert worker.stdout is not None
    assert worker.stdout.readline().startswith("between ")
    worker.send_signal(signal.SIGKILL)
    worker.communicate(timeout=60)
    assert worker.returncode == -signal.SIGKILL

    long_term = MemoryStore(root, zone="Europe/Paris").user("alice").long_term
    text = long_term.read()
    history = list(long_term.history())
    # No recorded version the file never had: the history is the file, or problems() says it is behind.
    behind = [p for p in long_term.problems() if p.kind is ProblemKind.HISTORY_OUT_OF_STEP]
    assert history[-1].after == text or (behind and "not the last recorded version" in behind[0].detail)
    snapshot = long_term.current()  # names the text exactly (recording the killed change as a repair if needed)
    assert long_term.text_at(snapshot.version) == text == snapshot.text
    long_term.add_note("acknowledged after the crash")
    _assert_consistent(long_term)
    assert "- acknowledged before the crash" in long_term.lines() and "- acknowledged after the crash" in long_term.lines()
    if behind:
        assert [v.source for v in long_term.history()][-2] == "repair"
        assert [p.kind for p in long_term.problems()] == [ProblemKind.HISTORY_REPAIRED]


# ---------------------------------------------------------------------- a full disk at either step


def _full_disk(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_when_replacing_memory_md_records_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmem_nb import MemoryStore, StoreError
    from agentmem_nb.store import _fs

    long_term = MemoryStore(tmp_path, zone="Europe/Paris").user("alice").long_term
    long_term.add_note("kept")
    monkeypatch.setattr(_fs.os, "replace", _full_disk)  # the disk fills while memory.md is being replaced
    with pytest.raises(StoreError, match=r"could not write .*memory\.md: No space left on device.*the file is "
                                         r"unchanged"):
        long_term.add_note("lost to a full disk")
    monkeypatch.undo()
    assert long_term.read() == "- kept\n"
    assert [v.after for v in long_term.history()] == ["- kept\n"]  # no version the file never had
    assert long_term.problems() == []


def test_a_full_disk_when_recording_the_change_puts_the_file_back(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from agentmem_nb import MemoryStore, StoreError

    long_term = MemoryStore(tmp_path, zone="Europe/Paris").user("alice").long_term
    long_term.add_note("kept")
    monkeypatch.setattr(long_term._history, "append", _full_disk)
    with pytest.raises(StoreError, match=r"could not record the change of .*memory\.md in memory\.history\.jsonl: "
                                         r"No space left on device; it was put back as it was"):
        long_term.add_note("lost to a full disk")
    monkeypatch.undo()
    assert long_term.read() == "- kept\n" and [v.after for v in long_term.history()] == ["- kept\n"]
    assert long_term.problems() == []


def test_when_the_file_cannot_be_put_back_the_next_change_repairs(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import agentmem_nb.store.longterm as longterm_module
    from agentmem_nb import MemoryStore, ProblemKind, StoreError

    long_term = MemoryStore(tmp_path, zone="Europe/Paris").user("alice").long_term
    long_term.add_note("kept")
    real_write = longterm_module.atomic_write
    writes: list[bytes] = []

    def first_write_only(path: Path, data: bytes, **kwargs: object) -> None:
        if writes:
            raise StoreError(f"could not write {path}: No space left on device (simulated)")  # as atomic_write does
        writes.append(data)
        real_write(path, data, **kwargs)

    monkeypatch.setattr(longterm_module, "atomic_write", first_write_only)
    monkeypatch.setattr(long_term._history, "append", _full_disk)
    with pytest.raises(StoreError, match="could not be put back either; the next change records it as a repair"):
        long_term.add_note("written, not recorded")
    monkeypatch.undo()
    assert long_term.read() == "- kept\n- written, not recorded\n"
    assert [p.kind for p in long_term.problems()] == [ProblemKind.HISTORY_OUT_OF_STEP]
    long_term.add_note("next")
    assert [(v.source, v.after) for v in long_term.history()] == [
        ("remember_note", "- kept\n"),
        ("repair", "- kept\n- written, not recorded\n"),
        ("remember_note", "- kept\n- written, not recorded\n- next\n"),
    ]
    assert [p.kind for p in long_term.problems()] == [ProblemKind.HISTORY_REPAIRED]


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
