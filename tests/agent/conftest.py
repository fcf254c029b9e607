"""Fixtures for the agent tests: a hermetic environment, services on the offline model, and a loopback fake
OpenAI server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.testing import fake_openai as agent_fake_server

_ENV = ("AGENTMEM_API_KEY", "AGENTMEM_MODEL", "AGENTMEM_BASE_URL", "AGENTMEM_LLM_TIMEOUT", "AGENTMEM_LLM_MAX_RETRIES",
        "AGENTMEM_TURN_TIMEOUT",
        "AGENTMEM_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may pick up a real key from the machine and reach the network."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def svc(store: MemoryStore) -> ChatService:
    """A service on the offline model."""
    return ChatService(store, model=OfflineChatModel())


@pytest.fixture
def fake_openai() -> Iterator[agent_fake_server.FakeOpenAI]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (random port), stopped after the test."""
    server = agent_fake_server.FakeOpenAI()
    httpd = agent_fake_server.start(server)
    try:
        yield server
    finally:
        server.stop.set()  # wake any stalled handler
        httpd.shutdown()
        httpd.server_close()

