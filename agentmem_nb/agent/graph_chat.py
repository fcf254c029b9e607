"""Your own compiled LangGraph graph as a chat service: :class:`GraphChat`, and its threads as a chat source.

``ChatWidget`` drives a service with ``turn``/``stream_turn``/``new_conversation``/``cancel``
(:class:`~agentmem_nb.agent.ChatService` for our agent). :class:`GraphChat` is that service over *any* compiled graph
with a list of messages in its state and a checkpointer — ``create_agent(model, tools, checkpointer=...)`` or a
hand-built ``StateGraph`` with a tool node — so the chat widget works for a LangGraph agent that is not ours::

    chat = ChatWidget.for_graph(agent, thread_id="morning")     # the widget builds a GraphChat
    svc = GraphChat(agent)                                       # or drive it from code
    for event in svc.stream_turn("", "morning", "What did I say about tea?"):
        print(event.kind, event.text or event.tool_call)

What a turn does:

* The text goes to the graph as a ``HumanMessage`` in ``{channel: [...]}`` with ``config["configurable"]["thread_id"]``
  set to the conversation: the conversation lives in *their* checkpointer, nothing is written to agentmem_nb's store.
  A new conversation is a new thread id; opening a thread shows what the checkpointer holds.
* ``graph.stream(stream_mode=["updates", "messages"])``: model tokens (``AIMessageChunk`` pieces, from any node) stream
  into the reply; each ``AIMessage`` tool call is shown as started when the node that asked for it returns, and as
  finished when the ``ToolMessage`` that answers it (matched by call id, never by name) arrives.
* An exception raised by the graph (a node, a tool without error handling, the model) ends the turn like a failed
  model call of ours: ``TurnResult.error`` says what was raised; what the graph wrote before stays in the
  checkpointer (the user's message is written at the run's first step), and the chat stays usable. A graph that
  fails before it has checkpointed the message (a reducer that refuses the input) raises ``AgentMemError`` instead,
  so the chat shows the error and gives the text back to the box.
* A run that stops at ``interrupt()`` is paused, not failed: ``TurnResult.interrupt`` says what the graph asks, and
  the next message of that thread is sent as ``Command(resume=text)``, which answers it.
* ``cancel`` stops the run between two pieces of the graph's work (a tool already running is waited for); what the
  graph had checkpointed stays.

The history shown (:class:`GraphSource`) is read from the checkpointer through LangGraph's ``list()``, like
:mod:`agentmem_nb.frames.langgraph` (whose reading of message roles, text and write times it uses): one assistant
bubble per run of AI and tool messages, carrying their tool calls with the matched results, so a LangGraph thread
reads like one of ours. The bubble's ``message_id`` is the position of the run's last message and
``meta["first_message_id"]`` that of its first: ``ChatWidget.open_message`` with any position of the run (as
``frames.tool_calls`` gives a tool call's message) opens that bubble.

**Cost.** A saver hands each checkpoint over decoded, and each holds the whole state, so reading a thread's history
costs its steps times its length: 100 turns of ``create_agent`` (about 400 checkpoints of up to 400 messages) took
13 s to walk on this machine (load 12 on 2 cores), and listing the threads with ``frames.threads`` 9 s. The chat
therefore reads at most :data:`TIMED_CHECKPOINTS` checkpoints per look at a thread, newest first, and after that only
the checkpoints written since (a turn writes a few): the same thread then opened in 0.6 s (load 12) and a turn's
reading back took a few decodes (``tests/widgets/test_chat_graph.py`` counts them). A message first held by a checkpoint read gets that checkpoint's
time; one older than what was read is shown "≤" the oldest time read (an upper bound, ``meta["ts_upper_bound"]``).
Threads are listed without decoding anything for ``InMemorySaver`` and ``SqliteSaver`` (their thread ids and newest
checkpoint ids, whose UUIDv6 holds the time); any other saver is listed by ``frames.threads`` (exact, slow); the
list is read when the chat opens or is refreshed, not after every turn.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
import uuid
from collections.abc import Generator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage

from agentmem_nb.errors import AgentMemError, ConfigError, InvalidArgument, InvalidIdentifier
from agentmem_nb.frames.langgraph import FirstWritten, fast, message_role, message_text, threads
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.redact import redact
from agentmem_nb.store.conversations import Conversation
from agentmem_nb.turns import TurnEvent, TurnResult

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

__all__ = ["GraphChat", "GraphSource", "GRAPH_LIMITS", "NOT_ANSWERED", "TIMED_CHECKPOINTS", "list_threads",
           "uuid6_time"]

GRAPH_LIMITS = ("a chat over your LangGraph graph: the conversation is in its checkpointer, so the features of "
                "agentmem_nb's store (users, turn traces, memory editing) are off here")
"""Why the chat over a graph has no user box, trace links or memory editing (shown in its status line)."""

NOT_ANSWERED = "(no result: the graph stopped before this tool answered)"
"""The output shown for a tool call no ``ToolMessage`` answers (a run stopped at an interrupt, an error or Stop)."""

TIMED_CHECKPOINTS = 32
"""Checkpoints decoded per look at a thread (see "Cost" in the module docstring)."""

_ERROR_CHARS = 600
_THREAD_ID_CHARS = 512
_UUID_EPOCH = 0x01B21DD213814000  # 1582-10-15 to 1970-01-01 in the 100 ns ticks of a UUIDv1/v6 time


class _Thread:
    """One thread as the chat shows it, kept up to date by decoding only the checkpoints written since."""

    __slots__ = ("thread_id", "last_checkpoint", "written", "latest", "latest_ts", "shown")

    def __init__(self, thread_id: str) -> None:
        self.thread_id = thread_id
        self.last_checkpoint = ""
        self.written = FirstWritten()
        self.latest: list[Any] = []
        self.latest_ts: _dt.datetime | None = None
        self.shown: list[Message] = []

    def refresh(self, checkpointer: BaseCheckpointSaver[Any], channel: str) -> None:
        config = {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ""}}
        newer: list[CheckpointTuple] = []
        reached = False
        found = checkpointer.list(config)  # type: ignore[arg-type]  # RunnableConfig is a TypedDict of this shape
        try:
            for tup in found:  # newest first: stop at the newest one already read, or when the budget is spent
                if tup.checkpoint["id"] == self.last_checkpoint:
                    reached = True
                    break
                newer.append(tup)
                if len(newer) >= TIMED_CHECKPOINTS:
                    break
            else:
                reached = True  # the thread's first checkpoint was read
        finally:
            close = getattr(found, "close", None)  # a saver's list() is a generator holding a cursor
            if close is not None:
                close()
        if not newer:
            return
        newer.reverse()
        oldest = newer[0]
        if not reached:
            # the messages of the oldest checkpoint read not placed yet were written at or before its time
            bound = (-1, oldest.checkpoint["id"], _dt.datetime.fromisoformat(oldest.checkpoint["ts"]))
            for message in oldest.checkpoint["channel_values"].get(channel) or ():
                mid = getattr(message, "id", None)
                if mid is not None and mid not in self.written.first:
                    self.written.first[mid] = bound
        latest = self.written.walk(newer, channel)
        if latest or isinstance(newer[-1].checkpoint["channel_values"].get(channel), list):
            self.latest = latest
        self.last_checkpoint = newer[-1].checkpoint["id"]
        self.latest_ts = _dt.datetime.fromisoformat(newer[-1].checkpoint["ts"])
        self.shown = self._fold()

    def _fold(self) -> list[Message]:
        """The messages as the chat shows them: user and system messages as they are; each run of AI and tool
        messages as one assistant message whose tool calls carry the outputs that answer them."""
        out: list[Message] = []
        group: list[tuple[int, Any]] = []
        for position, message in enumerate(self.latest, 1):
            if message_role(message) in ("assistant", "tool"):
                group.append((position, message))
                continue
            if group:
                out.append(self._assistant(group))
                group = []
            ts, meta = self._when(message)
            out.append(Message(message_id=position, ts=ts, role=message_role(message), meta=meta,
                               content=message_text(getattr(message, "content", None)), session_id=self.thread_id))
        if group:
            out.append(self._assistant(group))
        return out

    def _assistant(self, group: list[tuple[int, Any]]) -> Message:
        answers = {m.tool_call_id: m for _, m in group if isinstance(m, ToolMessage)}
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        asked: set[str] = set()
        for _, message in group:
            if not isinstance(message, AIMessage):
                continue
            text = message_text(message.content).strip()
            if text:
                texts.append(text)
            for call in message.tool_calls:
                call_id = call.get("id") or ""
                asked.add(call_id)
                calls.append(_call_record(call, answers.get(call_id)))
        for _, message in group:  # a tool message no AI message of the group asked for (a node that wrote it)
            if isinstance(message, ToolMessage) and message.tool_call_id not in asked:
                calls.append(_call_record({"name": message.name or "tool", "args": {}, "id": message.tool_call_id},
                                          message))
        position, last = group[-1]
        ts, meta = self._when(last)
        if calls:
            meta["tool_calls"] = calls
        if group[0][0] != position:
            # the bubble is numbered by its last message; the frames and the inspector number every message of the
            # run by its own position, so the chat finds this bubble by any position from here to message_id
            meta["first_message_id"] = group[0][0]
        return Message(message_id=position, ts=ts, role="assistant", content="\n\n".join(texts), meta=meta,
                       session_id=self.thread_id)

    def _when(self, message: Any) -> tuple[_dt.datetime, dict[str, Any]]:
        """The time the message was written, and ``{"ts_upper_bound": True}`` when it is only known to be no later."""
        where = self.written.first.get(getattr(message, "id", None) or "")
        if where is not None:
            return where[2], ({"ts_upper_bound": True} if where[0] == -1 else {})
        return self.latest_ts or _dt.datetime.now(_dt.timezone.utc), {"ts_upper_bound": True}


def _call_record(call: Mapping[str, Any], answer: ToolMessage | None) -> dict[str, Any]:
    """A tool call in the shape of ``meta["tool_calls"]`` (read back by :class:`~agentmem_nb.messages.ToolCall`)."""
    if answer is None:
        return {"id": call.get("id"), "name": str(call.get("name") or "tool"), "input": dict(call.get("args") or {}),
                "output": NOT_ANSWERED, "status": "error"}
    return {"id": call.get("id"), "name": str(call.get("name") or "tool"), "input": dict(call.get("args") or {}),
            "output": message_text(answer.content), "status": "error" if answer.status == "error" else "success"}


class GraphSource:
    """The threads of a LangGraph checkpointer as conversations for ``ChatWidget``
    (a :class:`~agentmem_nb.widgets.chat_source.ChatSource`): thread ids are the session ids; there are no users.

    Args:
        checkpointer: the saver the graph was compiled with (``graph.checkpointer``).
        channel: the state key holding the messages.
    """

    has_users = False
    has_traces = False
    limits = GRAPH_LIMITS
    zone: _dt.tzinfo | None = None

    def __init__(self, checkpointer: BaseCheckpointSaver[Any], *, channel: str = "messages") -> None:
        self.checkpointer = checkpointer
        self.channel = channel
        self._threads: dict[str, _Thread] = {}
        self._listed: dict[str, _dt.datetime | None] | None = None  # thread -> last write, as last listed
        self._lock = threading.Lock()  # the widget reads from its worker thread and from cells

    def users(self) -> list[str]:
        """None: a checkpointer's threads belong to no user."""
        return []

    def is_new_user(self, user_id: str) -> bool:
        """Never: there are no users to create."""
        return False

    def check_session(self, session_id: object) -> str:
        """Any thread id LangGraph takes: non-empty text without control characters."""
        if (not isinstance(session_id, str) or not session_id.strip() or len(session_id) > _THREAD_ID_CHARS
                or any(ord(c) < 32 for c in session_id)):
            raise InvalidIdentifier("thread_id", session_id, f"give the thread id as non-empty text of at most "
                                    f"{_THREAD_ID_CHARS} characters without control characters, as passed in "
                                    "config={'configurable': {'thread_id': ...}}")
        return session_id

    def latest_session(self, user_id: str) -> str | None:
        """The thread written last."""
        listed = self.conversations(user_id)
        return listed[0].session_id if listed else None

    def conversations(self, user_id: str) -> list[Conversation]:
        """Every thread, written last first, named by its id (a checkpointer keeps no titles). The saver is listed
        once (and again after :meth:`reload`); the threads this chat read since are brought up to date."""
        with self._lock:
            if self._listed is None:
                self._listed = list_threads(self.checkpointer)
            known = dict(self._listed)
            for thread_id, thread in self._threads.items():
                if thread.latest_ts is not None:
                    known[thread_id] = thread.latest_ts
        ordered = sorted(known.items(), key=lambda kv: (kv[1] is not None, kv[1] or _EARLIEST, kv[0]), reverse=True)
        return [Conversation(session_id=t, title=t, created_at=None, updated_at=when) for t, when in ordered]

    def reload(self) -> None:
        """List the threads again at the next :meth:`conversations` (written by another cell or process)."""
        with self._lock:
            self._listed = None

    def count(self, user_id: str, session_id: str) -> int:
        """Messages shown for the thread (read from the checkpointer now)."""
        return len(self.thread(session_id).shown)

    def tail(self, user_id: str, session_id: str, count: int) -> list[Message]:
        """The last ``count`` shown messages (as read by the last :meth:`count`)."""
        shown = self._threads[session_id].shown if session_id in self._threads else []
        return shown[max(0, len(shown) - count):]

    def stamp(self, user_id: str, session_id: str) -> object:
        """The thread's newest checkpoint: a resumed run can change the last assistant message."""
        found = self._threads.get(session_id)
        return found.last_checkpoint if found is not None else ""

    def thread(self, thread_id: str) -> _Thread:
        """The thread, brought up to date with the checkpointer."""
        with self._lock:
            found = self._threads.get(thread_id)
            if found is None:
                found = self._threads[thread_id] = _Thread(thread_id)
            found.refresh(self.checkpointer, self.channel)
            return found


