"""Throughput of the dense extra's model: passages embedded per second and one question's embedding latency.

    PYTHONPATH=$PWD python -m benchmarks.dense_throughput /work/shared/data/locomo/conv-26.json [--passages 256]

(benchmarks/DENSE.md; the load average is printed beside it, since the machine is shared.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence

from agentmem_nb.retrieval.embed import LocalEmbedder


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--passages", type=int, default=256)
    parser.add_argument("--questions", type=int, default=60)
    args = parser.parse_args(argv)
    data = json.load(open(args.file, encoding="utf-8"))
    conversation = data.get("conversation", data)
    texts = [t["text"] for k, v in conversation.items() if k.startswith("session_") and isinstance(v, list)
             for t in v][: args.passages]
    embedder = LocalEmbedder()
    embedder.embed(texts[:2])  # load the engine first
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    latencies = []
    for qa in data["qa"][: args.questions]:
        started = time.perf_counter()
        embedder.embed_queries([qa["question"]])
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    print(json.dumps({"passages": len(texts), "seconds": round(seconds, 2), "per_second": round(len(texts) / seconds, 1),
                      "query_ms_p50": round(statistics.median(latencies), 1),
                      "query_ms_p95": round(latencies[max(0, int(0.95 * len(latencies)) - 1)], 1),
                      "load_average": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
