"""The JSON shapes of the HTTP API, as pydantic models, and the one conversion of each stored value into its shape.

The first four (``ChatRequest`` … ``MessageList``) are the original demo's request and response shapes, key for key,
so its own front end works unchanged: a tool call's ``input`` is JSON *text* there (the original front end prints
``String(call.input)``), an untitled conversation is shown as ``"新对话"``. Anything we add is an extra key (the
original's clients ignore unknown keys): ``arguments`` (the same input as an object), ``id``, ``status`` and
``duration_ms`` of a tool call; ``created_at`` of a conversation; ``error``, ``session_id`` and the message ids of a
chat turn.

The read endpoints that the original does not have (search, windows, long-term memory, facts, problems, health) have
their own models below. Every model is built from the store's value objects by a ``from_*`` class method here and
nowhere else, so a shape is written once.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.timeutil import format_ts

__all__ = [
    "UNTITLED",
    "ChatRequest",
    "ChatResponse",
    "NewConversationRequest",
    "NewConversationResponse",
    "ConversationItem",
    "ConversationList",
    "ToolCallItem",
    "MessageItem",
    "MessageList",
    "ErrorBody",
    "HealthResponse",
    "SearchHitItem",
    "SearchResponse",
    "WindowResponse",
    "LongTermResponse",
    "LongTermVersionItem",
    "LongTermHistoryResponse",
    "FactsResponse",
    "ProblemItem",
    "ProblemsResponse",
    "SignalItem",
    "TermItem",
    "RetrievedItem",
    "MAX_MESSAGE_CHARS",
    "message_item",
    "tool_call_dict",
    "relative_path",
    "jsonable_items",
]

UNTITLED = "新对话"
"""What the original demo shows for a conversation without a title ("new conversation")."""

MAX_MESSAGE_CHARS = 100_000
"""The longest chat message accepted (the request size limit caps the bytes as well)."""


class _Shape(BaseModel):
    model_config = ConfigDict(extra="ignore")


# ---------------------------------------------------------------------------------------- the original's four


class ChatRequest(_Shape):
    """``POST /api/chat`` (and ``/api/chat/stream``): one message of a user to one conversation."""

    user_id: str = Field(max_length=1024, description="the user (1-128 printable characters, no path separator)")
    session_id: str = Field(max_length=1024, description="the conversation, as returned by POST /api/conversations")
    message: str = Field(max_length=MAX_MESSAGE_CHARS, description="what the user says (not empty)")


class ToolCallItem(_Shape):
    """One tool call of an assistant message: the original's ``name``/``input``/``output`` (``input`` as JSON text)
    and, added, ``arguments`` (the same input as an object), ``id``, ``status`` and ``duration_ms``."""

    name: str
    input: str = Field(description="the arguments as JSON text (the original demo's shape)")
    output: str
    arguments: dict[str, Any] = Field(default_factory=dict, description="the arguments as an object")
    id: str | None = None
    status: str = "success"
    duration_ms: float | None = None

    @classmethod
    def from_call(cls, call: ToolCall) -> ToolCallItem:
        """The API shape of a stored (or just made) tool call."""
        return cls(**tool_call_dict(call))


_INPUT_TEXT = json.JSONEncoder(ensure_ascii=False)
"""The original's input text (``json.dumps(..., ensure_ascii=False)``); one encoder, not one per call (a thread of
10,000 messages has thousands of tool calls)."""


def tool_call_dict(call: ToolCall) -> dict[str, Any]:
    """:class:`ToolCallItem` as a plain dict (the messages endpoint builds thousands; see :func:`message_item`)."""
    raw = call.input.get("_raw") if len(call.input) == 1 else None
    # An input the original stored as text that is not a JSON object is given back as that text, unchanged.
    text = raw if isinstance(raw, str) else _INPUT_TEXT.encode(call.input)
    return {"name": call.name, "input": text, "output": call.output, "arguments": call.input, "id": call.id,
            "status": call.status, "duration_ms": call.duration_ms}


class ChatResponse(_Shape):
    """The outcome of one turn: the original's ``reply``, ``memory_hits``, ``title``, ``tool_calls``; added ``error``
    (why the turn failed, when it did: the reply then says so too), ``session_id`` and the ids of the two messages."""

    reply: str
    memory_hits: int
    title: str
    tool_calls: list[ToolCallItem]
    error: str | None = None
    session_id: str = ""
    user_message_id: int | None = None
    assistant_message_id: int | None = None


class NewConversationRequest(_Shape):
    """``POST /api/conversations``."""

    user_id: str = Field(max_length=1024)


class NewConversationResponse(_Shape):
    """The new conversation's id."""

    session_id: str


class ConversationItem(_Shape):
    """One conversation of the list: ``title`` is ``"新对话"`` when it has none yet."""

    session_id: str
    title: str
    updated_at: str
    created_at: str = ""


