"""One turn of the memory agent, as a generator of events: :class:`Turn`, and the per-session graph it runs.

A turn: (1) persist the user message to session + daily, (2) build the context, (3) run the agent, (4) collect the
reply and the tool trace, (5) persist the assistant message with ``meta.tool_calls``, (6) append the dialogue log
line, (7) update ``conversations.json``.

The agent graph (``langchain.agents.create_agent``) is built once per ``(user, session)`` and cached by the service
(:class:`SessionAgent`): its tools are bound to that session and its middleware holds no state. What belongs to one
turn — the day, the messages to leave out of searches, what the tools returned, the deadline, the trace being
recorded — is one :class:`~agentmem_nb.agent.recorder.TurnState` made here and passed with the call
(``graph.stream(..., context=state)``); the turn reads the outcome back from that object, never from the graph.

Failures of the model or a tool end the turn with a visible ``"⚠️ ..."`` reply: the user message stays, the log
line records the error, no assistant message is written, and the next turn works as usual. An answer that did not
finish (a cut stream) is such a failure; its partial text goes to the log line only, marked as partial. A whole turn
has a deadline (``llm.turn_timeout``), checked before every model and tool call and, for the configured client,
while the server's answer arrives. Every error text passes :func:`~agentmem_nb.redact.redact` once, in ``_finish``,
and is cut at 500 characters with its whitespace folded, so the reply stays one readable line.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any, cast

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphRecursionError

from agentmem_nb.agent.config import LLMConfig
from agentmem_nb.agent.context import TurnContext, build_context, long_term_lines_used
from agentmem_nb.agent.facts_tools import recall_facts_tool
from agentmem_nb.agent.procedural import propose_instruction_tool
from agentmem_nb.agent.models import ModelResponseError
from agentmem_nb.agent.prompt import SYSTEM_PROMPT, system_prompt_for
from agentmem_nb.agent.recorder import (DeadlinePassed, MalformedToolCall, Recorder, ToolFailed, ToolRun,
                                        TurnCancelled, TurnState, wrong_shape_calls)
from agentmem_nb.agent.tools import MemoryTools, TurnScope
from agentmem_nb.facts.rank import FactRanker
from agentmem_nb.store.contract import KeepsFacts
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.redact import redact
from agentmem_nb.retrieval import Retriever
from agentmem_nb.store import Appended, DialogueEntry, UserMemory
from agentmem_nb.store.conversations import title_from
from agentmem_nb.timeutil import to_zone
from agentmem_nb.turns import TurnEvent, TurnResult

if TYPE_CHECKING:
    from langchain.agents.middleware import InputAgentState
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import StreamMode

    from agentmem_nb.agent.service import ChatService

__all__ = ["Turn", "SessionAgent", "title_from", "describe_model_error"]

_ERROR_CHARS = 500


class SessionAgent:
    """The graph of one ``(user, session)``, with its tools bound to that session; it holds nothing of any turn
    (each turn passes its :class:`~agentmem_nb.agent.recorder.TurnState` with the call), and its session's slot
    lets one turn at a time use it."""

    def __init__(self, user: UserMemory, session_id: str, model: BaseChatModel, retriever: Retriever,
                 facts: FactRanker | None = None, procedural: bool = False) -> None:
        self.tools = MemoryTools(user, session_id, retriever=retriever)
        keeps = isinstance(user, KeepsFacts)  # a backend without structured memory: the agent runs without it
        tools = [*self.tools.tools, *([recall_facts_tool(user, facts)] if facts is not None and keeps else []),
                 *([propose_instruction_tool(user)] if procedural and keeps else [])]
        self.graph = create_agent(model, tools, system_prompt=SYSTEM_PROMPT, middleware=[Recorder()],
                                  context_schema=TurnState)


# ---------------------------------------------------------------------------------------------- one turn


class Turn:
    """The seven steps of one turn, as a generator of events (:meth:`run`).

    ``helpers`` is the session holder's set of threads running a tool of this turn (see
    :class:`~agentmem_nb.agent.sessions.Holder`): the middleware fills it, so a tool that starts a turn of its own
    session is refused at once instead of waiting for itself.
    """

    def __init__(self, service: ChatService, user: UserMemory, session_id: str, message: str,
                 agent: SessionAgent, helpers: set[int], stop: threading.Event | None = None) -> None:
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
        self.helpers = helpers
        self.stop = stop if stop is not None else threading.Event()  # set by ChatService.cancel
        self.cancelled = False
        self._streamed: list[str] = []  # reply pieces since the last finished model answer (kept if stopped)
        self.state: TurnState  # made in run() once the turn's day and user message are known

    def _time(self, name: str, since: float) -> float:
        now = time.perf_counter()
        self.timings[name] = round((now - since) * 1000, 3)
        return now

    def run(self, *, stream_tokens: bool) -> Generator[TurnEvent, None, None]:
        svc, user, session_id = self.service, self.user, self.session_id
        t0 = tick = time.perf_counter()
        deadline = time.monotonic() + svc.turn_timeout
        now = user.store.clock()
        day = user.day_for(now)  # chosen once: a turn that crosses midnight stays in one day file
        user.check_turn_files(session_id, day)  # a link or FIFO among them fails the turn before its first write
        appended = user.append(session_id, "user", self.message, ts=now, day=day)  # (1)
        tick = self._time("persist_user", tick)
        scope = TurnScope(day=day, exclude=frozenset({ItemKey.of(appended.session, "session"),
                                                      ItemKey.of(appended.daily, "daily")}))
        self.state = TurnState(scope=scope, deadline=deadline, helpers=self.helpers, stop=self.stop)
        # From here on the user message is on disk, so whatever happens the turn must end with its log line and
        # conversations.json update (the finally below): the context is built inside the guarded region too.
        context = TurnContext(history=(), daily=(), long_term="")
        abandoned = False
        try:
            try:
                context = build_context(user, session_id, appended, recent_rounds=svc.recent_rounds,  # (2)
                                        daily_limit=svc.daily_limit, facts=svc.fact_ranker,
                                        fact_budget=svc.fact_budget, procedural=svc.procedural)
            except Exception as exc:  # a store file that cannot be read (e.g. edited in place while we run)
                self.error = _short(f"The agent could not read the memory for this turn: {type(exc).__name__}: "
                                    f"{exc} (run `agentmem-nb problems` to check the user's files).")
            self.state.system_prompt = system_prompt_for(context, now=to_zone(now, user.store.zone))
            tick = self._time("context", tick)
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
            tick = self._time("agent", tick)
            self.timings["model"] = round(self.state.model_ms, 3)
            self.timings["tools"] = round(sum(run.ms for run in list(self.state.runs.values())), 3)
            result = self._finish(appended, context, scope, day, tick, t0)  # (4)-(7)
        if abandoned:
            return
        if result.error is not None:
            yield TurnEvent("error", text=result.error)
        yield TurnEvent("done", text=result.reply, result=result)

    # ------------------------------------------------------------------ (3) the agent

    def _run_agent(self, context: TurnContext, *, stream_tokens: bool) -> Iterator[TurnEvent]:
        inputs: InputAgentState = {"messages": [*context.history_messages(), HumanMessage(content=self.message)]}
        modes: list[StreamMode] = ["updates", "messages"] if stream_tokens else ["updates"]
        config: RunnableConfig = {"recursion_limit": self.service.max_steps}
        if stream_tokens:  # only streamed arguments can be silently repaired (recorder._StreamedToolArguments)
            config["callbacks"] = [self.state.streamed]
        # A list of modes makes the graph yield (mode, data) pairs, and stream() is a generator (it has close());
        # langgraph annotates it as Iterator[dict[str, Any] | Any] for every stream_mode.
        stream = cast("Generator[tuple[str, Any], None, None]",
                      self.agent.graph.stream(inputs, config, stream_mode=modes, context=self.state))
        try:
            for mode, data in stream:
                if self.stop.is_set():  # between two pieces of the graph's work: nothing more is taken from it
                    if mode == "messages":  # a piece already on its way (the model's own stream stops at its next)
                        continue
                    if mode == "updates":  # a node's finished output: a final answer the reader already has is kept
                        for msg in _new_messages(data):
                            delivered = not stream_tokens or "".join(self._streamed) == msg.text
                            if (isinstance(msg, AIMessage) and not msg.tool_calls and not msg.invalid_tool_calls
                                    and delivered):
                                for _ in self._observe(msg):  # an answer that calls no tool starts no tool
                                    pass
                    if self._answered():  # the answer was complete when the stop came: it is the reply
                        break
                    raise TurnCancelled("the rest of the answer")
                if mode == "messages":
                    chunk, meta = data
                    if isinstance(chunk, AIMessageChunk) and meta.get("langgraph_node") == "model":
                        text = chunk.text
                        if text:
                            self._streamed.append(text)
                            yield TurnEvent("token", text=text)
                    continue
                for msg in _new_messages(data):
                    yield from self._observe(msg)
        except ToolFailed as exc:
            self.error = _short(str(exc))
        except MalformedToolCall as exc:
            self.error = _short(str(exc))
            self.rejected = exc.calls
        except ModelResponseError as exc:  # the server answered, but not with a finished answer
            self.error = _short(str(exc))
            self.partial = exc.partial
        except DeadlinePassed as exc:
            self.error = self._deadline_error(f"before {exc} could start")
        except TurnCancelled as exc:
            self._cancel(str(exc))
        except GraphRecursionError:
            self.error = (f"The agent did not finish within {self.service.max_steps} steps (it kept calling tools); "
                          "ask again more specifically.")
        except Exception as exc:  # any failure of the model call: HTTP status, timeout, bad response
            if self.state.deadline_passed():  # the transport stopped a server that kept the answer coming
                self.error = self._deadline_error("while the model server was still answering")
            else:
                self.error = _short(describe_model_error(exc, self.service.config))
        finally:
            try:
                stream.close()
            except TurnCancelled as exc:  # the model's stream, ended by the stop request as the graph closed
                if not self.cancelled and not self._answered():
                    self._cancel(str(exc))

    def _cancel(self, before: str) -> None:
        self.cancelled = True
        self.error = (f"Stopped on request before {before} (nothing was saved as a reply; the message you sent "
                      "stays in the conversation).")
        self.partial = "".join(self._streamed)

    def _deadline_error(self, when: str) -> str:
        limit = self.service.turn_timeout
        return (f"The turn took longer than its {limit:g} s limit and was stopped {when}; nothing was saved as a "
                "reply. Try again, or raise llm.turn_timeout (AGENTMEM_TURN_TIMEOUT) if the model is that slow.")

    def _observe(self, msg: BaseMessage) -> Iterator[TurnEvent]:
        self.produced.append(msg)
        if isinstance(msg, AIMessage):
            self._streamed.clear()
            self.step += 1
            issued: list[tuple[object, dict[str, Any], str | None]] = [
                (call.get("name"), dict(call.get("args") or {}), call.get("id")) for call in msg.tool_calls]
            issued += [(call.get("name"), {"_raw": call.get("args")}, call.get("id"))
                       for call, _ in wrong_shape_calls(msg)]  # answered with an error, see Recorder.after_model
            for position, (name, args, call_id) in enumerate(issued):
                started = ToolCall(name=str(name or "?"), input=args, id=call_id, status="running")
                self.issued[(self.step, position)] = started
                yield TurnEvent("tool_started", tool_call=started)
        elif isinstance(msg, ToolMessage):
            run = self.state.by_message.get(msg.id or "")
            call = self.issued.get((run.step, run.position)) if run is not None else None
            if run is not None and call is not None:
                yield TurnEvent("tool_finished", tool_call=_finished(call, run))

    def _answered(self) -> bool:
        """Whether the model has given its final answer (an answer that calls no tool, the last thing produced):
        a stop that lands after it — the reader has every piece of it, the graph is finishing its bookkeeping —
        keeps it rather than throwing away a reply already shown whole. A stop while pieces were still on their way
        to the reader cuts the answer, as it always did."""
        last = self.produced[-1] if self.produced else None
        # an answer whose calls were all malformed (invalid_tool_calls) is no answer: the model is sent round again
        return (isinstance(last, AIMessage) and not last.tool_calls and not last.invalid_tool_calls
                and not self.error)

    def _final(self) -> AIMessage | None:
        return next((m for m in reversed(self.produced) if isinstance(m, AIMessage)), None)

    # ------------------------------------------------------------------ (4) the trace

    def _trace(self) -> tuple[ToolCall, ...]:
        """Every call the model made, in the order it made them, each with the outcome its run recorded."""
        runs = self.state.runs
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
        # (5)-(7) are one transaction where the store has them (PostgreSQL): all kept, or none and the turn raises.
        with user.transaction():
            if self.error is None:  # (5) only a real answer becomes an assistant message
                assistant = user.append(session_id, "assistant", reply, tool_calls=trace, day=day,
                                        meta={"model": model}).session
            tick = self._time("persist_reply", tick)
            self.timings["total"] = round((tick - t0) * 1000, 3)
            user.log.append(DialogueEntry(  # (6)
                entry_id=0, ts=to_zone(user.store.clock(), user.store.zone), session_id=session_id,
                user_message=self.message, assistant_reply=logged_reply, memory_context=context.log_text(),
                tool_calls=trace, timings_ms=dict(self.timings), error=self.error, model=model,
                assistant_message_id=assistant.message_id if assistant else None,
                trace=self._trace_record(appended.session.message_id, t0)))
            tick = self._time("log", tick)
            conversation = user.conversations.touch(session_id, title=title_from(self.message))  # (7)
            tick = self._time("conversations", tick)
        self.timings["total"] = round((tick - t0) * 1000, 3)
        self.timings["overhead"] = round(self.timings["total"] - self.timings["model"], 3)
        return TurnResult(
            reply=reply, memory_hits=len(items) + len(lt_lines), title=conversation.title, tool_calls=trace,
            timings_ms=dict(self.timings), error=self.error, user_message=appended.session,
            assistant_message=assistant, user_id=user.user_id, session_id=session_id, model=model,
            memory_items=items, long_term_lines=lt_lines, memory_context=context.log_text(),
            cancelled=self.cancelled)

    def _trace_record(self, user_message_id: int, t0: float) -> dict[str, Any]:
        """What the trace view needs beyond the log's other fields: the model steps (when, how long, tokens, what
        each was given), each tool call's start (aligned with ``tool_calls``), and where the graph call began."""
        runs = self.state.runs
        secrets = self.service.config.secrets if self.service.config is not None else ()
        steps = [step.to_record() for step in self.state.steps]
        for step in steps:  # a model error may quote the key (a 401 body does): the same boundary as self.error
            if step["error"]:
                step["error"] = redact(_short(step["error"]), secrets=secrets)
        return {"user_message_id": user_message_id, "cancelled": self.cancelled,
                "graph_start_ms": round((self.state.started - t0) * 1000, 3),
                "steps": steps,
                "tool_starts": [round(run.start_ms, 3) if (run := runs.get(key)) is not None else None
                                for key in self.issued] + [None] * len(self.rejected)}


def _finished(call: ToolCall, run: ToolRun | None) -> ToolCall:
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


def _new_messages(update: Any) -> list[BaseMessage]:
    """The messages the nodes of one ``updates`` event of the graph's stream added, in order."""
    out: list[BaseMessage] = []
    for node_update in (update or {}).values():
        new = node_update.get("messages", []) if isinstance(node_update, dict) else []
        out.extend(m for m in (new if isinstance(new, list) else []) if isinstance(m, BaseMessage))
    return out


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"
