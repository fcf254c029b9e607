"""Text with lone surrogates (JSON escapes such as \\ud800, which the store accepts and keeps) reaches every frame
unchanged, whether pandas stores "str" columns in pyarrow (UTF-8 only) or in Python."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from frames_testlib import at, turn

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb import frames as F
from agentmem_nb.frames._text import PYTHON_STR, concat_frames, text_array
from agentmem_nb.store import DialogueEntry

pytestmark = pytest.mark.usefixtures("reader")  # every test: exact and columnar reader

LONE = "a\ud800b"  # no UTF-8 form
LOW = "\udfff end"


def texts(column: pd.Series) -> list:
    return [v if isinstance(v, str) else None for v in column]


def test_text_array_keeps_lone_surrogates_and_says_str() -> None:
    clean = text_array(["x", None, "好"])
    odd = text_array(["x", None, LONE])
    assert clean.dtype == "str" and odd.dtype == "str"
    assert odd.dtype == PYTHON_STR
    assert odd[0] == "x" and odd[2] == LONE and pd.isna(odd[1])
    assert clean[2] == "好" and pd.isna(clean[1])


def test_concat_of_both_storages_keeps_the_values() -> None:
    clean = pd.DataFrame({"t": text_array(["x"]), "n": [1]})
    odd = pd.DataFrame({"t": text_array([LONE]), "n": [2]})
    for parts in ([clean, odd], [odd, clean]):
        joined = concat_frames(parts)
        assert texts(joined["t"]) == [p["t"].iloc[0] for p in parts]
        assert joined["t"].dtype == "str"


def test_messages_with_lone_surrogates(store: MemoryStore) -> None:
    mem = store.user("u")
    mem.append("s1", "user", "clean")
    mem.append("s1", "assistant", LONE, tags=["t" + LOW, "ok"])
    mem.append("s2", "user", "only clean text")
    frame = F.session_messages(mem)
    expected = [m for s in mem.session_ids() for m in mem.session(s).messages()]
    assert sorted(texts(frame["content"])) == sorted(m.content for m in expected)
    assert LONE in texts(frame["content"])
    assert ("session", "t" + LOW, "ok") in list(frame["tags"])
    days = F.daily_messages(mem)
    assert LONE in texts(days["content"])
    # a hand-written day line whose role and meta.session_id hold escapes
    day = mem.days()[0]
    with open(mem.directory / "daily" / f"{day}.jsonl", "a", encoding="ascii") as handle:
        handle.write(json.dumps({"ts": "2026-04-08T11:00:00.000000+08:00", "role": "r\udc80", "content": "c",
                                 "meta": {"session_id": "s\ud801"}}) + "\n")
    days = F.daily_messages(mem, day)
    assert texts(days["role"])[-1] == "r\udc80" and texts(days["session_id"])[-1] == "s\ud801"
    assert [m.role for m in mem.daily(day).messages()] == texts(days["role"])


def test_tool_calls_and_log_with_lone_surrogates(store: MemoryStore) -> None:
    mem = store.user("u")
    call = ToolCall("search\ud83d", {"keyword": LONE}, "out " + LOW, id="c\udc00", duration_ms=1.0)
    turn(mem, "s1", "question " + LONE, "reply " + LOW, at(8, 10), (call,))
    turn(mem, "s1", "plain", "plain", at(8, 11), (ToolCall("t", {"k": 1}, "o", id="c2"),))
    mem.log.append(DialogueEntry(entry_id=0, ts=at(8, 12), session_id="s1", user_message="q", assistant_reply="r",
                                 memory_context="ctx\ud800", error="boom\udfff", model="m\ud800"))
    for source in ("log", "sessions"):
        calls = F.tool_calls(mem, source=source)
        assert texts(calls["tool"]) == ["search\ud83d", "t"]
        assert texts(calls["output"]) == ["out " + LOW, "o"]
        assert texts(calls["call_id"]) == ["c\udc00", "c2"]
        assert calls["input"].iloc[0] == {"keyword": LONE}
        assert LONE in calls["input_text"].iloc[0]
        assert len(F.filter_tool_calls(calls, keyword=LONE)) == 1
    log = F.dialogue_log(mem)
    assert texts(log["user_message"])[0] == "question " + LONE
    assert texts(log["assistant_reply"])[0] == "reply " + LOW
    assert texts(log["tools"])[0] == "search\ud83d"
    assert texts(log["memory_context"])[-1] == "ctx\ud800"
    assert texts(log["error"])[-1] == "boom\udfff" and texts(log["model"])[-1] == "m\ud800"


def test_long_term_history_and_conversations_with_lone_surrogates(store: MemoryStore) -> None:
    mem = store.user("u")
    mem.long_term.add_note("likes tea", source="src\ud800")
    with open(mem.directory / "memory.history.jsonl", "a", encoding="ascii") as handle:
        handle.write(json.dumps({"ts": "2026-04-08T12:00:00.000000+08:00", "source": "hand",
                                 "before": "- likes tea\n", "after": "- likes tea\n- x\udc00\n"}) + "\n")
    history = F.long_term_history(mem)
    assert texts(history["source"]) == ["src\ud800", "hand"]
    assert texts(history["after"])[-1] == "- likes tea\n- x\udc00\n"
    assert texts(history["added"])[-1] == "- x\udc00"
    lines = F.long_term(mem)  # memory.md itself is UTF-8 text; the blame's source comes from the history
    assert texts(lines["text"]) == ["- likes tea"] and texts(lines["source"]) == ["src\ud800"]
    mem.append("s1", "user", "hi")
    (mem.directory / "conversations.json").write_text(json.dumps({"s1": {
        "title": "t\ud800", "created_at": "2026-04-08T10:00:00+08:00", "updated_at": "2026-04-08T10:00:00+08:00"}}),
        encoding="ascii")
    convs = F.conversations(mem)
    assert texts(convs["title"]) == ["t\ud800"] and list(convs["messages"]) == [1]


def test_follower_appends_a_surrogate_to_a_clean_frame(store: MemoryStore) -> None:
    mem = store.user("u")
    mem.append("s1", "user", "clean")
    mem.append("s2", "user", "other thread")
    follower = F.LayerFollower(mem)
    assert follower.sessions()["content"].dtype.storage != "python" or not _has_pyarrow()
    mem.append("s1", "assistant", LONE, tool_calls=(ToolCall("t\ud800", {}, "o"),))
    frame = follower.sessions()
    assert texts(frame["content"]) == texts(F.session_messages(mem)["content"])
    assert LONE in texts(frame["content"])
    assert texts(follower.tool_calls(source="sessions")["tool"]) == ["t\ud800"]
    assert np.array_equal(frame["message_id"].to_numpy(), F.session_messages(mem)["message_id"].to_numpy())


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _has_pyarrow(), reason="pyarrow storage is what makes lone surrogates fail")
def test_pyarrow_str_really_refuses_lone_surrogates() -> None:
    # The reason for text_array: if pandas ever stops failing here, the fallback is dead code and can go.
    with pytest.raises(UnicodeEncodeError):
        pd.array([LONE], dtype="str")
