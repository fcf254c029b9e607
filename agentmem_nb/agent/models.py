"""Choosing the chat model: :func:`make_chat_model` and :func:`model_name_of`; what the model server did wrong:
:class:`ModelResponseError`.

A configured key gives LangChain's ``ChatOpenAI``, checked at the boundary where the server's answer becomes a
message (a subclass made on first use, so that importing this module stays cheap):

- a stream that ends without a ``finish_reason`` (the connection was cut, or every chunk had ``choices: []``) is
  not an answer: :class:`ModelResponseError` with the text received so far in ``partial``;
- a JSON answer whose ``choices`` list is empty raises the same, in one line (the client's own ``IndexError``
  names nothing);
- a tool call whose arguments are valid JSON but not an object (``["sister"]``) becomes an *invalid* tool call
  with a one-line error, as a streamed one already does, instead of a pydantic validation dump that fails the turn.

Its HTTP transport also enforces the whole-turn deadline (:func:`model_deadline`): the client's ``timeout`` bounds
each *read*, so a server that sends a keep-alive byte every few seconds would hold a request forever; the transport
checks the deadline at every piece of the body that arrives and caps each read at the time left.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from langchain_core.language_models import BaseChatModel

from agentmem_nb.agent.config import LLMConfig
from agentmem_nb.agent.offline import OfflineChatModel
from agentmem_nb.errors import AgentMemError

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI  # imported when a key is configured (see _checked_chat_openai)

__all__ = ["make_chat_model", "model_name_of", "ModelResponseError", "arguments_shape_error", "model_deadline"]

_DEADLINE: ContextVar[float | None] = ContextVar("agentmem_model_deadline", default=None)


@contextlib.contextmanager
def model_deadline(at: float | None) -> Iterator[None]:
    """Model calls made inside this block must be over by ``at`` (a ``time.monotonic()`` value; ``None``: no limit).

    A context variable, so it follows the call into the thread and task that runs it and into no other turn.
    """
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class ModelResponseError(AgentMemError):
    """The model server answered, but not with a finished answer (a cut stream, no choices).

    ``partial`` holds the text received before the answer stopped (empty if none): it is not an answer, only a
    trace for the dialogue log.
    """

    def __init__(self, message: str, *, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial


def arguments_shape_error(name: str, raw: str) -> str | None:
    """The one-line complaint for tool arguments that are valid JSON but not an object, else ``None``.

    >>> print(arguments_shape_error("search_session", '["sister"]'))
    the arguments of search_session must be a JSON object of named values ({"name": value, ...}), not a JSON array: ["sister"]
    """
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return None
    if isinstance(value, dict):
        return None
    kind = {list: "a JSON array", str: "a JSON string", bool: "a JSON boolean", type(None): "JSON null"}.get(
        type(value), "a JSON number")
    shown = raw if len(raw) <= 60 else raw[:50] + f"... ({len(raw)} characters)"
    return (f'the arguments of {name} must be a JSON object of named values ({{"name": value, ...}}), '
            f'not {kind}: {shown}')


def make_chat_model(config: LLMConfig) -> BaseChatModel:
    """``ChatOpenAI`` for a configured key (any OpenAI-compatible server), else the offline model.

    Chat Completions is forced (``use_responses_api=False``): OpenAI-compatible servers speak
    ``/v1/chat/completions``, and langchain-openai may otherwise switch to ``/v1/responses``. The client is a
    subclass of ``ChatOpenAI`` that checks each answer (see the module docstring).

    >>> make_chat_model(LLMConfig()).model_name
    'offline'
    """
    if config.offline:
        return OfflineChatModel()
    from pydantic import SecretStr

    options: dict[str, Any] = {
        "model": config.model,
        "api_key": SecretStr(config.api_key),
        "use_responses_api": False,
        "timeout": config.timeout,
        "max_retries": config.max_retries,
    }
    credentials = None
    if config.base_url:
        options["base_url"], credentials = _split_userinfo(config.base_url)
        if credentials is not None:
            # ``http://user:password@proxy/v1``: the same Basic credentials the HTTP client would take from the URL,
            # given as its auth instead, so that the URL it logs ("HTTP Request: POST ...") and the model's repr
            # carry no password. (A (user, password) tuple, not an httpx.BasicAuth: the openai client may be built
            # on an httpx fork.)
            from openai import DefaultAsyncHttpxClient

            options["http_async_client"] = DefaultAsyncHttpxClient(auth=credentials)
    checked, http_client = _checked_chat_openai()
    return checked(http_client=http_client(credentials), **options)


@functools.cache
def _checked_chat_openai() -> tuple[type[ChatOpenAI], Callable[[tuple[str, str] | None], Any]]:
    """The checking ``ChatOpenAI`` subclass and a factory of HTTP clients that keep the turn's deadline."""
    import openai
    from langchain_core.messages import AIMessage
    from langchain_openai import ChatOpenAI  # imported only when a key is configured (it is slow to import)

    # The HTTP library the openai client is built on (``httpx``, or its fork ``httpx2`` in openai >= 3).
    client_class = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    httpx: Any = sys.modules[client_class.__module__.partition(".")[0]]

    def cut_short(exc: BaseException) -> str | None:
        """What the HTTP library said if ``exc`` comes from a body cut short ("peer closed connection without
        sending complete message body (received 180 bytes, expected 286)"), else ``None``."""
        seen: BaseException | None = exc
        while seen is not None:
            if isinstance(seen, httpx.RemoteProtocolError):
                detail = str(seen)
                return detail.rpartition("complete message body")[2].strip(" ()") or detail
            seen = seen.__cause__ or seen.__context__
        return None

    def timed_out(request: Any) -> Exception:
        error: Exception = httpx.ReadTimeout("the turn's deadline passed while the model server was still answering",
                                             request=request)
        return error

    class DeadlineStream(httpx.SyncByteStream):  # type: ignore[misc]  # the base is chosen at run time (Any)
        def __init__(self, inner: Any, at: float, request: Any) -> None:
            self._inner, self._at, self._request = inner, at, request

        def __iter__(self) -> Iterator[bytes]:
            for piece in self._inner:  # keep-alive bytes arrive here too, so a dripping server meets the deadline
                if time.monotonic() > self._at:
                    raise timed_out(self._request)
                yield piece

        def close(self) -> None:
            self._inner.close()

    class DeadlineTransport(httpx.BaseTransport):  # type: ignore[misc]  # the base is chosen at run time (Any)
        def __init__(self) -> None:
            self._inner = httpx.HTTPTransport()

        def handle_request(self, request: Any) -> Any:
            at = _DEADLINE.get()
            if at is None:
                return self._inner.handle_request(request)
            left = at - time.monotonic()
            if left <= 0:
                raise timed_out(request)
            limits = dict(request.extensions.get("timeout") or {})
            request.extensions["timeout"] = {key: left if limits.get(key) is None else min(limits[key], left)
                                             for key in ("connect", "read", "write", "pool")}
            response = self._inner.handle_request(request)
            if isinstance(response.stream, httpx.SyncByteStream):  # always, from the sync transport
                response.stream = DeadlineStream(response.stream, at, request)
            return response

        def close(self) -> None:
            self._inner.close()

    class CheckedChatOpenAI(ChatOpenAI):
        """``ChatOpenAI`` that refuses unfinished answers and reports non-object tool arguments in one line."""

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super()._generate(*args, **kwargs)
            except openai.APIConnectionError as exc:
                cut = cut_short(exc)
                if cut is None:
                    raise
                raise ModelResponseError("The model's answer did not finish: the server closed the connection "
                                         f"before the whole answer arrived ({cut}); nothing was saved as a reply, "
                                         "try again.") from exc

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            finished = False
            received: list[str] = []
            try:
                for chunk in super()._stream(*args, **kwargs):
                    finished = finished or bool((chunk.generation_info or {}).get("finish_reason"))
                    received.append(chunk.text)
                    yield chunk
            except (openai.APIConnectionError, httpx.RemoteProtocolError) as exc:
                if cut_short(exc) is None:
                    raise
            if not finished:
                partial = "".join(received)
                got = f"after {len(partial)} characters" if partial else "before any text"
                raise ModelResponseError(
                    f"The model's answer did not finish: the server ended the stream {got} without a finish_reason "
                    "(the connection was cut, or its chunks had empty `choices`); nothing was saved as a reply, "
                    "try again.", partial=partial)

        def _create_chat_result(self, response: Any, generation_info: dict[str, Any] | None = None) -> Any:
            data = response if isinstance(response, dict) else (
                response.model_dump(warnings=False) if hasattr(response, "model_dump") else None)
            if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                return super()._create_chat_result(response, generation_info)  # its own errors say enough
            if not data["choices"] and not data.get("error"):
                raise ModelResponseError("The model server answered without any choice (an empty `choices` list), "
                                         "so there is no answer; try again, or check the server's logs.")
            data, shapes = _set_aside_non_object_arguments(data)
            if not shapes:
                return super()._create_chat_result(response, generation_info)
            result = super()._create_chat_result(data, generation_info)
            for index, generation in enumerate(result.generations):
                message = generation.message
                if not isinstance(message, AIMessage):  # always one here; only an AIMessage carries tool calls
                    continue
                for call_id, name, raw, error in shapes.get(index, ()):
                    position = next((i for i, c in enumerate(message.tool_calls)
                                     if c.get("id") == call_id and c.get("name") == name and c.get("args") == {}), None)
                    if position is not None:
                        del message.tool_calls[position]
                    message.invalid_tool_calls.append(
                        {"type": "invalid_tool_call", "name": name, "args": raw, "id": call_id, "error": error})
            return result

    return CheckedChatOpenAI, lambda auth: openai.DefaultHttpxClient(transport=DeadlineTransport(), auth=auth)


