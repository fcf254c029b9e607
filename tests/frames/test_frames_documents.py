"""Long-term memory (lines and history), conversations, dialogue log and problems as frames."""

from __future__ import annotations

import pandas as pd
import pytest
from frames_testlib import XSS_IMG, at, build_user

from agentmem_nb import MemoryStore
from agentmem_nb import frames as F


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


def test_long_term_lines_with_their_origin(mem) -> None:
    frame = F.long_term(mem)
    assert tuple(frame.columns) == F.LONG_TERM_COLUMNS
    assert list(frame["text"]) == mem.long_term.lines() == ["- 喜欢蓝莓", "- prefers tea"]
    history = mem.long_term.history()
    # "喜欢蓝莓" came with version 2 (add_note); "prefers tea" with version 3 (the user's edit).
    assert list(frame["version"]) == [2, 3]
    assert list(frame["source"]) == ["remember_note", "user"]
    assert list(frame["added_at"]) == [history[1].ts, history[2].ts]
    assert str(frame["added_at"].dt.tz) == "Asia/Shanghai"


def test_long_term_sections_and_line_numbers(store) -> None:
    mem = store.user("bob")
    mem.long_term.write("# Profile\n\n- a\n## Food\n- b\n- a\n")
    frame = F.long_term(mem)
    assert list(frame["line_no"]) == [1, 3, 4, 5, 6]
    assert list(frame["section"]) == ["Profile", "Profile", "Food", "Food", "Food"]
    assert list(frame["version"]) == [1] * 5  # one write brought every line, both copies of "- a" included


def test_long_term_blame_of_a_duplicated_line(store) -> None:
    mem = store.user("bob")
    mem.long_term.write("- a\n")
    mem.long_term.write("- a\n- b\n- a\n")
    frame = F.long_term(mem)
    assert list(frame["text"]) == ["- a", "- b", "- a"]
    assert list(frame["version"]) == [1, 2, 2]


def test_long_term_history(mem) -> None:
    frame = F.long_term_history(mem)
    assert tuple(frame.columns) == F.HISTORY_COLUMNS
    history = mem.long_term.history()
    assert list(frame["version"]) == [v.version for v in history] == [1, 2, 3]
    assert list(frame["after"]) == [v.after for v in history]
    assert list(frame["added"]) == ["- lives in Lyon", "- 喜欢蓝莓", "- prefers tea"]
    assert list(frame["removed"]) == ["", "", "- lives in Lyon"]
    assert isinstance(frame["ts"].dtype, pd.DatetimeTZDtype)


def test_conversations(mem) -> None:
    frame = F.conversations(mem)
    assert tuple(frame.columns) == F.CONVERSATION_COLUMNS
    listed = mem.conversations.list()
    assert list(frame["session_id"]) == [c.session_id for c in listed]
    assert list(frame["updated_at"]) == [c.updated_at for c in listed]
    assert list(frame["messages"]) == [len(mem.session(c.session_id)) for c in listed]
    assert F.conversations(mem, with_counts=False)["messages"].isna().all()


def test_dialogue_log_and_its_filters(mem) -> None:
    frame = F.dialogue_log(mem)
    assert tuple(frame.columns) == F.LOG_COLUMNS
    entries = mem.log.entries()
    assert list(frame["entry_id"]) == [e.entry_id for e in entries]
    assert list(frame["ts"]) == [e.ts for e in entries]
    assert list(frame["tools"]) == [", ".join(c.name for c in e.tool_calls) for e in entries]
    assert list(frame["assistant_message_id"]) == [e.assistant_message_id for e in entries]
    assert list(F.dialogue_log(mem, session="s1")["entry_id"]) == [e.entry_id for e in entries if e.session_id == "s1"]
    assert list(F.dialogue_log(mem, keyword=XSS_IMG.upper())["session_id"]) == ["s2"]
    assert list(F.dialogue_log(mem, keyword="IN LYON")["entry_id"]) == [
        e.entry_id for e in entries if "in lyon" in (e.user_message + "\0" + e.assistant_reply).casefold()]
    late = F.dialogue_log(mem, start=at(7, 0))
    assert list(late["entry_id"]) == [e.entry_id for e in entries if e.ts >= at(7, 0)]


@pytest.mark.filterwarnings("ignore::agentmem_nb.errors.MemoryDataWarning")
def test_problems(mem) -> None:
    path = mem.directory / "sessions" / "s1.jsonl"
    with open(path, "ab") as handle:
        handle.write(b"{oops\n")
    frame = F.problems(mem)
    assert tuple(frame.columns) == F.PROBLEM_COLUMNS
    found = mem.problems()
    assert list(frame["kind"]) == [p.kind.value for p in found]
    assert "sessions/s1.jsonl" in list(frame["file"])
    assert frame.loc[frame["kind"] == "malformed_json", "line"].tolist() == [5]


def test_seed_data_in_every_document_frame(seed_root) -> None:
    mem = MemoryStore(seed_root, zone="Asia/Shanghai").user("demo-user")
    lines = F.long_term(mem)
    assert list(lines["text"]) == mem.long_term.lines() and len(lines) > 10
    assert lines["version"].isna().all()  # the demo kept no history
    assert "兴趣爱好" in set(lines["section"])
    assert len(F.long_term_history(mem)) == 0
    conv = F.conversations(mem)
    assert list(conv["session_id"]) == [c.session_id for c in mem.conversations.list()]
    assert list(conv["title"]) == [c.title for c in mem.conversations.list()]
    log = F.dialogue_log(mem)
    assert len(log) == len(mem.log.entries()) == 31
    assert list(log["entry_id"]) == list(range(1, 32))  # legacy lines without ids got the running id
    problems = F.problems(mem)
    assert list(problems["kind"]) == [p.kind.value for p in mem.problems()]


def test_frames_import_no_widgets_and_the_store_imports_no_frames() -> None:
    import subprocess
    import sys

    code = ("import sys, agentmem_nb.frames; assert 'ipywidgets' not in sys.modules, 'frames imported ipywidgets'; "
            "import agentmem_nb.store")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = "import sys, agentmem_nb.store; assert 'agentmem_nb.frames' not in sys.modules and 'pandas' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
