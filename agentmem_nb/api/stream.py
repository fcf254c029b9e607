"""``POST /api/chat/stream``: one turn as server-sent events, as the turn happens.

::

    event: tool_started    data: {"tool_call": {name, input, output, arguments, id, status, duration_ms}}
    event: tool_finished   data: {"tool_call": {...}}            (output and status filled in)
    event: token           data: {"text": "a piece of the reply"}
    event: error           data: {"detail": "why the turn failed"} (the turn still ends with done)
    event: done            data: {reply, memory_hits, title, tool_calls, error, ...}   (the /api/chat shape)

Refusals come before the stream as plain JSON, with the status of ``/api/chat`` (400, 409), because the turn is
started — and its session claimed — before the response begins: a thread of its own drives
:meth:`~agentmem_nb.agent.ChatService.stream_turn` from its first event to its last (a langgraph stream is not
moved from thread to thread as Starlette's iteration of a plain generator would do) and hands each event to the
event loop. A client that goes away ends the turn as abandoned (``events.close()``, the service's rule): its message
and log line stay and the session is free for the next turn.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse

from agentmem_nb.agent import ChatService
from agentmem_nb.api.errors import ApiError, documented
from agentmem_nb.api.responses import json_bytes
from agentmem_nb.api.routes import chat_response
from agentmem_nb.api.schemas import ChatRequest, ToolCallItem
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.redact import redact
from agentmem_nb.turns import TurnEvent

__all__ = ["stream_routes", "sse"]

log = logging.getLogger("agentmem_nb.api")

_END = object()

_EVENT_SCHEMA = {
    "type": "object",
    "description": "one event (OpenAPI before 3.2: the schema of each event of the stream)",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["tool_started", "tool_finished", "token", "error", "done"]},
        "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": {"type": "object"}},
    },
}


def sse(event: str, data: Any) -> bytes:
    """One server-sent event: its name and one line of JSON (JSON has no raw newline, so one ``data:`` line)."""
    return b"event: " + event.encode("ascii") + b"\ndata: " + json_bytes(data) + b"\n\n"


def event_bytes(event: TurnEvent) -> bytes:
    """The wire form of one turn event."""
    if event.kind in ("tool_started", "tool_finished") and event.tool_call is not None:
        return sse(event.kind, {"tool_call": ToolCallItem.from_call(event.tool_call).model_dump()})
    if event.kind == "done" and event.result is not None:
        return sse("done", chat_response(event.result).model_dump())
    if event.kind == "error":
        return sse("error", {"detail": redact(event.text)})
    return sse(event.kind, {"text": event.text})


class _Pump:
    """Drives one turn's event stream in a thread of its own and hands the events to the event loop."""

    def __init__(self, events: Iterator[TurnEvent], loop: asyncio.AbstractEventLoop) -> None:
        self._events = events
        self._loop = loop
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentmem-api-stream", daemon=True)
        self._thread.start()

    def _put(self, item: object) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed (the server stopped): no one is reading; end the turn
            self._stop.set()

    def _run(self) -> None:
        try:
            for event in self._events:
                self._put(event)
                if self._stop.is_set():
                    break
        except BaseException as exc:  # handed to the request, which maps or reports it (a thread must not die mute)
            self._put(exc)
        finally:
            # Closing a stream the client left ends that turn as abandoned and frees its session (the service's rule).
            self._events.close()  # type: ignore[attr-defined]  # stream_turn returns a generator
            self._put(_END)

    async def next(self) -> object:
        return await self._queue.get()

    def cancel(self) -> None:
        self._stop.set()


def stream_routes(service: ChatService) -> APIRouter:
    """The router of the streaming chat endpoint, bound to ``service``."""
    router = APIRouter(prefix="/api", tags=["chat"])

    @router.post("/chat/stream", responses={
        **documented(400, 401, 409, 413),
        200: {"description": "server-sent events: tool_started, tool_finished, token, error, done",
              "content": {"text/event-stream": {"schema": _EVENT_SCHEMA}}}},
        response_class=StreamingResponse)
    async def chat_stream(request: ChatRequest) -> StreamingResponse:
        """Run one turn and stream it as server-sent events (see the module docstring for the events)."""
        try:
            events = await run_in_threadpool(service.stream_turn, request.user_id, request.session_id, request.message)
        except InvalidArgument as exc:  # the message's own check; the ids raise InvalidIdentifier with its field
            raise ApiError(400, str(exc), field="message") from exc
        pump = _Pump(events, asyncio.get_running_loop())
        first = await pump.next()
        if isinstance(first, BaseException):  # SessionBusy (409) and anything before the first event
            raise first

        async def body() -> AsyncIterator[bytes]:
            item = first
            try:
                while item is not _END:
                    if isinstance(item, BaseException):
                        log.error("chat stream failed: %s: %s", type(item).__name__, redact(item))
                        yield sse("error", {"detail": "internal error (see the server log)"})
                    elif isinstance(item, TurnEvent):
                        yield event_bytes(item)
                    item = await pump.next()
            finally:
                pump.cancel()

        return StreamingResponse(body(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return router
