"""Long-term memory: atomic replace, a history of every change, restore."""

from __future__ import annotations

import errno
import itertools
import os
from pathlib import Path

import pytest

from agentmem_nb import StoreError, UserMemory
from agentmem_nb.store import _fs


def _leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp") or name.startswith("."))


def test_write_replaces_the_file_atomically_and_leaves_no_temp_files(mem: UserMemory) -> None:
    long_term = mem.long_term
    long_term.write("# about alice\n")
    first_inode = long_term.path.stat().st_ino
    long_term.write("# about alice\n- likes tea\n")
    assert long_term.read() == "# about alice\n- likes tea\n"
    assert long_term.path.stat().st_ino != first_inode  # a new file renamed over the old, not rewritten in place
    assert _leftovers(mem.directory) == []
    assert sorted(os.listdir(mem.directory)) == ["memory.history.jsonl", "memory.md"]


def test_a_failed_replace_keeps_the_old_text_and_cleans_up(mem: UserMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    mem.long_term.write("old text\n")

    def broken_replace(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device (simulated)")

    monkeypatch.setattr(_fs.os, "replace", broken_replace)
    with pytest.raises(StoreError, match="simulated") as raised:
        mem.long_term.write("new text\n")
    # The error names the file being written (not a temporary file) and says what to do.
    assert str(mem.long_term.path) in str(raised.value) and "free some disk space" in str(raised.value)
    assert ".tmp" not in str(raised.value)
    monkeypatch.undo()
    assert mem.long_term.read() == "old text\n"
    assert _leftovers(mem.directory) == []


def test_every_change_is_recorded_with_before_and_after(mem: UserMemory) -> None:
    long_term = mem.long_term
    changes = [
        long_term.write("# alice\n", source="user"),
        long_term.add_note("  likes   green tea \n"),
        long_term.add_note("lives in Lyon"),
        long_term.write("# alice\n- lives in Lyon\n", source="edit"),
    ]
    assert long_term.add_note("lives in Lyon") is None  # already there: no change, nothing recorded
    assert long_term.write(long_term.read()) is None
    history = long_term.history()
    assert history == changes
    assert [v.version for v in history] == [1, 2, 3, 4]
    assert [v.source for v in history] == ["user", "remember_note", "remember_note", "edit"]
    assert history[1].after == "# alice\n- likes green tea\n"  # whitespace folded, one "- " line
    assert history[0].before == "" and history[-1].after == long_term.read()
    assert all(a.after == b.before for a, b in itertools.pairwise(history))
    assert all(v.ts is not None and v.ts.utcoffset() is not None for v in history)


def test_restore_brings_back_an_earlier_text_and_is_itself_recorded(mem: UserMemory) -> None:
    long_term = mem.long_term
    long_term.write("version one\n")
    long_term.add_note("a note")
    long_term.write("something else entirely\n")
    restored = long_term.restore(2)
    assert restored is not None and long_term.read() == "version one\n- a note\n"
    assert (restored.version, restored.source) == (4, "restore:2:after")
    assert restored.before == "something else entirely\n"
    long_term.restore(2, which="before")
    assert long_term.read() == "version one\n"
    assert [v.version for v in long_term.history()] == [1, 2, 3, 4, 5]
    long_term.restore(3)  # and forward again: nothing is ever lost
    assert long_term.read() == "something else entirely\n"


def test_restore_of_an_unknown_version_says_which_exist(mem: UserMemory) -> None:
    mem.long_term.write("x\n")
    with pytest.raises(StoreError, match=r"no long-term memory version 7; known versions: \[1\]"):
        mem.long_term.restore(7)
    with pytest.raises(StoreError, match="which='middle'"):
        mem.long_term.restore(1, which="middle")
    with pytest.raises(StoreError, match="must be text"):
        mem.long_term.write(b"bytes")  # type: ignore[arg-type]


def test_reading_creates_nothing(mem: UserMemory) -> None:
    assert mem.long_term.read() == "" and mem.long_term.history() == [] and mem.long_term.lines() == []
    assert not mem.directory.exists()
