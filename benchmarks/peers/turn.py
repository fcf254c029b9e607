"""Workload 5: what memory costs in a chat turn, with the offline model, as the thread grows.

agentmem_nb: ``ChatService.turn`` on a session that already holds N messages. Its ``timings_ms["overhead"]`` is the
turn's wall time minus the model's own time (measured around each model call by the service's middleware): persisting
both messages to session and day files, building the context (last 3 rounds + memory.md), the memory tools, the
dialogue log line and ``conversations.json``. Two kinds of turn: a plain one (no tool call) and a recall question
that makes the offline model call ``search_session`` and ``get_session_window`` on the N-message thread (plus
whatever else its policy adds; the report lists the tools called).

Reference: the same offline model in a ``create_agent`` graph with LangGraph's ``InMemorySaver`` checkpointer, on a
thread already holding N messages — LangGraph's own answer to "conversation memory": the checkpointer loads the whole
thread, the model is handed all of it, and each step's checkpoint stores it again. Overhead is measured the same way
(wall time minus the time inside the model call, timed by an identical middleware).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.peers.adapters import remove_tree
from benchmarks.peers.data import TERM, USER_ID, conversation
from benchmarks.peers.figures import Figure

if TYPE_CHECKING:
    from benchmarks.peers.runner import Plan

__all__ = ["run_turn_workload", "measure_turns", "TURN_ROWS", "PLAIN", "RECALL"]

PLAIN = "Thanks, that sounds good."
RECALL = f"What did I say about {TERM}?"

TURN_ROWS = {
    "plain": "agentmem_nb ChatService, plain turn",
    "recall": "agentmem_nb ChatService, recall turn (memory tools)",
    "saver": "LangGraph InMemorySaver, plain turn (whole thread replayed)",
}
"""Row labels; the plain agentmem_nb turn comes first, so it is the reference of the ratios."""


def _service_available() -> str:
    """Empty when ``agentmem_nb.agent.service`` can be imported, else why not."""
    try:
        import agentmem_nb.agent.service  # noqa: F401
    except ImportError as exc:
        return f"agentmem_nb.agent.service cannot be imported yet ({exc})"
    return ""


def _median_figure(label: str, n: int, samples: list[tuple[float, float]], note: str = "") -> Figure:
    return Figure("turn", label, n, "measured", {
        "overhead_ms": statistics.median(s[0] for s in samples),
        "total_ms": statistics.median(s[1] for s in samples),
        "runs": float(len(samples)),
    }, note)


def _agentmem_turns(n: int, folder: Path, *, repeats: int, budget_s: float) -> list[Figure]:
    from agentmem_nb.agent.offline import OfflineChatModel
    from agentmem_nb.agent.service import ChatService
    from agentmem_nb.store import MemoryStore

    store = MemoryStore(folder, zone="UTC")
    # The model is passed explicitly: no config file or environment key can switch this to a network model.
    service = ChatService(store, model=OfflineChatModel())
    session_id = service.new_conversation(USER_ID, title="benchmark")
    user = store.user(USER_ID)
    for message in conversation(n):  # history written in the past; the turns themselves run at the real clock
        user.append(session_id, message.role, message.content, ts=message.ts)
    for warm in (PLAIN, RECALL):  # builds and caches the session's graph; not timed
        service.turn(USER_ID, session_id, warm)
    figures = []
    for kind, text in (("plain", PLAIN), ("recall", RECALL)):
        samples: list[tuple[float, float]] = []
        started = time.perf_counter()
        tools: tuple[str, ...] = ()
        while len(samples) < max(1, repeats):
            result = service.turn(USER_ID, session_id, text)
            if result.error is not None:
                return [Figure("turn", TURN_ROWS[k], n, "error", note=f"turn failed: {result.error}")
                        for k in ("plain", "recall")]
            tools = tuple(call.name for call in result.tool_calls)
            samples.append((result.timings_ms["overhead"], result.timings_ms["total"]))
            if time.perf_counter() - started >= budget_s:
                break
        # The offline model's policy may add steps (e.g. a search of the day files); what must hold is that the
        # recall turn searched the thread and opened a window on it, and that the plain turn used no tool.
        if kind == "recall" and not ("search_session" in tools and "get_session_window" in tools):
            figures.append(Figure("turn", TURN_ROWS[kind], n, "error",
                                  note=f"the recall turn called {', '.join(tools) or 'no tools'}, "
                                       "not search_session and get_session_window"))
            continue
        if kind == "plain" and tools:
            figures.append(Figure("turn", TURN_ROWS[kind], n, "error", note=f"the plain turn called {tools}"))
            continue
        note = f"tools called per turn: {', '.join(tools)}" if tools else ""
        figures.append(_median_figure(TURN_ROWS[kind], n, samples, note))
    return figures


def _saver_turns(n: int, *, repeats: int, budget_s: float) -> list[Figure]:
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from agentmem_nb.agent.offline import OfflineChatModel

    class ModelTimer(AgentMiddleware):
        """Times the model call exactly as ChatService's middleware does."""

        def __init__(self) -> None:
            super().__init__()
            self.model_s = 0.0

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            t0 = time.perf_counter()
            try:
                return handler(request)
            finally:
                self.model_s += time.perf_counter() - t0

    timer = ModelTimer()
    graph = create_agent(OfflineChatModel(), [], system_prompt="You are a helpful assistant.", middleware=[timer],
                         checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"{USER_ID}-thread"}}
    history = [(HumanMessage if m.role == "user" else AIMessage)(content=m.content) for m in conversation(n)]
    graph.invoke({"messages": history}, config)  # the thread's N messages, checkpointed; not timed
    del history
    graph.invoke({"messages": [HumanMessage(content=PLAIN)]}, config)  # warm-up, not timed
    samples: list[tuple[float, float]] = []
    started = time.perf_counter()
    while len(samples) < max(1, repeats):
        timer.model_s = 0.0
        t0 = time.perf_counter()
        graph.invoke({"messages": [HumanMessage(content=PLAIN)]}, config)
        total = time.perf_counter() - t0
        samples.append(((total - timer.model_s) * 1e3, total * 1e3))
        if time.perf_counter() - started >= budget_s:
            break
    return [_median_figure(TURN_ROWS["saver"], n, samples,
                           note="the model is handed the whole thread each turn (agentmem_nb: last 3 rounds + "
                                "memory.md); model time is excluded from both rows")]


