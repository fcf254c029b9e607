"""What every request must pass before a route sees it, and where the server may listen: :class:`Guard`,
:func:`check_bind`.

Safe by default, as the issue asks:

* **Loopback only, unless there is a token.** :func:`check_bind` refuses a non-loopback address without a token
  (the CLI and the notebook helper call it before binding). Without a token the server also refuses a request whose
  ``Host`` is not a loopback name: a web page the user visits cannot rebind its own domain to 127.0.0.1 and read the
  memory through the user's browser (DNS rebinding).
* **A token, when given, guards everything but health.** Every ``/api/…`` route except ``/api/health``, and the
  OpenAPI document, need ``Authorization: Bearer <token>``; the token is compared in constant time and never echoed.
  The chat page's files (``/``, ``/static/…``) hold no data and load without it; the page sends the token it is given
  (``/#token=…``, a fragment no browser sends to the server) with every call.
* **Bounded bodies.** A declared ``Content-Length`` over the limit is refused at once (413) and a chunked body is
  counted as it arrives, so no request makes the server hold more than ``max_body_bytes``.
* **No sniffing, no framing.** Every response says ``nosniff`` and forbids framing; the page's scripts and styles
  load only from this server (a content security policy).

CORS stays off unless origins are given (``create_app(cors_origins=…)``, ``serve --cors-origin``).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

from agentmem_nb.api.responses import json_bytes
from agentmem_nb.errors import ConfigError

__all__ = ["Guard", "check_bind", "is_loopback", "DEFAULT_MAX_BODY_BYTES", "OPEN_PATHS"]

DEFAULT_MAX_BODY_BYTES = 1 << 20
"""The largest request body accepted by default (1 MiB: a chat message is capped at 100,000 characters)."""

OPEN_PATHS = frozenset({"/api/health"})
"""API paths that need no token."""

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})
_SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
     b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and ``localhost``: addresses only this machine can reach."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen on ``host`` when anyone but this machine could reach it and there is no token.

    Raises:
        ConfigError: ``host`` is not a loopback address and ``token`` is empty (the message says what to do).
    """
    if not is_loopback(host) and not (token or "").strip():
        raise ConfigError(
            f"refusing to listen on {host!r} with no token, since anyone who can reach this machine could then read "
            "and write every user's memory. Give --token (or set AGENTMEM_API_TOKEN), or listen on 127.0.0.1")


def _host_of(scope: Scope) -> str:
    for key, value in scope.get("headers", ()):
        if key == b"host":
            text: str = bytes(value).decode("latin-1")
            if text.startswith("["):  # [::1]:8000
                return text[1:text.find("]")] if "]" in text else text
            return text.rsplit(":", 1)[0] if text.count(":") == 1 else text
    return ""


class Guard:
    """ASGI middleware applying the rules of the module docstring to every HTTP request.

    Args:
        app: the application behind it.
        token: the bearer token the API needs (``None``: no token, and loopback ``Host`` names only).
        max_body_bytes: the largest request body accepted.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        # stripped as the header value is (a token read from a file or a variable often ends with a newline)
        self._token = token.strip().encode("utf-8") if token and token.strip() else None
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None:
            await _send_json(send_with_headers, *refusal)
            return
        limit = self.max_body_bytes
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # An HTTPException, so that FastAPI's body reader passes it on (it turns other errors into 400).
                    raise HTTPException(413, f"the request body is over {limit} bytes: send less (the limit is the "
                                             "server's --max-body)")
            return message

        await self.app(scope, counted_receive, send_with_headers)

    def _refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        headers = dict(scope.get("headers", ()))
        if self._token is None and not is_loopback(_host_of(scope)):
            return 400, ("this server answers only requests addressed to this machine (Host: 127.0.0.1 or localhost); "
                         "start it with a token to serve other names"), []
        path: str = scope.get("path", "")
        # A CORS preflight (OPTIONS) never carries credentials, by the standard: it is answered without the token and
        # reads nothing (the CORS middleware answers it, or the route refuses the method).
        guarded = (path.startswith("/api/") or path == "/openapi.json") and path not in OPEN_PATHS
        if self._token is not None and guarded and scope.get("method") != "OPTIONS":
            given = headers.get(b"authorization", b"")
            scheme, _, value = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self._token):
                return 401, ("this server needs its bearer token. Send it in the Authorization header as 'Bearer' "
                             "and the token (the chat page takes it from the address: /#token=...)"), \
                    [(b"www-authenticate", b"Bearer")]
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return 400, "the Content-Length header is not a whole number", []
            if declared > self.max_body_bytes:
                return 413, (f"the request body is {declared} bytes, over the limit of {self.max_body_bytes}: send "
                             "less (the limit is the server's --max-body)"), []
        return None


async def _send_json(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json_bytes({"detail": detail, "field": None})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})
