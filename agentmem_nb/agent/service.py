"""The public face of the memory agent: :class:`ChatService` (run turns, start conversations, reach a graph).

This file holds the API only; each concern behind it has its own module:

==========================  ==============================================================================
``agent/turn.py``           one turn's seven steps (persist, context, agent, trace, reply, log, conversations)
``agent/recorder.py``       the middleware that records every model and tool call into the turn's state
``agent/sessions.py``       one turn at a time per session: slots, locks, :class:`SessionBusy`
``agent/tools.py``          the six memory tools bound to one session
``agent/context.py``        what the model is told before the turn (recent rounds, today, long-term memory, facts)
``agent/facts_queue.py``    facts extracted from each user message after the reply, through a durable queue
``agent/facts_tools.py``    the ``recall_facts`` tool
``agent/procedural.py``     standing instructions (procedural memory) and the ``propose_instruction`` tool
==========================  ==============================================================================

The service caches one agent graph per ``(user, session)`` (at most :data:`MAX_CACHED_GRAPHS`, least recently used
first out; building one — six tools and a ``create_agent`` call — takes about 7 ms, measured with the offline
model), and the cached graph holds nothing of any turn: each turn passes its own state with the call. Turns of one session run one at a time (they share the graph and the files);
the slot a turn holds is taken before its first event and given back after its last, also when the caller stops
reading a stream early (that turn is then recorded as abandoned).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from langchain_core.language_models import BaseChatModel

from agentmem_nb.agent.config import LLMConfig, load_config
from agentmem_nb.agent.facts_queue import FactMode, FactWriter
from agentmem_nb.agent.models import make_chat_model, model_name_of
from agentmem_nb.agent.offline import OfflineChatModel
from agentmem_nb.agent.sessions import DEFAULT_LOCK_TIMEOUT, SessionBusy, SessionLocks
from agentmem_nb.agent.turn import SessionAgent, Turn, describe_model_error, title_from
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.facts import Extractor, OfflineExtractor
from agentmem_nb.facts.rank import FactRanker
from agentmem_nb.identifiers import check_session_id
from agentmem_nb.retrieval import Retriever
from agentmem_nb.store import MemoryStore, UserMemory
from agentmem_nb.turns import TurnEvent, TurnResult

__all__ = ["ChatService", "SessionBusy", "title_from", "describe_model_error"]

MAX_CACHED_GRAPHS = 128


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
        facts: when facts are extracted from each user message: ``"background"`` (default: after the reply, through
            a durable queue; :meth:`drain` waits for it), ``"hot"`` (before the turn returns) or ``"off"`` (the agent
            without structured facts: none extracted, none in the context, no ``recall_facts`` tool). A store whose
            users keep no facts (no :class:`~agentmem_nb.store.contract.KeepsFacts`; both backends of this package
            keep them) runs as ``"off"``, and without standing instructions.
        fact_extractor: what extracts them (default: the offline :class:`~agentmem_nb.facts.OfflineExtractor`; see
            ``agentmem_nb.agent.facts_model`` for the model's structured output).
        fact_budget: at most this many facts in a turn's context (a small profile, then the relevant ones; 0: none).
        procedural: compose the user's standing instructions (``instructions.md``) into the system prompt and offer
            the ``propose_instruction`` tool (see :mod:`agentmem_nb.agent.procedural`).

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
        facts: FactMode = "background",
        fact_extractor: Extractor | None = None,
        fact_budget: int = 12,
        procedural: bool = True,
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
        self.turn_timeout = (config if config is not None else LLMConfig()).turn_timeout
        """Seconds a whole turn may take (``llm.turn_timeout``)."""
        self._agents: OrderedDict[tuple[str, str], SessionAgent] = OrderedDict()
        self._lock = threading.Lock()  # guards _agents
        self._sessions = SessionLocks(lock_timeout=None)
        self.lock_timeout = lock_timeout
        self.procedural = bool(procedural)
        self.fact_ranker = FactRanker()
        self.fact_budget = max(0, int(fact_budget)) if facts != "off" else 0
        self.facts = FactWriter(fact_extractor or OfflineExtractor(), mode=facts,
                                describe_error=lambda exc: describe_model_error(exc, self.config))
        """Extracts facts from each user message (see :mod:`agentmem_nb.agent.facts_queue`)."""
        self.graphs_built = 0
        """How many agent graphs this service has built (one per session it served, barring cache eviction)."""

    def __repr__(self) -> str:
        return (f"ChatService(store={self.store!r}, model={self.model_name!r}, offline={self.offline}, "
                f"daily_limit={self.daily_limit}, recent_rounds={self.recent_rounds})")

    @property
    def lock_timeout(self) -> float | None:
        """Seconds a turn waits for another turn of its session before :class:`SessionBusy` (``None``: no limit)."""
        return self._sessions.lock_timeout

    @lock_timeout.setter
    def lock_timeout(self, seconds: float | None) -> None:
        self._sessions.lock_timeout = None if seconds is None else max(0.0, float(seconds))

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

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued fact extraction is written (``False`` if ``timeout`` seconds passed first)."""
        return self.facts.drain(timeout)

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

    def cancel(self, user_id: str, session_id: str) -> bool:
        """Ask the running turn of ``(user_id, session_id)`` to stop; returns False when none is running.

        Thread-safe (call it from another thread, or from a widget callback while a stream runs). The turn stops
        at its next check — before its next model or tool call, and in a :meth:`stream_turn` also at the next piece
        of the model's answer (a tool already running, or a server that sends nothing yet, is waited for) — and
        ends like a failed turn: the user's message stays, no assistant message is written, the log line and
        ``TurnResult`` say ``cancelled`` (the streamed text so far goes to the log line only, marked partial), and
        the session is free for the next turn as soon as the call that was running returns.

        >>> # threading.Timer(2.0, svc.cancel, ("alice", sid)).start(); svc.turn("alice", sid, "...").cancelled
        """
        return self._sessions.cancel(self.store.user(user_id).user_id, check_session_id(session_id))

    def _prepare(self, user_id: str, session_id: str, message: str) -> tuple[UserMemory, str, str]:
        user = self.store.user(user_id)
        session_id = check_session_id(session_id)
        if not isinstance(message, str):
            raise InvalidArgument(f"message must be text, got {type(message).__name__} {message!r:.60}")
        if not message.strip():
            raise InvalidArgument("message is empty: type something to send")
        return user, session_id, message

    def _agent(self, user: UserMemory, session_id: str) -> SessionAgent:
        key = (user.user_id, session_id)
        with self._lock:
            agent = self._agents.get(key)
            if agent is not None:
                self._agents.move_to_end(key)
                return agent
            agent = SessionAgent(user, session_id, self.model, self.retriever,
                                 self.fact_ranker if self.facts.mode != "off" else None, self.procedural)
            self.graphs_built += 1
            self._agents[key] = agent
            while len(self._agents) > MAX_CACHED_GRAPHS:
                self._agents.popitem(last=False)
            return agent

    def _events(self, user: UserMemory, session_id: str, message: str, *, stream_tokens: bool) -> Iterator[TurnEvent]:
        slot = self._sessions.slot(user.user_id, session_id)  # a local: keeps the slot alive while the turn needs it
        # Turns of one session run one at a time (they share the session's agent and its files).
        holder = self._sessions.claim(slot, user.user_id, session_id, streaming=stream_tokens)
        self.facts.turn_started()  # background extraction waits while turns run
        try:
            agent = self._agent(user, session_id)
            events = Turn(self, user, session_id, message, agent, holder.helpers,
                          holder.stop).run(stream_tokens=stream_tokens)
            try:
                for event in events:
                    if event.result is not None and event.result.user_message is not None:
                        # Facts of the user message: queued (or, hot, written) before the result is handed out.
                        self.facts.submit(user, session_id, event.result.user_message.message_id)
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
            self.facts.turn_finished()
            self._sessions.release(slot)
