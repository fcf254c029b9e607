"""``UserMemory.problems()`` sees everything in a user folder and never raises: quarantine files and temporary files
left by earlier (killed) processes, entries of the wrong kind, conversation keys that are not session ids.

Leftovers are made by real processes (a real SIGKILL at the point between writing a temporary file and renaming
it), then checked by a fresh store, as a person running ``agentmem-nb problems`` the next day would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_testlib import REPO

from agentmem_nb import MemoryDataWarning, MemoryStore, ProblemKind, UserMemory

_PRELUDE = """
import os, signal, sys
from agentmem_nb import MemoryStore
from agentmem_nb.store import _fs
mem = MemoryStore(sys.argv[1], zone="Asia/Shanghai").user("alice")
"""


def _python(code: str, root: Path, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", _PRELUDE + textwrap.dedent(code), str(root)], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _run(code: str, root: Path) -> subprocess.CompletedProcess[str]:
    process = _python(code, root)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _fresh(mem: UserMemory) -> UserMemory:
    """The same user seen by a new store: nothing remembered from what this process did."""
    return MemoryStore(mem.store.root, zone=mem.store.zone, clock=mem.store.clock).user(mem.user_id)


def _kinds_at(found: list, path: Path) -> list[ProblemKind]:
    return [p.kind for p in found if p.path == str(path)]


# ------------------------------------------------------------------------------------------- leftovers of other processes


def test_a_quarantine_file_left_by_an_earlier_process_is_reported(mem: UserMemory) -> None:
    done = _run("""
        mem.append("s1", "user", "kept")
        with open(mem.session("s1").path, "ab") as handle:
            handle.write(b'{"role": "user", "content": "torn by a cras')
        mem.session("s1").append("user", "next")
    """, mem.store.root)
    assert done.returncode == 0, done.stderr
    quarantine = mem.directory / "sessions" / "s1.jsonl.quarantine"
    assert quarantine.is_file()
    found = _fresh(mem).problems()
    [problem] = [p for p in found if p.path == str(quarantine)]
    assert problem.kind is ProblemKind.QUARANTINE_FILE
    assert "1 fragment(s)" in problem.detail and "s1.jsonl" in problem.detail


def test_the_temporary_file_of_a_killed_rewrite_is_reported(mem: UserMemory) -> None:
    mem.long_term.write("# alice\n")
    # Killed for real, at the worst moment: the new text fully written to its temporary file, not yet renamed.
    done = _run("""
        def killed(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        _fs.os.replace = killed
        mem.long_term.write("# alice\\n" + "x" * 2_000_000 + "\\n")
    """, mem.store.root)
    assert done.returncode == -signal.SIGKILL, done.stderr
    [leftover] = [name for name in os.listdir(mem.directory) if name.endswith(".tmp")]
    found = _fresh(mem).problems()
    [problem] = [p for p in found if p.kind is ProblemKind.ORPHANED_TEMP_FILE]
    assert problem.path == str(mem.directory / leftover)
    assert "memory.md" in problem.detail and "2.0 MB" in problem.detail
    assert _fresh(mem).long_term.read() == "# alice\n"  # the file itself is whole


def test_the_temporary_file_of_a_write_in_progress_is_not_reported(mem: UserMemory) -> None:
    mem.long_term.write("# alice\n")
    writer = _python("""
        real_replace = os.replace
        def paused(*args, **kwargs):
            print("written", flush=True)
            sys.stdin.readline()  # the test's go-ahead
            real_replace(*args, **kwargs)
        _fs.os.replace = paused
        # atomic_write itself, not add_note: the pause must not hold the user's directory lock, which a
        # problems() check may take.
        _fs.atomic_write(mem.long_term.path, b"# alice\\n- likes tea\\n", base=mem.store.root)
    """, mem.store.root)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "written\n"
        assert [name for name in os.listdir(mem.directory) if name.endswith(".tmp")]  # the temporary file is there
        assert ProblemKind.ORPHANED_TEMP_FILE not in {p.kind for p in _fresh(mem).problems()}
    finally:
        _out, err = writer.communicate("go\n", timeout=120)
    assert writer.returncode == 0, err
    assert _fresh(mem).long_term.lines() == ["# alice", "- likes tea"]


# ------------------------------------------------------------------------------------------- wrong kinds, never raised


@pytest.mark.parametrize("where", ["sessions/x.jsonl", "daily/2026-01-01.jsonl", "logs/llm_dialogue.jsonl",
                                   "memory.md", "memory.history.jsonl", "conversations.json"])
def test_a_folder_where_a_file_belongs_is_reported_not_raised(mem: UserMemory, where: str) -> None:
    mem.append("s1", "user", "hello")
    entry = mem.directory / where
    entry.mkdir(parents=True)
    found = mem.problems()
    assert _kinds_at(found, entry) == [ProblemKind.UNSAFE_FILE]
    assert str(entry) in str(next(p for p in found if p.path == str(entry)))


def test_a_file_where_a_folder_belongs_is_reported_not_raised(mem: UserMemory) -> None:
    mem.directory.mkdir(parents=True)
    (mem.directory / "sessions").write_text("not a folder")
    found = mem.problems()
    assert _kinds_at(found, mem.directory / "sessions") == [ProblemKind.UNSAFE_FILE]


# ------------------------------------------------------------------------------------------- conversations.json


BAD_KEYS = ["../escape", "", "a/b", ".hidden", "x" * 300]


def test_conversation_keys_that_are_not_session_ids_are_not_listed_but_reported(mem: UserMemory) -> None:
    mem.conversations.create("good", title="kept")
    document = json.loads(mem.conversations.path.read_text(encoding="utf-8"))
    document.update({key: {"title": "hand-made", "updated_at": "2026-04-09T00:00:00+08:00"} for key in BAD_KEYS})
    mem.conversations.path.write_text(json.dumps(document), encoding="utf-8")

    assert [c.session_id for c in mem.conversations.list()] == ["good"]
    found = [p for p in mem.problems() if p.kind is ProblemKind.INVALID_CONVERSATION_KEY]
    assert len(found) == len(BAD_KEYS)
    assert all(p.path == str(mem.conversations.path) for p in found)
    # Kept in the file (nothing is lost): a later update rewrites the document with them.
    mem.conversations.touch("good")
    assert set(BAD_KEYS) <= set(json.loads(mem.conversations.path.read_text(encoding="utf-8")))


def test_the_chat_widget_opens_despite_invalid_conversation_keys(store: MemoryStore) -> None:
    pytest.importorskip("ipywidgets")
    from agentmem_nb.agent import ChatService, OfflineChatModel  # local: the store tests need neither
    from agentmem_nb.widgets import ChatWidget

    mem = store.user("alice")
    mem.conversations.create("s1", title="real")
    mem.conversations.path.write_text(json.dumps({
        "s1": {"title": "real", "updated_at": "2026-04-08T10:00:00+08:00"},
        "../../etc": {"title": "newest, and not an id", "updated_at": "2026-04-09T10:00:00+08:00"},
    }), encoding="utf-8")
    chat = ChatWidget(ChatService(store, model=OfflineChatModel()), user_id="alice", stream_interval=0)
    try:
        assert chat.session_id == "s1"
        assert [value for _label, value in chat.conversation_list.options] == ["s1"]
    finally:
        chat.close()


# ------------------------------------------------------------------------------------------- all at once


def test_problems_reports_each_finding_once_and_never_raises(mem: UserMemory, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x").write_text("outside")
    mem.append("s1", "user", "hello")
    mem.long_term.write("# alice\n")
    with open(mem.directory / "memory.history.jsonl", "ab") as handle:
        handle.write(b"not json\n")  # a long-term finding, gathered from LongTermMemory.problems()
    os.symlink(outside / "x", mem.directory / "sessions" / "linked.jsonl")
    os.mkfifo(mem.directory / "sessions" / "fifo.jsonl")
    (mem.directory / "sessions" / "dir.jsonl").mkdir()
    os.symlink(outside, mem.directory / "notes")  # a link nobody reads is still reported
    (mem.directory / ".memory.md.abcd1234.tmp").write_bytes(b"partial")
    (mem.directory / "daily" / "2026-04-08.jsonl.quarantine").write_text('{"bytes_b64": ""}\n')
    mem.conversations.path.write_text(json.dumps({"s1": {}, "bad/key": {}}), encoding="utf-8")

    with pytest.warns(MemoryDataWarning, match="memory.history.jsonl"):
        found = _fresh(mem).problems()
    kinds = sorted((Path(p.path).relative_to(mem.directory).as_posix(), p.kind.value) for p in found)
    assert kinds == sorted([
        ("sessions/linked.jsonl", "unsafe_file"),
        ("sessions/fifo.jsonl", "unsafe_file"),
        ("sessions/dir.jsonl", "unsafe_file"),
        ("notes", "unsafe_file"),
        (".memory.md.abcd1234.tmp", "orphaned_temp_file"),
        ("daily/2026-04-08.jsonl.quarantine", "quarantine_file"),
        ("conversations.json", "invalid_conversation_key"),
        ("memory.history.jsonl", "malformed_json"),
    ])
    assert (outside / "x").read_text() == "outside"
