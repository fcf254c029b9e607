"""The one-turn pipeline: :class:`ChatService`.

A turn (DESIGN §3): (1) persist the user message to session + daily, (2) build the context, (3) run the agent,
(4) collect the reply and the tool trace, (5) persist the assistant message with ``meta.tool_calls``, (6) append the
dialogue log line, (7) update ``conversations.json``.

The trace has one source of truth: the middleware that runs each tool call (``_Recorder.wrap_tool_call``) sees the
call and its result together and records them under the call's place in the model's answer (step, position). Ids
cannot be trusted for that (some servers send ``call_0`` in every step, or one id for every call), nor can the order
in which results arrive: langgraph runs each call as its own task, so results come back in completion order.

The agent graph (``langchain.agents.create_agent``) is built once per ``(user, session)`` and cached: the tools are
bound to that session, and the per-turn context reaches the model through a middleware that rewrites the system
message, so nothing is rebuilt per request.

Failures of the model or a tool end the turn with a visible ``"⚠️ ..."`` reply: the user message stays, the log
line records the error, no assistant message is written, and the next turn works as usual. An answer that did not
finish (a cut stream) is such a failure; its partial text goes to the log line only, marked as partial. A whole turn
has a deadline (``llm.turn_timeout``), checked before every model and tool call and, for the configured client,
while the server's answer arrives.

What the model is given is valid Unicode: the store keeps text as given, lone surrogates included, but a request
holding one cannot be encoded, so every message of a model request is made valid (U+FFFD) on its way out.
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, hook_config
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.errors import GraphBubbleUp, GraphRecursionError

from agentmem_nb.agent.config import LLMConfig, load_config
from agentmem_nb.agent.context import TurnContext, build_context, long_term_lines_used
from agentmem_nb.agent.models import (ModelResponseError, arguments_shape_error, make_chat_model, model_deadline,
                                      model_name_of)
from agentmem_nb.agent.offline import OfflineChatModel
from agentmem_nb.agent.prompt import SYSTEM_PROMPT, system_prompt_for
from agentmem_nb.agent.results import TurnEvent, TurnResult
from agentmem_nb.agent.tools import MemoryTools, TurnScope
from agentmem_nb.errors import AgentMemError
from agentmem_nb.identifiers import check_session_id
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.redact import redact
from agentmem_nb.retrieval import Retriever
from agentmem_nb.store import Appended, DialogueEntry, MemoryStore, UserMemory
from agentmem_nb.textutil import displayable
from agentmem_nb.timeutil import to_zone

__all__ = ["ChatService", "SessionBusy", "title_from", "describe_model_error"]

MAX_CACHED_GRAPHS = 128
DEFAULT_LOCK_TIMEOUT = 120.0
"""Seconds a turn waits for another turn of its session (two default model timeouts) before :class:`SessionBusy`."""
_ERROR_CHARS = 500


def title_from(message: str, *, limit: int = 30) -> str:
    """A conversation title from its first message: whitespace folded, cut at ``limit`` characters.

    >>> title_from("  My sister\\nlives in Lyon  ")
    'My sister lives in Lyon'
    """
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SessionBusy(AgentMemError, RuntimeError):
    """A turn could not start: another turn of the same ``(user, session)`` holds it.

    Raised at once when waiting could never succeed (the holder is a stream paused in the calling thread, or a turn
    this thread is already running), else after ``lock_timeout`` seconds. The message says which and what to do.
    Nothing of the refused turn was written.
    """

    def __init__(self, message: str, *, user_id: str, session_id: str) -> None:
        super().__init__(message)
        self.user_id = user_id
        self.session_id = session_id


class ChatService:
    """Runs turns of the memory agent against a :class:`~agentmem_nb.store.MemoryStore`.

    Args:
        store: where every message, note and log line goes.
        config: which model to use; ``None`` reads ``config/llm.yaml`` and the environment (see
            :func:`~agentmem_nb.agent.load_config`). No API key means the offline model.
        model: a chat model to use instead of the configured one (tests inject scripted models here).
        daily_limit: how many of today's messages from *other* sessions to put in the context (0 = none).
        recent_rounds: how many rounds of this session the model sees directly (older ones via tools).
        max_steps: graph steps per turn before giving up (one model call or one tool batch is a step).
        lock_timeout: seconds a turn waits while another turn of the same session runs (or a stream of it is left
            unfinished) before raising :class:`SessionBusy`; ``None`` waits as long as it takes.
        retriever: what the search tools search with (default: a :class:`~agentmem_nb.retrieval.Retriever` with the
            default configuration), handed to every session's :class:`~agentmem_nb.agent.tools.MemoryTools`.

    >>> # svc = ChatService(MemoryStore("memory"))
    >>> # sid = svc.new_conversation("alice"); svc.turn("alice", sid, "I prefer green tea").reply
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        config: LLMConfig | None = None,
        model: BaseChatModel | None = None,
        daily_limit: int = 0,
        recent_rounds: int = 3,
        max_steps: int = 24,
        lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT,
        retriever: Retriever | None = None,
    ) -> None:
        if model is None:
            config = config if config is not None else load_config()
            model = make_chat_model(config)
        self.store = store
        self.config = config
        self.model = model
        self.retriever = retriever if retriever is not None else Retriever()
        self.daily_limit = max(0, int(daily_limit))
        self.recent_rounds = max(0, int(recent_rounds))
        self.max_steps = max(2, int(max_steps))
        self.lock_timeout = None if lock_timeout is None else max(0.0, float(lock_timeout))
        self.turn_timeout = (config if config is not None else LLMConfig()).turn_timeout
        """Seconds a whole turn may take (``llm.turn_timeout``)."""
        self._agents: OrderedDict[tuple[str, str], _SessionAgent] = OrderedDict()
        # One slot per (user, session) with a turn running, waiting or paused: each of those holds a strong
        # reference, so while any turn needs it every caller finds the same lock, and once none does the entry goes
        # away by itself (a long-lived kernel serving many sessions keeps no lock per session it ever saw).
        self._session_locks: weakref.WeakValueDictionary[tuple[str, str], _SessionSlot] = (
            weakref.WeakValueDictionary())
        self._lock = threading.Lock()
        self.graphs_built = 0
        """How many agent graphs this service has built (one per session it served, barring cache eviction)."""

    def __repr__(self) -> str:
        return (f"ChatService(store={self.store!r}, model={self.model_name!r}, offline={self.offline}, "
                f"daily_limit={self.daily_limit}, recent_rounds={self.recent_rounds})")

    @property
    def offline(self) -> bool:
        """True when the offline model is in use."""
        return isinstance(self.model, OfflineChatModel)

    @property
    def model_name(self) -> str:
        """The model's name as it appears in the dialogue log."""
        return model_name_of(self.model)

    # ------------------------------------------------------------------ conversations

    def new_conversation(self, user_id: str, title: str = "") -> str:
        """Create a conversation now (registered in ``conversations.json`` at once) and return its session id."""
        return self.store.user(user_id).conversations.create(title=title).session_id

    def graph(self, user_id: str, session_id: str) -> Any:
        """The compiled agent graph of one session (built on first use, then cached)."""
        return self._agent(self.store.user(user_id), check_session_id(session_id)).graph

    # ------------------------------------------------------------------ turns

    def turn(self, user_id: str, session_id: str, message: str) -> TurnResult:
        """Run one turn and return its result (the model is called without streaming).

        Raises:
            InvalidIdentifier: ``user_id`` or ``session_id`` is not a valid id (nothing is written).
            ValueError: ``message`` is empty or not text (nothing is written).
            SessionBusy: another turn of this session holds it (see :meth:`stream_turn`; nothing is written).
        """
        result: TurnResult | None = None
        for event in self._events(*self._prepare(user_id, session_id, message), stream_tokens=False):
            result = event.result or result
        assert result is not None  # _events always ends with "done"
        return result

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[TurnEvent]:
        """Run one turn as events: ``tool_started``, ``tool_finished``, ``token`` (reply pieces, streamed from the
        model), maybe ``error``, and finally ``done`` with the :class:`TurnResult`.

        Arguments are checked before the first event (the same errors as :meth:`turn`). The turn starts at the
        first event asked for and holds its session until the last: a caller that stops reading early should
        close the stream (``events.close()``, or ``with contextlib.closing(svc.stream_turn(...)) as events:``),
        which ends the turn as failed ("abandoned": the user message and the log line stay, no assistant message)
        and frees the session. A stream left open blocks its session: another turn of it in the same thread raises
        :class:`SessionBusy` at once, in another thread after ``lock_timeout`` seconds.
        """
        return self._events(*self._prepare(user_id, session_id, message), stream_tokens=True)

    def _prepare(self, user_id: str, session_id: str, message: str) -> tuple[UserMemory, str, str]:
        user = self.store.user(user_id)
        session_id = check_session_id(session_id)
        if not isinstance(message, str):
            raise ValueError(f"message must be text, got {type(message).__name__} {message!r:.60}")
        if not message.strip():
            raise ValueError("message is empty: type something to send")
        return user, session_id, message

    def _agent(self, user: UserMemory, session_id: str) -> _SessionAgent:
        key = (user.user_id, session_id)
        with self._lock:
            agent = self._agents.get(key)
            if agent is not None:
                self._agents.move_to_end(key)
                return agent
            agent = _SessionAgent(user, session_id, self.model, self.retriever)
            self.graphs_built += 1
            self._agents[key] = agent
            while len(self._agents) > MAX_CACHED_GRAPHS:
                self._agents.popitem(last=False)
            return agent

    def _slot(self, key: tuple[str, str]) -> _SessionSlot:
        with self._lock:
            slot = self._session_locks.get(key)
            if slot is None:
                slot = self._session_locks[key] = _SessionSlot()
            return slot

    def _claim(self, slot: _SessionSlot, user_id: str, session_id: str, *, streaming: bool) -> _Holder:
        """Take the session's lock for one turn, or raise :class:`SessionBusy` (see there) without writing."""
        me = threading.get_ident()
        if not slot.lock.acquire(blocking=False):
            holder = slot.holder
            if holder is not None and (holder.thread == me or me in holder.helpers):  # waiting on ourselves
                raise SessionBusy(_busy_message(user_id, session_id, holder, waited=None),
                                  user_id=user_id, session_id=session_id)
            if not slot.lock.acquire(timeout=-1 if self.lock_timeout is None else self.lock_timeout):
                raise SessionBusy(_busy_message(user_id, session_id, slot.holder, waited=self.lock_timeout),
                                  user_id=user_id, session_id=session_id)
        holder = _Holder(streaming=streaming, thread=me, since=time.monotonic())
        slot.holder = holder
        return holder

    def _events(self, user: UserMemory, session_id: str, message: str, *, stream_tokens: bool) -> Iterator[TurnEvent]:
        slot = self._slot((user.user_id, session_id))  # a local: keeps the slot alive while this turn needs it
        # Turns of one session run one at a time (they share the session's agent and its files).
        holder = self._claim(slot, user.user_id, session_id, streaming=stream_tokens)
        try:
            agent = self._agent(user, session_id)
            events = _Turn(self, user, session_id, message, agent, holder.helpers).run(stream_tokens=stream_tokens)
            try:
                for event in events:
                    holder.running = False  # in the caller's hands until it asks for the next event
                    holder.events += 1
                    yield event
                    holder.running = True
                    holder.thread = threading.get_ident()  # whoever resumes the stream now drives the turn
            finally:
                # Stopped early (close(), or garbage collection of a dropped stream): end the turn as abandoned,
                # with its log line, *before* the session is free for the next turn.
                events.close()
        finally:
            slot.holder = None
            slot.lock.release()


