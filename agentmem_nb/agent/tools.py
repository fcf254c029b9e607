"""The six memory tools the agent can call, bound to one ``(user, session)``.

=====================  =====================================================================
``search_session``     keyword search in the current thread
``get_session_window`` messages around an anchor of the current thread
``search_daily``       keyword search in one day (``day="YYYY-MM-DD"``) or across every day
``get_daily_window``   messages around an anchor of a day file
``get_recent_session`` the last few rounds of the current thread
``remember_note``      add a line to long-term memory (``memory.md``)
=====================  =====================================================================

Every output line reads ``#12 [2026-04-08 10:00] user: ...`` (daily hits add ``day=YYYY-MM-DD``) so the model can
ask for the window around an anchor. Arguments come from a model and are checked here: a bad value (wrong type,
impossible day, unknown id, absurd window, unexpected argument, a path in disguise) becomes an explanatory
``ToolMessage`` with ``status="error"``, never an exception through the graph. Only a genuine failure (the disk,
a bug) raises.

Both search tools run :func:`agentmem_nb.retrieval.search` through the :class:`~agentmem_nb.retrieval.Retriever`
given to the constructor (``MemoryTools(user, sid, retriever=...)``, from ``ChatService(store, retriever=...)``):
one keyword keeps the original exact semantics, several words are ranked, and each hit brings its neighbours.
Redacted messages (:mod:`agentmem_nb.store.redactions`) are never hits, and show as ``[redacted: reason]`` in a
window or the recent rounds: the store's reads apply the rule, ``get_recent_session`` applies it to its tail.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from agentmem_nb.errors import InvalidIdentifier, StoreError
from agentmem_nb.identifiers import check_day
from agentmem_nb.items import ItemKey, LayerKind
from agentmem_nb.messages import Message
from agentmem_nb.retrieval import Retriever, Scope
from agentmem_nb.store import UserMemory, Window
from agentmem_nb.store.redactions import shown as shown_redacted

__all__ = [
    "TurnScope",
    "HasTurnScope",
    "MemoryTools",
    "TOOL_NAMES",
    "SEARCH_LIMIT",
    "TOOL_WINDOW_SIDE_CAP",
    "TOOL_WINDOW_SIDE_DEFAULT",
]

TOOL_NAMES = ("search_session", "get_session_window", "search_daily", "get_daily_window", "get_recent_session",
              "remember_note")

SEARCH_LIMIT = 10
"""Hits per search: enough to choose an anchor, few enough to keep the prompt small."""

TOOL_WINDOW_SIDE_DEFAULT = 3
"""Messages on each side of an anchor when the model does not say (``get_session_window``/``get_daily_window``)."""
TOOL_WINDOW_SIDE_CAP = 20
"""The most messages on each side of an anchor the model may ask for in one tool call: a window is context around
one anchor, and a tool answer should stay small in the prompt. Wider requests are clamped and the model is told so.
It is below the store's own hard cap for any window, ``store.MAX_WINDOW_SIDE``."""

MAX_ROUNDS = 20
MAX_KEYWORD_CHARS = 200
MAX_NOTE_CHARS = 1000
_SEARCH_LINE_CHARS = 300
_WINDOW_LINE_CHARS = 1000

# ---------------------------------------------------------------------------------------------- per-turn state


@dataclass(slots=True)
class TurnScope:
    """What the tools need to know about the turn in progress, and what they found during it.

    ``exclude`` holds the current user message (its session and daily copies): it was persisted before the agent
    ran, and a search that "finds" the question being asked is noise, not memory.
    """

    day: str
    exclude: frozenset[ItemKey] = frozenset()
    retrieved: dict[ItemKey, None] = field(default_factory=dict)  # an ordered set

    def saw(self, messages: Iterable[Message], layer: LayerKind) -> None:
        """Record messages that a tool returned to the model."""
        for msg in messages:
            key = ItemKey.of(msg, layer)
            if key not in self.exclude:
                self.retrieved[key] = None


class HasTurnScope(Protocol):
    """The graph's runtime context as the tools see it: a turn passes an object carrying its :class:`TurnScope`
    (:class:`~agentmem_nb.agent.recorder.TurnState`) with each call of the graph."""

    @property
    def scope(self) -> TurnScope: ...


# ---------------------------------------------------------------------------------------------- argument checks


class _BadArgument(ToolException):
    """An argument the model should fix; the message tells it how."""


