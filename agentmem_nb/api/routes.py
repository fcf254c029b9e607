"""The original demo's four endpoints, with its request and response shapes (see :mod:`agentmem_nb.api.schemas`).

==========================================================  =====================================================
``POST /api/chat``  ``{user_id, session_id, message}``        ``{reply, memory_hits, title, tool_calls}`` (+ extras)
``POST /api/conversations``  ``{user_id}``                    ``{session_id}``
``GET /api/conversations?user_id=…``                          ``{items: [{session_id, title, updated_at}]}``
``GET /api/conversations/{session_id}/messages?user_id=…``    ``{items: [{ts, role, content, message_id, tool_calls}]}``
==========================================================  =====================================================

The routes are plain ``def`` functions: FastAPI runs them in its thread pool, so a turn (which blocks on the model)
never stalls the event loop, and turns of one session wait for each other through the service's own session locks
(the same locks a notebook's widgets use when the server shares its service). An unknown conversation has no
messages, as in the original; a conversation is listed once it is created, before its first message. The body of a
long thread is kept while its file is unchanged (:mod:`agentmem_nb.api.thread_cache`).
"""

from __future__ import annotations

from fastapi import APIRouter, Query
from starlette.responses import Response

from agentmem_nb.agent import ChatService
from agentmem_nb.api.errors import ApiError, documented
from agentmem_nb.api.responses import json_bytes
from agentmem_nb.api.schemas import (
    UNTITLED,
    ChatRequest,
    ChatResponse,
    ConversationItem,
    ConversationList,
    MessageList,
    NewConversationRequest,
    NewConversationResponse,
    ToolCallItem,
    message_item,
)
from agentmem_nb.api.thread_cache import ThreadCache
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store import MemoryStore, MessageFile
from agentmem_nb.store.redactions import Redactions, redactions_of
from agentmem_nb.turns import TurnResult

__all__ = ["original_routes", "chat_response", "run_checked"]

USER_ID = Query(max_length=1024, description="the user (1-128 printable characters, no path separator)")


def chat_response(result: TurnResult) -> ChatResponse:
    """The API shape of a turn's outcome (``/api/chat`` and the ``done`` event of ``/api/chat/stream``)."""
    return ChatResponse(
        reply=result.reply, memory_hits=result.memory_hits, title=result.title or UNTITLED,
        tool_calls=[ToolCallItem.from_call(c) for c in result.tool_calls], error=result.error,
        session_id=result.session_id, user_message_id=result.user_message.message_id,
        assistant_message_id=result.assistant_message.message_id if result.assistant_message else None)


def run_checked(service: ChatService, request: ChatRequest) -> TurnResult:
    """``service.turn`` with the one argument error it raises without a field (an empty message) given its field."""
    try:
        return service.turn(request.user_id, request.session_id, request.message)
    except InvalidArgument as exc:  # the ids raise InvalidIdentifier (with its field); this is the message's check
        raise ApiError(400, str(exc), field="message") from exc


def _encode_thread(thread: MessageFile, redactions: Redactions | None = None) -> tuple[int, bytes]:
    # Built as dicts, not models: a 10,000-message thread would spend most of its time validating them.
    messages = thread.messages()
    if redactions is not None:
        messages = redactions.shown(messages, "session")  # "[redacted: reason]" in place (store/redactions.py)
    items = [message_item(m) for m in messages]
    return len(items), json_bytes({"items": items})


def original_routes(store: MemoryStore, service: ChatService, threads: ThreadCache) -> APIRouter:
    """The router of the four endpoints, bound to ``store``, ``service`` and the cache of long threads' bodies."""
    router = APIRouter(prefix="/api", tags=["original"])

    @router.post("/chat", response_model=ChatResponse, responses=documented(400, 401, 409, 413))
    def chat(request: ChatRequest) -> ChatResponse:
        """Run one turn of the agent and return its reply with the tool calls it made.

        A failed model call is still a 200: the reply says what went wrong (``error`` too) and the user's message is
        kept. 409 when another turn of the same conversation is running (after the service's ``lock_timeout``)."""
        return chat_response(run_checked(service, request))

    @router.post("/conversations", response_model=NewConversationResponse, responses=documented(400, 401, 413))
    def new_conversation(request: NewConversationRequest) -> NewConversationResponse:
        """Start a conversation: it is listed at once (titled on its first message)."""
        return NewConversationResponse(session_id=service.new_conversation(request.user_id))

    @router.get("/conversations", response_model=ConversationList, responses=documented(400, 401))
    def list_conversations(user_id: str = USER_ID) -> ConversationList:
        """The user's conversations, newest ``updated_at`` first; ``"新对话"`` for one without a title."""
        items = [
            ConversationItem(session_id=c.session_id, title=c.title or UNTITLED,
                             updated_at=c.updated_at.isoformat() if c.updated_at else "",
                             created_at=c.created_at.isoformat() if c.created_at else "")
            for c in store.user(user_id).conversations.list()
        ]
        return ConversationList(items=items)

    @router.get("/conversations/{session_id}/messages", response_model=MessageList, responses=documented(400, 401))
    def messages(session_id: str, user_id: str = USER_ID) -> Response:
        """Every message of the conversation in order, with each reply's tool calls (empty for an unknown one)."""
        user = store.user(user_id)
        thread = user.session(session_id)
        redactions = redactions_of(user)
        if redactions is not None and redactions.hidden("session", thread.key):
            # Encoded afresh, never cached: the cache follows the thread file's changes, not the redactions'.
            _, body = _encode_thread(thread, redactions)
        else:
            body = threads.body((user.user_id, thread.key), thread, _encode_thread)
        return Response(body, media_type="application/json")

    return router
