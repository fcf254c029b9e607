"""The body of a long thread is served again while its file is unchanged, and never staler than a fresh read."""

from __future__ import annotations

import httpx

from agentmem_nb import MemoryStore
from agentmem_nb.api import BackgroundServer
from agentmem_nb.api.thread_cache import MIN_MESSAGES

USER = "alice"


def _long_thread(store: MemoryStore, n: int = MIN_MESSAGES) -> None:
    user = store.user(USER)
    for i in range(n):
        user.append("long", "user" if i % 2 == 0 else "assistant", f"message {i}")


def _get(client: httpx.Client) -> list[dict[str, object]]:
    response = client.get("/api/conversations/long/messages", params={"user_id": USER})
    assert response.status_code == 200
    return list(response.json()["items"])


def test_an_unchanged_long_thread_is_not_read_again(client: httpx.Client, server: BackgroundServer,
                                                     store: MemoryStore) -> None:
    _long_thread(store)
    cache = server.app.state.threads
    first = _get(client)
    assert len(first) == MIN_MESSAGES and cache.hits == 0
    assert _get(client) == first and cache.hits == 1


def test_an_append_or_a_rewrite_is_served_at_once(client: httpx.Client, server: BackgroundServer,
                                                  store: MemoryStore) -> None:
    _long_thread(store)
    _get(client)
    store.user(USER).append("long", "user", "one more")
    after = _get(client)
    assert len(after) == MIN_MESSAGES + 1 and after[-1]["content"] == "one more"
    path = store.user(USER).session("long").path
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: MIN_MESSAGES // 2]))  # an editor cut the thread in half
    assert len(_get(client)) == MIN_MESSAGES // 2
    assert server.app.state.threads.hits == 0


def test_a_short_thread_is_not_kept(client: httpx.Client, server: BackgroundServer, store: MemoryStore) -> None:
    _long_thread(store, 10)
    _get(client)
    _get(client)
    assert server.app.state.threads.hits == 0
