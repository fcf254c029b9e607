"""The middleware that sees every model and tool call of a turn, and what it records: :class:`TurnState`.

The trace has one source of truth: the middleware that runs each tool call (``Recorder.wrap_tool_call``) sees the
call and its result together and records them under the call's place in the model's answer (step, position). Ids
cannot be trusted for that (some servers send ``call_0`` in every step, or one id for every call), nor can the order
in which results arrive: langgraph runs each call as its own task, so results come back in completion order.

The middleware is built once per session graph and holds no state: each turn passes its own :class:`TurnState` as
the graph's runtime context (``graph.stream(..., context=state)``; the hooks read ``runtime.context``), so nothing
of one turn is left on the cached graph for the next, and the turn reads what was recorded from the object it made.
The same hooks also put the turn's memory into the system message, keep the turn's deadline (checked before every
model and tool call, and by the configured client while the answer arrives) and make what the model is given valid
Unicode: the store keeps text as given, lone surrogates included, but a request holding one cannot be encoded, so
every message of a model request is made valid (U+FFFD) on its way out.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.errors import GraphBubbleUp

from agentmem_nb.agent.models import arguments_shape_error, model_deadline
from agentmem_nb.agent.prompt import SYSTEM_PROMPT
from agentmem_nb.agent.tools import TurnScope
from agentmem_nb.messages import ToolCall
from agentmem_nb.textutil import displayable

__all__ = ["Recorder", "TurnState", "ToolRun", "ModelStep", "ToolFailed", "DeadlinePassed", "TurnCancelled",
           "MalformedToolCall", "wrong_shape_calls", "message_record", "TRACE_TEXT_MAX_CHARS"]


class ToolFailed(Exception):
    """A tool raised (not a bad argument: those are answered as error messages to the model)."""

    def __init__(self, name: str, cause: BaseException) -> None:
        self.name = name
        self.cause = cause
        super().__init__(f"The tool {name} failed: {type(cause).__name__}: {cause}")


class DeadlinePassed(Exception):
    """The turn's deadline passed before a model or tool call could start."""


class TurnCancelled(Exception):
    """The turn was asked to stop (:meth:`~agentmem_nb.agent.ChatService.cancel`) before a model or tool call, or
    while the model's answer was arriving; the text names what was about to run."""


class MalformedToolCall(Exception):
    """The model asked for a tool with arguments that are not a JSON object; ``calls`` holds them for the trace."""

    def __init__(self, calls: list[ToolCall]) -> None:
        self.calls = calls
        first = calls[0]
        super().__init__(f"The model sent a tool call with malformed arguments ({first.name}: "
                         f"{first.input.get('_raw')!r:.120}): {first.output.removeprefix('Error: ')}")


class _StreamedToolArguments(BaseCallbackHandler):
    """Collects the raw argument text of streamed tool calls, as the server sent it.

    Streamed, langchain *repairs* truncated JSON (``'{"keyword": "sis'`` becomes ``{"keyword": "sis"}``), so the
    finished message no longer shows that the server sent garbage; the chunks still do.
    """

    ignore_chain = True  # only model tokens matter here; skip the per-node chain events
    ignore_agent = True
    ignore_retriever = True
    raise_error = True  # so that a stop request (below) ends the model's stream instead of being logged and dropped

    def __init__(self) -> None:
        self.calls: dict[tuple[Any, int], dict[str, str]] = {}
        self.stop: threading.Event | None = None

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, run_id: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        if self.stop is not None and self.stop.is_set() and not _after_the_answer(token, message):
            # Stop while the answer streams in: the model call runs in langgraph's worker thread, and the graph
            # waits for it before it can close, so end it here, at its next piece, rather than after its last —
            # a piece without text too (a reasoning model streams those while it thinks, for minutes maybe).
            # Not at a piece that only closes the answer (see _after_the_answer): a stop that lands once the whole
            # answer has been read must keep it (the graph's update then delivers it as the reply).
            raise TurnCancelled("the rest of the answer")
        for piece in getattr(message, "tool_call_chunks", None) or []:
            entry = self.calls.setdefault((run_id, piece.get("index") or 0), {"name": "", "id": "", "args": ""})
            entry["name"] += piece.get("name") or ""
            entry["id"] += piece.get("id") or ""
            entry["args"] += piece.get("args") or ""


def _after_the_answer(token: Any, message: Any) -> bool:
    """Whether a streamed piece only closes an answer already complete: no text and no tool call, and the mark of an
    end — langchain's closing chunk (``chunk_position="last"``), a ``finish_reason``, or the usage a server sends
    last. An empty piece without such a mark (a reasoning model thinking) is not one."""
    if token or getattr(message, "tool_call_chunks", None):
        return False
    metadata = getattr(message, "response_metadata", None) or {}
    return bool(getattr(message, "chunk_position", None) == "last" or metadata.get("finish_reason")
                or getattr(message, "usage_metadata", None))


