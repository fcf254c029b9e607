"""What the model is given each turn: :class:`TurnContext` and :func:`build_context`.

A turn's context (step 2 of a turn, docs/ARCHITECTURE.md): the last ``recent_rounds`` rounds of the session (the
message being answered is *not* counted twice), daily messages from other conversations only when
``daily_limit > 0``, and the whole ``memory.md``. Everything
older is reached through the tools, which is the point: what the agent recalls is visible in its tool trace.

The dialogue log keeps the context of every turn (:meth:`TurnContext.log_text`), but not a copy of a large
``memory.md`` each time: beyond :data:`LOG_LONG_TERM_MAX_CHARS` it names the version instead (a 100 MB ``memory.md``
copied into every line made a turn take 44 s and the log grow by 150 MB a turn). Empty sections are left out, as
the original demo did.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, HumanMessage

from agentmem_nb.agent._text import content_tokens
from agentmem_nb.facts.rank import FactRanker, SelectedFact
from agentmem_nb.store.contract import KeepsFacts
from agentmem_nb.messages import Message
from agentmem_nb.store import Appended, UserMemory
from agentmem_nb.store.redactions import shown

__all__ = ["TurnContext", "build_context", "long_term_lines_used", "LOG_LONG_TERM_MAX_CHARS"]

LOG_LONG_TERM_MAX_CHARS = 8192
"""Up to this many characters ``memory.md`` is copied into the log line as it is; beyond, it is referred to by version."""


@dataclass(frozen=True, slots=True)
class TurnContext:
    """The memory handed to the model for one turn (besides the current message itself)."""

    history: tuple[Message, ...]
    """The latest rounds of this session, oldest first, without the current message."""
    daily: tuple[Message, ...]
    """Today's messages from *other* sessions (empty unless ``daily_limit > 0``)."""
    long_term: str
    """The whole of ``memory.md``."""
    long_term_version: int | None = None
    """The number of the last recorded change of ``memory.md`` when it was read (``None``: not known)."""
    facts: tuple[SelectedFact, ...] = ()
    """Structured facts chosen for this question (the profile, then the relevant ones), each with why."""
    instructions: str = ""
    """The agent's standing instructions for this user (``instructions.md``, procedural memory)."""
    instructions_version: int | None = None
    """Its version when it was read."""

    def history_messages(self) -> list[HumanMessage | AIMessage]:
        """The history as chat messages (only user and assistant turns; other roles are not replayed)."""
        out: list[HumanMessage | AIMessage] = []
        for msg in self.history:
            if msg.role == "user":
                out.append(HumanMessage(content=msg.content))
            elif msg.role == "assistant":
                out.append(AIMessage(content=msg.content))
        return out

    def log_text(self) -> str:
        """The context as the original demo logged it: ``[SESSION]``, ``[DAILY]`` and ``[LONG_TERM]`` sections, each
        only when it has something; a long-term memory longer than :data:`LOG_LONG_TERM_MAX_CHARS` is named by its
        version, length and hash instead of copied."""
        parts: list[str] = []
        if self.history:
            parts += ["[SESSION]", *(f"{m.role}: {m.content}" for m in self.history)]
        if self.daily:
            parts += ["[DAILY]", *(f"{m.role}: {m.content}" for m in self.daily)]
        if self.instructions.strip():
            parts += ["[INSTRUCTIONS]", f"(instructions.md version {self.instructions_version})"]
        if self.facts:
            parts += ["[FACTS]", *(f"{s.line()} <- {s.why()}" for s in self.facts)]
        long_term = self.long_term.strip()
        if long_term:
            parts += ["[LONG_TERM]", long_term if len(long_term) <= LOG_LONG_TERM_MAX_CHARS else self._long_term_ref()]
        return "\n".join(parts)

    def _long_term_ref(self) -> str:
        data = self.long_term.encode("utf-8", errors="surrogatepass")
        version = f"version {self.long_term_version}" if self.long_term_version is not None else "version unknown"
        return (f"(memory.md {version}, {len(self.long_term)} characters, sha256 {hashlib.sha256(data).hexdigest()[:16]}"
                ": not copied into the log; memory.history.jsonl holds every version)")


