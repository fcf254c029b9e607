"""Leave-one-conversation-out choice of the hybrid retriever's ``dense_weight`` on the LoCoMo development files.

    PYTHONPATH=$PWD python -m benchmarks.dense_cv /work/shared/data/locomo/conv-*.json [--weights 1,2,4,8]

For each weight: all@10 and any@10 per conversation; then, for each conversation, the weight that is best (all@10,
then any@10) on the other four, scored on it. Prints a table and the cross-validated figure (benchmarks/DENSE.md).
Vectors are embedded once (kept beside the store, reused by each weight's retriever); question vectors are memoised.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentmem_nb.evaluation.retrieval import evaluate_locomo, load_into_store
from agentmem_nb.retrieval import RankerConfig, Retriever
from agentmem_nb.retrieval.embed import LocalEmbedder


class _Memo(LocalEmbedder):
    """The local model with question vectors memoised (the same questions are asked once per weight)."""

    def __init__(self) -> None:
        super().__init__()
        self._queries: dict[str, list[float]] = {}

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        todo = [t for t in texts if t not in self._queries]
        if todo:
            self._queries.update(zip(todo, super().embed_queries(todo), strict=True))
        return [self._queries[t] for t in texts]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--weights", default="0,1,2,4,8")
    parser.add_argument("--budget", type=int, default=10)
    args = parser.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",")]
    embedder = _Memo()
    rows: dict[float, dict[str, tuple[int, int, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="agentmem-dense-cv-") as tmp:
        corpus = load_into_store(args.files, Path(tmp))
        for w in weights:
            retriever = Retriever(ranker=replace(RankerConfig(), embedder=embedder, dense_weight=w)) if w else Retriever()
            report = evaluate_locomo(corpus, budget=args.budget, retriever=retriever, variant=f"w={w}")
            rows[w] = {k: (s.questions, s.any_hits, s.all_hits) for k, s in report.per_conversation.items()}
            print(json.dumps({"weight": w, "overall": report.overall.to_dict(),
                              "per_category": {str(c): s.to_dict() for c, s in report.per_category.items()},
                              "p95_ms": round(report.latency_ms_p95, 2)}), flush=True)
    convs = sorted(next(iter(rows.values())))
    cv = [0, 0, 0]
    for held in convs:
        def fit(w: float, held: str = held) -> tuple[int, int]:
            return (sum(rows[w][c][2] for c in convs if c != held), sum(rows[w][c][1] for c in convs if c != held))
        best = max((w for w in weights if w), key=fit)
        q, a, al = rows[best][held]
        cv = [cv[0] + q, cv[1] + a, cv[2] + al]
        print(json.dumps({"held_out": held, "chosen_weight": best, "any": round(a / q, 4), "all": round(al / q, 4)}))
    print(json.dumps({"cross_validated": {"any": round(cv[1] / cv[0], 4), "all": round(cv[2] / cv[0], 4),
                                          "questions": cv[0]}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
