"""The data of a turn trace: one dialogue-log line turned into spans (the turn's phases, each model step, each tool
call) with their real start times and durations, what each model step was given, and its token counts.

The log line holds it all (see ``agent/turn.py``, ``Turn._trace_record``, and ``agent/recorder.py``): ``timings_ms``
for the turn's phases, ``trace.steps`` for the model calls (start and duration from the start of the graph call,
token counts when the server reported usage, the messages it was given that the previous step was not, its error),
``trace.tool_starts`` beside ``tool_calls`` for the tools. Lines written before that existed have no ``trace``:
their tool calls are laid out one after another from their durations, and :attr:`TraceData.timed` is False.

No widgets here (the view is :mod:`agentmem_nb.widgets.trace`); every function is testable on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from agentmem_nb.messages import ToolCall

if TYPE_CHECKING:
    from agentmem_nb.store import DialogueEntry, MemoryStore

__all__ = ["GivenMessage", "Span", "TraceData", "find_entry", "trace_of", "messages_given"]

SpanKind = Literal["phase", "model", "tool"]
SpanStatus = Literal["ok", "error", "cancelled"]

_PHASES_BEFORE = (("persist_user", "save your message"), ("context", "build the context"))
_PHASES_AFTER = (("persist_reply", "save the reply"), ("log", "write the log line"),
                 ("conversations", "update the conversation list"))


@dataclass(frozen=True, slots=True)
class GivenMessage:
    """One message a model step was given: ``role`` (system, human, ai, tool), its text (``content``; cut when the
    log kept only its head, then ``chars`` and ``sha256`` describe the whole), the tool calls of an ``ai`` message,
    and the call a ``tool`` message answers (``name``)."""

    role: str
    content: str
    chars: int
    sha256: str = ""
    tool_calls: tuple[dict[str, Any], ...] = ()
    name: str = ""

    @property
    def cut(self) -> bool:
        """True when the log kept only the head of the text."""
        return self.chars > len(self.content)


@dataclass(frozen=True, slots=True)
class Span:
    """One bar of the waterfall: ``start_ms``/``ms`` from the start of the turn; ``step`` for a model step (1, 2,
    ...); ``tool`` for a tool call; ``given`` what a model step was given beyond the previous one; ``error`` in
    place."""

    kind: SpanKind
    label: str
    start_ms: float
    ms: float
    status: SpanStatus = "ok"
    step: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    given: tuple[GivenMessage, ...] = ()
    tool: ToolCall | None = None
    error: str | None = None

    @property
    def end_ms(self) -> float:
        """When it ended."""
        return self.start_ms + self.ms


@dataclass(frozen=True, slots=True)
class TraceData:
    """A turn's trace: its log line (``entry``), its spans in start order, and totals."""

    entry: DialogueEntry
    spans: tuple[Span, ...]
    total_ms: float
    timed: bool
    """False for a log line written before step timings were recorded (tools laid out from their durations)."""
    cancelled: bool

    @property
    def status(self) -> SpanStatus:
        """How the turn ended."""
        return "cancelled" if self.cancelled else "error" if self.entry.error else "ok"

    @property
    def input_tokens(self) -> int | None:
        """Prompt tokens over every model step (``None``: the server reported no usage)."""
        counts = [s.input_tokens for s in self.spans if s.input_tokens is not None]
        return sum(counts) if counts else None

    @property
    def output_tokens(self) -> int | None:
        """Completion tokens over every model step (``None``: the server reported no usage)."""
        counts = [s.output_tokens for s in self.spans if s.output_tokens is not None]
        return sum(counts) if counts else None

    @property
    def model_steps(self) -> tuple[Span, ...]:
        """The model calls, in order."""
        return tuple(s for s in self.spans if s.kind == "model")


def find_entry(store: MemoryStore, user_id: str, *, session_id: str | None = None, message_id: int | None = None,
               entry_id: int | None = None) -> DialogueEntry | None:
    """The log line of one turn: by ``entry_id`` (the log's own id), or by a message of ``session_id`` the turn
    wrote (its reply, or the user message that started it). ``None`` when no turn in the log wrote it.

    The newest lines are read first (a trace is almost always asked for a recent turn), then the whole log.
    """
    if entry_id is None and (session_id is None or message_id is None):
        raise TypeError("find_entry needs entry_id=, or session_id= and message_id=")
    log = store.user(user_id).log

    def match(entry: DialogueEntry) -> bool:
        if entry_id is not None:
            return entry.entry_id == entry_id
        return entry.session_id == session_id and (entry.assistant_message_id == message_id
                                                   or entry.trace.get("user_message_id") == message_id)

    for batch in (log.tail(64), None):
        entries = batch if batch is not None else log.entries()
        for entry in reversed(entries):
            if match(entry):
                return entry
    return None


