"""Replay a logged turn against the memory as it was at that moment, with another model, prompt or retriever, and
show the two side by side; export logged turns as recall cases.

::

    from agentmem_nb.evaluation.replay import logged_turns, replay_turn, export_cases
    turns = logged_turns(store.user("demo"))               # logs/llm_dialogue.jsonl, oldest first
    replay = replay_turn(store.user("demo"), turns[3], model=OfflineChatModel())
    print(replay.format())                                 # tool calls, retrieved messages, reply: then | now
    replay.same_tool_calls                                 # True when the agent asked for exactly the same
    print(export_cases(store.user("demo"), turns[:5]))     # a *.memcases.yaml text replaying those turns

How a turn is replayed: the memory of the user is rebuilt in a temporary store with every message written before the
turn's question (its own thread is cut just before the question), and ``memory.md`` as it was then
(:func:`~agentmem_nb.evaluation.rebuild.rebuild_until`); the store's clock starts at the question's time, so the
turn lands on the same day with the same ids. Then:

* the **original** side is the log line: its tool calls, its reply, and the messages its tool calls returned, found
  by running those same calls again on the rebuilt memory (read-only tools only; ``remember_note`` is not repeated).
  :attr:`Replay.faithful` says whether those calls gave the logged outputs back, i.e. whether the rebuilt memory is
  the one the original turn saw;
* the **replayed** side is a real turn through :class:`~agentmem_nb.agent.ChatService` on the rebuilt memory, with the
  model, retriever and system prompt given (the configured model by default).

The user's memory is only read (through the user's own store, which may refresh its index cache beside the data as
any read does); everything the replay writes goes to the temporary store, removed afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import RecalledMessage, recalled_by_tools, tool_line
from agentmem_nb.evaluation.rebuild import Rebuilt, rebuild_until
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.retrieval import Retriever
from agentmem_nb.store import DialogueEntry, MemoryStore, UserMemory
from agentmem_nb.testing.demo import SteppingClock
from agentmem_nb.timeutil import format_ts

if TYPE_CHECKING:
    import pandas as pd
    from langchain_core.language_models import BaseChatModel

__all__ = ["TurnSide", "Replay", "logged_turns", "replay_turn", "export_cases", "question_of"]

_READ_ONLY_TOOLS = ("search_session", "get_session_window", "search_daily", "get_daily_window", "get_recent_session")


@dataclass(frozen=True, slots=True)
class TurnSide:
    """One side of a replay: what the agent called, what those calls returned, and what it answered."""

    label: str
    model: str
    tool_calls: tuple[ToolCall, ...]
    retrieved: tuple[RecalledMessage, ...]
    reply: str
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {"label": self.label, "model": self.model, "reply": self.reply, "error": self.error,
                "tool_calls": [{"name": c.name, "input": c.input, "output": c.output} for c in self.tool_calls],
                "retrieved": [m.to_dict() for m in self.retrieved]}


@dataclass(frozen=True, slots=True)
class Replay:
    """A logged turn and its replay, side by side."""

    entry: DialogueEntry
    question: Message
    original: TurnSide
    replayed: TurnSide
    rebuilt: Rebuilt
    faithful: bool
    """True when the original tool calls, run again on the rebuilt memory, returned exactly what the log recorded
    (so the original side's retrieved messages are the ones it saw)."""

    @property
    def same_tool_calls(self) -> bool:
        """The same tools, in the same order, with the same arguments."""
        return _calls(self.original.tool_calls) == _calls(self.replayed.tool_calls)

    @property
    def same_tool_outputs(self) -> bool:
        """The same tool calls, and each returned the same text."""
        return self.same_tool_calls and [c.output for c in self.original.tool_calls] == [
            c.output for c in self.replayed.tool_calls]

    @property
    def same_retrieved(self) -> bool:
        """The same messages came back (in the same order)."""
        return [m.item for m in self.original.retrieved] == [m.item for m in self.replayed.retrieved]

    @property
    def same_reply(self) -> bool:
        """The same reply, word for word."""
        return self.original.reply == self.replayed.reply

    def rows(self) -> list[tuple[str, str, str]]:
        """``(what, original, replayed)`` rows: each tool call, each retrieved message, the reply."""
        out: list[tuple[str, str, str]] = []
        o, r = self.original, self.replayed
        for n in range(max(len(o.tool_calls), len(r.tool_calls))):
            out.append((f"tool {n + 1}", tool_line(o.tool_calls[n]) if n < len(o.tool_calls) else "",
                        tool_line(r.tool_calls[n]) if n < len(r.tool_calls) else ""))
        for n in range(max(len(o.retrieved), len(r.retrieved))):
            out.append((f"retrieved {n + 1}", o.retrieved[n].line() if n < len(o.retrieved) else "",
                        r.retrieved[n].line() if n < len(r.retrieved) else ""))
        out.append(("reply", o.reply, r.reply))
        return out

    def format(self, width: int = 60) -> str:
        """The two sides as a text table (each cell cut to ``width`` characters), with a verdict line."""
        def cut(text: str) -> str:
            text = " ".join(text.split())
            return text if len(text) <= width else text[: width - 1] + "…"

        head = (f"turn {self.entry.entry_id} of session {self.entry.session_id!r}: {self.entry.user_message!r}\n"
                f"memory rebuilt: {self.rebuilt.messages} message(s) before {format_ts(self.question.ts)}"
                f"{'' if self.rebuilt.exact else ' (not exact: ' + '; '.join(self.rebuilt.notes[:3]) + ')'}")
        lines = [head, f"{'':<13}| {cut(self.original.label):<{width}} | {cut(self.replayed.label)}"]
        for what, left, right in self.rows():
            mark = " " if left == right else "≠"
            lines.append(f"{mark}{what:<12}| {cut(left):<{width}} | {cut(right)}")
        verdict = [f"tool calls {'same' if self.same_tool_calls else 'differ'}",
                   f"retrieved {'same' if self.same_retrieved else 'differ'}",
                   f"reply {'same' if self.same_reply else 'differs'}"]
        if not self.faithful:
            verdict.append("the rebuilt memory did not give the logged tool outputs back (a store opened in another "
                           "time zone than the memory was written in shows other times and days: give its zone)")
        lines.append("; ".join(verdict))
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """:meth:`rows` as a DataFrame (columns ``what``, ``original``, ``replayed``, ``same``)."""
        import pandas as pd

        rows = self.rows()
        return pd.DataFrame({"what": [r[0] for r in rows], "original": [r[1] for r in rows],
                             "replayed": [r[2] for r in rows], "same": [r[1] == r[2] for r in rows]})


def logged_turns(user: UserMemory) -> list[DialogueEntry]:
    """Every turn of ``logs/llm_dialogue.jsonl``, oldest first (``entry_id`` numbers them)."""
    return user.log.entries()


def _entry(user: UserMemory, turn: DialogueEntry | int) -> DialogueEntry:
    if isinstance(turn, DialogueEntry):
        return turn
    for entry in user.log.entries():
        if entry.entry_id == turn:
            return entry
    raise InvalidArgument(f"user {user.user_id!r} has no logged turn {turn!r}: logged_turns(user) lists them "
                          "(entry_id)")


def question_of(user: UserMemory, entry: DialogueEntry) -> Message:
    """The stored user message that started the logged turn ``entry`` (in its session)."""
    if entry.session_id not in user.session_ids():
        raise InvalidArgument(f"logged turn {entry.entry_id}: user {user.user_id!r} has no session "
                              f"{entry.session_id!r} any more, so the turn cannot be rebuilt")
    candidates = [m for m in user.session(entry.session_id).messages()
                  if m.role == "user" and m.content == entry.user_message
                  and (entry.assistant_message_id is None or m.message_id < entry.assistant_message_id)
                  and (entry.ts is None or m.ts <= entry.ts)]
    if not candidates:
        raise InvalidArgument(f"logged turn {entry.entry_id}: its question {entry.user_message!r:.60} is not in "
                              f"session {entry.session_id!r}, so the turn cannot be rebuilt")
    return candidates[-1]


def replay_turn(user: UserMemory, turn: DialogueEntry | int, *, model: BaseChatModel | None = None,
                retriever: Retriever | None = None, system_prompt: str | None = None,
                offline: bool = False) -> Replay:
    """Run the logged ``turn`` (an entry of :func:`logged_turns` or its ``entry_id``) again on the memory as it was
    then, and return both sides.

    Args:
        model: the chat model of the replay (default: the configured one; ``offline=True``: the offline model).
        retriever: what the replay's search tools search with (default configuration if ``None``).
        system_prompt: rules to use instead of :data:`~agentmem_nb.agent.SYSTEM_PROMPT` (the time, long-term memory
            and daily sections are still added after them).
    """
    from agentmem_nb.agent import ChatService, OfflineChatModel

    entry = _entry(user, turn)
    question = question_of(user, entry)
    chosen = model if model is not None else (OfflineChatModel() if offline else None)
    with tempfile.TemporaryDirectory(prefix="agentmem-replay-") as tmp:
        root = Path(tmp) / "memory"
        rebuilt = rebuild_until(user, MemoryStore(root, zone=user.store.zone).user(user.user_id), before=question.ts,
                                stop_at=ItemKey("session", entry.session_id, question.message_id))
        root.mkdir(parents=True, exist_ok=True)  # nothing before the first turn: an empty memory
        # The turn's clock starts at the question's time (set after the rebuild, which must not advance it).
        store = MemoryStore(root, zone=user.store.zone, clock=SteppingClock(question.ts))
        dest = store.user(user.user_id)
        day = dest.day_for(question.ts)
        # The original calls run on a copy that holds the question too, as the original turn's memory did (a
        # window may reach it; searches leave it out); the replayed turn writes its own question into ``dest``.
        copy = Path(tmp) / "original"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".index"))
        seen = MemoryStore(copy, zone=user.store.zone).user(user.user_id)
        asked = seen.append(entry.session_id, "user", question.content, ts=question.ts, day=day)
        original, faithful = _original_side(seen, entry, day, exclude=frozenset(
            {ItemKey.of(asked.session, "session"), ItemKey.of(asked.daily, "daily")}))
        # facts "hot": written before the turn returns, so nothing runs on in a thread when the copy is deleted
        service = ChatService(store, model=chosen, retriever=retriever, facts="hot")
        if system_prompt is not None:
            service.model = _with_rules(service.model, system_prompt)
        result = service.turn(user.user_id, entry.session_id, entry.user_message)
        replayed = TurnSide(label=f"replay ({service.model_name})", model=service.model_name,
                            tool_calls=result.tool_calls,
                            retrieved=recalled_by_tools(dest, result.tool_calls, result.memory_items,
                                                        session_id=entry.session_id, today=day),
                            reply=result.reply, error=result.error)
    return Replay(entry=entry, question=question, original=original, replayed=replayed, rebuilt=rebuilt,
                  faithful=faithful)


