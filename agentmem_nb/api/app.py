"""The app factory: :func:`create_app` builds the FastAPI application over one store and one chat service.

The store and the service are arguments, not globals, so a test, a notebook and the command line each hand in their
own (a notebook hands in the very service its widgets use: the same memory and the same session locks). Layout:

================  ===========================================================================
``schemas``       the JSON shapes (the original's four, then ours) and the conversions into them
``routes``        the original's four endpoints
``reads``         search, windows, long-term memory and history, facts, problems, health
``stream``        the streaming chat endpoint (server-sent events)
``guard``         token, loopback-only ``Host``, body limit, security headers; where a server may listen
``errors``        the package's errors as HTTP statuses (400 / 409 / 422 / 500)
``page``          the chat page (static files)
``thread_cache``  the encoded body of a long thread, kept while its file is unchanged
``server``        running it: in the foreground (the CLI) or in a background thread (a notebook)
================  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from pathlib import Path

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

import agentmem_nb
from agentmem_nb.agent import ChatService
from agentmem_nb.api.errors import install_error_handlers
from agentmem_nb.api.guard import DEFAULT_MAX_BODY_BYTES, OPEN_PATHS, Guard
from agentmem_nb.api.page import install_page
from agentmem_nb.api.reads import FactsProvider, read_routes
from agentmem_nb.api.responses import SafeJSONResponse
from agentmem_nb.api.routes import original_routes
from agentmem_nb.api.stream import stream_routes
from agentmem_nb.api.thread_cache import ThreadCache
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.redact import register_secret
from agentmem_nb.store import MemoryStore

__all__ = ["create_app"]

DESCRIPTION = """The memory agent over HTTP: the original demo's four endpoints with its shapes (`/api/chat`,
`/api/conversations`, `/api/conversations/{session_id}/messages`), a streaming chat (server-sent events), and read
endpoints for search, windows, long-term memory, facts and problems. With a token, every endpoint but `/api/health`
needs `Authorization: Bearer <token>`."""


def _document_bearer(app: FastAPI) -> None:
    """Say in the OpenAPI document that every operation but health needs the bearer token."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            schema.setdefault("components", {})["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
            for path, operations in schema.get("paths", {}).items():
                if path not in OPEN_PATHS:
                    for operation in operations.values():
                        operation["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to amend the schema


def create_app(
    store: MemoryStore,
    service: ChatService,
    *,
    token: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    cors_origins: Sequence[str] = (),
    facts: FactsProvider | None = None,
) -> FastAPI:
    """The HTTP API and chat page over ``store``, chatting through ``service``.

    Args:
        store: the memory read by the endpoints (normally ``service.store``).
        service: runs the turns; shared with whoever else holds it (a notebook's widgets), locks included.
        token: when given, every endpoint but ``/api/health`` needs ``Authorization: Bearer <token>``; without it
            only requests addressed to a loopback name are answered (see :mod:`agentmem_nb.api.guard`).
        max_body_bytes: the largest request body accepted (413 above it).
        cors_origins: origins allowed to call the API from a browser (none by default: CORS off).
        facts: the current facts of a user, for ``/api/facts`` (``None``: the store's own facts layer; a store whose
            users keep none — PostgreSQL, for now — answers ``available: false``).

    >>> # app = create_app(store, ChatService(store)); uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    if not _same_memory(service.store, store):
        raise InvalidArgument(f"create_app(store, service): the service writes to {_where(service.store)} but the "
                              f"endpoints would read {_where(store)}; pass service.store as the store")
    if max_body_bytes < 1024:
        raise InvalidArgument(f"max_body_bytes={max_body_bytes} is too small to carry a chat message: give 1024 or more")
    token = token or None
    if token is not None:
        register_secret(token)  # no error text of this process may show it (see agentmem_nb.redact)
    app = FastAPI(title="agentmem_nb", version=agentmem_nb.__version__, description=DESCRIPTION,
                  default_response_class=SafeJSONResponse, docs_url=None, redoc_url=None)
    install_error_handlers(app)
    app.state.threads = ThreadCache()  # reachable for tests and for whoever embeds the app
    app.include_router(original_routes(store, service, app.state.threads))
    app.include_router(stream_routes(service))
    app.include_router(read_routes(store, service, facts=facts, auth=token is not None,
                                   version=agentmem_nb.__version__))
    install_page(app)
    if token is not None:
        _document_bearer(app)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(Guard, token=token, max_body_bytes=max_body_bytes)  # outermost: runs before anything else
    return app


def _where(store: object) -> str:
    """A store's memory as a person names it: its folder, or the repr of a database store (no credentials)."""
    root = getattr(store, "root", None)
    return repr(str(root)) if root is not None else repr(store)


def _same_memory(a: object, b: object) -> bool:
    """Whether two store objects hold the same memory: the same object, or two file stores on one folder."""
    if a is b:
        return True
    root_a, root_b = getattr(a, "root", None), getattr(b, "root", None)
    return root_a is not None and root_b is not None and Path(root_a).resolve() == Path(root_b).resolve()
