"""What a turn returns (:class:`TurnResult`) and what a streamed turn yields (:class:`TurnEvent`).

These are the agent's answer types, but they live outside ``agentmem_nb.agent`` because importing that package
imports langchain (about 1.2 s, measured with ``python -X importtime``) while these need only
:mod:`agentmem_nb.messages` (about 0.07 s): the widgets, their tests and any code that only reads results type
against them without paying for the agent. ``from agentmem_nb.agent import TurnResult`` still works (the same
classes). Nothing here may import langchain; ``tests/agent/test_agent_turns_light.py`` checks it in a fresh process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message, ToolCall

__all__ = ["TurnResult", "TurnEvent", "EventKind", "MemoryItem"]

EventKind = Literal["tool_started", "tool_finished", "token", "done", "error"]

MemoryItem = ItemKey
"""A retrieved memory item: :class:`~agentmem_nb.items.ItemKey` ``(layer, key, message_id)`` (the old name)."""


@dataclass(frozen=True, slots=True)
class TurnResult:
    """The outcome of one turn.

    ``reply`` is what to show: the model's answer, or a visible ``"⚠️ ..."`` message when the turn failed (then
    ``error`` says why and ``assistant_message`` is ``None``: only the user message was persisted).
    ``memory_hits`` counts the distinct memory items the turn actually retrieved: messages returned by tools
    (``memory_items``) plus long-term lines the reply drew on (``long_term_lines``).
    ``timings_ms`` has ``persist_user``, ``context``, ``agent`` (of which ``model`` and ``tools``),
    ``persist_reply``, ``log``, ``conversations``, ``total`` and ``overhead`` (total minus model time).
    """

    reply: str
    memory_hits: int
    title: str
    tool_calls: tuple[ToolCall, ...]
    timings_ms: dict[str, float]
    error: str | None
    user_message: Message
    assistant_message: Message | None
    user_id: str = ""
    session_id: str = ""
    model: str = ""
    memory_items: tuple[ItemKey, ...] = ()
    long_term_lines: tuple[str, ...] = ()
    memory_context: str = field(default="", repr=False)
    cancelled: bool = False
    """True when the turn was stopped on request (``ChatService.cancel``): ``error`` says so, nothing was saved
    as a reply."""
    interrupt: str = ""
    """What a LangGraph graph asks when its run stopped at an ``interrupt()`` (``GraphChat``): the run is paused,
    not failed (``error`` is ``None``), and the next message answers it. Empty otherwise."""

    @property
    def ok(self) -> bool:
        """True when the model answered (no error)."""
        return self.error is None


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """One step of a streamed turn.

    ``tool_started``/``tool_finished`` carry the :class:`ToolCall` (``status="running"`` when started); ``token``
    carries a piece of the reply in ``text``; ``error`` carries the error text; the last event is always ``done``
    with the :class:`TurnResult` in ``result`` (and the reply in ``text``).

    Some hosted models write a sentence before calling a tool ("Let me check..."): those tokens arrive *before* the
    ``tool_started`` event of that step and are not part of the final reply. The reply is the tokens after the last
    ``tool_finished`` event, and always ``done.result.reply``.
    """

    kind: EventKind
    text: str = ""
    tool_call: ToolCall | None = None
    result: TurnResult | None = None
