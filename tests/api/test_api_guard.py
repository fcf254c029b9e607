"""Safe by default: loopback binds only without a token, the token on every endpoint but health, loopback Host
names only without a token, bounded request bodies, CORS off unless asked for, no secret in any response."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentmem_nb import ConfigError, MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.api import check_bind, serve_in_background
from agentmem_nb.testing import fake_openai

from api_harness import REPO, CliServer, start_cli_server

TOKEN = "tok-3f9a1c7e5b2d4680aa"
USER = "alice"


def _every_operation(client: httpx.Client, sid: str, headers: dict[str, str]) -> list[httpx.Response]:
    """One call of every endpoint of the API (and the page)."""
    user = {"user_id": USER}
    calls = [
        client.post("/api/conversations", json=user, headers=headers),
        client.get("/api/conversations", params=user, headers=headers),
        client.get(f"/api/conversations/{sid}/messages", params=user, headers=headers),
        client.post("/api/chat", json={**user, "session_id": sid, "message": "I prefer tea"}, headers=headers),
        client.post("/api/chat/stream", json={**user, "session_id": sid, "message": "What do I prefer?"},
                    headers=headers),
        client.get("/api/search", params={**user, "q": "tea"}, headers=headers),
        client.get("/api/window", params={**user, "session_id": sid, "message_id": 1}, headers=headers),
        client.get("/api/memory", params=user, headers=headers),
        client.get("/api/memory/history", params=user, headers=headers),
        client.get("/api/facts", params=user, headers=headers),
        client.get("/api/problems", params=user, headers=headers),
        client.get("/openapi.json", headers=headers),
    ]
    return calls


@pytest.fixture
def token_client(svc: ChatService) -> Iterator[httpx.Client]:
    with serve_in_background(svc, token=TOKEN) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        yield http


def test_with_a_token_every_endpoint_but_health_needs_it(token_client: httpx.Client) -> None:
    assert token_client.get("/api/health").json()["auth"] is True
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}):
        refused = _every_operation(token_client, "s1", headers)
        assert [r.status_code for r in refused] == [401] * len(refused), headers
        assert all(r.headers["www-authenticate"] == "Bearer" for r in refused)
    allowed = _every_operation(token_client, "s1", {"Authorization": f"Bearer {TOKEN}"})
    assert [r.status_code for r in allowed] == [200] * len(allowed), [r.text for r in allowed if r.status_code != 200]
    for response in [*refused, *allowed]:
        assert TOKEN not in response.text and all(TOKEN not in v for v in response.headers.values())


def test_the_openapi_document_says_which_operations_need_the_token(token_client: httpx.Client) -> None:
    schema = token_client.get("/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert schema["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            assert ("security" in operation) == (path != "/api/health"), path


def test_the_page_loads_without_the_token_and_holds_no_data(token_client: httpx.Client) -> None:
    page = token_client.get("/")
    assert page.status_code == 200 and "conversationList" in page.text
    assert token_client.get("/static/app.js").status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_a_non_loopback_bind_needs_a_token(host: str) -> None:
    with pytest.raises(ConfigError, match="--token"):
        check_bind(host, None)
    with pytest.raises(ConfigError):
        check_bind(host, "   ")
    check_bind(host, TOKEN)  # allowed with one


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_binds_need_no_token(host: str) -> None:
    check_bind(host, None)


def test_the_cli_refuses_a_public_bind_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "agentmem_nb.cli", "--root", str(tmp_path), "serve", "--host",
                           "0.0.0.0", "--port", "0"], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and "--token" in done.stderr and done.stdout == ""


def test_without_a_token_only_loopback_host_names_are_answered(client: httpx.Client) -> None:
    assert client.get("/api/health", headers={"Host": "localhost:8000"}).status_code == 200
    rebound = client.get("/api/conversations", params={"user_id": USER}, headers={"Host": "attacker.example"})
    assert rebound.status_code == 400 and "Host" in rebound.json()["detail"]


def test_a_body_over_the_limit_is_refused_declared_or_chunked(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel())
    with serve_in_background(svc, max_body_bytes=4096) as server, httpx.Client(base_url=server.url) as http:
        big = {"user_id": USER, "session_id": "s1", "message": "x" * 5000}
        declared = http.post("/api/chat", json=big)
        assert declared.status_code == 413 and "4096" in declared.json()["detail"]

        def chunks() -> Iterator[bytes]:
            yield b'{"user_id": "alice", "session_id": "s1", "message": "'
            for _ in range(10):
                yield b"y" * 1000
            yield b'"}'

        chunked = http.post("/api/chat", content=chunks(), headers={"content-type": "application/json"})
        assert chunked.status_code == 413
        assert http.post("/api/chat", json={**big, "message": "small"}).status_code == 200
    assert [m.content for m in store.user(USER).session("s1").messages()][0] == "small"  # nothing of the big ones


def test_cors_is_off_unless_origins_are_given(svc: ChatService, client: httpx.Client) -> None:
    origin = {"Origin": "http://127.0.0.1:9999"}
    assert "access-control-allow-origin" not in client.get("/api/health", headers=origin).headers
    with serve_in_background(svc, cors_origins=["http://127.0.0.1:9999"]) as server, \
            httpx.Client(base_url=server.url) as http:
        assert http.get("/api/health", headers=origin).headers["access-control-allow-origin"] == origin["Origin"]


def test_a_cors_preflight_passes_without_the_token_and_the_call_still_needs_it(svc: ChatService) -> None:
    origin = "http://127.0.0.1:9999"
    with serve_in_background(svc, token=TOKEN, cors_origins=[origin]) as server, \
            httpx.Client(base_url=server.url) as http:
        preflight = http.options("/api/chat", headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                                       "Access-Control-Request-Headers": "authorization,content-type"})
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == origin
        body = {"user_id": USER, "session_id": "s1", "message": "hi"}
        assert http.post("/api/chat", json=body, headers={"Origin": origin}).status_code == 401
        allowed = http.post("/api/chat", json=body, headers={"Origin": origin, "Authorization": f"Bearer {TOKEN}"})
        assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == origin


def test_security_headers_on_every_response(client: httpx.Client) -> None:
    for response in (client.get("/"), client.get("/api/health"), client.get("/api/conversations")):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "script-src 'self'" in response.headers["content-security-policy"]


def test_no_secret_reaches_any_response(tmp_path: Path, fake_llm: fake_openai.FakeOpenAI) -> None:
    key = "acme-key-51e0c9d2b8a74f36"
    for _ in range(4):  # the server echoes the Authorization header in its error, as some proxies do
        fake_llm.overrides.append(fake_openai.Fault(500, f"upstream refused key {key}", echo_authorization=True))
    config = fake_openai.real_config(fake_llm)
    config = type(config)(api_key=key, model=config.model, base_url=config.base_url, timeout=config.timeout,
                          max_retries=0, turn_timeout=config.turn_timeout)
    store = MemoryStore(tmp_path / "memory")
    svc = ChatService(store, config=config)
    with serve_in_background(svc, token=TOKEN) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        responses = _every_operation(http, "s1", {})
        responses.append(http.get("/api/health"))
        assert responses[3].json()["error"]  # the turn failed, and said so
        assert "<redacted>" in responses[3].json()["reply"]
    for response in responses:
        assert key not in response.text and TOKEN not in response.text, response.url


def test_the_cli_server_needs_its_token(tmp_path: Path, cli_server_factory: list[CliServer]) -> None:
    server = start_cli_server(tmp_path / "memory", env={"AGENTMEM_API_TOKEN": TOKEN})
    cli_server_factory.append(server)
    assert TOKEN not in server.banner and "token required" in server.banner
    with httpx.Client(base_url=server.url) as http:
        assert http.get("/api/conversations", params={"user_id": USER}).status_code == 401
        ok = http.get("/api/conversations", params={"user_id": USER}, headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200
    assert server.stop() == 130  # Ctrl-C: a clean stop, the CLI's status for an interrupt


def test_a_token_read_with_its_newline_still_matches(svc: ChatService) -> None:
    # a token from a file or `$(cat token)` often keeps its newline; the header value is stripped, so is the token
    with serve_in_background(svc, token=TOKEN + "\n") as server, httpx.Client(base_url=server.url, timeout=60) as http:
        assert http.get("/api/conversations", params={"user_id": "alice"},
                        headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert http.get("/api/conversations", params={"user_id": "alice"}).status_code == 401