def _check_keys(args: dict[str, Any], allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> None:
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        hint = ""
        if any(k in ("session_id", "user_id", "session", "user") for k in unknown):
            hint = " This tool is bound to the current user and session; it cannot reach another one."
        raise _BadArgument(f"unexpected argument(s) {', '.join(unknown)}; this tool takes "
                           f"{', '.join(allowed) or 'no arguments'}.{hint}")
    missing = [k for k in required if k not in args]
    if missing:
        raise _BadArgument(f"missing required argument(s) {', '.join(missing)}.")


def _keyword(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _BadArgument(f"keyword must be text such as \"sister\", got {type(value).__name__} {_show(value)}.")
    text = " ".join(str(value).split())
    if not text:
        raise _BadArgument("keyword is empty: give a word or short phrase to look for "
                           "(get_recent_session shows the latest messages).")
    if len(text) > MAX_KEYWORD_CHARS:
        raise _BadArgument(f"keyword is {len(text)} characters long; use one distinctive word or short phrase "
                           f"(at most {MAX_KEYWORD_CHARS} characters).")
    return text


_HUGE = 2**53
"""Beyond this a JSON number is no longer exact in most clients (a float's mantissa); no id or count gets there."""


def _too_large(value: object) -> bool:
    """True for a positive number beyond :data:`_HUGE` (an int, a float, infinity, or digit text).

    Checked before :func:`_integer`: ``int(1e300)`` is a 301-digit number that answers would otherwise echo.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > _HUGE
    if isinstance(value, float):
        return value >= _HUGE  # also inf; a float this large is not an exact whole number anyway
    if isinstance(value, str):
        digits = value.strip().lstrip("#")
        return digits.isascii() and digits.isdigit() and (len(digits) > 18 or int(digits) > _HUGE)
    return False


def _integer(value: object) -> int | None:
    """An int from an int, an integral float or digit text (``"12"``, ``"#12"``); ``None`` if not integral."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < _HUGE:
        return int(value)
    if isinstance(value, str):
        text = value.strip().lstrip("#")
        sign = -1 if text.startswith("-") else 1
        digits = text[1:] if sign < 0 else text
        if digits.isascii() and digits.isdigit() and len(digits) <= 18:
            return sign * int(digits)
    return None


def _message_id(value: object) -> int:
    if _too_large(value):
        raise _BadArgument(f"message_id {_show(value)} is too large: ids are small whole numbers such as 12 (the "
                           "number after '#' in a search hit).")
    number = _integer(value)
    if number is None or number <= 0:
        raise _BadArgument(f"message_id must be a positive whole number such as 12 (the number after '#' in a "
                           f"search hit), got {type(value).__name__} {_show(value)}.")
    return number


def _side(name: str, value: object, notes: list[str]) -> int:
    if _too_large(value):
        notes.append(f"{name}={_show(value)} is more than {TOOL_WINDOW_SIDE_CAP}, used {TOOL_WINDOW_SIDE_CAP}; "
                     "move the anchor to read further")
        return TOOL_WINDOW_SIDE_CAP
    number = _integer(value)
    if number is None:
        raise _BadArgument(f"{name} must be a whole number of messages from 0 to {TOOL_WINDOW_SIDE_CAP}, "
                           f"got {type(value).__name__} {_show(value)}.")
    if number < 0:
        notes.append(f"{name}={number} is negative, used 0")
        return 0
    if number > TOOL_WINDOW_SIDE_CAP:
        notes.append(f"{name}={number} is more than {TOOL_WINDOW_SIDE_CAP}, used {TOOL_WINDOW_SIDE_CAP}; "
                     "move the anchor to read further")
        return TOOL_WINDOW_SIDE_CAP
    return number


def _day(value: object, today: str) -> str | None:
    """A checked day, ``None`` for "every day"; ``today``/``yesterday`` are understood."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadArgument(f"day must be text written YYYY-MM-DD (e.g. {today!r}) or empty for every day, "
                           f"got {type(value).__name__} {_show(value)}.")
    text = value.strip()
    if not text:
        return None
    if text.lower() == "today":
        return today
    if text.lower() == "yesterday":
        return (_dt.date.fromisoformat(today) - _dt.timedelta(days=1)).isoformat()
    try:
        return check_day(text)
    except InvalidIdentifier as exc:
        raise _BadArgument(f"{exc} (today is {today}).") from None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:50] + f"... ({len(text)} characters)"


# ---------------------------------------------------------------------------------------------- the tools


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_KEYWORD = {"type": "string", "description": "One distinctive word or short phrase, e.g. \"sister\" or \"生日\"."}
_MESSAGE_ID = {"type": "integer", "description": "The anchor: the number after '#' in a search hit."}
_BEFORE = {"type": "integer", "description": f"Messages before the anchor (0-{TOOL_WINDOW_SIDE_CAP}, default "
                                             f"{TOOL_WINDOW_SIDE_DEFAULT}).", "default": TOOL_WINDOW_SIDE_DEFAULT}
_AFTER = {"type": "integer", "description": f"Messages after the anchor (0-{TOOL_WINDOW_SIDE_CAP}, default "
                                            f"{TOOL_WINDOW_SIDE_DEFAULT}).", "default": TOOL_WINDOW_SIDE_DEFAULT}


class _ArgumentsAsOneDict(StructuredTool):
    """A tool whose function receives the model's arguments as one dict, never as keyword arguments.

    langchain calls ``self._run(*args, config=..., run_manager=..., **arguments)``: a model-supplied argument
    named ``self`` would collide with it (a TypeError that fails the turn) and ``config`` or ``run_manager`` would
    be silently replaced. As one dict they are plain data, and :func:`_check_keys` answers them as unexpected.
    """

    def _to_args_and_kwargs(self, tool_input: str | dict[str, Any],
                            tool_call_id: str | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if isinstance(tool_input, dict):
            args = dict(tool_input)
            # The graph's tool node adds the ToolRuntime under "runtime" (and drops a model-sent "runtime" first);
            # anything else under that name came from the caller and is left for _check_keys to refuse.
            runtime = args.pop("runtime", None)
            if isinstance(runtime, ToolRuntime):
                return (args,), {"runtime": runtime}
            return (dict(tool_input),), {}
        return super()._to_args_and_kwargs(tool_input, tool_call_id)


class MemoryTools:
    """The six tools for one ``(user, session)``.

    The object lives as long as the agent graph of its session and holds nothing of any turn: in the graph, each
    call gets the turn's :class:`TurnScope` from the runtime context the turn passed (``runtime.context.scope``);
    called directly, each method takes it as ``scope=`` (``None``: today, nothing excluded, nothing recorded).

    ``retriever`` runs both searches (default: a :class:`~agentmem_nb.retrieval.Retriever` with the default
    configuration); pass your own to change how the agent searches, or to watch it in a test.

    >>> # tools = MemoryTools(store.user("alice"), "s1"); [t.name for t in tools.tools]
    >>> # tools.search_session({"keyword": "sister"}, scope=TurnScope(day="2026-04-08"))
    """

    def __init__(self, user: UserMemory, session_id: str, *, retriever: Retriever | None = None) -> None:
        self.user = user
        self.session_id = session_id
        self.retriever = retriever if retriever is not None else Retriever()
        self.tools: list[BaseTool] = [
            self._tool("search_session", self.search_session,
                       "Search this conversation for a keyword (case-insensitive). Returns matching messages as "
                       "'#id [time] role: text'; then call get_session_window on the best id to read around it.",
                       _schema({"keyword": _KEYWORD}, ["keyword"])),
            self._tool("get_session_window", self.get_session_window,
                       "Read the messages around one message of this conversation (the anchor from a search hit).",
                       _schema({"message_id": _MESSAGE_ID, "before": _BEFORE, "after": _AFTER}, ["message_id"])),
            self._tool("search_daily", self.search_daily,
                       "Search the daily logs (every conversation of a day) for a keyword. Leave day empty to "
                       "search every day (newest first); hits show their day.",
                       _schema({"keyword": _KEYWORD,
                                "day": {"type": "string", "description": "YYYY-MM-DD, or empty for every day.",
                                        "default": ""}}, ["keyword"])),
            self._tool("get_daily_window", self.get_daily_window,
                       "Read the messages around one message of a daily log. Pass the day shown in the hit "
                       "(message ids are numbered per day); an empty day means today.",
                       _schema({"message_id": _MESSAGE_ID, "before": _BEFORE, "after": _AFTER,
                                "day": {"type": "string", "description": "YYYY-MM-DD of the hit; empty = today.",
                                        "default": ""}}, ["message_id"])),
            self._tool("get_recent_session", self.get_recent_session,
                       "The last few rounds (user message + reply) of this conversation.",
                       _schema({"rounds": {"type": "integer", "description": f"1-{MAX_ROUNDS}, default 3.",
                                           "default": 3}}, [])),
            self._tool("remember_note", self.remember_note,
                       "Save one durable fact or preference about the user to long-term memory (memory.md), "
                       "written as a short third-person note, e.g. 'Prefers green tea over coffee'.",
                       _schema({"note": {"type": "string", "description": "The fact, one short sentence."}},
                               ["note"])),
        ]

    def __repr__(self) -> str:
        return f"MemoryTools(user_id={self.user.user_id!r}, session_id={self.session_id!r})"

    @staticmethod
    def _tool(name: str, method: Callable[..., str], description: str, schema: dict[str, Any]) -> BaseTool:
        # A JSON-schema args_schema passes the model's arguments through untouched, so the checks below (not
        # pydantic) decide what is wrong and how to say it; handle_tool_error turns _BadArgument into an error
        # ToolMessage the model can read.
        def run(args: dict[str, Any], runtime: ToolRuntime = None) -> str:  # type: ignore[assignment]  # see below
            # Annotated ToolRuntime, not "ToolRuntime | None": only then do langchain and langgraph treat it as
            # injected (kept out of the model's schema and of callback inputs); None is a call outside a graph.
            context: HasTurnScope | None = runtime.context if runtime is not None else None
            return method(args, scope=context.scope if context is not None else None)

        return _ArgumentsAsOneDict.from_function(func=run, name=name, description=description, args_schema=schema,
                                                 handle_tool_error=_explain)

    def _scope(self, scope: TurnScope | None) -> TurnScope:
        if scope is None:
            # Tools called outside a turn (a notebook poking at them) still work, with today's day.
            return TurnScope(day=self.user.day_for(self.user.store.clock()))
        return scope

    # ------------------------------------------------------------------ searches

    def search_session(self, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        """``search_session(keyword)``."""
        _check_keys(args, ("keyword",), ("keyword",))
        keyword = _keyword(args["keyword"])
        turn = self._scope(scope)
        hits = self._search(Scope.session(self.session_id), keyword, turn)
        turn.saw(hits, "session")
        if not hits:
            return (f"No message in this conversation contains \"{keyword}\". Try another keyword, or "
                    "search_daily to look across every day.")
        lines = [_line(m, with_day=False, limit=_SEARCH_LINE_CHARS) for m in hits]
        return (f"{len(hits)} message(s) in this conversation contain \"{keyword}\" (oldest first; read around "
                "one with get_session_window):\n" + "\n".join(lines))

    def search_daily(self, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        """``search_daily(keyword, day="")``: one day or every day."""
        _check_keys(args, ("keyword", "day"), ("keyword",))
        keyword = _keyword(args["keyword"])
        turn = self._scope(scope)
        day = _day(args.get("day"), turn.day)
        hits = self._search(Scope.day(day) if day else Scope.everything(), keyword, turn)
        turn.saw(hits, "daily")
        where = f"on {day}" if day else "across every day"
        if not hits:
            extra = ""
            if day and day not in self.user.days():
                extra = f" Nothing was recorded on {day}; days with messages: {_days_hint(self.user.days())}."
            return f"No message {where} contains \"{keyword}\".{extra}"
        lines = [_line(m, with_day=True, limit=_SEARCH_LINE_CHARS) for m in hits]
        return (f"{len(hits)} message(s) {where} contain \"{keyword}\" (oldest first; read around one with "
                "get_daily_window and its day):\n" + "\n".join(lines))

    def _search(self, scope: Scope, keyword: str, turn: TurnScope) -> list[Message]:
        layer = scope.layer
        if scope.key is not None:
            # A layer with no message yet has nothing to find; the retriever given to us need not handle it. (Asked
            # through the store contract, not the file: the same on every backend.)
            if not len(self.user.session(scope.key) if layer == "session" else self.user.daily(scope.key)):
                return []
        found = self.retriever.search(self.user, keyword, scope=scope, budget=SEARCH_LIMIT, exclude=turn.exclude)
        # A retriever given to us may ignore `exclude`: never show the model the question it is answering.
        return [item.message for item in found.messages if item.item not in turn.exclude]

    # ------------------------------------------------------------------ windows

    def get_session_window(self, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        """``get_session_window(message_id, before=3, after=3)``."""
        _check_keys(args, ("message_id", "before", "after"), ("message_id",))
        notes: list[str] = []
        message_id = _message_id(args["message_id"])
        before = _side("before", args.get("before", TOOL_WINDOW_SIDE_DEFAULT), notes)
        after = _side("after", args.get("after", TOOL_WINDOW_SIDE_DEFAULT), notes)
        window = self.user.session_window(self.session_id, message_id, before, after)
        self._scope(scope).saw(window.messages, "session")
        return _window_text(window, "this conversation", notes, with_day=False)

    def get_daily_window(self, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        """``get_daily_window(message_id, before=3, after=3, day="")``; an empty day means the turn's day."""
        _check_keys(args, ("message_id", "before", "after", "day"), ("message_id",))
        notes: list[str] = []
        turn = self._scope(scope)
        message_id = _message_id(args["message_id"])
        before = _side("before", args.get("before", TOOL_WINDOW_SIDE_DEFAULT), notes)
        after = _side("after", args.get("after", TOOL_WINDOW_SIDE_DEFAULT), notes)
        day = _day(args.get("day"), turn.day)
        if day is None:
            day = turn.day
            notes.append(f"no day given, used today {day}")
        window = self.user.daily_window(day, message_id, before, after)
        turn.saw(window.messages, "daily")
        if not window and day not in self.user.days():
            notes.append(f"nothing was recorded on {day}; days with messages: {_days_hint(self.user.days())}")
        return _window_text(window, f"the daily log of {day}", notes, with_day=True)

    def get_recent_session(self, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        """``get_recent_session(rounds=3)``: the latest rounds, without the message being answered."""
        _check_keys(args, ("rounds",))
        raw = args.get("rounds", 3)
        rounds = MAX_ROUNDS + 1 if _too_large(raw) else _integer(raw)
        if rounds is None or rounds < 1:
            raise _BadArgument(f"rounds must be a whole number from 1 to {MAX_ROUNDS}, "
                               f"got {type(raw).__name__} {_show(raw)}.")
        note = ""
        if rounds > MAX_ROUNDS:
            shown = _show(raw) if _too_large(raw) else rounds
            note = f" (rounds={shown} is more than {MAX_ROUNDS}; used {MAX_ROUNDS})"
            rounds = MAX_ROUNDS
        turn = self._scope(scope)
        layer = self.user.session(self.session_id)
        messages = [m for m in layer.tail(2 * rounds + len(turn.exclude))
                    if ItemKey("session", self.session_id, m.message_id) not in turn.exclude][-2 * rounds:]
        messages = shown_redacted(self.user, messages, "session")
        turn.saw(messages, "session")
        if not messages:
            return "This conversation has no earlier messages."
        lines = [_line(m, with_day=False, limit=_WINDOW_LINE_CHARS) for m in messages]
        return f"The last {len(messages)} message(s) of this conversation{note}:\n" + "\n".join(lines)

    # ------------------------------------------------------------------ long-term

    def remember_note(self, args: dict[str, Any], *, scope: TurnScope | None = None) -> str:
        """``remember_note(note)``: append ``- note`` to ``memory.md`` (recorded in its history)."""
        _check_keys(args, ("note",), ("note",))
        raw = args["note"]
        if not isinstance(raw, str):
            raise _BadArgument(f"note must be text, got {type(raw).__name__} {_show(raw)}.")
        note = " ".join(raw.split())
        if not note:
            raise _BadArgument("note is empty: write the fact to remember as one short sentence.")
        if len(note) > MAX_NOTE_CHARS:
            raise _BadArgument(f"note is {len(note)} characters long; keep it to one fact of at most "
                               f"{MAX_NOTE_CHARS} characters.")
        try:
            change = self.user.long_term.add_note(note, source=f"remember_note:{self.session_id}")
        except StoreError as exc:  # a note the store refuses (e.g. a lone surrogate): nothing was written
            raise _BadArgument(f"the note could not be saved: {exc}.") from exc
        if change is None:
            return f"Already in long-term memory: - {note}"
        return f"Saved to long-term memory (memory.md): - {note}"


def _explain(exc: ToolException) -> str:
    return f"Error: {exc}"


def _flatten(message: Message) -> Message:
    # One line per message: the anchor must start each line, so newlines inside a message are folded.
    if "\n" not in message.content and "\r" not in message.content:
        return message
    return dataclasses.replace(message, content=" ".join(message.content.split()))


def _line(message: Message, *, with_day: bool, limit: int) -> str:
    return _flatten(message).anchor_line(with_day=with_day, max_chars=limit)


def _window_text(window: Window, where: str, notes: list[str], *, with_day: bool) -> str:
    note = f" ({'; '.join(notes)})" if notes else ""
    if not window:
        raise _BadArgument(f"{window.reason}.{note}")
    ids = [m.message_id for m in window.messages]
    head = (f"Messages #{ids[0]}-#{ids[-1]} of {where} around #{window.anchor_id} "
            f"({window.before} before, {window.after} after){note}:")
    return head + "\n" + "\n".join(_line(m, with_day=with_day, limit=_WINDOW_LINE_CHARS) for m in window.messages)


def _days_hint(days: list[str]) -> str:
    if not days:
        return "none yet"
    shown = days[-10:]
    return ("..., " if len(days) > len(shown) else "") + ", ".join(shown)
