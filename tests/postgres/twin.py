"""The same small conversation for both backends (the ``twin`` fixture of this folder's conftest.py)."""

from __future__ import annotations

import datetime as _dt


# The same conversation on both backends: two threads over two days, English and Chinese, questions and answers, a
# tool call. Every message carries its own time, so both stores hold exactly the same records.
_T0 = _dt.datetime(2026, 4, 8, 9, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))
TWIN_NOW = _T0 + _dt.timedelta(days=2)
"""The twins' clock: what the stores stamp themselves (conversations, long-term changes)."""
TWIN_TURNS: tuple[tuple[str, str, str, int], ...] = (
    # (session, role, content, minutes after _T0)
    ("s1", "user", "I moved to Lyon last spring for a new job", 0),
    ("s1", "assistant", "Congratulations on the move to Lyon! How is the new job?", 1),
    ("s1", "user", "Where should I go hiking near Lyon in May?", 2),
    ("s1", "assistant", "The Monts du Lyonnais are lovely for hiking in May.", 3),
    ("s2", "user", "我在找工作，想找数据分析的职位", 30),
    ("s2", "assistant", "数据分析的工作在里昂也很多。", 31),
    ("s2", "user", "What did I say about my job search?", 32),
    ("s2", "assistant", "You are looking for a data analysis job.", 33),
    ("s1", "user", "I painted the sunrise over the river yesterday", 60 * 24),
    ("s1", "assistant", "A sunrise painting sounds beautiful. Which river?", 60 * 24 + 1),
    ("s1", "user", "The Saône, from the footbridge near my flat", 60 * 24 + 2),
    ("s2", "user", "Do you remember which city I moved to?", 60 * 24 + 30),
    ("s2", "assistant", "You moved to Lyon.", 60 * 24 + 31),
)


def fill_twin(store: object) -> None:
    """Write :data:`TWIN_TURNS` to ``store`` (either backend): the messages (a tool call on the last answer), a
    dialogue-log entry per answer, the conversations and two long-term notes."""
    from agentmem_nb.messages import ToolCall
    from agentmem_nb.store import DialogueEntry

    user = store.user("alice")  # type: ignore[attr-defined]
    question = ""
    for n, (session, role, content, minutes) in enumerate(TWIN_TURNS):
        ts = _T0 + _dt.timedelta(minutes=minutes)
        calls = (ToolCall(id="call_1", name="search_session", input={"keyword": "Lyon"}, output="#1 I moved to Lyon",
                          duration_ms=3.5),) if n == len(TWIN_TURNS) - 1 else ()
        appended = user.append(session, role, content, ts=ts, tool_calls=calls)
        if role == "user":
            question = content
            continue
        user.log.append(DialogueEntry(entry_id=0, ts=ts, session_id=session, user_message=question,
                                      assistant_reply=content, tool_calls=calls, timings_ms={"total": 12.5},
                                      model="offline", assistant_message_id=appended.session.message_id))
        user.conversations.touch(session, title=f"about {session}")
    user.long_term.add_note("Lives in Lyon")
    user.long_term.add_note("Looking for a data analysis job")