def measure_turns(kind: str, n: int, folder: Path, *, repeats: int, budget_s: float) -> list[Figure]:
    """Run in a worker process: ``kind`` is ``"agentmem"`` (two rows) or ``"saver"`` (the reference row)."""
    if kind == "agentmem":
        return _agentmem_turns(n, folder / "data", repeats=repeats, budget_s=budget_s)
    if kind == "saver":
        return _saver_turns(n, repeats=repeats, budget_s=budget_s)
    raise ValueError(f"unknown turn workload {kind!r}: use 'agentmem' or 'saver'")


def run_turn_workload(plan: Plan, root: Path, *, code: Path, progress: Callable[[str], None]) -> list[Figure]:
    """Workload 5 for every thread length of ``plan``, one worker process per (kind, N)."""
    from benchmarks.peers.runner import run_worker

    missing = _service_available()
    figures: list[Figure] = []
    for n in plan.turn_sizes:
        if missing:
            figures += [Figure("turn", label, n, "not run", note=missing) for label in TURN_ROWS.values()]
            continue
        for kind, labels in (("agentmem", (TURN_ROWS["plain"], TURN_ROWS["recall"])), ("saver", (TURN_ROWS["saver"],))):
            progress(f"turn ({kind}): N={n:,} …")
            folder = root / f"turn-{kind}-{n}"
            folder.mkdir(parents=True, exist_ok=True)
            raw, error = run_worker(["turn", "--peer", kind, "--n", str(n), "--workdir", str(folder),
                                     "--repeats-read", str(plan.turn_repeats), "--budget", str(plan.budget_s)],
                                    folder / "figures.json", timeout=20 * plan.budget_s + 600, code=code)
            remove_tree(folder)
            if raw is None:
                figures += [Figure("turn", label, n, "error", note=error) for label in labels]
            else:
                figures += [Figure.from_dict(item) for item in raw]
    return figures