_EARLIEST = _dt.datetime.min.replace(tzinfo=_dt.timezone.utc)


def list_threads(checkpointer: BaseCheckpointSaver[Any]) -> dict[str, _dt.datetime | None]:
    """Every thread of the saver and the time of its newest top-level checkpoint.

    For ``InMemorySaver`` and ``SqliteSaver`` nothing is decoded: their thread ids and newest checkpoint ids are read
    where they keep them, and the time is the one a UUIDv6 checkpoint id holds (``None`` for another id). Any other
    saver is read through ``frames.threads`` (every checkpoint decoded: exact, and slow on long threads)."""
    newest = fast(lambda: _newest_checkpoint_ids(checkpointer))  # None too when the saver's internals moved
    if newest is None:
        frame = threads(checkpointer)
        return {str(t): last.to_pydatetime() for t, last in zip(frame["thread_id"], frame["last_ts"])}
    return {thread_id: uuid6_time(checkpoint_id) for thread_id, checkpoint_id in newest.items()}


def _newest_checkpoint_ids(checkpointer: BaseCheckpointSaver[Any]) -> dict[str, str] | None:
    from langgraph.checkpoint.memory import InMemorySaver

    if isinstance(checkpointer, InMemorySaver):
        # storage: thread id -> checkpoint namespace -> checkpoint id -> (checkpoint, metadata, parent)
        return {str(thread_id): max(spaces[""]) for thread_id, spaces in list(checkpointer.storage.items())
                if spaces.get("")}
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:  # langgraph-checkpoint-sqlite is optional: such a saver cannot be one
        return None
    if type(checkpointer) is not SqliteSaver:  # a subclass may keep its checkpoints elsewhere
        return None
    checkpointer.setup()  # creates the tables of a new database (idempotent), as list() would
    with checkpointer.lock:
        rows = checkpointer.conn.execute("SELECT thread_id, MAX(checkpoint_id) FROM checkpoints "
                                         "WHERE checkpoint_ns = '' GROUP BY thread_id").fetchall()
    return {str(thread_id): str(checkpoint_id) for thread_id, checkpoint_id in rows}


