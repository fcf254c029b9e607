"""Fixtures for the API tests: a real uvicorn on 127.0.0.1 (a background thread, or the CLI in a subprocess), an
HTTP client, the original demo's folder, and a hermetic environment (no real key, no network beyond loopback).

Readiness is never a sleep: the thread server is answering when ``serve_in_background`` returns (uvicorn's own
``started``), and the subprocess prints its address once bound; its health endpoint is then polled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.api import BackgroundServer, serve_in_background
from agentmem_nb.testing import fake_openai

REPO = Path(__file__).resolve().parents[2]
_ENV = ("AGENTMEM_API_KEY", "AGENTMEM_MODEL", "AGENTMEM_BASE_URL", "AGENTMEM_LLM_TIMEOUT", "AGENTMEM_LLM_MAX_RETRIES",
        "AGENTMEM_TURN_TIMEOUT", "AGENTMEM_CONFIG", "AGENTMEM_API_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL",
        "OPENAI_MODEL")


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may pick up a real key (or a token) from the machine."""
    for name in _ENV:
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


@dataclass
class CliServer:
    """``agentmem-nb serve`` running in a subprocess."""

    process: subprocess.Popen[str]
    url: str
    banner: str

    def stop(self) -> int:
        """Ctrl-C (SIGINT): uvicorn finishes open requests, then the command exits with 130."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=10)


def start_cli_server(root: Path, *extra: str, env: dict[str, str] | None = None) -> CliServer:
    """Start ``python -m agentmem_nb.cli --root ROOT serve --port 0 …`` and wait until its health answers."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    for name in _ENV:
        if name not in (env or {}):
            environ.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmem_nb.cli", "--root", str(root), "serve", "--port", "0", "--quiet", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ, cwd=str(root.parent))
    assert process.stdout is not None
    banner = process.stdout.readline()  # printed once the socket is bound; empty if the process died
    if "serving http://" not in banner:
        process.kill()
        _, err = process.communicate(timeout=10)
        raise AssertionError(f"serve did not start: {banner!r} {err[-2000:]}")
    url = banner.split("serving ", 1)[1].split("/ ", 1)[0]
    server = CliServer(process, url, banner)
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(600):  # polls health (the socket is bound, so this waits on uvicorn's start, not on time)
            try:
                if http.get("/api/health").status_code == 200:
                    return server
            except httpx.TransportError:
                if process.poll() is not None:
                    break
    server.stop()
    raise AssertionError(f"serve at {url} never answered /api/health")


@pytest.fixture
def cli_server_factory() -> Iterator[list[CliServer]]:
    """Collects the subprocess servers a test starts and stops each of them (by its own pid) afterwards."""
    started: list[CliServer] = []
    yield started
    for each in started:
        each.stop()
