"""The read endpoints beyond the original: search (exact and ranked, explained), windows, long-term memory and its
history, problems."""

from __future__ import annotations

import httpx
import pytest

from agentmem_nb import MemoryStore

USER = "alice"


def _chat(client: httpx.Client, text: str, session: str = "s1") -> dict[str, object]:
    response = client.post("/api/chat", json={"user_id": USER, "session_id": session, "message": text})
    assert response.status_code == 200
    return dict(response.json())


def test_search_is_exact_for_a_keyword_and_ranked_and_explained_for_words(client: httpx.Client) -> None:
    _chat(client, "My sister moved to Lyon for a new job")
    _chat(client, "I bought a green bicycle yesterday")
    exact = client.get("/api/search", params={"user_id": USER, "q": "LYON", "session_id": "s1"}).json()
    assert exact["mode"] == "exact" and exact["scope"] == "session:s1"
    assert [h["message"]["content"] for h in exact["hits"]] == ["My sister moved to Lyon for a new job"]
    ranked = client.get("/api/search", params={"user_id": USER, "q": "which city did my sister move to"}).json()
    assert ranked["mode"] == "ranked" and ranked["hits"]
    best = ranked["hits"][0]
    assert "Lyon" in best["message"]["content"] and best["layer"] == "daily"
    assert best["explain"].startswith("score ") and {t["term"] for t in best["terms"]} & {"sister", "move", "moved"}
    assert abs(best["score"] - sum(s["value"] for s in best["signals"])) < 1e-9
    assert all(m["message"]["message_id"] for m in ranked["messages"])


def test_a_window_needs_one_layer_and_explains_an_unknown_anchor(client: httpx.Client) -> None:
    _chat(client, "My sister moved to Lyon")
    for params in ({}, {"session_id": "s1", "day": "2026-04-08"}):
        refused = client.get("/api/window", params={"user_id": USER, "message_id": 1, **params})
        assert refused.status_code == 400 and refused.json()["field"] == "session_id"
    found = client.get("/api/window", params={"user_id": USER, "session_id": "s1", "message_id": 2, "before": 1})
    assert [m["message_id"] for m in found.json()["items"]] == [1, 2]
    missing = client.get("/api/window", params={"user_id": USER, "session_id": "s1", "message_id": 99}).json()
    assert missing["items"] == [] and missing["reason"]
    bad_day = client.get("/api/window", params={"user_id": USER, "day": "08/04/2026", "message_id": 1})
    assert bad_day.status_code == 400 and bad_day.json()["field"] == "day"


def test_long_term_memory_and_its_history(client: httpx.Client) -> None:
    assert client.get("/api/memory", params={"user_id": USER}).json() == {"version": 0, "text": ""}
    _chat(client, "I prefer green tea")
    _chat(client, "I prefer window seats")
    memory = client.get("/api/memory", params={"user_id": USER}).json()
    assert memory["version"] == 2 and "green tea" in memory["text"] and "window seats" in memory["text"]
    history = client.get("/api/memory/history", params={"user_id": USER, "limit": 1}).json()
    assert history["total"] == 2 and [v["version"] for v in history["items"]] == [2]
    assert "window seats" not in history["items"][0]["before"] and "window seats" in history["items"][0]["after"]
    assert history["items"][0]["source"].startswith("remember_note")


# The server reads a damaged file: the store's MemoryDataWarning goes to the server's log (the suite turns warnings
# into errors, which in a server thread would make the read fail).
@pytest.mark.filterwarnings("default::agentmem_nb.errors.MemoryDataWarning")
def test_problems_name_the_file_relative_to_the_memory_folder(client: httpx.Client, store: MemoryStore) -> None:
    _chat(client, "hello")
    path = store.user(USER).session("s1").path
    with path.open("ab") as f:
        f.write(b"{not json\n")
    problems = client.get("/api/problems", params={"user_id": USER}).json()["items"]
    assert {(p["path"], p["kind"]) for p in problems} >= {(f"{USER}/sessions/s1.jsonl", "malformed_json")}
    assert all(str(store.root) not in p["path"] + p["detail"] for p in problems)


def test_search_and_window_hide_a_redacted_message(client: httpx.Client, store: MemoryStore) -> None:
    from agentmem_nb.items import ItemKey
    _chat(client, "My sister moved to Lyon for a new job")
    mem = store.user(USER)
    first = mem.session("s1").get(1)
    assert first is not None and first.content.startswith("My sister")
    mem.redactions.add(ItemKey("session", "s1", 1), reason="private")
    mem.redactions.add(ItemKey("daily", first.day or "", 1), reason="private")
    for params in ({"q": "Lyon", "session_id": "s1"}, {"q": "Lyon"}, {"q": "which city did my sister move to"}):
        found = client.get("/api/search", params={"user_id": USER, **params}).json()
        assert not any("moved to Lyon" in m["message"]["content"] for m in found["messages"]), (params, found)
    for params in ({"session_id": "s1"}, {"day": first.day}):
        items = client.get("/api/window", params={"user_id": USER, "message_id": 1, **params}).json()["items"]
        assert items[0]["content"] == "[redacted: private]" and items[0]["message_id"] == 1


def test_a_thread_shows_a_redacted_message_as_its_reason(client: httpx.Client, store: MemoryStore) -> None:
    from agentmem_nb.api.thread_cache import MIN_MESSAGES
    from agentmem_nb.items import ItemKey
    mem = store.user(USER)
    mem.conversations.create("long", title="long")
    for i in range(MIN_MESSAGES + 10):  # long enough for its body to be cached
        mem.append("long", "user" if i % 2 == 0 else "assistant", f"message {i}")
    url = "/api/conversations/long/messages"
    assert client.get(url, params={"user_id": USER}).json()["items"][3]["content"] == "message 3"  # now cached
    mem.redactions.add(ItemKey("session", "long", 4), reason="private")
    items = client.get(url, params={"user_id": USER}).json()["items"]
    assert items[3]["content"] == "[redacted: private]" and items[3]["message_id"] == 4
    assert items[4]["content"] == "message 4"
