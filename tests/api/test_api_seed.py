"""The original demo's real memory folder (``../shared/data/seed-demo-memory``), served as it is."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.api import serve_in_background


USER = "demo-user"
SEED_DEMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "seed-demo-memory" / USER


def _digests(root: Path) -> dict[str, str]:
    """Every entry under ``root``: a file's digest, "dir" for a folder."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(root.rglob("*"))}


@pytest.fixture
def seed_client(seed_root: Path) -> httpx.Client:
    store = MemoryStore(seed_root)
    with serve_in_background(ChatService(store, model=OfflineChatModel())) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        yield http


def test_the_seed_conversations_are_listed_as_the_original_lists_them(seed_client: httpx.Client,
                                                                    seed_root: Path) -> None:
    written = json.loads((seed_root / USER / "conversations.json").read_text(encoding="utf-8"))
    items = seed_client.get("/api/conversations", params={"user_id": USER}).json()["items"]
    expected = sorted(written, key=lambda sid: written[sid]["updated_at"], reverse=True)  # the original's order
    assert [i["session_id"] for i in items] == expected
    assert {i["session_id"]: i["title"] for i in items} == {sid: v["title"] for sid, v in written.items()}
    assert all(i["updated_at"].startswith(written[i["session_id"]]["updated_at"]) for i in items)


def test_every_seed_thread_is_served_line_for_line_with_its_tool_calls(seed_client: httpx.Client,
                                                                     seed_root: Path) -> None:
    for path in sorted((seed_root / USER / "sessions").glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        items = seed_client.get(f"/api/conversations/{path.stem}/messages", params={"user_id": USER}).json()["items"]
        assert [(i["role"], i["content"], i["message_id"]) for i in items] == \
            [(r["role"], r["content"], r["message_id"]) for r in lines], path.name
        for item, line in zip(items, lines, strict=True):
            assert item["ts"].startswith(line["ts"])
            calls = line.get("meta", {}).get("tool_calls", [])
            # the original stored input as JSON text: it comes back as JSON text with the same content
            assert [(c["name"], json.loads(c["input"]), c["output"]) for c in item["tool_calls"]] == \
                [(c["name"], json.loads(c["input"]), c["output"]) for c in calls]


def test_the_seed_is_searchable_windowed_and_its_memory_readable(seed_client: httpx.Client) -> None:
    found = seed_client.get("/api/search", params={"user_id": USER, "q": "生日"}).json()
    assert found["mode"] == "exact" and found["hits"]
    assert all("生日" in h["message"]["content"] for h in found["hits"])
    anchor = found["hits"][0]["message"]
    window = seed_client.get("/api/window", params={"user_id": USER, "day": anchor["day"],
                                                    "message_id": anchor["message_id"], "before": 1, "after": 1}).json()
    assert anchor["message_id"] in [m["message_id"] for m in window["items"]] and window["reason"] == ""
    memory = seed_client.get("/api/memory", params={"user_id": USER}).json()
    assert "2005年10月5日" in memory["text"]
    problems = seed_client.get("/api/problems", params={"user_id": USER}).json()["items"]
    assert all(not p["path"].startswith("/") for p in problems)  # relative to the memory folder


def test_chatting_on_the_seed_continues_it_without_breaking_what_is_there(seed_client: httpx.Client,
                                                                        seed_root: Path) -> None:
    before = _digests(seed_root / USER / "sessions")
    sid = "13ad7636b4b8"
    reply = seed_client.post("/api/chat", json={"user_id": USER, "session_id": sid, "message": "你还记得我的生日吗？"})
    assert reply.status_code == 200 and "2005年10月5日" in reply.json()["reply"]
    items = seed_client.get(f"/api/conversations/{sid}/messages", params={"user_id": USER}).json()["items"]
    assert [i["message_id"] for i in items] == [1, 2, 3, 4]
    assert seed_client.get("/api/conversations", params={"user_id": USER}).json()["items"][0]["session_id"] == sid
    after = _digests(seed_root / USER / "sessions")
    assert {k: v for k, v in after.items() if k != f"{sid}.jsonl"} == \
        {k: v for k, v in before.items() if k != f"{sid}.jsonl"}  # the other threads are untouched, byte for byte


def test_reading_the_shared_seed_folder_in_place_changes_nothing_in_it() -> None:
    if not SEED_DEMO.is_dir():
        pytest.skip(f"seed data not found at {SEED_DEMO}")
    root = SEED_DEMO.parent
    before = _digests(root)
    store = MemoryStore(root)
    with serve_in_background(ChatService(store, model=OfflineChatModel())) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        listed = http.get("/api/conversations", params={"user_id": USER}).json()["items"]
        for item in listed:
            assert http.get(f"/api/conversations/{item['session_id']}/messages",
                            params={"user_id": USER}).status_code == 200
        assert len(listed) == 8
    assert _digests(root) == before  # no file changed, none was added (no index, no lock file, no cache)
