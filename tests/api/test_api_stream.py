"""The streaming chat endpoint (server-sent events) and 409 for a busy session, with the notebook's own locks."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.api import serve_in_background

USER = "alice"


def _events(response: httpx.Response) -> Iterator[tuple[str, dict[str, object]]]:
    event = ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            event = line[len("event: "):]
        elif line.startswith("data: "):
            yield event, json.loads(line[len("data: "):])


def test_a_streamed_turn_sends_tools_then_reply_then_done(client: httpx.Client, store: MemoryStore) -> None:
    client.post("/api/chat", json={"user_id": USER, "session_id": "s1", "message": "My sister lives in Lyon"})
    with client.stream("POST", "/api/chat/stream",
                       json={"user_id": USER, "session_id": "s1", "message": "Where does my sister live?"}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(_events(response))
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "done" and kinds.count("done") == 1
    assert kinds.index("tool_started") < kinds.index("tool_finished") < kinds.index("token")
    done = events[-1][1]
    last_tool = max(i for i, k in enumerate(kinds) if k == "tool_finished")
    assert "".join(str(d["text"]) for k, d in events[last_tool:] if k == "token") == done["reply"]
    assert "Lyon" in str(done["reply"])
    finished = [d["tool_call"] for k, d in events if k == "tool_finished"]
    assert [c["name"] for c in finished] == [c["name"] for c in done["tool_calls"]]  # type: ignore[index]
    stored = store.user(USER).session("s1").messages()
    assert stored[-1].content == done["reply"] and len(stored[-1].tool_calls) == len(finished)


def test_a_refused_stream_is_a_plain_json_400_before_any_event(client: httpx.Client) -> None:
    response = client.post("/api/chat/stream", json={"user_id": "../x", "session_id": "s1", "message": "hi"})
    assert response.status_code == 400 and response.json()["field"] == "user_id"
    response = client.post("/api/chat/stream", json={"user_id": USER, "session_id": "s1", "message": ""})
    assert response.status_code == 400 and response.json()["field"] == "message"


def test_a_session_held_by_the_notebook_is_a_409_over_http(store: MemoryStore) -> None:
    svc = ChatService(store, model=OfflineChatModel(), lock_timeout=0)
    with serve_in_background(svc) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        held = svc.stream_turn(USER, "s1", "I prefer tea")  # a notebook's stream, paused after its first event
        next(held)
        body = {"user_id": USER, "session_id": "s1", "message": "hello"}
        busy = http.post("/api/chat", json=body)
        assert busy.status_code == 409 and "busy" in busy.json()["detail"]
        assert http.post("/api/chat/stream", json=body).status_code == 409
        assert http.post("/api/chat", json={**body, "session_id": "s2"}).status_code == 200  # other sessions run
        held.close()  # the notebook lets go
        assert http.post("/api/chat", json=body).status_code == 200
    contents = [m.content for m in store.user(USER).session("s1").messages()]
    assert contents.count("hello") == 1  # the refused turns wrote nothing


def test_a_client_that_leaves_a_stream_frees_its_session(client: httpx.Client, store: MemoryStore) -> None:
    body = {"user_id": USER, "session_id": "s1", "message": "I prefer tea"}
    with client.stream("POST", "/api/chat/stream", json=body) as response:
        first = next(_events(response))
        assert first[0] == "tool_started"
    # the connection is closed: the turn ends (finished or abandoned) and the next one of the session runs
    after = client.post("/api/chat", json={**body, "message": "and coffee in the morning"})
    assert after.status_code == 200 and after.json()["error"] is None
