"""Choosing the chat model: :func:`make_chat_model` and :func:`model_name_of`."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from langchain_core.language_models import BaseChatModel

from agentmem_nb.agent.config import LLMConfig
from agentmem_nb.agent.offline import OfflineChatModel

__all__ = ["make_chat_model", "model_name_of"]


def make_chat_model(config: LLMConfig) -> BaseChatModel:
    """``ChatOpenAI`` for a configured key (any OpenAI-compatible server), else the offline model.

    Chat Completions is forced (``use_responses_api=False``): OpenAI-compatible servers speak
    ``/v1/chat/completions``, and langchain-openai may otherwise switch to ``/v1/responses``.

    >>> make_chat_model(LLMConfig()).model_name
    'offline'
    """
    if config.offline:
        return OfflineChatModel()
    from langchain_openai import ChatOpenAI  # imported only when a key is configured (it is slow to import)
    from pydantic import SecretStr

    options: dict[str, Any] = {
        "model": config.model,
        "api_key": SecretStr(config.api_key),
        "use_responses_api": False,
        "timeout": config.timeout,
        "max_retries": config.max_retries,
    }
    if config.base_url:
        base_url, credentials = _split_userinfo(config.base_url)
        options["base_url"] = base_url
        if credentials is not None:
            # ``http://user:password@proxy/v1``: the same Basic credentials the HTTP client would take from the URL,
            # given as its auth instead, so that the URL it logs ("HTTP Request: POST ...") and the model's repr
            # carry no password.
            # (a (user, password) tuple, not an httpx.BasicAuth: the openai client may be built on an httpx fork)
            from openai import DefaultAsyncHttpxClient, DefaultHttpxClient

            options["http_client"] = DefaultHttpxClient(auth=credentials)
            options["http_async_client"] = DefaultAsyncHttpxClient(auth=credentials)
    return ChatOpenAI(**options)


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