# ---------------------------------------------------------------------------------------------- per session


class _ToolFailed(Exception):
    """A tool raised (not a bad argument: those are answered as error messages to the model)."""

    def __init__(self, name: str, cause: BaseException) -> None:
        self.name = name
        self.cause = cause
        super().__init__(f"The tool {name} failed: {type(cause).__name__}: {cause}")


class _DeadlinePassed(Exception):
    """The turn's deadline passed before a model or tool call could start."""


class _MalformedToolCall(Exception):
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

    def __init__(self) -> None:
        self.calls: dict[tuple[Any, int], dict[str, str]] = {}

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, run_id: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        for piece in getattr(message, "tool_call_chunks", None) or []:
            entry = self.calls.setdefault((run_id, piece.get("index") or 0), {"name": "", "id": "", "args": ""})
            entry["name"] += piece.get("name") or ""
            entry["id"] += piece.get("id") or ""
            entry["args"] += piece.get("args") or ""


def _wrong_shape_calls(message: AIMessage) -> list[tuple[dict[str, Any], str]]:
    """The invalid tool calls of ``message`` whose arguments are valid JSON but not an object, with the complaint.

    Those are the model's mistake, told to the model as the call's error result (``_Recorder.after_model``); other
    invalid arguments (text that is not JSON, a streamed object that had to be repaired) fail the turn.
    """
    out = []
    for call in message.invalid_tool_calls:
        raw = call.get("args")
        error = arguments_shape_error(str(call.get("name") or "?"), raw) if isinstance(raw, str) else None
        if error is not None:
            out.append((dict(call), error))
    return out