class ConversationList(_Shape):
    """``GET /api/conversations``: newest ``updated_at`` first."""

    items: list[ConversationItem]


class MessageItem(_Shape):
    """One stored message: the original's ``ts``, ``role``, ``content``, ``message_id``, ``tool_calls``; added
    ``session_id`` and ``day`` (where it lives, so a search hit links to its thread and its day)."""

    ts: str
    role: str
    content: str
    message_id: int
    tool_calls: list[ToolCallItem]
    session_id: str | None = None
    day: str | None = None


def message_item(message: Message) -> dict[str, Any]:
    """A stored message in the :class:`MessageItem` shape, as a plain dict (the one conversion; the messages endpoint
    returns thousands of these, so it skips building a model per message)."""
    return {"ts": format_ts(message.ts), "role": message.role, "content": message.content,
            "message_id": message.message_id, "tool_calls": [tool_call_dict(c) for c in message.tool_calls],
            "session_id": message.session_id, "day": message.day}


class MessageList(_Shape):
    """``GET /api/conversations/{session_id}/messages``: the thread in file order (empty for an unknown one)."""

    items: list[MessageItem]


class ErrorBody(_Shape):
    """Every refusal: ``detail`` says what was wrong and what to do; ``field`` names the offending input when one
    input is to blame."""

    detail: str
    field: str | None = None


# ---------------------------------------------------------------------------------------- beyond the original


class HealthResponse(_Shape):
    """``GET /api/health``: the server answers, and with which model (never a key or a URL)."""

    status: Literal["ok"] = "ok"
    version: str
    model: str
    offline: bool
    auth: bool = Field(description="whether the other endpoints need the bearer token")


class SignalItem(_Shape):
    """One additive part of a ranked hit's score."""

    name: str
    value: float


class TermItem(_Shape):
    """A query term found in the message and what it added."""

    term: str
    contribution: float
    signal: str


class SearchHitItem(_Shape):
    """One hit of a search with its explanation (``explain`` is the one-line form of ``signals`` and ``terms``)."""

    rank: int
    score: float
    mode: str
    layer: str
    key: str
    explain: str
    signals: list[SignalItem]
    terms: list[TermItem]
    message: MessageItem


class RetrievedItem(_Shape):
    """A message a search brought back: an anchor (``is_anchor``) or a neighbour of the anchor ``anchor_id``."""

    layer: str
    key: str
    anchor_id: int
    is_anchor: bool
    message: MessageItem


class SearchResponse(_Shape):
    """``GET /api/search``: ``mode`` is ``exact`` (one keyword, substring) or ``ranked`` (several words, explained)."""

    query: str
    mode: str
    scope: str
    budget: int
    hits: list[SearchHitItem]
    messages: list[RetrievedItem]


class WindowResponse(_Shape):
    """``GET /api/window``: the messages around an anchor; ``reason`` says why ``items`` is empty when it is."""

    anchor_id: int
    before: int
    after: int
    reason: str
    items: list[MessageItem]


class LongTermResponse(_Shape):
    """``GET /api/memory``: the text of ``memory.md`` now and the version that names it (``None``: no version can)."""

    version: int | None
    text: str


class LongTermVersionItem(_Shape):
    """One change of ``memory.md``."""

    version: int
    ts: str | None
    source: str
    before: str
    after: str


class LongTermHistoryResponse(_Shape):
    """``GET /api/memory/history``: the newest ``limit`` changes, oldest first; ``total`` counts them all."""

    total: int
    items: list[LongTermVersionItem]


class FactsResponse(_Shape):
    """``GET /api/facts``: ``available`` is false when this server has no facts layer (then ``items`` is empty)."""

    available: bool
    items: list[dict[str, Any]]


class ProblemItem(_Shape):
    """One finding of the user's files (``path`` relative to the memory folder)."""

    path: str
    kind: str
    line: int
    detail: str
    count: int


class ProblemsResponse(_Shape):
    """``GET /api/problems``: everything wrong in the user's files (empty when nothing is)."""

    items: list[ProblemItem]


def relative_path(path: str, root: Path) -> str:
    """``path`` relative to the memory folder when it lies inside it: a client learns where in the memory a finding
    is, not how the server's disk is laid out."""
    try:
        return os.path.relpath(path, root) if Path(path).is_relative_to(root) else Path(path).name
    except ValueError:  # another drive on Windows: the name alone
        return Path(path).name


def jsonable_items(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a provider (facts) as JSON-ready dicts: dates and times in ISO 8601, other values JSON cannot hold as
    their text."""
    return [json.loads(json.dumps(dict(row), ensure_ascii=False, default=_plain)) for row in rows]


def _plain(value: object) -> str:
    return value.isoformat() if isinstance(value, _dt.date | _dt.time) else str(value)