def _original_side(dest: UserMemory, entry: DialogueEntry, day: str,
                   exclude: frozenset[ItemKey]) -> tuple[TurnSide, bool]:
    """The logged side, with the messages its calls returned: the calls run again on the rebuilt memory (which
    holds the question, left out of searches by ``exclude`` as in the original turn)."""
    from langchain_core.tools import ToolException

    from agentmem_nb.agent.tools import MemoryTools, TurnScope

    tools = MemoryTools(dest, entry.session_id)
    scope = TurnScope(day=day, exclude=exclude)
    faithful = True
    for call in entry.tool_calls:
        if call.name not in _READ_ONLY_TOOLS or call.status == "error":
            continue
        try:
            output = getattr(tools, call.name)(dict(call.input), scope=scope)
        except ToolException:  # a bad argument the original was told about too (its call is marked error)
            faithful = False
            continue
        faithful = faithful and output == call.output
    retrieved = recalled_by_tools(dest, entry.tool_calls, scope.retrieved, session_id=entry.session_id, today=day)
    reply = entry.assistant_reply
    return TurnSide(label=f"original ({entry.model or 'unknown model'})", model=entry.model,
                    tool_calls=entry.tool_calls, retrieved=retrieved, reply=reply, error=entry.error), faithful


def _calls(calls: Sequence[ToolCall]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.input) for c in calls]


