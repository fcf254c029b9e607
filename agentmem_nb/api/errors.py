"""What a refusal looks like over HTTP: the package's errors mapped to status codes, never a 500 for client input.

=======================================  ======  ==============================================================
raised                                    status  body
=======================================  ======  ==============================================================
:class:`~agentmem_nb.errors.InvalidIdentifier`  400  ``detail`` (names the field and the value), ``field``
:class:`~agentmem_nb.errors.InvalidArgument`    400  ``detail``, ``field`` when the route knows which input it was
:class:`~agentmem_nb.errors.SessionBusy`        409  ``detail`` (try again when the running turn ends)
request validation (wrong type, missing key)    422  FastAPI's list of ``{loc, msg, type}``, without the input echoed
:class:`~agentmem_nb.errors.StoreError`, ``OSError``  500  ``detail``: the store could not read or write (server side)
anything else                                  500  ``detail``: "internal error" (the rest goes to the server log)
=======================================  ======  ==============================================================

Every ``detail`` passes :func:`~agentmem_nb.redact.redact` (with the server's token among the secrets), and the
validation errors drop the ``input`` FastAPI would echo: a body that carried a key, by mistake, is not sent back.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from agentmem_nb.api.responses import SafeJSONResponse
from agentmem_nb.api.schemas import ErrorBody
from agentmem_nb.errors import InvalidArgument, InvalidIdentifier, SessionBusy, StoreError
from agentmem_nb.redact import redact

__all__ = ["ApiError", "install_error_handlers", "error_response", "documented"]

log = logging.getLogger("agentmem_nb.api")


class ApiError(Exception):
    """A refusal a route raises itself: ``status``, ``detail`` and the ``field`` to blame (if one is)."""

    def __init__(self, status: int, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.field = field


def error_response(status: int, detail: object, *, field: str | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    """The JSON body of a refusal (:class:`~agentmem_nb.api.schemas.ErrorBody`), its detail redacted."""
    return SafeJSONResponse({"detail": redact(detail), "field": field}, status_code=status, headers=headers)


def _field_of(exc: Exception) -> str | None:
    field = getattr(exc, "field", None)  # InvalidIdentifier.field, or the one a route attached to an InvalidArgument
    return field if isinstance(field, str) else None


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers of the table in the module docstring on ``app``."""

    async def invalid(request: Request, exc: Exception) -> Response:
        return error_response(400, exc, field=_field_of(exc))

    async def busy(request: Request, exc: Exception) -> Response:
        return error_response(409, exc, headers={"Retry-After": "1"})

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.detail, field=exc.field)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return error_response(exc.status_code, exc.detail, headers=getattr(exc, "headers", None))

    async def validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors: list[dict[str, Any]] = [
            {"loc": list(e.get("loc", ())), "msg": redact(e.get("msg", "")), "type": str(e.get("type", ""))}
            for e in exc.errors()
        ]
        return SafeJSONResponse({"detail": errors}, status_code=422)

    async def store_failed(request: Request, exc: Exception) -> Response:
        log.error("store error on %s: %s", request.url.path, redact(exc))
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return error_response(500, f"the memory store could not do this: {reason}")

    async def internal(request: Request, exc: Exception) -> Response:
        # The catch-all of the server: the client gets no traceback and no text of ours; the log gets it, redacted.
        log.error("internal error on %s: %s: %s", request.url.path, type(exc).__name__, redact(exc))
        return error_response(500, "internal error (see the server log)")

    app.add_exception_handler(InvalidIdentifier, invalid)
    app.add_exception_handler(InvalidArgument, invalid)
    app.add_exception_handler(SessionBusy, busy)
    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation)
    app.add_exception_handler(StoreError, store_failed)
    app.add_exception_handler(OSError, store_failed)
    app.add_exception_handler(Exception, internal)


_DESCRIPTIONS = {
    400: "an invalid id or argument: `detail` says which and why, `field` names it",
    401: "the bearer token is missing or wrong (only when the server was given one)",
    409: "another turn of this conversation is running: try again when it ends",
    413: "the request body is larger than the server accepts",
}


def documented(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The refusals a route can give, for its OpenAPI entry (``responses=``)."""
    return {code: {"model": ErrorBody, "description": _DESCRIPTIONS[code]} for code in codes}
