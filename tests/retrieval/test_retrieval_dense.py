"""The optional dense signal: a plug-in embedder, fused additively, and the OpenAI-compatible client."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentmem_nb import UserMemory
from agentmem_nb.errors import ConfigError
from agentmem_nb.retrieval import Embedder, OpenAIEmbedder, RankerConfig, Retriever


class TopicEmbedder:
    """Two made-up dimensions: 'pets' and 'food' (so a query can match a message it shares no word with)."""

    PETS = ("puppy", "beagle", "biscuit", "dog", "shoe")
    FOOD = ("cook", "risotto", "mushroom", "dinner", "eat")

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        out = []
        for text in texts:
            words = [w.strip(".,!?") for w in text.lower().split()]
            out.append([float(sum(w in self.PETS for w in words)), float(sum(w in self.FOOD for w in words)), 0.01])
        return out


def test_protocol_is_structural() -> None:
    assert isinstance(TopicEmbedder(), Embedder)


def test_dense_signal_finds_a_message_without_shared_words(memory: UserMemory) -> None:
    lexical = Retriever().rank_hits(memory, "dinner plans", limit=5)
    assert not lexical
    embedder = TopicEmbedder()
    dense = Retriever(ranker=RankerConfig(embedder=embedder, dense_weight=2.0))
    hits = dense.rank_hits(memory, "dinner plans", limit=2)
    assert {h.message.content for h in hits} == {"What should I cook tonight?", "How about a mushroom risotto?"}
    for hit in hits:
        assert hit.signal("dense") > 0
        assert hit.score == pytest.approx(sum(s.value for s in hit.signals))
    # messages are embedded once; the same question again embeds nothing (its vector is memoised), another one
    # embeds only itself
    embedded = sum(embedder.calls)
    dense.rank_hits(memory, "dinner plans", limit=2)
    assert sum(embedder.calls) == embedded
    dense.rank_hits(memory, "what to eat", limit=2)
    assert sum(embedder.calls) == embedded + 1
    memory.append("s3", "user", "Dinner was a mushroom soup.")
    dense.rank_hits(memory, "dinner plans", limit=2)
    assert sum(embedder.calls) == embedded + 1 + 1  # the new message only


class _Handler(BaseHTTPRequestHandler):
    disable_nagle_algorithm = True
    seen: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            return
        data = [{"index": i, "embedding": [float(len(t)), 1.0]} for i, t in enumerate(body["input"])][::-1]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.seen = []
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_openai_embedder_batches_and_orders_by_index(server: str) -> None:
    client = OpenAIEmbedder(base_url=server, model="m", api_key="k", batch_size=2)
    vectors = client.embed(["a", "bbb", "cc"])
    assert vectors == [[1.0, 1.0], [3.0, 1.0], [2.0, 1.0]]
    assert [len(s["input"]) for s in _Handler.seen] == [2, 1]
    assert _Handler.seen[0]["path"] == "/v1/embeddings" and _Handler.seen[0]["auth"] == "Bearer k"


def test_openai_embedder_errors_name_the_endpoint(server: str) -> None:
    with pytest.raises(ConfigError, match="embeddings failed"):
        OpenAIEmbedder(base_url=server, model="broken").embed(["x"])
    with pytest.raises(ConfigError, match="must start with http"):
        OpenAIEmbedder(base_url="localhost:1", model="m")
    with pytest.raises(ConfigError, match="model name is empty"):
        OpenAIEmbedder(base_url=server, model="")
