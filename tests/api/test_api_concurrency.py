"""50 concurrent chats over 10 sessions against ``agentmem-nb serve`` in its own process: every turn answered (no
5xx), every id unique, every thread whole."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from agentmem_nb import MemoryStore

from api_harness import CliServer, start_cli_server

USER = "crowd"
SESSIONS = 10
CHATS = 50


def _stream(http: httpx.Client, body: dict[str, str]) -> tuple[int, dict[str, object]]:
    with http.stream("POST", "/api/chat/stream", json=body) as response:
        if response.status_code != 200:
            response.read()
            return response.status_code, {}
        done = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")][-1]
        return 200, done


@pytest.mark.slow
def test_fifty_concurrent_chats_over_ten_sessions(tmp_path: Path, cli_server_factory: list[CliServer]) -> None:
    root = tmp_path / "memory"
    server = start_cli_server(root)
    cli_server_factory.append(server)
    limits = httpx.Limits(max_connections=CHATS, max_keepalive_connections=CHATS)
    with httpx.Client(base_url=server.url, timeout=120, limits=limits) as http:
        sessions = [http.post("/api/conversations", json={"user_id": USER}).json()["session_id"]
                    for _ in range(SESSIONS)]
        assert len(set(sessions)) == SESSIONS

        def chat(n: int) -> tuple[str, int, dict[str, object]]:
            sid = sessions[n % SESSIONS]
            body = {"user_id": USER, "session_id": sid, "message": f"I prefer tea number {n}"}
            if n % 2:  # half of them streamed: both paths share the session locks
                status, data = _stream(http, body)
                return sid, status, data
            response = http.post("/api/chat", json=body)
            return sid, response.status_code, response.json()

        with ThreadPoolExecutor(CHATS) as pool:
            results = list(pool.map(chat, range(CHATS)))

    assert Counter(status for _, status, _ in results) == Counter({200: CHATS})
    assert all(data["error"] is None for _, _, data in results)
    per_session: dict[str, list[int]] = {}
    for sid, _, data in results:
        per_session.setdefault(sid, []).extend([int(data["user_message_id"]), int(data["assistant_message_id"])])
    for sid, ids in per_session.items():
        assert sorted(ids) == list(range(1, 2 * CHATS // SESSIONS + 1)), sid  # unique, no gap

    store = MemoryStore(root)
    user = store.user(USER)
    for sid in sessions:
        messages = user.session(sid).messages()
        assert [m.message_id for m in messages] == list(range(1, 11))
        assert [m.role for m in messages] == ["user", "assistant"] * 5  # turns of one session never interleave
    day_ids = [m.message_id for day in user.days() for m in user.daily(day).messages()]
    assert len(day_ids) == 2 * CHATS and len(set(day_ids)) == len(day_ids)
    assert len(user.log.entries()) == CHATS and user.problems() == []
