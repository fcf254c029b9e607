"""Path safety: hostile identifiers are refused before any path is built; one user never touches another's files."""

from __future__ import annotations

import datetime as _dt
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_testlib import snapshot

from agentmem_nb import InvalidIdentifier, MemoryStore, UserMemory
from agentmem_nb.errors import MemoryDataWarning

HOSTILE_IDS: list[object] = [
    "../x", "a/b", "/etc/passwd", "..", ".", ".hidden", "a\x00b", "", "x" * 10_000, "x" * 129, " a", "a ",
    "a\\b", "a\nb", "..\\x", "小明/../bob", "小\x00明", None, 5, b"x", 1.5, ["a"],
    # Unicode that prints nothing, prints as something else, or is another spelling of a valid id:
    "e\u0301",  # "é" decomposed (NFD): the NFC spelling is the id
    "a\u202eb", "\u202e", "a\u200bb", "a\u200db", "\ufeffa", "a\u00adb",  # RLO, zero-width space/joiner, BOM, soft hyphen
    "a\u2028b", "a\u00a0b", "\u3000a",  # line separator, no-break space, ideographic space
    "\u200d小", "小\u200d", "小\u200d\u200d明", "a\u200c小",  # a joiner at an end, doubled, or beside ASCII
    "a\ud800b", "a\ue000b",  # lone surrogate (an undecodable file name byte), private use
    "😀" * 46,  # 46 characters but 184 bytes: too long a file name
]
# Printable Unicode ids are accepted: the original demo's user id is a free text box (memory/小明/ exists).
UNICODE_IDS: list[str] = [
    "小明", "王小明的记忆", "😀", "🇨🇳", "שלום", "مرحبا", "דני-2", "é", "Zoë", "a b", "~", "$HOME", "*", "한국어", "Ñandú",
    "👍🏽", "xxx" + "字" * 59,  # 180 bytes exactly
    "👨\u200d👩\u200d👧", "زهرا\u200cسادات", "क्\u200dष",  # an emoji ZWJ sequence, a Persian ZWNJ, an Indic conjunct
]
HOSTILE_DAYS: list[object] = [
    *HOSTILE_IDS, "2026-4-8", "20260408", "2026-02-30", "2026-13-01", "2026-04-08 ", "2026-04-08/../x",
    "２０２６-04-08", "08-04-2026", _dt.datetime(2026, 4, 8, 10, 0),
]

USER_OPS: dict[str, Callable[[MemoryStore, object], Any]] = {
    "store.user": lambda store, v: store.user(v),  # type: ignore[arg-type]
    "store[...]": lambda store, v: store[v],  # type: ignore[index]
}
SESSION_OPS: dict[str, Callable[[UserMemory, object], Any]] = {
    "session": lambda mem, v: mem.session(v),
    "append": lambda mem, v: mem.append(v, "user", "hello"),
    "search_session": lambda mem, v: mem.search_session(v, "hello"),
    "session_window": lambda mem, v: mem.session_window(v, 1),
    "recent": lambda mem, v: mem.recent(v),
    "conversations.create": lambda mem, v: mem.conversations.create(v),
    "conversations.touch": lambda mem, v: mem.conversations.touch(v),
    "conversations.rename": lambda mem, v: mem.conversations.rename(v, "title"),
}
DAY_OPS: dict[str, Callable[[UserMemory, object], Any]] = {
    "daily": lambda mem, v: mem.daily(v),
    "append(day=)": lambda mem, v: mem.append("s1", "user", "hello", day=v),
    "search_daily(day=)": lambda mem, v: mem.search_daily("hello", day=v),
    "daily_window": lambda mem, v: mem.daily_window(v, 1),
}
# None is not hostile everywhere: it means "a new random id" for create(), "the message's day" for append(day=)
# and "every day" for search_daily(day=).
NONE_IS_DOCUMENTED = {"conversations.create", "append(day=)", "search_daily(day=)"}