def uuid6_time(checkpoint_id: str) -> _dt.datetime | None:
    """The time a UUIDv6 (RFC 9562; LangGraph's checkpoint ids) holds, or ``None`` for any other id."""
    try:
        value = uuid.UUID(checkpoint_id)
    except ValueError:
        return None
    if value.version != 6:
        return None
    bits = value.int >> 64
    ticks = ((bits >> 16) << 12) | (bits & 0x0FFF)  # time_high+time_mid (48 bits), then time_low (12 bits)
    return _dt.datetime.fromtimestamp((ticks - _UUID_EPOCH) / 1e7, _dt.timezone.utc)


class GraphChat:
    """Runs chat turns on your compiled LangGraph graph, keeping the conversation in its checkpointer (see the
    module docstring). The ``user_id`` arguments of the service protocol are ignored: a thread has no user.

    Args:
        graph: a compiled graph with a checkpointer (``create_agent(..., checkpointer=...)``,
            ``builder.compile(checkpointer=...)``) and a list of messages under ``channel`` in its state.
        config: the run config sent with every turn (``recursion_limit``, ``configurable`` keys your nodes read,
            ``callbacks``, …); ``configurable.thread_id`` is set to the conversation's for each turn.
        channel: the state key holding the messages (``"messages"`` for ``create_agent`` and ``MessagesState``).

    Raises:
        ConfigError: the graph has no checkpointer (a conversation could not be kept) or no ``channel`` key.
    """

    offline = False
    user_id = "langgraph"
    """The name the chat shows in place of a user."""

    def __init__(self, graph: Any, *, config: Mapping[str, Any] | None = None, channel: str = "messages") -> None:
        if not callable(getattr(graph, "stream", None)) or not hasattr(graph, "checkpointer"):
            raise ConfigError(f"GraphChat needs a compiled LangGraph graph (builder.compile(...) or create_agent(...)), "
                              f"got {type(graph).__name__}")
        from langgraph.checkpoint.base import BaseCheckpointSaver

        checkpointer = graph.checkpointer
        if not isinstance(checkpointer, BaseCheckpointSaver):
            raise ConfigError(f"the graph {getattr(graph, 'name', '')!r} has no checkpointer of its own "
                              f"(checkpointer={checkpointer!r}), so a conversation could not be kept: compile it "
                              "with one, e.g. create_agent(..., checkpointer=InMemorySaver()) or "
                              "builder.compile(checkpointer=SqliteSaver(conn))")
        channels = getattr(graph, "channels", None)
        if isinstance(channels, Mapping) and channel not in channels:
            keys = sorted(k for k in channels if not str(k).startswith(("__", "branch:")))
            raise ConfigError(f"the graph's state has no {channel!r} key (its keys: {keys}): pass channel= the key "
                              "that holds the list of messages")
        self.graph = graph
        self.config: dict[str, Any] = dict(config or {})
        self.channel = channel
        self.chat_source = GraphSource(checkpointer, channel=channel)
        self._running: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GraphChat({self.model_name!r}, channel={self.channel!r})"

    @property
    def model_name(self) -> str:
        """The graph's name (shown where our chat shows the model)."""
        return str(getattr(self.graph, "name", "") or "LangGraph graph")

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """The saver the conversations are kept in."""
        return self.chat_source.checkpointer

    def new_conversation(self, user_id: str = "", title: str = "") -> str:
        """A new thread id (nothing is written until its first message; a checkpointer keeps no titles)."""
        return str(uuid.uuid4())

    def turn(self, user_id: str, session_id: str, message: str) -> TurnResult:
        """Run one turn on thread ``session_id`` and return its result (see :meth:`stream_turn`)."""
        result: TurnResult | None = None
        for event in self.stream_turn(user_id, session_id, message):
            result = event.result or result
        assert result is not None  # _events always ends with "done"
        return result

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[TurnEvent]:
        """Run one turn as events: ``token`` (pieces of the model's reply), ``tool_started``/``tool_finished``,
        maybe ``error``, and last ``done`` with the :class:`~agentmem_nb.turns.TurnResult`.

        Raises (before the first event):
            InvalidIdentifier: ``session_id`` is not a usable thread id.
            InvalidArgument: ``message`` is empty or not text.
        """
        thread_id = self.chat_source.check_session(session_id)
        if not isinstance(message, str):
            raise InvalidArgument(f"message must be text, got {type(message).__name__} {message!r:.60}")
        if not message.strip():
            raise InvalidArgument("message is empty: type something to send")
        return self._events(thread_id, message)

    def cancel(self, user_id: str, session_id: str) -> bool:
        """Ask the running turn of thread ``session_id`` to stop at the graph's next piece of work; False when none
        runs. What the graph had checkpointed stays."""
        with self._lock:
            stop = self._running.get(session_id)
        if stop is None:
            return False
        stop.set()
        return True

    def waiting(self, user_id: str, session_id: str) -> str:
        """What thread ``session_id`` asks while it is paused at an ``interrupt()`` ("" when it is not paused): the
        chat shows it when the thread is opened, since the next message answers it."""
        pending = self.pending_interrupts(session_id)
        return _interrupt_text(pending) if pending else ""

    def pending_interrupts(self, thread_id: str) -> tuple[Any, ...]:
        """The ``Interrupt`` objects thread ``thread_id`` is paused at (empty when it is not paused)."""
        state = self.graph.get_state(self._config(thread_id))
        return tuple(getattr(state, "interrupts", ()) or ())

    # ------------------------------------------------------------------ a turn

    def _config(self, thread_id: str) -> dict[str, Any]:
        return {**self.config, "configurable": {**self.config.get("configurable", {}), "thread_id": thread_id}}

    def _events(self, thread_id: str, text: str) -> Generator[TurnEvent, None, None]:
        from langgraph.types import Command

        stop = threading.Event()
        with self._lock:
            if thread_id in self._running:
                raise RuntimeError(f"a turn of thread {thread_id!r} is still running: wait for it, or cancel it")
            self._running[thread_id] = stop
        started_at = time.perf_counter()
        sent = HumanMessage(content=text, id=str(uuid.uuid4()))  # its id tells afterwards whether it was kept
        issued: dict[str, ToolCall] = {}
        finished: dict[str, ToolCall] = {}
        produced: list[BaseMessage] = []
        error: str | None = None
        asked = ""
        cancelled = resuming = False
        try:  # from here on the thread is registered as running: anything raised must reach the finally below
            resuming = bool(self.pending_interrupts(thread_id))
            inputs: Any = Command(resume=text) if resuming else {self.channel: [sent]}
            # A list of modes makes the graph yield (mode, data) pairs, and stream() is a generator (it has close())
            stream = cast("Generator[tuple[str, Any], None, None]",
                          self.graph.stream(inputs, self._config(thread_id), stream_mode=["updates", "messages"]))
            try:
                for mode, data in stream:
                    if mode == "messages":
                        chunk = data[0] if isinstance(data, tuple) and data else None
                        if not isinstance(chunk, AIMessageChunk):
                            continue  # a node's whole message: its "updates" item follows, shown (and stopped) there
                        if chunk.text:
                            yield TurnEvent("token", text=chunk.text)
                    else:
                        for node, update in (data or {}).items():
                            if node == "__interrupt__":
                                asked = _interrupt_text(update)
                                continue
                            for msg in _messages_of(update, self.channel):
                                produced.append(msg)
                                yield from _observe(msg, issued, finished)
                    # Stop is heard between two pieces of the graph's work: the piece just received is done (and
                    # checkpointed), so it is shown; nothing more is taken from the graph.
                    if stop.is_set():
                        cancelled = True
                        break
            except Exception as exc:  # noqa: BLE001 - whatever the user's graph raised (a node, a tool, the model) is the turn's error, shown in the chat; the checkpointer keeps what was written
                error = _describe(exc, thread_id)
            finally:
                stream.close()
        finally:
            with self._lock:
                self._running.pop(thread_id, None)
        thread = self.chat_source.thread(thread_id)
        # by id, not by what is new since the turn began: a graph that trims the history shortens the list
        kept = resuming or any(getattr(m, "id", None) == sent.id for m in thread.latest)
        if error is not None and not kept:
            # the graph failed before it checkpointed the message: raised, so the chat gives the text back
            raise AgentMemError(f"{error} Your message was not kept by the graph (nothing of it was checkpointed).")
        yield from self._done(thread, text, started_at, issued, finished, produced, error=error, asked=asked,
                              cancelled=cancelled, resuming=resuming)

    def _done(self, thread: _Thread, text: str, started_at: float, issued: dict[str, ToolCall],
              finished: dict[str, ToolCall], produced: list[BaseMessage], *, error: str | None, asked: str,
              cancelled: bool, resuming: bool) -> Iterator[TurnEvent]:
        thread_id, shown = thread.thread_id, thread.shown
        user_message = next((m for m in reversed(shown) if m.role == "user"), None)
        if resuming or user_message is None or user_message.content != text:
            # a resumed run adds no message of its own (the answer goes to interrupt()); nor does a run that failed
            # before its first checkpoint: the result still names what was sent
            user_message = Message(message_id=0, ts=_dt.datetime.now(_dt.timezone.utc), role="user", content=text,
                                   meta={"resume": True} if resuming else {}, session_id=thread_id)
        last = shown[-1] if shown else None
        assistant = last if last is not None and last.role == "assistant" and any(
            isinstance(m, AIMessage) for m in produced) else None
        final = next((m for m in reversed(produced) if isinstance(m, AIMessage)), None)
        reply = message_text(final.content) if final is not None else ""
        if cancelled:
            error = (f"Stopped on request; what your graph had written stays in its checkpointer (thread "
                     f"{thread_id!r}).")
        elif error is not None:
            yield TurnEvent("error", text=error)
            reply = f"⚠️ {error}"
        calls = tuple(finished.get(call_id) or _unanswered(call) for call_id, call in issued.items())
        result = TurnResult(reply=reply, memory_hits=0, title="", tool_calls=calls,
                            timings_ms={"total": (time.perf_counter() - started_at) * 1000.0}, error=error,
                            user_message=user_message, assistant_message=assistant if error is None else None,
                            user_id=self.user_id, session_id=thread_id, model=self.model_name, cancelled=cancelled,
                            interrupt=asked)
        yield TurnEvent("done", text=reply, result=result)