def _set_aside_non_object_arguments(
        data: dict[str, Any]) -> tuple[dict[str, Any], dict[int, list[tuple[str | None, str, str, str]]]]:
    """A copy of ``data`` whose tool calls with non-object JSON arguments carry ``{}`` instead, and those calls.

    The client would otherwise build an ``AIMessage`` whose ``args`` is a list and fail on pydantic validation.
    """
    shapes: dict[int, list[tuple[str | None, str, str, str]]] = {}
    choices = []
    for index, choice in enumerate(data["choices"]):
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(calls, list):
            choices.append(choice)
            continue
        fixed = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            raw = function.get("arguments") if isinstance(function, dict) else None
            if not isinstance(function, dict) or not isinstance(raw, str):
                fixed.append(call)
                continue
            name = str(function.get("name"))
            error = arguments_shape_error(name, raw)
            if error is None:
                fixed.append(call)
                continue
            shapes.setdefault(index, []).append((call.get("id"), name, raw, error))
            fixed.append({**call, "function": {**function, "arguments": "{}"}})
        choices.append({**choice, "message": {**message, "tool_calls": fixed}})
    return ({**data, "choices": choices} if shapes else data), shapes


def _split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its ``user:password@`` and the decoded ``(user, password)``, or ``(url, None)`` when it has
    none (or is no URL at all: the request will fail with an error that :func:`~agentmem_nb.redact.redact` hides)."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return url, None
    if user is None and password is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host)), (unquote(user or ""), unquote(password or ""))


def model_name_of(model: BaseChatModel) -> str:
    """A readable name for logs: the model id a client sends, else the class name."""
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__