@pytest.fixture
def populated(store: MemoryStore) -> UserMemory:
    """A user who already has files, so a refused call has real folders it could have written into."""
    mem = store.user("alice")
    mem.append("s1", "user", "hello")
    mem.conversations.create("s1")
    mem.long_term.add_note("likes tea")
    return mem


def _assert_refused(call: Callable[[], Any], field: str, value: object, root: Path) -> None:
    before = snapshot(root)
    with pytest.raises(InvalidIdentifier) as info:
        call()
    error = info.value
    assert isinstance(error, ValueError)
    assert error.field == field and error.value is value
    message = str(error)
    assert field in message
    assert repr(value)[:40] in message  # long values are shortened, but their start is quoted
    assert snapshot(root) == before, "a refused call created or changed files"


@pytest.mark.parametrize("value", HOSTILE_IDS, ids=repr)
@pytest.mark.parametrize("op", USER_OPS)
def test_hostile_user_ids_are_refused(store: MemoryStore, populated: UserMemory, op: str, value: object) -> None:
    _assert_refused(lambda: USER_OPS[op](store, value), "user_id", value, store.root.parent)


def _table(ops: dict[str, object], values: list[object]) -> list[Any]:
    return [pytest.param(op, value, id=f"{op}-{value!r:.40}") for op in ops for value in values
            if not (value is None and op in NONE_IS_DOCUMENTED)]


@pytest.mark.parametrize(("op", "value"), _table(SESSION_OPS, HOSTILE_IDS))
def test_hostile_session_ids_are_refused(populated: UserMemory, op: str, value: object) -> None:
    _assert_refused(lambda: SESSION_OPS[op](populated, value), "session_id", value, populated.store.root.parent)


@pytest.mark.parametrize(("op", "value"), _table(DAY_OPS, HOSTILE_DAYS))
def test_hostile_days_are_refused(populated: UserMemory, op: str, value: object) -> None:
    _assert_refused(lambda: DAY_OPS[op](populated, value), "day", value, populated.store.root.parent)


@pytest.mark.parametrize("value", ["a" * 128, "a.b_c-D9", "2026-04-08", "A", "0", "x..y", *UNICODE_IDS])
def test_edge_valid_ids_are_accepted_and_stay_inside_the_user_folder(store: MemoryStore, value: str) -> None:
    mem = store.user(value)
    written = mem.append(value, "user", "hi", day=_dt.date(2026, 4, 8))
    assert written.session.message_id == 1
    for path in store.root.rglob("*"):
        assert path.resolve().is_relative_to((store.root / value).resolve())
    assert mem.session_ids() == [value] and mem.days() == ["2026-04-08"]
    assert store.users() == [value]
    assert [m.content for m in MemoryStore(store.root).user(value).search_session(value, "hi")] == ["hi"]


def test_a_decomposed_spelling_is_refused_with_the_nfc_form_so_one_name_is_one_folder(store: MemoryStore) -> None:
    composed, decomposed = "Zo\u00eb", "Zoe\u0308"
    store.user(composed).append("s1", "user", "hi")
    with pytest.raises(InvalidIdentifier) as info:
        store.user(decomposed)
    assert "NFC" in str(info.value) and "'Zo\\xeb'" in str(info.value)  # the NFC spelling, escaped to be readable
    with pytest.raises(InvalidIdentifier):
        store.user(composed).session("s\u0301")
    assert [p.name for p in store.root.iterdir()] == [composed]


def test_users_lists_unicode_users_and_names_the_folders_it_cannot_open(store: MemoryStore) -> None:
    for user_id in ("小明", "alice", "שלום"):
        store.user(user_id).append("s1", "user", "hi")
    (store.root / "Zoe\u0308").mkdir()  # an NFD folder made by another program
    (store.root / "a\u202eb").mkdir()
    (store.root / ".git").mkdir()  # hidden: nobody's memory, not worth a warning
    (store.root / "notes.txt").write_text("not a folder")
    with pytest.warns(MemoryDataWarning) as caught:
        listed = store.users()
    assert listed == sorted(["小明", "alice", "שלום"])
    message = str(caught[0].message)
    assert "2 folder(s)" in message and "Zoe\u0308" in message and "NFC" in message and "U+202E" in message


