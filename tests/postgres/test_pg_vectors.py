"""Dense vectors on PostgreSQL: embedded once, kept in ``am_vectors`` (bytea; Debian 12 has no pgvector package for
PostgreSQL 15), reused by every later process by the store's cursor rule, and a layer changed behind the store loses
only its own vectors. Counted in texts sent to the loopback ``/v1/embeddings`` server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.store.postgres import upgrade_database
from agentmem_nb.testing.fake_openai import FakeOpenAI, start

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
from retrieval_conversation import CONVERSATION, write_conversation  # noqa: E402

_PROCESS = """
import json, sys
from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import OpenAIEmbedder, RankerConfig, Retriever
root, url = sys.argv[1], sys.argv[2]
user = MemoryStore(root, zone="Asia/Shanghai").user("alice")
retriever = Retriever(ranker=RankerConfig(embedder=OpenAIEmbedder(base_url=url, model="fake-embed"), dense_weight=2.0))
hits = retriever.rank_hits(user, "the beagle puppy", limit=3)
print(json.dumps({"embedded": retriever._dense.embedded, "top": hits[0].message.content}))
"""


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    httpd = start(fake)
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()


def _other_process(url: str, server: FakeOpenAI) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _PROCESS, url, server.url], capture_output=True, text=True,
                          timeout=180, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_vectors_are_kept_in_the_database_for_later_processes(pg_url: str, server: FakeOpenAI) -> None:
    upgrade_database(pg_url)
    with MemoryStore(pg_url, zone="Asia/Shanghai") as store:
        write_conversation(store.user("alice"), CONVERSATION)
    total = sum(len(turns) for _, turns in CONVERSATION.values())
    first = _other_process(pg_url, server)
    assert first["embedded"] == total and len(server.embedded) == total + 1  # every message once, the question
    second = _other_process(pg_url, server)
    assert second["embedded"] == 0 and second["top"] == first["top"]  # read back from am_vectors
    with MemoryStore(pg_url, zone="Asia/Shanghai") as store:
        store.user("alice").append("s3", "user", "Biscuit the beagle slept all afternoon.")
    third = _other_process(pg_url, server)
    assert third["embedded"] == 1  # only the appended message (in its thread and its day: one kind per index)
    with psycopg.connect(pg_url) as conn:  # a day rewritten behind the store: that day's vectors only are dropped
        changed = conn.execute("UPDATE am_messages SET record = jsonb_set(record, '{content}', '\"a green vase\"') "
                               "WHERE layer_id = (SELECT layer_id FROM am_layers WHERE kind = 'daily' ORDER BY key "
                               "LIMIT 1) AND position = 0 RETURNING layer_id").fetchall()
        day_rows = conn.execute("SELECT count(*) FROM am_messages WHERE layer_id = %s", (changed[0][0],)).fetchone()
    assert day_rows is not None
    fourth = _other_process(pg_url, server)
    # that day's messages, and the appended one (today's day: vectors are kept again only once a quarter more were
    # embedded, so the third process did not keep it); nothing of the other days
    assert fourth["embedded"] == day_rows[0] + 1 < total and "a green vase" in server.embedded
