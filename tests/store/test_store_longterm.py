"""Long-term memory: atomic replace, a history of every change, restore."""

from __future__ import annotations

import errno
import itertools
import os
import re
from pathlib import Path

import pytest

from agentmem_nb import ProblemKind, StoreError, UserMemory
from agentmem_nb.errors import UndecodableMemoryFile, VersionConflict
from agentmem_nb.store import _fs
from agentmem_nb.store import MemorySnapshot


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


# ---------------------------------------------------------------------- a memory.md that is not UTF-8 (defect 5)

CP1252 = "# About me\n- Lives in Besançon\n".encode("cp1252")


def _cp1252_memory(mem: UserMemory) -> None:
    mem.directory.mkdir(parents=True, exist_ok=True)
    mem.long_term.path.write_bytes(CP1252)


def test_a_memory_md_that_is_not_utf8_is_shown_but_never_rewritten(mem: UserMemory) -> None:
    long_term = mem.long_term
    long_term.write("# About me\n")  # a version 1 to restore
    _cp1252_memory(mem)
    assert long_term.read() == "# About me\n- Lives in Besan\ufffdon\n"  # for display only
    attempts = {
        "add_note": lambda: long_term.add_note("likes tea"),
        "write": lambda: long_term.write("replaced\n"),
        "edit": lambda: long_term.edit(str.upper),
        "restore": lambda: long_term.restore(1),
        "compare-and-swap": lambda: long_term.write("x\n", expected_version=1),
    }
    for name, attempt in attempts.items():
        with pytest.raises(UndecodableMemoryFile) as caught:
            attempt()
        message = str(caught.value)
        assert str(long_term.path) in message and "re-save it as UTF-8" in message, name
        assert caught.value.offset == CP1252.index(b"\xe7"), name
        assert long_term.path.read_bytes() == CP1252, name  # not one byte changed
    assert [v.after for v in long_term.history()] == ["# About me\n"]  # and nothing damaged was recorded
    assert long_term.current() == MemorySnapshot(None, "# About me\n- Lives in Besan\ufffdon\n")
    [problem] = [p for p in mem.problems() if p.kind is ProblemKind.MEMORY_UNDECODABLE]
    assert problem.path == str(long_term.path) and "re-save it as UTF-8" in problem.detail


def test_once_re_saved_as_utf8_it_is_written_and_its_text_recorded(mem: UserMemory) -> None:
    _cp1252_memory(mem)
    with pytest.raises(UndecodableMemoryFile):
        mem.long_term.add_note("likes tea")
    mem.long_term.path.write_bytes(CP1252.decode("cp1252").encode("utf-8"))  # what the error message asks for
    mem.long_term.add_note("likes tea")
    [change] = mem.long_term.history()
    assert change.before == "# About me\n- Lives in Besançon\n"
    assert change.after == "# About me\n- Lives in Besançon\n- likes tea\n"
    assert not [p for p in mem.problems() if p.kind is ProblemKind.MEMORY_UNDECODABLE]


def test_the_remember_note_tool_answers_the_model_with_the_error(mem: UserMemory) -> None:
    from agentmem_nb.agent import MemoryTools  # the agent layer: imported here, the store tests do not need it

    _cp1252_memory(mem)
    tools = {tool.name: tool for tool in MemoryTools(mem, "s1").tools}
    answer = tools["remember_note"].invoke({"note": "likes tea"})  # returned, not raised through the graph
    assert "could not be saved" in answer and "is not valid UTF-8" in answer and "re-save it as UTF-8" in answer
    assert mem.long_term.path.read_bytes() == CP1252


@pytest.mark.parametrize("kind", ["directory", "no permission"])
def test_a_memory_md_that_cannot_be_read_is_reported_and_named(mem: UserMemory, kind: str) -> None:
    mem.directory.mkdir(parents=True)
    if kind == "directory":
        mem.long_term.path.mkdir()
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads files whatever their mode")
        mem.long_term.path.write_text("secret\n")
        mem.long_term.path.chmod(0)
    # A folder is refused by the store's one rule for entries that are not regular files; a file without
    # permission cannot be read. Either way the error and the finding name memory.md.
    named = re.escape(str(mem.long_term.path))
    expected = ProblemKind.UNSAFE_FILE if kind == "directory" else ProblemKind.MEMORY_UNREADABLE
    with pytest.raises(StoreError, match=named):
        mem.long_term.read()
    with pytest.raises(StoreError, match=named):
        mem.long_term.add_note("x")
    [problem] = [p for p in mem.long_term.problems() if p.kind is expected]
    assert problem.path == str(mem.long_term.path)


# ---------------------------------------------------------------------- edit under the lock, compare-and-swap


def test_edit_applies_the_function_to_the_current_text(mem: UserMemory) -> None:
    long_term = mem.long_term
    long_term.add_note("prefers tea")
    change = long_term.edit(lambda text: text.replace("tea", "green tea"), source="edit")
    assert change is not None and (change.version, change.source) == (2, "edit")
    assert long_term.read() == "- prefers green tea\n"
    assert long_term.edit(lambda text: text) is None  # no change, nothing recorded
    with pytest.raises(StoreError, match="must return the new text as str, got NoneType"):
        long_term.edit(lambda text: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(ZeroDivisionError):
        long_term.edit(lambda text: str(1 / 0))
    assert len(long_term.history()) == 2 and long_term.read() == "- prefers green tea\n"


def test_write_with_an_expected_version_refuses_a_stale_text(mem: UserMemory) -> None:
    long_term = mem.long_term
    assert long_term.current() == MemorySnapshot(0, "")
    long_term.add_note("prefers tea")
    seen = long_term.current()
    assert seen == MemorySnapshot(1, "- prefers tea\n")
    long_term.add_note("allergic to cats")  # someone else, meanwhile
    with pytest.raises(VersionConflict, match="changed since version 1 was read .*it is now version 2") as caught:
        long_term.write(seen.text + "- stale copy\n", expected_version=seen.version)
    assert (caught.value.expected, caught.value.actual) == (1, 2)
    assert long_term.read() == "- prefers tea\n- allergic to cats\n"
    fresh = long_term.current()
    assert long_term.write(fresh.text + "- fresh\n", expected_version=fresh.version) is not None
    assert long_term.current().version == 3


def test_current_names_a_version_that_text_at_gives_back(mem: UserMemory) -> None:
    long_term = mem.long_term
    mem.directory.mkdir(parents=True)
    long_term.path.write_text("written before any history\n", encoding="utf-8")
    assert long_term.current() == MemorySnapshot(0, "written before any history\n")
    long_term.add_note("one")
    long_term.add_note("two")
    snapshot = long_term.current()
    assert snapshot.version == 2 and long_term.text_at(2) == snapshot.text
    assert long_term.text_at(0) == "written before any history\n"  # kept by the first change
    long_term.path.write_text("edited by hand\n", encoding="utf-8")
    repaired = long_term.current()  # the hand edit gets a version of its own, so the number names this text
    assert repaired == MemorySnapshot(3, "edited by hand\n")
    assert long_term.history()[-1].source == "repair" and long_term.text_at(3) == "edited by hand\n"
    assert long_term.current().version == 3  # and only once


def test_reading_the_current_version_creates_nothing(mem: UserMemory) -> None:
    assert mem.long_term.current() == MemorySnapshot(0, "")
    assert not mem.directory.exists()


def test_a_change_keeps_the_file_mode(mem: UserMemory) -> None:
    mem.long_term.write("first\n")
    mem.long_term.path.chmod(0o664)
    mem.long_term.add_note("second")
    assert mem.long_term.path.stat().st_mode & 0o777 == 0o664
