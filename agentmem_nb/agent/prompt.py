"""The system prompt (step 3 of a turn, docs/ARCHITECTURE.md): prefer tools, answer verifiable questions only from
tool results, expand hits.

The static part is :data:`SYSTEM_PROMPT`; each turn appends the long-term memory and (optionally) today's messages
from other conversations inside tagged blocks, see :func:`system_prompt_for`. Tags rather than Markdown headings,
because ``memory.md`` itself is Markdown with headings of its own.
"""

from __future__ import annotations

import datetime as _dt

from agentmem_nb.agent.context import TurnContext, render_lines

__all__ = ["SYSTEM_PROMPT", "system_prompt_for", "LONG_TERM_OPEN", "LONG_TERM_CLOSE"]

LONG_TERM_OPEN = "<long_term_memory>"
LONG_TERM_CLOSE = "</long_term_memory>"

SYSTEM_PROMPT = """\
You are a helpful assistant with a layered memory of everything this user has said to you.

Your memory, and the tools that reach it:
- This conversation: search_session(keyword), get_session_window(message_id, before, after), get_recent_session(rounds).
  Only its last few rounds are shown to you directly; everything older must be searched.
- Every conversation, by day: search_daily(keyword, day) (leave day empty to search every day), and
  get_daily_window(message_id, before, after, day).
- Long-term memory (memory.md), shown below; remember_note(note) adds a durable fact to it.

Tool results list one message per line as `#id [YYYY-MM-DD HH:MM] role: text` (daily hits also show `day=`).

Rules:
1. Prefer tools to guessing. When the user refers to anything said before (earlier, last time, another day, "do you
   remember", "之前", "上次", "还记得"), search for it before answering, even if you think you remember.
2. Answer questions a tool can verify only from what the tools returned. If the tools find nothing, say so plainly;
   never invent a memory.
3. A hit is one line out of context: expand the best hit with get_session_window or get_daily_window (its #id, and
   its day for daily hits) before relying on it.
4. Search with one distinctive keyword (a name, a noun, a date). If nothing is found, try another word, then
   search_daily across every day.
5. When the user states a durable preference or fact about themselves, save it with remember_note as one short
   third-person sentence. Do not save small talk.
6. Reply in the user's language, concisely.\
"""


def system_prompt_for(context: TurnContext, *, now: _dt.datetime | None = None) -> str:
    """The full system prompt of one turn: the rules, the time, long-term memory and the daily section."""
    parts = [SYSTEM_PROMPT]
    if now is not None:
        parts.append(f"Current time: {now.strftime('%Y-%m-%d %H:%M %A')} (UTC{now.strftime('%z')}).")
    standing = context.instructions.strip()
    if standing:  # procedural memory: how to work with this user, refined over time (propose_instruction)
        parts.append("Standing instructions for this user (follow them unless the user says otherwise now):\n"
                     f"<standing_instructions>\n{standing}\n</standing_instructions>")
    body = context.long_term.strip()
    if body:  # an empty section is left out (as the original demo did); the rules above say what memory.md is
        parts.append(f"Long-term memory (memory.md):\n{LONG_TERM_OPEN}\n{body}\n{LONG_TERM_CLOSE}")
    if context.facts:
        lines = "\n".join(f"- {selected.line()}" for selected in context.facts)
        parts.append("Known facts about the user and their people (structured memory, with the message each came "
                     "from; recall_facts finds more and their history):\n<facts>\n" + lines + "\n</facts>")
    if context.daily:
        parts.append("Earlier today in other conversations (daily log, oldest first):\n<daily>\n"
                     f"{render_lines(context.daily, with_day=True)}\n</daily>")
    return "\n\n".join(parts)
