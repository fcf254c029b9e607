"""Running the API: the notebook helper (background thread) and ``agentmem-nb serve`` (subprocess)."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

import agentmem_nb.api
from agentmem_nb import AgentMemError, ConfigError
from agentmem_nb.agent import ChatService
from agentmem_nb.api import serve_in_background

from api_harness import CliServer, start_cli_server


def test_the_api_package_exports_exactly_its_public_names() -> None:
    public = {n for n, v in vars(agentmem_nb.api).items() if not n.startswith("_") and not isinstance(v, type(socket))
              and n != "annotations"}
    assert sorted(agentmem_nb.api.__all__) == sorted(public)


def test_a_background_server_stops_and_frees_its_port(svc: ChatService) -> None:
    server = serve_in_background(svc)
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    assert httpx.get(server.url + "/api/health").json()["offline"] is True
    server.stop()
    assert not server.running
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/api/health")
    with socket.socket() as again:  # the port is free for someone else
        again.bind((host, int(port)))


def test_a_taken_port_is_a_clear_error(svc: ChatService) -> None:
    with serve_in_background(svc) as first:
        port = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(AgentMemError, match=f"127.0.0.1:{port}.*another --port"):
            serve_in_background(svc, port=port)


def test_the_notebook_helper_refuses_a_public_bind_without_a_token(svc: ChatService) -> None:
    with pytest.raises(ConfigError, match="token"):
        serve_in_background(svc, host="0.0.0.0")


def test_the_cli_serves_the_api_and_the_page(tmp_path: Path, cli_server_factory: list[CliServer]) -> None:
    server = start_cli_server(tmp_path / "memory")
    cli_server_factory.append(server)
    assert "offline model" in server.banner and "no token" in server.banner
    with httpx.Client(base_url=server.url, timeout=60) as http:
        sid = http.post("/api/conversations", json={"user_id": "bob"}).json()["session_id"]
        assert http.post("/api/chat", json={"user_id": "bob", "session_id": sid, "message": "hi"}).status_code == 200
        assert "chatForm" in http.get("/").text
    assert (tmp_path / "memory" / "bob" / "sessions" / f"{sid}.jsonl").is_file()
    assert server.stop() == 130


def test_the_cli_refuses_a_store_url_it_has_no_backend_for(tmp_path: Path) -> None:
    import subprocess
    import sys

    from api_harness import REPO

    done = subprocess.run([sys.executable, "-m", "agentmem_nb.cli", "serve", "--root", "mysql://db/memory"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and "give a memory folder or a postgresql:// URL" in done.stderr


def test_the_app_refuses_a_service_writing_elsewhere(svc: ChatService, tmp_path: Path) -> None:
    from agentmem_nb import InvalidArgument, MemoryStore
    from agentmem_nb.api import create_app

    with pytest.raises(InvalidArgument, match="service.store"):
        create_app(MemoryStore(tmp_path / "elsewhere"), svc)


def test_facts_are_served_when_the_server_has_a_facts_layer(svc: ChatService) -> None:
    import datetime as _dt

    def facts(user: object) -> list[dict[str, object]]:
        return [{"key": "user.lives_in", "value": "Lyon", "status": "active",
                 "valid_from": _dt.datetime(2026, 4, 8, tzinfo=_dt.timezone.utc)}]

    with serve_in_background(svc, facts=facts) as server:
        body = httpx.get(server.url + "/api/facts", params={"user_id": "alice"}).json()
    assert body == {"available": True, "items": [{"key": "user.lives_in", "value": "Lyon", "status": "active",
                                                  "valid_from": "2026-04-08T00:00:00+00:00"}]}
    from agentmem_nb.store import FactSource, Statement

    svc.store.user("alice").facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    svc.store.user("alice").facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3))
    with serve_in_background(svc) as server:  # no provider: the store's own facts, current ones only
        items = httpx.get(server.url + "/api/facts", params={"user_id": "alice"}).json()
    assert items["available"] is True
    assert [(i["key"], i["value"], i["status"], i["source"]) for i in items["items"]] == \
        [("user.lives_in", "Lyon", "active", str(FactSource("s1", 3)))]
