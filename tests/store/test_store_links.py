"""A memory folder never makes the store read or write outside it: links and special files inside a user folder are
refused (with an error naming them), never followed, never waited on.

Every attack here uses a real symlink, a real FIFO (``os.mkfifo``) and a real folder outside the memory folder; the
outside bytes are compared before and after. Calls that could hang run in a thread with a bounded join, so a
regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_testlib import REPO

from agentmem_nb import MemoryStore, ProblemKind, StoreError, UserMemory
from agentmem_nb.errors import UnsafeFileError
from agentmem_nb.store import _fs

SECRET = "sk-outside-SECRET-4242"
DAY = "2026-04-08"  # the fixed clock's day in Asia/Shanghai
HANG_GUARD_S = 60  # a guard against a hang, not a timing assertion: the calls return in microseconds


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the memory folder with files an attacker would like the store to read or write."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "notes.txt").write_bytes(b"my own notes\nthe last line, without newline")
    (folder / "credentials").write_text(f"api_key: {SECRET}\n", encoding="utf-8")
    (folder / "s9.jsonl").write_bytes(b'{"role": "user", "content": "outside", "message_id": 1}\n')
    return folder


def _bytes_of(folder: Path) -> dict[str, bytes]:
    out = {}
    for here, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(here) / name
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


def _regular_files(folder: Path) -> dict[str, bytes]:
    """Every regular file under ``folder`` (links are neither followed nor read)."""
    out = {}
    for here, _dirs, files in os.walk(folder):  # os.walk does not descend into linked folders
        for name in files:
            path = Path(here) / name
            if stat.S_ISREG(path.lstat().st_mode):
                out[str(path)] = path.read_bytes()
    return out


def _returns(call: Callable[[], Any]) -> Any:
    """Run ``call`` in a thread; fail (instead of hanging) if it does not come back; re-raise what it raised."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test thread, which re-raises it
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), "the call blocked (a FIFO was opened or read?)"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _refused(call: Callable[[], Any], entry: Path) -> UnsafeFileError:
    with pytest.raises(UnsafeFileError) as info:
        _returns(call)
    error = info.value
    assert isinstance(error, StoreError)
    assert Path(error.path) == entry and str(entry) in str(error)
    assert "regular" in str(error)  # says what to do
    return error


