"""Fixtures for the API tests: a real uvicorn on 127.0.0.1 (a background thread, or the CLI in a subprocess), an
HTTP client, the original demo's folder, and a hermetic environment (no real key, no network beyond loopback).

Readiness is never a sleep: the thread server is answering when ``serve_in_background`` returns (uvicorn's own
``started``), and the subprocess prints its address once bound; its health endpoint is then polled.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.api import BackgroundServer, serve_in_background
from agentmem_nb.testing import fake_openai

from api_harness import ENV_NAMES, CliServer


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may pick up a real key (or a token) from the machine."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def svc(store: MemoryStore) -> ChatService:
    """A service on the offline model over the test's store."""
    return ChatService(store, model=OfflineChatModel())


@pytest.fixture
def server(svc: ChatService) -> Iterator[BackgroundServer]:
    """The API over ``svc`` in a background thread of this process (the notebook helper)."""
    with serve_in_background(svc) as running:
        yield running


@pytest.fixture
def client(server: BackgroundServer) -> Iterator[httpx.Client]:
    """An HTTP client of ``server``."""
    with httpx.Client(base_url=server.url, timeout=60) as http:
        yield http


@pytest.fixture
def fake_llm() -> Iterator[fake_openai.FakeOpenAI]:
    """A scripted OpenAI-compatible server on 127.0.0.1."""
    fake = fake_openai.FakeOpenAI()
    httpd = fake_openai.start(fake)
    try:
        yield fake
    finally:
        fake.stop.set()
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def cli_server_factory() -> Iterator[list[CliServer]]:
    """Collects the subprocess servers a test starts and stops each of them (by its own pid) afterwards."""
    started: list[CliServer] = []
    yield started
    for each in started:
        each.stop()