def _with_rules(model: BaseChatModel, rules: str) -> BaseChatModel:
    from agentmem_nb.evaluation._prompt_swap import RulesSwap

    return RulesSwap(inner=model, rules=rules)


# ---------------------------------------------------------------------------------------------- export

_SNIPPET = 60


def export_cases(user: UserMemory, turns: Iterable[DialogueEntry | int], *, path: str | Path | None = None,
                 offline: bool = True) -> str:
    """A ``*.memcases.yaml`` text with one agent case per logged turn: the same question in the same session, on the
    user's memory as it was just before (``memory:`` the store's folder, ``as_of:`` the question's time), expecting
    the tools the original called and the messages its windows were opened on.

    ``path`` is where the text will be written (the ``memory:`` folder is then relative to it). ``offline`` pins the
    offline model in the file (``model: offline``).
    """
    root = user.store.root.resolve()
    memory = os.path.relpath(root, Path(path).resolve().parent) if path is not None else str(root)
    head: dict[str, Any] = {"user": user.user_id, "memory": memory}
    zone = getattr(user.store.zone, "key", None)
    if isinstance(zone, str):
        head["zone"] = zone
    if offline:
        head["model"] = "offline"
    cases = []
    used: set[str] = set()
    for turn in turns:
        entry = _entry(user, turn)
        question = question_of(user, entry)
        case: dict[str, Any] = {"name": _case_name(entry, used), "question": entry.user_message,
                                "session": entry.session_id, "as_of": format_ts(question.ts), "agent": True}
        names = list(dict.fromkeys(c.name for c in entry.tool_calls if c.status != "error"))
        if names:
            case["expect_tools"] = names
        evidence = _window_anchors(user, entry, user.day_for(question.ts))
        if evidence:
            case["expect_retrieved"] = evidence
        if not names and not evidence:
            case["expect_reply"] = [" ".join(entry.assistant_reply.split())[:_SNIPPET]]
        cases.append(case)
    if not cases:
        raise InvalidArgument("no turn to export: pass some entries of logged_turns(user)")
    text = yaml.safe_dump({**head, "cases": cases}, allow_unicode=True, sort_keys=False, width=120)
    return (f"# Exported from the dialogue log of {user.user_id!r}: each case replays one logged turn on the memory\n"
            f"# as it was just before it (run: agentmem-nb eval cases FILE, or pytest).\n{text}")


def _case_name(entry: DialogueEntry, used: set[str]) -> str:
    words = re.findall(r"\w+", entry.user_message.casefold())[:5]
    name = "-".join([f"turn-{entry.entry_id}", *words])[:60]
    while name in used:
        name += "-again"
    used.add(name)
    return name


def _window_anchors(user: UserMemory, entry: DialogueEntry, today: str) -> list[str]:
    """The start of each message a window was opened on (what the original turn relied on)."""
    out = []
    for call in entry.tool_calls:
        if call.name not in ("get_session_window", "get_daily_window") or call.status == "error":
            continue
        raw = call.input.get("message_id")
        anchor = raw if isinstance(raw, int) else int(raw) if isinstance(raw, str) and raw.isdigit() else None
        if anchor is None:
            continue
        if call.name == "get_session_window":
            message = user.session(entry.session_id).get(anchor)
        else:
            message = user.daily(str(call.input.get("day") or today)).get(anchor)
        if message is not None and message.content.strip():
            # the start of its first line: a substring of the stored text as it is (cases match substrings)
            out.append(message.content.strip().splitlines()[0][:_SNIPPET].strip())
    return list(dict.fromkeys(out))