def _check_tool_arguments(message: AIMessage, streamed: list[dict[str, str]]) -> None:
    """Refuse tool calls whose arguments were not JSON as the server sent them, before any tool runs with a guessed
    argument (non-streamed, langchain reports them as ``invalid_tool_calls``). Valid JSON of the wrong shape (an
    array) is left to :func:`_wrong_shape_calls`."""
    bad: list[ToolCall] = []
    for call in message.invalid_tool_calls:
        raw = call.get("args")
        if isinstance(raw, str) and arguments_shape_error(str(call.get("name") or "?"), raw) is not None:
            continue
        bad.append(ToolCall(name=str(call.get("name") or "?"), input={"_raw": call.get("args")}, id=call.get("id"),
                            output=f"Error: {call.get('error') or 'arguments are not valid JSON'}", status="error"))
    for raw in streamed if not bad else []:
        text = raw["args"]
        if not text.strip() or arguments_shape_error(raw["name"] or "?", text) is not None:
            continue
        try:
            ok = isinstance(json.loads(text), dict)
        except ValueError:
            ok = False
        if not ok:
            bad.append(ToolCall(name=raw["name"] or "?", input={"_raw": text}, id=raw["id"] or None,
                                output="Error: arguments are not a valid JSON object", status="error"))
    if bad:
        raise _MalformedToolCall(bad)