def test_users_is_quiet_when_every_folder_is_a_user(store: MemoryStore) -> None:
    store.user("小明").append("s1", "user", "hi")
    (store.root / ".ipynb_checkpoints").mkdir()
    assert store.users() == ["小明"]  # the AgentMemWarning filter turns any warning into a failure here


# ------------------------------------------------------------------------------------------- user isolation

_opened: list[str] | None = None
_EVENTS = {"open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.truncate",
           "shutil.copyfile", "os.chmod"}


def _recorded(path: str | bytes | os.PathLike[Any]) -> str:
    # The store opens each step below its root relative to the folder before it (openat with dir_fd, which the
    # audit event does not carry): such a name is recorded as given, a single component. A user folder can then
    # only be reached by an absolute path inside it or by opening its own name relative to the root.
    text = os.fsdecode(path)
    return os.path.realpath(text) if os.path.isabs(text) else text


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is None or event not in _EVENTS or not args:
        return
    path = args[0]
    if isinstance(path, (str, bytes, os.PathLike)):
        _opened.append(_recorded(path))
    if event == "os.rename" and len(args) > 1 and isinstance(args[1], (str, bytes, os.PathLike)):
        _opened.append(_recorded(args[1]))


sys.addaudithook(_audit)  # permanent by design of audit hooks; inert unless a test sets _opened


def test_audit_hook_sees_the_store_open_files(store: MemoryStore) -> None:
    """The isolation test below is only as good as its recorder: prove it records this store's accesses."""
    global _opened
    _opened = []
    try:
        store.user("alice").append("s1", "user", "x")
        store.user("alice").session_ids()
    finally:
        recorded, _opened = _opened, None
    # The root by its path, then each step by its name relative to the one before.
    assert os.path.realpath(store.root) in recorded
    assert {"alice", "sessions", "s1.jsonl"} <= set(recorded)


def test_one_users_calls_never_touch_another_users_folder(store: MemoryStore) -> None:
    global _opened
    bob = store.user("bob")
    bob.append("secret-thread", "user", "bob's secret 蓝莓", day="2026-04-01")
    bob.conversations.create("secret-thread", title="bob only")
    bob.long_term.add_note("bob's private note")
    bob.log.file.append({"session_id": "secret-thread", "user_message": "bob"})
    bob_dir = os.path.realpath(store.root / "bob")
    bob_before = snapshot(store.root / "bob")

    alice = store.user("alice")
    _opened = []
    try:
        own = alice.append("s1", "user", "alice's own 蓝莓")
        results = {
            "session": alice.session("secret-thread").messages(),
            "search_session": alice.search_session("secret-thread", "secret"),
            "window": alice.session_window("secret-thread", 1).messages,
            "recent": alice.recent("secret-thread"),
            "day": alice.daily("2026-04-01").messages(),
            "search_daily(day)": alice.search_daily("secret", day="2026-04-01"),
            "search_daily(all)": [m for m in alice.search_daily("蓝莓") if "bob" in m.content],
            "daily_window": alice.daily_window("2026-04-01", 1).messages,
            "conversation": alice.conversations.get("secret-thread"),
            "log": [e for e in alice.log.entries() if e.user_message == "bob"],
        }
        listing = (alice.session_ids(), alice.days(), [c.session_id for c in alice.conversations.list()])
        long_term = alice.long_term.read() + "".join(v.after for v in alice.long_term.history())
        problems = alice.problems()
    finally:
        recorded, _opened = _opened, None

    assert all(not value for value in results.values()), results
    assert listing == (["s1"], [own.daily.day], [])
    assert "bob" not in long_term
    assert all(p.path.startswith(str(alice.directory)) for p in problems)
    touched = [path for path in recorded if path in (bob_dir, "bob") or path.startswith(bob_dir + os.sep)]
    assert touched == [], f"alice's calls touched bob's files: {touched}"
    assert "alice" in recorded  # the recorder did see alice's own folder being opened
    assert snapshot(store.root / "bob") == bob_before
