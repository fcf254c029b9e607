"""The original demo's four endpoints against a real server: shapes, order, the untitled title, empty lists for
unknown conversations, and 400 naming the field for every bad id."""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService

USER = "alice"


def _new(client: httpx.Client, user: str = USER) -> str:
    response = client.post("/api/conversations", json={"user_id": user})
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"session_id"}
    return str(response.json()["session_id"])


def test_a_new_conversation_is_listed_at_once_as_untitled(client: httpx.Client) -> None:
    sid = _new(client)
    items = client.get("/api/conversations", params={"user_id": USER}).json()["items"]
    assert [(i["session_id"], i["title"]) for i in items] == [(sid, "新对话")]
    assert items[0]["updated_at"]


def test_chat_returns_the_original_shape_and_persists_the_turn(client: httpx.Client, store: MemoryStore) -> None:
    sid = _new(client)
    response = client.post("/api/chat", json={"user_id": USER, "session_id": sid, "message": "I prefer green tea"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert {"reply", "memory_hits", "title", "tool_calls"} <= set(body)
    assert body["title"] == "I prefer green tea" and body["error"] is None
    call = body["tool_calls"][0]
    assert call["name"] == "remember_note"
    assert json.loads(call["input"]) == call["arguments"] == {"note": "User prefers green tea"}  # JSON text, as there
    assert "green tea" in store.user(USER).long_term.read()
    stored = store.user(USER).session(sid).messages()
    assert [m.role for m in stored] == ["user", "assistant"]
    assert (body["user_message_id"], body["assistant_message_id"]) == (1, 2)


def test_messages_replay_the_tool_calls_of_each_reply(client: httpx.Client) -> None:
    sid = _new(client)
    client.post("/api/chat", json={"user_id": USER, "session_id": sid, "message": "My sister lives in Lyon"})
    client.post("/api/chat", json={"user_id": USER, "session_id": sid, "message": "Where does my sister live?"})
    items = client.get(f"/api/conversations/{sid}/messages", params={"user_id": USER}).json()["items"]
    assert [i["role"] for i in items] == ["user", "assistant", "user", "assistant"]
    assert [i["message_id"] for i in items] == [1, 2, 3, 4]
    for item in items:
        assert {"ts", "role", "content", "message_id", "tool_calls"} <= set(item)
    recall = items[3]["tool_calls"]
    assert recall and {"name", "input", "output"} <= set(recall[0])
    assert recall[0]["name"] == "search_session" and "Lyon" in items[3]["content"]


def test_conversations_are_listed_newest_first(client: httpx.Client) -> None:
    first, second = _new(client), _new(client)
    client.post("/api/chat", json={"user_id": USER, "session_id": first, "message": "hello again"})
    items = client.get("/api/conversations", params={"user_id": USER}).json()["items"]
    assert [i["session_id"] for i in items] == [first, second]
    assert items[0]["updated_at"] >= items[1]["updated_at"]


def test_an_unknown_conversation_has_no_messages(client: httpx.Client) -> None:
    response = client.get("/api/conversations/nosuchsession/messages", params={"user_id": "nobody"})
    assert response.status_code == 200 and response.json() == {"items": []}


BAD_IDS = ["", " ", "..", ".hidden", "a/b", "a\\b", "x\x00y", "tab\there", "x" * 200]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_bad_user_id_is_a_400_naming_the_field(client: httpx.Client, bad: str) -> None:
    for response in (
        client.post("/api/conversations", json={"user_id": bad}),
        client.get("/api/conversations", params={"user_id": bad}),
        client.get("/api/conversations/s1/messages", params={"user_id": bad}),
        client.post("/api/chat", json={"user_id": bad, "session_id": "s1", "message": "hi"}),
    ):
        assert response.status_code == 400, (bad, response.status_code, response.text)
        assert response.json()["field"] == "user_id" and "user_id" in response.json()["detail"]


@pytest.mark.parametrize("bad", [b for b in BAD_IDS if "/" not in b and "\\" not in b])
def test_a_bad_session_id_is_a_400_naming_the_field(client: httpx.Client, store: MemoryStore, bad: str) -> None:
    chat = client.post("/api/chat", json={"user_id": USER, "session_id": bad, "message": "hi"})
    assert chat.status_code == 400 and chat.json()["field"] == "session_id", chat.text
    if bad.strip():  # an empty path segment is another route (404), as in the original
        # percent-encoded (dots too), or the client would resolve "/../" before sending
        segment = quote(bad, safe="").replace(".", "%2E")
        listed = client.get(f"/api/conversations/{segment}/messages", params={"user_id": USER})
        assert listed.status_code == 400 and listed.json()["field"] == "session_id", listed.text
    assert not store.root.exists() or not any(store.root.rglob("*.jsonl"))  # nothing was written


def test_an_empty_message_is_a_400_naming_the_field_and_writes_nothing(client: httpx.Client,
                                                                      store: MemoryStore) -> None:
    sid = _new(client)
    response = client.post("/api/chat", json={"user_id": USER, "session_id": sid, "message": "   "})
    assert response.status_code == 400 and response.json()["field"] == "message"
    assert store.user(USER).session(sid).messages() == []


def test_missing_or_mistyped_keys_are_a_422_that_names_them(client: httpx.Client) -> None:
    response = client.post("/api/chat", json={"user_id": USER, "message": 5})
    assert response.status_code == 422
    places = {tuple(e["loc"]) for e in response.json()["detail"]}
    assert ("body", "session_id") in places and ("body", "message") in places
    assert all("input" not in e for e in response.json()["detail"])  # what was sent is not echoed


def test_a_stored_lone_surrogate_is_served_as_its_escape_not_a_500(client: httpx.Client, store: MemoryStore) -> None:
    # A str may hold a lone surrogate (a JSON "\\ud800" escape read back from a file): it has no UTF-8 form.
    store.user(USER).append("s1", "user", "odd \ud800 text")
    response = client.get("/api/conversations/s1/messages", params={"user_id": USER})
    assert response.status_code == 200, response.text
    assert b"\\ud800" in response.content
    assert response.json()["items"][0]["content"] == "odd \ud800 text"
    sent = b'{"user_id": "alice", "session_id": "s1", "message": "odd \\ud800 text"}'
    refused = client.post("/api/chat", content=sent, headers={"content-type": "application/json"})
    assert refused.status_code == 422  # pydantic refuses such input text: a client error, not a 500


def test_a_server_shares_the_notebooks_service(client: httpx.Client, svc: ChatService) -> None:
    sid = svc.new_conversation(USER)
    svc.turn(USER, sid, "I prefer window seats")  # as the ChatWidget does, in the notebook's thread
    items = client.get(f"/api/conversations/{sid}/messages", params={"user_id": USER}).json()["items"]
    assert [i["content"] for i in items][0] == "I prefer window seats"
    built = svc.graphs_built
    client.post("/api/chat", json={"user_id": USER, "session_id": sid, "message": "and aisle seats on trains"})
    assert svc.graphs_built == built  # the HTTP turn ran on the notebook's cached graph of that session