def build_context(
    user: UserMemory,
    session_id: str,
    current: Appended,
    *,
    recent_rounds: int = 3,
    daily_limit: int = 0,
    facts: FactRanker | None = None,
    fact_budget: int = 0,
    procedural: bool = False,
) -> TurnContext:
    """Assemble the context for the turn whose user message was just written as ``current``; with a ``facts``
    ranker and ``fact_budget > 0``, up to that many structured facts chosen for the question; with ``procedural``,
    the standing instructions (``instructions.md``).

    Cost does not depend on the length of the session or day files: both are read from their tails.
    """
    rounds = max(0, recent_rounds)
    tail = user.session(session_id).tail(2 * rounds + 1) if rounds else []
    history = tuple(m for m in tail if m.message_id != current.session.message_id)[-2 * rounds:] if rounds else ()
    history = tuple(shown(user, history, "session"))  # a redacted message is "[redacted: reason]" in the prompt too
    daily: tuple[Message, ...] = ()
    if daily_limit > 0 and current.daily.day:
        daily = _daily_from_other_sessions(user, current.daily.day, session_id, daily_limit, 2 * rounds + 1)
        daily = tuple(shown(user, daily, "daily"))
    # The text and the version that names it, read together under the lock (a change made by hand is recorded first),
    # so the log line can refer to a large memory.md by version instead of copying it.
    long_term = user.long_term.current()
    keeps = isinstance(user, KeepsFacts)  # a backend without structured memory: none in the context
    chosen = (facts.select(user.facts, current.session.content, budget=fact_budget)
              if facts and fact_budget > 0 and keeps else ())
    # No instructions file (the common case) costs one stat, not the lock and the history check of current(); a
    # database reads its one row (the check is the files' own: a database user is no UserMemory).
    absent = isinstance(user, UserMemory) and not user.instructions.path.exists()
    instructions = user.instructions.current() if procedural and keeps and not absent else None
    return TurnContext(history=history, daily=daily, long_term=long_term.text, long_term_version=long_term.version,
                       facts=chosen, instructions=instructions.text if instructions else "",
                       instructions_version=instructions.version if instructions else None)


DAILY_SCAN_MAX = 2000
"""At most this many messages (beyond ``daily_limit``) are read back from the end of the day file when looking for
other sessions' messages: a day that this session alone filled for longer than that gives an empty daily section
rather than a read of the whole file on every turn."""


def _daily_from_other_sessions(user: UserMemory, day: str, session_id: str, limit: int,
                               first_read: int) -> tuple[Message, ...]:
    """The last ``limit`` messages of ``day`` written by *other* sessions, read backwards from the end of the file.

    This session's own messages are already in the history (or reachable with its tools); the daily section is for
    what was said elsewhere today. When this session wrote the tail of the day, its messages crowd the first read,
    so the read widens (x4 each time) until it holds ``limit`` others, reaches the start of the file, or covers
    :data:`DAILY_SCAN_MAX` messages more than asked for.
    """
    day_file = user.daily(day)
    cap = limit + DAILY_SCAN_MAX
    want = min(limit + first_read, cap)
    while True:
        pool = day_file.tail(want)
        others = [m for m in pool if m.session_id != session_id]
        if len(others) >= limit or len(pool) < want or want >= cap:
            return tuple(others[-limit:])
        want = min(cap, want * 4)


def long_term_lines_used(long_term: str, reply: str) -> tuple[str, ...]:
    """Lines of ``memory.md`` that a reply draws on: quoted verbatim, or sharing most of their content words.

    A model does not report which of the lines in its prompt it used, so this is an estimate (used for
    ``memory_hits``): a bullet counts when its text appears in the reply, or when at least 60% of its content words
    (and at least two) do. Headings never count.
    """
    if not long_term.strip() or not reply.strip():
        return ()
    folded_reply = reply.casefold()
    reply_tokens = content_tokens(reply)
    # Every content token of a line is a substring of the casefolded line, so a line in which no token of the reply
    # occurs cannot share any: one regex search skips the tokenising of almost every line of a large memory.md.
    shared = re.compile("|".join(map(re.escape, sorted(reply_tokens, key=len, reverse=True)))) if reply_tokens else None
    used: list[str] = []
    for raw in long_term.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fact = line.lstrip("-*+ \t").strip()
        if len(fact) < 2:
            continue
        folded = fact.casefold()
        if folded in folded_reply:
            used.append(line)
            continue
        if shared is None or shared.search(folded) is None:
            continue
        tokens = content_tokens(fact)
        if len(tokens) >= 2 and len(tokens & reply_tokens) >= 0.6 * len(tokens):
            used.append(line)
    return tuple(dict.fromkeys(used))


def render_lines(messages: Sequence[Message], *, with_day: bool = False) -> str:
    """Anchor lines for a prompt section (one line per message)."""
    return "\n".join(" ".join(m.anchor_line(with_day=with_day, max_chars=500).split("\n")) for m in messages)
