"""`agentmem-nb serve --root postgresql://…`: the original's endpoints over the database backend, password hidden."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from agentmem_nb.store.postgres import upgrade_database

REPO = Path(__file__).resolve().parents[2]


def test_the_cli_serves_a_postgres_store_without_showing_its_password(pg_url: str, tmp_path: Path) -> None:
    upgrade_database(pg_url)
    password = urlsplit(pg_url).password
    assert password
    process = subprocess.Popen(
        [sys.executable, "-m", "agentmem_nb.cli", "--root", pg_url, "serve", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert process.stdout is not None
    banner = process.stdout.readline()  # printed once the socket is bound
    try:
        assert "serving http://" in banner, process.communicate(timeout=30)
        url = banner.split("serving ", 1)[1].split("/ ", 1)[0]
        with httpx.Client(base_url=url, timeout=60) as http:
            for _ in range(600):  # waits on uvicorn's start by polling, not on time
                try:
                    if http.get("/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    assert process.poll() is None
            sid = http.post("/api/conversations", json={"user_id": "alice"}).json()["session_id"]
            reply = http.post("/api/chat", json={"user_id": "alice", "session_id": sid,
                                                 "message": "I moved to Lyon in 2024."})
            assert reply.status_code == 200, reply.text
            items = http.get(f"/api/conversations/{sid}/messages", params={"user_id": "alice"}).json()["items"]
            assert [(i["role"], i["message_id"]) for i in items] == [("user", 1), ("assistant", 2)]
            assert items[0]["content"] == "I moved to Lyon in 2024."
            listed = http.get("/api/conversations", params={"user_id": "alice"}).json()["items"]
            assert [c["session_id"] for c in listed] == [sid]
            found = http.get("/api/search", params={"user_id": "alice", "q": "Lyon"})
            assert found.status_code == 200 and "Lyon" in found.text
            problems = http.get("/api/problems", params={"user_id": "alice"})
            assert problems.status_code == 200 and problems.json()["items"] == []
            bodies = [reply.text, found.text, problems.text, banner]
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert not any(password in text for text in [*bodies, out, err])
