"""A small user built through the store API (messages, tool calls, log entries, long-term notes), and an independent
re-statement of what the frames should contain, computed from the store's own objects with plain Python."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from agentmem_nb import MemoryStore, ToolCall, UserMemory
from agentmem_nb.store import DialogueEntry

XSS_IMG = '<img src=x onerror="alert(1)">'
XSS_SCRIPT = "<script>alert(1)</script>"
SH = _dt.timezone(_dt.timedelta(hours=8))


def at(day: int, hour: int, minute: int = 0, second: int = 0) -> _dt.datetime:
    """A moment in April 2026, Asia/Shanghai."""
    return _dt.datetime(2026, 4, day, hour, minute, second, tzinfo=SH)


def turn(mem: UserMemory, session: str, question: str, reply: str, when: _dt.datetime,
         calls: tuple[ToolCall, ...] = (), *, model: str = "offline") -> None:
    """One turn as the agent records it: user + assistant messages, then the log entry."""
    day = mem.day_for(when)  # the agent pins the day once per turn: a turn across midnight stays in one day file
    mem.append(session, "user", question, ts=when, day=day)
    written = mem.append(session, "assistant", reply, ts=when + _dt.timedelta(seconds=5), tool_calls=calls, day=day)
    mem.log.append(DialogueEntry(
        entry_id=0, ts=when + _dt.timedelta(seconds=5), session_id=session, user_message=question,
        assistant_reply=reply, tool_calls=calls, timings_ms={"total": 12.0}, model=model,
        assistant_message_id=written.session.message_id,
    ))


def build_user(store: MemoryStore, user_id: str = "alice") -> UserMemory:
    """Three threads over three days with tool calls (one failing), XSS payloads in text, input and output."""
    mem = store.user(user_id)
    mem.conversations.create("s1", title="Moving")
    turn(mem, "s1", "I moved to Lyon last week", "Noted: you live in Lyon.", at(6, 9),
         (ToolCall("remember_note", {"note": "lives in Lyon"}, "saved", id="c1", duration_ms=3.5),))
    turn(mem, "s1", "Where do I live?", "In Lyon.", at(6, 9, 5),
         (ToolCall("search_session", {"keyword": "lyon"}, "#1 [2026-04-06 09:00] user: I moved to Lyon",
                   id="c2", duration_ms=8.25),
          ToolCall("get_session_window", {"message_id": 1, "before": 1, "after": 1}, "#1 ... #2 ...", id="c3")))
    mem.conversations.create("s2", title="XSS")
    turn(mem, "s2", f"look {XSS_IMG} here", f"I see {XSS_SCRIPT}", at(7, 22, 30),
         (ToolCall("search_daily", {"keyword": XSS_IMG}, f"#3 user: {XSS_SCRIPT}", id="c4", duration_ms=20.0),
          ToolCall("search_daily", {"keyword": "boom"}, "error: tool failed", id="c5", status="error")))
    turn(mem, "s3", "我喜欢蓝莓", "好的，记住了：喜欢蓝莓。", at(8, 23, 59, 58),
         (ToolCall("remember_note", {"note": "喜欢蓝莓"}, "saved", id="c6"),))
    mem.long_term.add_note("lives in Lyon")
    mem.long_term.add_note("喜欢蓝莓")
    mem.long_term.write(mem.long_term.read().replace("- lives in Lyon\n", "") + "- prefers tea\n", source="user")
    return mem


def store_messages(mem: UserMemory, *, layer: str) -> list[Any]:
    """Every message of every session (or day) file, through the store's own read path."""
    if layer == "session":
        return [m for s in mem.session_ids() for m in mem.session(s).messages()]
    return [m for d in mem.days() for m in mem.daily(d).messages()]


def expected_calls(mem: UserMemory, *, source: str) -> list[tuple[Any, ...]]:
    """(ts, session, message_id, turn, index, tool, input, output, status, duration) from the store's objects."""
    rows = []
    if source == "log":
        for entry in mem.log.entries():
            for i, call in enumerate(entry.tool_calls):
                rows.append((entry.ts, entry.session_id, entry.assistant_message_id, entry.entry_id, i, call.name,
                             call.input, call.output, call.status, call.duration_ms))
    else:
        for m in store_messages(mem, layer="session"):
            for i, call in enumerate(m.tool_calls):
                rows.append((m.ts, m.session_id, m.message_id, m.message_id, i, call.name, call.input, call.output,
                             call.status, call.duration_ms))
    rows.sort(key=lambda r: r[0])
    return rows