@dataclass(slots=True)
class _ToolRun:
    """One tool call as the middleware ran it: its place in the model's answer, what it returned, how long it took.

    ``step`` counts the model calls of the turn (the tools run between call n and n+1 answer the AIMessage of
    call n); ``position`` is the call's index in that AIMessage's ``tool_calls`` (calls answered without running,
    see ``_Recorder.after_model``, come after them).
    """

    step: int
    position: int
    name: str
    ms: float = 0.0
    output: str | None = None
    status: str = "success"
    error: str | None = None


@dataclass(slots=True)
class _TurnRecord:
    """What the middleware learns during one turn."""

    system_prompt: str
    deadline: float | None = None
    """``time.monotonic()`` by which the turn must be over (``None``: no limit)."""
    model_ms: float = 0.0
    model_calls: int = 0
    """Model calls so far: the tools run between call n and n+1 answer the AIMessage of step n."""
    runs: dict[tuple[int, int], _ToolRun] = field(default_factory=dict)
    """Every tool call run (or answered) so far, by ``(step, position)``."""
    by_message: dict[str, _ToolRun] = field(default_factory=dict)
    """The same runs by the id of the ToolMessage that carried their result into the graph."""
    streamed: _StreamedToolArguments = field(default_factory=_StreamedToolArguments)
    helpers: set[int] = field(default_factory=set)
    """The session holder's set of threads running a tool of this turn (see ``_Holder.helpers``)."""

    def check_deadline(self, what: str) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise _DeadlinePassed(what)

    def deadline_passed(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def finish(self, run: _ToolRun, result: Any) -> None:
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


class _Recorder(AgentMiddleware):
    """Puts the turn's memory into the system message, keeps the turn's deadline, makes what the model is given
    valid Unicode, and records every model and tool call."""

    def __init__(self) -> None:
        super().__init__()
        self.record: _TurnRecord | None = None

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        record = self.record
        system = record.system_prompt if record is not None else SYSTEM_PROMPT
        request = request.override(system_message=SystemMessage(content=displayable(system)),
                                   messages=_valid_messages(list(request.messages)))
        if record is not None:
            record.check_deadline("the model call")
            record.streamed.calls.clear()
            record.model_calls += 1
        started = time.perf_counter()
        try:
            with model_deadline(record.deadline if record is not None else None):
                response = handler(request)
        finally:
            if record is not None:
                record.model_ms += (time.perf_counter() - started) * 1000
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
        wrong = _wrong_shape_calls(last)
        if not wrong:
            return None
        record = self.record
        step = record.model_calls if record is not None else 0
        answers: list[BaseMessage] = []
        for offset, (call, error) in enumerate(wrong):
            run = _ToolRun(step=step, position=len(last.tool_calls) + offset, name=str(call.get("name") or "?"))
            message = ToolMessage(content=f"Error: {error}.", tool_call_id=str(call.get("id") or ""), name=run.name,
                                  status="error")
            if record is not None:
                record.finish(run, message)
            answers.append(message)
        return {"messages": answers} if last.tool_calls else {"messages": answers, "jump_to": "model"}

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        record = self.record
        call = request.tool_call
        run = _ToolRun(step=record.model_calls if record is not None else 0, position=_position_of(request),
                       name=str(call.get("name")))
        me = threading.get_ident()
        if record is not None:
            record.check_deadline(f"the tool {run.name}")
            record.runs[(run.step, run.position)] = run  # known before it ends: a failure keeps its duration
            record.helpers.add(me)  # a tool that starts a turn of this same session must not wait for itself
        started = time.perf_counter()
        try:
            result = handler(request)
        except GraphBubbleUp:  # langgraph control flow (interrupts), not a failure
            raise
        except Exception as exc:
            run.error = f"Error: {type(exc).__name__}: {exc}"
            raise _ToolFailed(run.name, exc) from exc
        finally:
            run.ms = (time.perf_counter() - started) * 1000
            if record is not None:
                record.helpers.discard(me)
        if record is not None:
            record.finish(run, result)
        return result


@dataclass(slots=True)
class _Holder:
    """The turn that holds a session: whether it is a stream, the thread that last advanced it, and whether it is
    running or paused at an event (what :class:`SessionBusy` tells the caller)."""

    streaming: bool
    thread: int
    since: float
    running: bool = True
    events: int = 0
    helpers: set[int] = field(default_factory=set)
    """Threads running one of its tools now (langgraph runs tools in a pool): the turn's own threads too."""


@dataclass(eq=False, slots=True, weakref_slot=True)
class _SessionSlot:
    """What serialises the turns of one ``(user, session)`` (see ``ChatService._session_locks``).

    ``lock`` is a plain Lock, not an RLock: an abandoned stream may be finalised (and release it) in another thread.
    """

    lock: threading.Lock = field(default_factory=threading.Lock)
    holder: _Holder | None = None


def _busy_message(user_id: str, session_id: str, holder: _Holder | None, *, waited: float | None) -> str:
    where = f"session {session_id!r} of user {user_id!r} is busy"
    close = ("close that stream (events.close(), or iterate it inside `with contextlib.closing(svc.stream_turn("
             "...)) as events:`) or read it to the end, then send again; closing records its turn as abandoned")
    if holder is None:  # released just as the wait ran out
        return f"{where}: another turn of it held it for {waited:g} s; try again."
    age = time.monotonic() - holder.since
    if holder.streaming and not holder.running:
        paused = (f"a stream_turn of it stopped after {holder.events} event(s) without being read to the end or "
                  f"closed, so its turn is still open ({age:.0f} s)")
        if waited is None:
            return f"{where}: in this thread, {paused}. To go on, {close}."
        return f"{where}: waited {waited:g} s; {paused}. Whoever holds it should {close} (or raise lock_timeout)."
    if waited is None:
        return (f"{where}: this thread is already running a turn of it (or one of its tools); a turn cannot start "
                "another turn of the same session from inside itself (use another session, or wait for it to end).")
    return (f"{where}: waited {waited:g} s for another turn of it that is still running ({age:.0f} s so far); try "
            "again when it ends, or give ChatService a larger lock_timeout (None waits as long as it takes).")


class _SessionAgent:
    """The graph, tools and middleware of one ``(user, session)``; used by one turn at a time (its session's slot)."""

    def __init__(self, user: UserMemory, session_id: str, model: BaseChatModel, retriever: Retriever) -> None:
        self.tools = MemoryTools(user, session_id, retriever=retriever)
        self.recorder = _Recorder()
        self.graph = create_agent(model, self.tools.tools, system_prompt=SYSTEM_PROMPT, middleware=[self.recorder])


# ---------------------------------------------------------------------------------------------- one turn


class _Turn:
    """The seven steps of one turn, as a generator of events."""

    def __init__(self, service: ChatService, user: UserMemory, session_id: str, message: str,
                 agent: _SessionAgent, helpers: set[int]) -> None:
        self.service = service
        self.user = user
        self.session_id = session_id
        self.message = message
        self.agent = agent
        self.timings: dict[str, float] = {}
        self.produced: list[BaseMessage] = []
        self.issued: dict[tuple[int, int], ToolCall] = {}  # every call the model made, by (step, position), in order
        self.step = 0  # AIMessages seen: the step that issued the calls now running
        self.error: str | None = None
        self.partial = ""  # the text of an answer that did not finish (for the log line only)
        self.rejected: list[ToolCall] = []
        self.record = _TurnRecord(system_prompt="", helpers=helpers)

    def _time(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.timings[name] = round((now - since) * 1000, 3)
        return now

    def run(self, *, stream_tokens: bool) -> Iterator[TurnEvent]:
        svc, user, session_id = self.service, self.user, self.session_id
        t0 = tick = time.perf_counter()
        deadline = time.monotonic() + svc.turn_timeout
        now = user.store.clock()
        day = user.day_for(now)  # chosen once: a turn that crosses midnight stays in one day file
        appended = user.append(session_id, "user", self.message, ts=now, day=day)  # (1)
        tick = self._time("persist_user", tick)
        scope = TurnScope(day=day, exclude=frozenset({ItemKey.of(appended.session, "session"),
                                                      ItemKey.of(appended.daily, "daily")}))
        # From here on the user message is on disk, so whatever happens the turn must end with its log line and
        # conversations.json update (the finally below): the context is built inside the guarded region too.
        context = TurnContext(history=(), daily=(), long_term="")
        abandoned = False
        try:
            try:
                context = build_context(user, session_id, appended, recent_rounds=svc.recent_rounds,  # (2)
                                        daily_limit=svc.daily_limit)
            except Exception as exc:  # a store file that cannot be read (e.g. edited in place while we run)
                self.error = _short(f"The agent could not read the memory for this turn: {type(exc).__name__}: "
                                    f"{exc} (run `agentmem-nb problems` to check the user's files).")
            self.record = _TurnRecord(system_prompt=system_prompt_for(context, now=to_zone(now, user.store.zone)),
                                      helpers=self.record.helpers, deadline=deadline)
            tick = self._time("context", tick)
            self.agent.tools.turn = scope
            self.agent.recorder.record = self.record
            if self.error is None:
                yield from self._run_agent(context, stream_tokens=stream_tokens)  # (3)
        except GeneratorExit:
            abandoned = True
            self.error = "The turn was abandoned: the caller stopped reading its events."
        except BaseException as exc:  # KeyboardInterrupt (Ctrl-C, Jupyter's "interrupt kernel"), SystemExit, ...
            # Not a failure to answer but a stop request: record it like a failed turn (no assistant message, the
            # log line names it), then let it propagate so the caller does stop.
            self.error = f"The turn was interrupted ({type(exc).__name__})."
            raise
        finally:
            self.agent.tools.turn = None
            self.agent.recorder.record = None
            tick = self._time("agent", tick)
            self.timings["model"] = round(self.record.model_ms, 3)
            self.timings["tools"] = round(sum(run.ms for run in list(self.record.runs.values())), 3)
            result = self._finish(appended, context, scope, day, tick, t0)  # (4)-(7)
        if abandoned:
            return
        if result.error is not None:
            yield TurnEvent("error", text=result.error)
        yield TurnEvent("done", text=result.reply, result=result)

    # ------------------------------------------------------------------ (3) the agent

    def _run_agent(self, context: TurnContext, *, stream_tokens: bool) -> Iterator[TurnEvent]:
        inputs = {"messages": [*context.history_messages(), HumanMessage(content=self.message)]}
        modes = ["updates", "messages"] if stream_tokens else ["updates"]
        config: dict[str, Any] = {"recursion_limit": self.service.max_steps}
        if stream_tokens:  # only streamed tool arguments can be silently repaired (see _StreamedToolArguments)
            config["callbacks"] = [self.record.streamed]
        stream = self.agent.graph.stream(inputs, config, stream_mode=modes)
        try:
            for mode, data in stream:
                if mode == "messages":
                    chunk, meta = data
                    if isinstance(chunk, AIMessageChunk) and meta.get("langgraph_node") == "model":
                        text = chunk.text
                        if text:
                            yield TurnEvent("token", text=text)
                    continue
                for update in (data or {}).values():
                    new = update.get("messages", []) if isinstance(update, dict) else []
                    for msg in new if isinstance(new, list) else []:
                        yield from self._observe(msg)
        except _ToolFailed as exc:
            self.error = _short(str(exc))
        except _MalformedToolCall as exc:
            self.error = _short(str(exc))
            self.rejected = exc.calls
        except ModelResponseError as exc:  # the server answered, but not with a finished answer
            self.error = _short(str(exc))
            self.partial = exc.partial
        except _DeadlinePassed as exc:
            self.error = self._deadline_error(f"before {exc} could start")
        except GraphRecursionError:
            self.error = (f"The agent did not finish within {self.service.max_steps} steps (it kept calling tools); "
                          "ask again more specifically.")
        except Exception as exc:  # any failure of the model call: HTTP status, timeout, bad response
            if self.record.deadline_passed():  # the transport stopped a server that kept the answer coming
                self.error = self._deadline_error("while the model server was still answering")
            else:
                self.error = _short(describe_model_error(exc, self.service.config))
        finally:
            stream.close()

    def _deadline_error(self, when: str) -> str:
        limit = self.service.turn_timeout
        return (f"The turn took longer than its {limit:g} s limit and was stopped {when}; nothing was saved as a "
                "reply. Try again, or raise llm.turn_timeout (AGENTMEM_TURN_TIMEOUT) if the model is that slow.")

    def _observe(self, msg: BaseMessage) -> Iterator[TurnEvent]:
        self.produced.append(msg)
        if isinstance(msg, AIMessage):
            self.step += 1
            issued = [(call.get("name"), dict(call.get("args") or {}), call.get("id")) for call in msg.tool_calls]
            issued += [(call.get("name"), {"_raw": call.get("args")}, call.get("id"))
                       for call, _ in _wrong_shape_calls(msg)]  # answered with an error, see _Recorder.after_model
            for position, (name, args, call_id) in enumerate(issued):
                started = ToolCall(name=str(name or "?"), input=args, id=call_id, status="running")
                self.issued[(self.step, position)] = started
                yield TurnEvent("tool_started", tool_call=started)
        elif isinstance(msg, ToolMessage):
            run = self.record.by_message.get(msg.id or "")
            call = self.issued.get((run.step, run.position)) if run is not None else None
            if run is not None and call is not None:
                yield TurnEvent("tool_finished", tool_call=_finished(call, run))

    def _final(self) -> AIMessage | None:
        return next((m for m in reversed(self.produced) if isinstance(m, AIMessage)), None)

    # ------------------------------------------------------------------ (4) the trace

    def _trace(self) -> tuple[ToolCall, ...]:
        """Every call the model made, in the order it made them, each with the outcome its run recorded."""
        runs = self.record.runs
        return tuple([_finished(call, runs.get(key)) for key, call in self.issued.items()] + self.rejected)

    # ------------------------------------------------------------------ (5)-(7) persist

    def _finish(self, appended: Appended, context: TurnContext, scope: TurnScope, day: str, tick: float,
                t0: float) -> TurnResult:
        svc, user, session_id = self.service, self.user, self.session_id
        if self.error is not None:  # the one boundary every error text of a turn passes, whatever produced it
            secrets = svc.config.secrets if svc.config is not None else ()
            self.error = redact(self.error, secrets=secrets)
            self.partial = redact(self.partial, secrets=secrets) if self.partial else self.partial
        trace = self._trace()
        final = self._final()
        answer = final.text if final is not None and self.error is None else ""
        reply = answer if self.error is None else f"⚠️ {self.error}"
        logged_reply = f"{reply}\n[partial: the model's unfinished output] {self.partial}" if self.partial else reply
        lt_lines = long_term_lines_used(context.long_term, answer)
        items = tuple(scope.retrieved)
        model = svc.model_name
        assistant: Message | None = None
        if self.error is None:  # (5) only a real answer becomes an assistant message
            assistant = user.append(session_id, "assistant", reply, tool_calls=trace, day=day,
                                    meta={"model": model}).session
        tick = self._time("persist_reply", tick)
        self.timings["total"] = round((tick - t0) * 1000, 3)
        user.log.append(DialogueEntry(  # (6)
            entry_id=0, ts=to_zone(user.store.clock(), user.store.zone), session_id=session_id,
            user_message=self.message, assistant_reply=logged_reply, memory_context=context.log_text(),
            tool_calls=trace, timings_ms=dict(self.timings), error=self.error, model=model,
            assistant_message_id=assistant.message_id if assistant else None))
        tick = self._time("log", tick)
        conversation = user.conversations.touch(session_id, title=title_from(self.message))  # (7)
        tick = self._time("conversations", tick)
        self.timings["total"] = round((tick - t0) * 1000, 3)
        self.timings["overhead"] = round(self.timings["total"] - self.timings["model"], 3)
        return TurnResult(
            reply=reply, memory_hits=len(items) + len(lt_lines), title=conversation.title, tool_calls=trace,
            timings_ms=dict(self.timings), error=self.error, user_message=appended.session,
            assistant_message=assistant, user_id=user.user_id, session_id=session_id, model=model,
            memory_items=items, long_term_lines=lt_lines, memory_context=context.log_text())


def _finished(call: ToolCall, run: _ToolRun | None) -> ToolCall:
    """``call`` (as the model issued it) with the outcome of its ``run`` (``None``: it never ran)."""
    if run is None:
        return ToolCall(name=call.name, input=call.input, output="(not run: the turn ended first)", id=call.id,
                        status="error")
    duration = round(run.ms, 3)  # as written to disk, so replays compare equal
    if run.error is not None:
        return ToolCall(name=call.name, input=call.input, output=run.error, id=call.id, status="error",
                        duration_ms=duration)
    if run.output is None:  # started, but the turn ended before its result came back
        return ToolCall(name=call.name, input=call.input, output="(no result: the turn ended before it finished)",
                        id=call.id, status="error", duration_ms=duration)
    return ToolCall(name=call.name, input=call.input, output=run.output, id=call.id, status=run.status,
                    duration_ms=duration)


def describe_model_error(exc: BaseException, config: LLMConfig | None = None) -> str:
    """One readable sentence for a failed model call, without depending on the client library's class names
    (they differ between langchain-openai versions): HTTP status, timeout, connection, or the exception itself.

    Servers quote what they were sent (a 401 repeats the key, a proxy echoes the ``Authorization`` header), so the
    sentence is redacted (:func:`~agentmem_nb.redact.redact`): it becomes the turn's reply and its log line."""

    secrets = config.secrets if config is not None else ()
    names = [cls.__name__ for cls in type(exc).__mro__]
    status = getattr(exc, "status_code", None)
    detail = str(getattr(exc, "message", "") or exc)
    if isinstance(status, int):
        hint = ""
        if status in (401, 403):
            hint = " (the server refused the API key: check llm.api_key or AGENTMEM_API_KEY)"
        elif status == 404:
            hint = " (check llm.model and llm.base_url)"
        elif status == 429:
            hint = " (rate limited: wait and try again)"
        return redact(f"The model call failed: HTTP {status}{hint}: {detail}", secrets=secrets)
    if any("Timeout" in name for name in names):
        limit = f" after {config.timeout:g} s" if config is not None else ""
        return f"The model call timed out{limit} (raise llm.timeout or AGENTMEM_LLM_TIMEOUT if the server is slow)."
    if any("Connection" in name for name in names):
        where = f" {config.base_url}" if config is not None and config.base_url else ""
        return redact(f"The model call failed: could not reach the server{where}: {detail}", secrets=secrets)
    return redact(f"The model call failed: {type(exc).__name__}: {detail}", secrets=secrets)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"