def _messages_of(update: Any, channel: str) -> list[BaseMessage]:
    """The messages a node's update adds to ``channel`` (a list, or one message)."""
    new = update.get(channel) if isinstance(update, dict) else None
    if isinstance(new, BaseMessage):
        return [new]
    return [m for m in new if isinstance(m, BaseMessage)] if isinstance(new, list) else []


def _observe(msg: BaseMessage, issued: dict[str, ToolCall], finished: dict[str, ToolCall]) -> Iterator[TurnEvent]:
    if isinstance(msg, AIMessage):
        for position, call in enumerate(msg.tool_calls):
            call_id = call.get("id") or f"{msg.id}:{position}"
            started = ToolCall(name=str(call.get("name") or "tool"), input=dict(call.get("args") or {}), id=call_id,
                               status="running")
            issued[call_id] = started
            yield TurnEvent("tool_started", tool_call=started)
    elif isinstance(msg, ToolMessage):
        asked = issued.get(msg.tool_call_id)
        done = ToolCall(name=asked.name if asked is not None else (msg.name or "tool"),
                        input=asked.input if asked is not None else {}, output=message_text(msg.content),
                        id=msg.tool_call_id, status="error" if msg.status == "error" else "success")
        if asked is None:
            issued[msg.tool_call_id] = done
        finished[msg.tool_call_id] = done
        yield TurnEvent("tool_finished", tool_call=done)


def _unanswered(call: ToolCall) -> ToolCall:
    return ToolCall(name=call.name, input=call.input, output=NOT_ANSWERED, id=call.id, status="error")


def _interrupt_text(update: Any) -> str:
    """What an ``interrupt()`` asks, for the chat: the value of each pending interrupt, as text."""
    values = [message_text(getattr(item, "value", item)) for item in (update if isinstance(update, (tuple, list)) else
                                                                 (update,))]
    asked = "; ".join(v for v in values if v) or "(no question given)"
    return redact(f"your graph paused at an interrupt: {asked}. Your next message answers it (sent as "
                  "Command(resume=...)).")


def _describe(exc: BaseException, thread_id: str) -> str:
    detail = " ".join(str(exc).split())
    if len(detail) > _ERROR_CHARS:
        detail = detail[: _ERROR_CHARS - 1] + "…"
    return redact(f"Your graph raised {type(exc).__name__}: {detail}. What it wrote before stays in thread "
                  f"{thread_id!r} of its checkpointer; send again to retry.")