def _link(at: Path, to: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(to, at)


# ------------------------------------------------------------------------------------------- linked files


def test_a_linked_session_file_is_neither_written_nor_read(mem: UserMemory, outside: Path) -> None:
    before = _bytes_of(outside)
    entry = mem.directory / "sessions" / "s1.jsonl"
    _link(entry, outside / "notes.txt")
    error = _refused(lambda: mem.append("s1", "user", "hello"), entry)
    assert "symbolic link" in error.found and str(outside / "notes.txt") in error.found
    _refused(lambda: mem.search_session("s1", "notes"), entry)
    _refused(lambda: mem.session("s1").window(1), entry)
    _refused(lambda: mem.recent("s1"), entry)
    assert _bytes_of(outside) == before  # no quarantined last line, no JSON appended
    assert not (mem.directory / "daily").exists()  # the refused append wrote neither half
    assert [p.kind for p in mem.problems() if p.path == str(entry)] == [ProblemKind.UNSAFE_FILE]


def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(mem: UserMemory, outside: Path) -> None:
    """A hard link is a regular file whose other name may be outside: reading memory.md through it would put the
    credentials into the prompt, and an append would change the outside file."""
    mem.append("s0", "user", "hello")
    before = _bytes_of(outside)
    session = mem.directory / "sessions" / "s9.jsonl"
    os.link(outside / "s9.jsonl", session)
    os.link(outside / "credentials", mem.long_term.path)
    for entry, call in [(session, lambda: mem.append("s9", "user", "written through a hard link")),
                        (session, lambda: mem.search_session("s9", "outside")),
                        (mem.long_term.path, mem.long_term.read),
                        (mem.long_term.path, lambda: mem.long_term.add_note("x"))]:
        error = _refused(call, entry)
        assert "hard link" in error.found
    assert _bytes_of(outside) == before
    found = [(p.path, p.kind) for p in _returns(mem.problems) if p.kind is ProblemKind.UNSAFE_FILE]
    assert sorted(found) == sorted([(str(session), ProblemKind.UNSAFE_FILE),
                                    (str(mem.long_term.path), ProblemKind.UNSAFE_FILE)])


def test_a_file_swapped_for_a_link_after_it_was_read_is_refused(mem: UserMemory, outside: Path) -> None:
    """A warm layer answers "unchanged" from one stat of the path; a link swapped in since (to a copy of the same
    size) is another file, so the safe open runs and refuses it."""
    mem.append("s1", "user", "hello")
    entry = mem.directory / "sessions" / "s1.jsonl"
    assert [m.content for m in mem.session("s1").messages()] == ["hello"]
    copy = outside / "copy.jsonl"
    copy.write_bytes(entry.read_bytes().replace(b"hello", b"HELLO"))
    entry.unlink()
    os.symlink(copy, entry)
    _refused(lambda: mem.session("s1").window(1), entry)
    _refused(lambda: mem.search_session("s1", "hello"), entry)


def test_a_linked_day_file_refuses_the_append_before_the_session_line_is_written(mem: UserMemory) -> None:
    mem.append("s1", "user", "first")
    entry = mem.directory / "daily" / f"{DAY}.jsonl"
    entry.unlink()
    os.symlink("/dev/null", entry)
    _refused(lambda: mem.append("s1", "user", "second"), entry)
    # Not acknowledged, and nothing half-written: the session still holds only the first message.
    assert [m.content for m in mem.session("s1").messages()] == ["first"]


def test_a_linked_quarantine_file_stops_the_repair_and_loses_nothing(mem: UserMemory, outside: Path) -> None:
    mem.append("s1", "user", "kept")
    layer = mem.directory / "sessions" / "s1.jsonl"
    with open(layer, "ab") as handle:
        handle.write(b'{"role": "user", "content": "torn')
    data = layer.read_bytes()
    before = _bytes_of(outside)
    entry = layer.with_name("s1.jsonl.quarantine")
    _link(entry, outside / "notes.txt")
    _refused(lambda: mem.session("s1").append("user", "next"), entry)
    assert layer.read_bytes() == data  # the torn tail was not cut, since it could not be kept safely
    assert _bytes_of(outside) == before


@pytest.mark.parametrize("name", ["memory.md", "conversations.json", "memory.history.jsonl"])
def test_a_linked_document_is_not_read_or_replaced(mem: UserMemory, outside: Path, name: str) -> None:
    mem.directory.mkdir(parents=True)
    entry = mem.directory / name
    _link(entry, outside / "credentials")
    before = _bytes_of(outside)
    calls: dict[str, list[Callable[[], Any]]] = {
        "memory.md": [mem.long_term.read, lambda: mem.long_term.add_note("likes tea")],
        "conversations.json": [mem.conversations.list, lambda: mem.conversations.create("s1")],
        "memory.history.jsonl": [mem.long_term.history, lambda: mem.long_term.add_note("likes tea")],
    }
    for call in calls[name]:
        _refused(call, entry)
    assert entry.is_symlink() and _bytes_of(outside) == before


def test_atomic_write_refuses_to_replace_a_link(tmp_path: Path, outside: Path) -> None:
    entry = tmp_path / "user" / "doc.json"
    _link(entry, outside / "notes.txt")
    before = _bytes_of(outside)
    _refused(lambda: _fs.atomic_write(entry, b"{}", base=tmp_path), entry)
    assert entry.is_symlink() and _bytes_of(outside) == before
    assert sorted(os.listdir(entry.parent)) == ["doc.json"]  # no temporary file left


# ------------------------------------------------------------------------------------------- linked folders


@pytest.mark.parametrize("folder", ["sessions", "daily", "logs"])
def test_a_linked_folder_is_not_entered(mem: UserMemory, outside: Path, folder: str) -> None:
    mem.directory.mkdir(parents=True)
    entry = mem.directory / folder
    os.symlink(outside, entry)
    before = _bytes_of(outside)
    calls: dict[str, Callable[[], Any]] = {
        "sessions": lambda: mem.session("s9").messages(),
        "daily": lambda: mem.daily(DAY).messages(),
        "logs": lambda: mem.log.entries(),
    }
    error = _refused(calls[folder], entry)
    assert "folder" in str(error)
    if folder == "sessions":
        _refused(mem.session_ids, entry)
        _refused(lambda: mem.append("s9", "user", "hello"), entry)
    if folder == "daily":
        _refused(mem.days, entry)
    assert _bytes_of(outside) == before
    assert [p.kind for p in mem.problems() if p.path == str(entry)] == [ProblemKind.UNSAFE_FILE]


def test_a_linked_user_folder_is_not_a_user(store: MemoryStore, outside: Path) -> None:
    store.user("bob").append("s1", "user", "hello")
    entry = store.root / "alice"
    os.symlink(outside, entry)
    before = _bytes_of(outside)
    mem = store.user("alice")
    _refused(lambda: mem.append("s9", "user", "hello"), entry)
    _refused(lambda: mem.session("s9").messages(), entry)
    _refused(mem.long_term.read, entry)
    _refused(lambda: mem.conversations.create("s9"), entry)
    assert store.users() == ["bob"]
    assert [(p.path, p.kind) for p in _returns(mem.problems)] == [(str(entry), ProblemKind.UNSAFE_FILE)]
    assert _bytes_of(outside) == before


# ------------------------------------------------------------------------------------------- special files


@pytest.mark.parametrize("where", ["sessions/x.jsonl", "daily/2026-04-08.jsonl", "logs/llm_dialogue.jsonl",
                                   "memory.md", "conversations.json", "memory.history.jsonl"])
def test_a_fifo_never_blocks_a_read_or_a_write(mem: UserMemory, where: str) -> None:
    entry = mem.directory / where
    entry.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(entry)
    reads: dict[str, Callable[[], Any]] = {
        "sessions/x.jsonl": lambda: mem.search_session("x", "hello"),
        "daily/2026-04-08.jsonl": lambda: mem.search_daily("hello"),
        "logs/llm_dialogue.jsonl": lambda: mem.log.entries(),
        "memory.md": lambda: mem.long_term.read(),
        "conversations.json": lambda: mem.conversations.list(),
        "memory.history.jsonl": lambda: mem.long_term.history(),
    }
    writes: dict[str, Callable[[], Any]] = {
        "sessions/x.jsonl": lambda: mem.append("x", "user", "hello"),
        "daily/2026-04-08.jsonl": lambda: mem.append("s1", "user", "hello", day=DAY),
        "logs/llm_dialogue.jsonl": lambda: mem.log.file.append({"user_message": "hello"}),
        "memory.md": lambda: mem.long_term.add_note("likes tea"),
        "conversations.json": lambda: mem.conversations.create("s1"),
        "memory.history.jsonl": lambda: mem.long_term.add_note("likes tea"),
    }
    assert "FIFO" in _refused(reads[where], entry).found
    _refused(writes[where], entry)
    found = _returns(mem.problems)
    assert [p.kind for p in found if p.path == str(entry)] == [ProblemKind.UNSAFE_FILE]
    assert stat.S_ISFIFO(entry.lstat().st_mode)


def test_the_cli_does_not_hang_on_a_fifo(mem: UserMemory) -> None:
    mem.append("s1", "user", "hello")
    os.mkfifo(mem.directory / "sessions" / "x.jsonl")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for args in (["search", "--user", "alice", "--session", "x", "hello"], ["problems", "--user", "alice"]):
        done = subprocess.run([sys.executable, "-m", "agentmem_nb.cli", "--root", str(mem.store.root), *args],
                              capture_output=True, text=True, env=env, timeout=HANG_GUARD_S, check=False)
        assert done.returncode != 0, done
        assert "x.jsonl" in done.stdout + done.stderr and "FIFO" in done.stdout + done.stderr


@pytest.mark.parametrize("where", ["sessions/x.jsonl", "memory.md", "conversations.json", "logs/llm_dialogue.jsonl"])
def test_a_folder_where_a_file_belongs_is_named_in_the_error(mem: UserMemory, where: str) -> None:
    entry = mem.directory / where
    entry.mkdir(parents=True)
    calls: dict[str, Callable[[], Any]] = {
        "sessions/x.jsonl": lambda: mem.append("x", "user", "hello"),
        "memory.md": lambda: mem.long_term.add_note("likes tea"),
        "conversations.json": lambda: mem.conversations.create("s1"),
        "logs/llm_dialogue.jsonl": lambda: mem.log.file.append({"user_message": "hello"}),
    }
    assert _refused(calls[where], entry).found == "a folder"
    assert [p.kind for p in mem.problems() if p.path == str(entry)] == [ProblemKind.UNSAFE_FILE]


# ------------------------------------------------------------------------------------------- a whole turn


def test_a_linked_memory_md_never_reaches_the_prompt_the_log_or_the_history(store: MemoryStore, outside: Path) -> None:
    from agentmem_nb.agent import ChatService, OfflineChatModel  # local: the store tests do not need langchain

    mem = store.user("alice")
    svc = ChatService(store, model=OfflineChatModel())
    svc.turn("alice", "s1", "My sister lives in Lyon.")
    entry = mem.directory / "memory.md"
    if entry.exists():
        entry.unlink()
    os.symlink(outside / "credentials", entry)
    before = _bytes_of(outside)

    result = svc.turn("alice", "s1", "What do you remember about me? Remember that I prefer green tea.")
    assert result.error is not None and "memory.md" in result.error  # the turn fails visibly, naming the file
    assert SECRET not in result.reply and SECRET not in result.memory_context
    written = _regular_files(store.root)
    assert written and not [path for path, data in written.items() if SECRET.encode() in data]
    assert _bytes_of(outside) == before and entry.is_symlink()
    assert ProblemKind.UNSAFE_FILE in {p.kind for p in mem.problems()}


@pytest.mark.parametrize("linked", ["logs/llm_dialogue.jsonl", "conversations.json"])
def test_a_turn_whose_log_or_index_is_linked_writes_nothing(store: MemoryStore, outside: Path, linked: str) -> None:
    """Refused before the first write: the user message, the reply and the note are not half-written beside a log
    line that could never be written (a retry would duplicate them)."""
    from agentmem_nb.agent import ChatService, OfflineChatModel

    mem = store.user("alice")
    svc = ChatService(store, model=OfflineChatModel())
    svc.turn("alice", "s1", "Hello.")
    svc.drain()  # the first turn's fact extraction runs after its reply: let it finish before the files are compared
    entry = mem.directory / linked
    entry.unlink()
    os.symlink(outside / "notes.txt", entry)
    before, files = _bytes_of(outside), _regular_files(store.root)
    with pytest.raises(UnsafeFileError) as raised:
        svc.turn("alice", "s1", "Remember that I prefer green tea.")
    assert Path(raised.value.path) == entry
    assert _regular_files(store.root) == files and _bytes_of(outside) == before


# ------------------------------------------------------------------------------------------- modes and write errors


def test_an_atomic_rewrite_keeps_the_files_mode(mem: UserMemory) -> None:
    mem.long_term.write("# alice\n")
    mem.long_term.path.chmod(0o664)
    mem.long_term.add_note("likes tea")
    assert stat.S_IMODE(mem.long_term.path.stat().st_mode) == 0o664
    mem.conversations.create("s1")
    mem.conversations.path.chmod(0o640)
    mem.conversations.touch("s1")
    assert stat.S_IMODE(mem.conversations.path.stat().st_mode) == 0o640


def test_a_new_document_gets_the_mode_of_a_plain_open(mem: UserMemory, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")  # whatever umask the process runs with
    mem.long_term.add_note("likes tea")
    assert stat.S_IMODE(mem.long_term.path.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_a_failed_atomic_write_names_the_target_not_its_temporary_file(tmp_path: Path) -> None:
    # A name that fits the file system but leaves no room for the temporary name's prefix and suffix: a real
    # OSError at the temporary file, which the message must not pass off as the file being written.
    target = tmp_path / ("n" * 250)
    with pytest.raises(StoreError) as info:
        _fs.atomic_write(target, b"data")
    message = str(info.value)
    assert str(target) in message and ".tmp" not in message
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders; the name-length case covers it")
def test_a_read_only_folder_names_the_document(mem: UserMemory) -> None:
    mem.conversations.create("s1")
    mem.directory.chmod(0o555)
    try:
        with pytest.raises(StoreError) as info:
            mem.conversations.touch("s1")
    finally:
        mem.directory.chmod(0o755)
    assert str(mem.conversations.path) in str(info.value) and ".tmp" not in str(info.value)
    assert "writable" in str(info.value)


def test_outside_the_base_nothing_is_opened(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not inside"):
        _fs.open_file(tmp_path / "a", os.O_RDONLY, base=tmp_path / "b")
    with pytest.raises(StoreError, match="'..'"):
        _fs.open_file(tmp_path / "b" / ".." / "a", os.O_RDONLY, base=tmp_path / "b")



def test_a_store_rooted_at_the_working_folder_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mem = MemoryStore(".", zone="UTC").user("alice")
    mem.append("s1", "user", "hello")
    mem.long_term.add_note("likes tea")
    assert [m.content for m in mem.search_session("s1", "hello")] == ["hello"]
    assert mem.long_term.lines() == ["- likes tea"] and mem.problems() == []


def test_a_corrupt_index_beside_a_linked_sessions_folder_piles_up_no_backups(mem: UserMemory, outside: Path) -> None:
    mem.directory.mkdir(parents=True)
    mem.conversations.path.write_text("{broken", encoding="utf-8")
    os.symlink(outside, mem.directory / "sessions")
    for _attempt in range(3):
        _refused(mem.conversations.list, mem.directory / "sessions")
    assert sorted(os.listdir(mem.directory)) == ["conversations.json", "sessions"]