def wrong_shape_calls(message: AIMessage) -> list[tuple[dict[str, Any], str]]:
    """The invalid tool calls of ``message`` whose arguments are valid JSON but not an object, with the complaint.

    Those are the model's mistake, told to the model as the call's error result (``Recorder.after_model``); other
    invalid arguments (text that is not JSON, a streamed object that had to be repaired) fail the turn.
    """
    out = []
    for call in message.invalid_tool_calls:
        raw = call.get("args")
        error = arguments_shape_error(str(call.get("name") or "?"), raw) if isinstance(raw, str) else None
        if error is not None:
            out.append((dict(call), error))
    return out


def _json_complaint(raw: object) -> str:
    """Why ``raw`` is not JSON, in the parser's one line ("Expecting value: line 1 column 1 (char 0)")."""
    if not isinstance(raw, str):
        return f"got {type(raw).__name__}"
    try:
        json.loads(raw)
    except ValueError as exc:
        return str(exc).splitlines()[0]
    return "not an object"


def _check_tool_arguments(message: AIMessage, streamed: list[dict[str, str]]) -> None:
    """Refuse tool calls whose arguments were not JSON as the server sent them, before any tool runs with a guessed
    argument (non-streamed, langchain reports them as ``invalid_tool_calls``). Valid JSON of the wrong shape (an
    array) is left to :func:`wrong_shape_calls`."""
    bad: list[ToolCall] = []
    for call in message.invalid_tool_calls:
        raw = call.get("args")
        if isinstance(raw, str) and arguments_shape_error(str(call.get("name") or "?"), raw) is not None:
            continue
        # Our own one line, not langchain's error text (several lines and a troubleshooting link).
        bad.append(ToolCall(name=str(call.get("name") or "?"), input={"_raw": raw}, id=call.get("id"),
                            output=f"Error: arguments are not valid JSON ({_json_complaint(raw)})", status="error"))
    for chunk in streamed if not bad else []:
        text = chunk["args"]
        if not text.strip() or arguments_shape_error(chunk["name"] or "?", text) is not None:
            continue
        try:
            ok = isinstance(json.loads(text), dict)
        except ValueError:
            ok = False
        if not ok:
            bad.append(ToolCall(name=chunk["name"] or "?", input={"_raw": text}, id=chunk["id"] or None,
                                output=f"Error: arguments are not valid JSON ({_json_complaint(text)})",
                                status="error"))
    if bad:
        raise MalformedToolCall(bad)


@dataclass(slots=True)
class ToolRun:
    """One tool call as the middleware ran it: its place in the model's answer, what it returned, how long it took.

    ``step`` counts the model calls of the turn (the tools run between call n and n+1 answer the AIMessage of
    call n); ``position`` is the call's index in that AIMessage's ``tool_calls`` (calls answered without running,
    see ``Recorder.after_model``, come after them).
    """

    step: int
    position: int
    name: str
    ms: float = 0.0
    output: str | None = None
    status: str = "success"
    error: str | None = None
    start_ms: float = 0.0
    """When it started, in milliseconds since the turn's graph call began (:attr:`TurnState.started`)."""