def trace_of(entry: DialogueEntry) -> TraceData:
    """The spans of the turn ``entry`` recorded."""
    timings = entry.timings_ms
    record = entry.trace
    spans: list[Span] = []
    at = 0.0
    for key, label in _PHASES_BEFORE:
        if key in timings:
            spans.append(Span("phase", label, at, timings[key]))
            at += timings[key]
    start = record.get("graph_start_ms") if record else None  # a hand-broken line: laid out from the phases
    graph_start = float(start) if isinstance(start, (int, float)) and not isinstance(start, bool) else at
    agent_ms = timings.get("agent", 0.0)
    raw_steps, raw_starts = record.get("steps"), record.get("tool_starts")
    steps: list[Any] = raw_steps if isinstance(raw_steps, list) else []
    starts: list[Any] = raw_starts if isinstance(raw_starts, list) else []
    cancelled = bool(record.get("cancelled"))
    for raw in steps:
        if not isinstance(raw, dict):
            continue
        error = raw.get("error") if isinstance(raw.get("error"), str) else None
        spans.append(Span("model", f"model step {raw.get('step')}", graph_start + _number(raw.get("start_ms")),
                          _number(raw.get("ms")), "error" if error else "ok", step=_int(raw.get("step")),
                          input_tokens=_int(raw.get("input_tokens")), output_tokens=_int(raw.get("output_tokens")),
                          given=tuple(_given(m) for m in raw.get("given") or [] if isinstance(m, dict)),
                          error=error))
    timed = bool(steps)
    cursor = graph_start
    for index, call in enumerate(entry.tool_calls):
        start = starts[index] if index < len(starts) and isinstance(starts[index], (int, float)) else None
        ms = call.duration_ms or 0.0
        begin = graph_start + start if start is not None else cursor
        cursor = begin + ms
        failed = call.status == "error"
        spans.append(Span("tool", call.name, begin, ms, "error" if failed else "ok", tool=call,
                          error=call.output if failed else None))
    if cancelled or entry.error:
        # the turn's own error, in place: on the last model step if it has none of its own, else as its own row
        last = next((i for i in range(len(spans) - 1, -1, -1) if spans[i].kind == "model"), None)
        status: SpanStatus = "cancelled" if cancelled else "error"
        if last is not None and spans[last].error is None:
            s = spans[last]
            spans[last] = Span(s.kind, s.label, s.start_ms, s.ms, status, s.step, s.input_tokens, s.output_tokens,
                               s.given, s.tool, entry.error)
        elif last is None:
            spans.append(Span("phase", "the turn ended", graph_start, agent_ms, status, error=entry.error))
    after = graph_start + agent_ms if record else max([at, *(s.end_ms for s in spans)])
    for key, label in _PHASES_AFTER:
        if key in timings:
            spans.append(Span("phase", label, after, timings[key]))
            after += timings[key]
    total = timings.get("total") or max([0.0, *(s.end_ms for s in spans)])
    spans.sort(key=lambda s: (s.start_ms, s.kind != "phase"))
    return TraceData(entry=entry, spans=tuple(spans), total_ms=float(total), timed=timed, cancelled=cancelled)


def messages_given(data: TraceData, step: int) -> tuple[GivenMessage, ...]:
    """Everything model step ``step`` was given, in order: what each step up to it was given beyond the one before
    (the first: the system message, the history and the user's message; each later one: the previous answer and
    the tool results)."""
    out: list[GivenMessage] = []
    for span in data.model_steps:
        if span.step is not None and span.step <= step:
            out += span.given
    return tuple(out)


def _given(raw: dict[str, Any]) -> GivenMessage:
    content = raw.get("content")
    text = content if isinstance(content, str) else ""
    chars = raw.get("chars")
    calls = raw.get("tool_calls")
    return GivenMessage(role=str(raw.get("role", "?")), content=text,
                        chars=chars if isinstance(chars, int) and chars >= len(text) else len(text),
                        sha256=str(raw.get("sha256") or ""),
                        tool_calls=tuple(c for c in calls if isinstance(c, dict)) if isinstance(calls, list) else (),
                        name=str(raw.get("name") or ""))


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