@dataclass(slots=True)
class ModelStep:
    """One model call of a turn, for its trace: when it started and how long it took (milliseconds, from the start
    of the turn's graph call), the token counts the server reported (``None``: it reported none), what it was given
    that the previous step was not (``given``: the first step gets the system message, the history and the user's
    message; each later one the previous answer and the tool results) and the error that ended it, if any."""

    step: int
    start_ms: float
    ms: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    given: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The JSON shape written to the dialogue log (``trace.steps``)."""
        return {"step": self.step, "start_ms": round(self.start_ms, 3), "ms": round(self.ms, 3),
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "given": self.given,
                "error": self.error}


TRACE_TEXT_MAX_CHARS = 12_000
"""Beyond this, a message's text is not copied into the log's trace (a system message: beyond
:data:`TRACE_TEXT_HEAD`): its first :data:`TRACE_TEXT_HEAD` characters, its length and its sha256 are (a 100 MB memory.md is in every system message; the log names its version in
``memory_context`` instead of copying it, see ``agent/context.py``)."""

TRACE_TEXT_HEAD = 1000


def message_record(message: BaseMessage) -> dict[str, Any]:
    """A message as the model was given it, as JSON: role, text, and the tool calls or the call it answers."""
    text = message.text
    record: dict[str, Any] = {"role": message.type, "content": text}
    # The system message holds memory.md, the facts and the instructions, which the log line names by version in
    # memory_context: its head, length and hash only, never a copy per turn. Other text is copied up to a size.
    if message.type == "system" and len(text) > TRACE_TEXT_HEAD or len(text) > TRACE_TEXT_MAX_CHARS:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        record.update(content=text[:TRACE_TEXT_HEAD], chars=len(text), sha256=digest)
    if isinstance(message, AIMessage) and message.tool_calls:
        record["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"), "args": c.get("args")}
                                for c in message.tool_calls]
    if isinstance(message, ToolMessage):
        record["tool_call_id"] = message.tool_call_id
        record["name"] = message.name
    return record


@dataclass(slots=True)
class TurnState:
    """One turn, as the graph's runtime context: what the tools and the middleware need to know about it (its
    :class:`~agentmem_nb.agent.tools.TurnScope`, system prompt and deadline) and what they record during it.

    The turn makes one for its call of the graph (``graph.stream(..., context=state)``) and reads the outcome from
    it afterwards; the cached graph, its tools and its middleware keep no reference to it.
    """

    scope: TurnScope
    """The turn's day and excluded messages, and what the tools returned to the model (read by the tools)."""
    system_prompt: str = SYSTEM_PROMPT
    deadline: float | None = None
    """``time.monotonic()`` by which the turn must be over (``None``: no limit)."""
    model_ms: float = 0.0
    model_calls: int = 0
    """Model calls so far: the tools run between call n and n+1 answer the AIMessage of step n."""
    runs: dict[tuple[int, int], ToolRun] = field(default_factory=dict)
    """Every tool call run (or answered) so far, by ``(step, position)``."""
    by_message: dict[str, ToolRun] = field(default_factory=dict)
    """The same runs by the id of the ToolMessage that carried their result into the graph."""
    streamed: _StreamedToolArguments = field(default_factory=_StreamedToolArguments)
    helpers: set[int] = field(default_factory=set)
    """The session holder's set of threads running a tool of this turn (see ``sessions.Holder.helpers``)."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Set to ask the turn to stop (``ChatService.cancel``): checked before every model and tool call and at every
    event of the graph."""
    started: float = field(default_factory=time.perf_counter)
    """``time.perf_counter()`` when the turn's graph call began: the origin of every ``start_ms``."""
    steps: list[ModelStep] = field(default_factory=list)
    """Every model call so far, in order."""
    _given: int = 0  # how many messages of the request the previous steps were already given

    def __post_init__(self) -> None:
        self.streamed.stop = self.stop

    def check_deadline(self, what: str) -> None:
        if self.stop.is_set():
            raise TurnCancelled(what)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlinePassed(what)

    def since_start(self) -> float:
        """Milliseconds since :attr:`started`."""
        return (time.perf_counter() - self.started) * 1000

    def begin_step(self, messages: list[BaseMessage]) -> ModelStep:
        """Record the start of model call number ``model_calls`` given ``messages`` (the system message first)."""
        # a request holds every earlier message again: keep only what is new, the trace rebuilds the rest
        new = messages[1 + self._given:] if self.steps else messages
        self._given = len(messages) - 1
        step = ModelStep(step=self.model_calls, start_ms=self.since_start(), given=[message_record(m) for m in new])
        self.steps.append(step)
        return step

    def deadline_passed(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def finish(self, run: ToolRun, result: Any) -> None:
        """Record ``result`` (what the tool node returned) as the outcome of ``run``, and label it so that the turn,
        seeing the ToolMessage in the graph's updates, finds this run (ToolMessage ids are never sent to a model)."""
        self.runs[(run.step, run.position)] = run  # a dict item assignment: atomic, tools of one step run in threads
        if isinstance(result, ToolMessage):
            run.output = result.text
            run.status = "error" if result.status == "error" else "success"
            if result.id is None:
                result.id = f"agentmem-tool-{run.step}-{run.position}"
            self.by_message[result.id] = run


def _position_of(request: Any) -> int:
    """Where ``request.tool_call`` stands in the AIMessage that issued it (the last one in the state).

    The tool node receives the very dicts of ``AIMessage.tool_calls`` (one ``Send`` each), so identity says which
    one it is even when ids and names repeat; an equal call is the fallback, and identical calls cannot be told
    apart by anyone, so any of them is right.
    """
    state = request.state
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    issuer = next((m for m in reversed(messages or []) if isinstance(m, AIMessage)), None)
    calls = issuer.tool_calls if issuer is not None else []
    call = request.tool_call
    for position, candidate in enumerate(calls):
        if candidate is call:
            return position
    for position, candidate in enumerate(calls):
        if (candidate.get("id"), candidate.get("name"), candidate.get("args")) == (
                call.get("id"), call.get("name"), call.get("args")):
            return position
    return len(calls)


def _valid_messages(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with every text made valid Unicode (:func:`~agentmem_nb.textutil.displayable`: a lone surrogate
    has no UTF-8 form and the client's encoder raises), copied only where something changes: the stored messages
    (and the graph's state) keep their text as given."""
    out: list[BaseMessage] = []
    for message in messages:
        content = message.content
        if isinstance(content, str):
            fixed: Any = displayable(content)
            changed = fixed is not content and fixed != content
        else:
            fixed = [displayable(b) if isinstance(b, str) else
                     {**b, "text": displayable(b["text"])} if isinstance(b, dict) and isinstance(b.get("text"), str)
                     else b for b in content]
            changed = fixed != content
        out.append(message.model_copy(update={"content": fixed}) if changed else message)
    return out


def _count_tokens(step: ModelStep, response: Any) -> None:
    """Put the token counts the server reported (``AIMessage.usage_metadata``) into ``step``; none: left ``None``."""
    for message in getattr(response, "result", None) or [response]:
        usage = getattr(message, "usage_metadata", None) if isinstance(message, AIMessage) else None
        if usage:
            step.input_tokens = int(usage.get("input_tokens") or 0)
            step.output_tokens = int(usage.get("output_tokens") or 0)


def _state_of(runtime: Any) -> TurnState | None:
    """The turn's state passed with the graph call (``None``: the graph was called outside a turn, e.g. by hand)."""
    context = runtime.context if runtime is not None else None
    return context if isinstance(context, TurnState) else None


class Recorder(AgentMiddleware[AgentState[Any], TurnState, Any]):
    """Puts the turn's memory into the system message, keeps the turn's deadline, makes what the model is given
    valid Unicode, and records every model and tool call — into the :class:`TurnState` passed with the call (it
    keeps none itself: one instance serves every turn of its graph)."""

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        record = _state_of(request.runtime)
        system = record.system_prompt if record is not None else SYSTEM_PROMPT
        request = request.override(system_message=SystemMessage(content=displayable(system)),
                                   messages=_valid_messages(list(request.messages)))
        step: ModelStep | None = None
        if record is not None:
            record.check_deadline("the model call")
            record.streamed.calls.clear()
            record.model_calls += 1
            step = record.begin_step([request.system_message, *request.messages])
        started = time.perf_counter()
        try:
            with model_deadline(record.deadline if record is not None else None):
                response = handler(request)
        except Exception as exc:
            if step is not None and not isinstance(exc, TurnCancelled):  # a stop is not the model's error
                step.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            if record is not None:
                record.model_ms += (time.perf_counter() - started) * 1000
            if step is not None:
                step.ms = (time.perf_counter() - started) * 1000
        if step is not None:
            _count_tokens(step, response)
        streamed = list(record.streamed.calls.values()) if record is not None else []
        for message in getattr(response, "result", None) or [response]:
            if isinstance(message, AIMessage):
                _check_tool_arguments(message, streamed)
        return response

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Answer each tool call whose arguments were not a JSON object with a one-line error, without running it.

        Such a call stays an *invalid* tool call (so the next request shows the model what it really sent), which
        the graph would not route to the tools: the error ToolMessages are added here, and when no valid call is
        left to run the graph goes straight back to the model.
        """
        messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage):
            return None
        wrong = wrong_shape_calls(last)
        if not wrong:
            return None
        record = _state_of(runtime)
        step = record.model_calls if record is not None else 0
        answers: list[BaseMessage] = []
        for offset, (call, error) in enumerate(wrong):
            run = ToolRun(step=step, position=len(last.tool_calls) + offset, name=str(call.get("name") or "?"),
                          start_ms=record.since_start() if record is not None else 0.0)
            message = ToolMessage(content=f"Error: {error}.", tool_call_id=str(call.get("id") or ""), name=run.name,
                                  status="error")
            if record is not None:
                record.finish(run, message)
            answers.append(message)
        return {"messages": answers} if last.tool_calls else {"messages": answers, "jump_to": "model"}

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        record = _state_of(request.runtime)
        call = request.tool_call
        run = ToolRun(step=record.model_calls if record is not None else 0, position=_position_of(request),
                       name=str(call.get("name")))
        me = threading.get_ident()
        if record is not None:
            record.check_deadline(f"the tool {run.name}")
            run.start_ms = record.since_start()
            record.runs[(run.step, run.position)] = run  # known before it ends: a failure keeps its duration
            record.helpers.add(me)  # a tool that starts a turn of this same session must not wait for itself
        started = time.perf_counter()
        try:
            result = handler(request)
        except GraphBubbleUp:  # langgraph control flow (interrupts), not a failure
            raise
        except Exception as exc:
            run.error = f"Error: {type(exc).__name__}: {exc}"
            raise ToolFailed(run.name, exc) from exc
        finally:
            run.ms = (time.perf_counter() - started) * 1000
            if record is not None:
                record.helpers.discard(me)
        if record is not None:
            record.finish(run, result)
        return result


