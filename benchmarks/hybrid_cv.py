"""Leave-one-conversation-out comparison of retriever variants on the LoCoMo development files (issue 18).

    PYTHONPATH=$PWD python -m benchmarks.hybrid_cv /work/shared/data/locomo/conv-*.json --folder /tmp/hybrid-eval \
        [--variants lexical,hybrid,...] [--groups fusion=hybrid,rrf;parts=hybrid,parts-rr]

Every variant is scored per conversation and per category (plain figures). A *group* is a set of variants among
which a rule is chosen: for each conversation, the variant best on the other four (all@10, then any@10) is scored on
it, and the sum over the five held-out conversations is the cross-validated figure, which predicts unseen ones.

The corpus is imported once into ``--folder`` and kept there with its message vectors (the store's own vector files)
and the question vectors (``queries.npz``), so later runs embed nothing they embedded before.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from agentmem_nb.evaluation.locomo import load_conversations
from agentmem_nb.evaluation.retrieval import (
    CATEGORY_NAMES,
    Corpus,
    Variant,
    evaluate_locomo,
    load_into_store,
)
from agentmem_nb.retrieval import RankerConfig, Retriever
from agentmem_nb.retrieval.bm25 import BM25Params
from agentmem_nb.retrieval.embed import LocalEmbedder
from agentmem_nb.retrieval.index import IndexConfig
from agentmem_nb.retrieval.tokenize import TokenizerConfig
from agentmem_nb.store import MemoryStore

Counts = dict[str, dict[int, tuple[int, int, int]]]  # conversation -> category -> (questions, any, all)


class MemoEmbedder(LocalEmbedder):
    """The local model with question vectors memoised in a file (the same questions are asked by every variant)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._queries: dict[str, list[float]] = {}
        self._dirty = False
        if path.is_file():
            with np.load(path, allow_pickle=False) as data:
                self._queries = dict(zip(data["texts"].tolist(), data["vectors"].tolist(), strict=True))

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._queries]
        if todo:
            self._queries.update(zip(todo, super().embed_queries(todo), strict=True))
            self._dirty = True
        return [self._queries[t] for t in texts]

    def save(self) -> None:
        if self._dirty:
            texts = list(self._queries)
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, texts=np.array(texts), vectors=np.array([self._queries[t] for t in texts], dtype=np.float32))
            tmp.replace(self.path)
            self._dirty = False


def corpus_in(folder: Path, files: Sequence[str]) -> Corpus:
    """The files imported into ``folder/store`` (once: a later run with the same files reopens it)."""
    marker = folder / "files.json"
    names = [str(Path(f).resolve()) for f in files]
    if marker.is_file() and json.loads(marker.read_text()) == names:
        conversations = [c for f in files for c in load_conversations(f)]
        return Corpus(MemoryStore(folder / "store", zone="UTC"), tuple((c.name, c) for c in conversations), 0.0)
    if (folder / "store").exists():
        raise SystemExit(f"{folder}/store holds other files: give another --folder")
    corpus = load_into_store(files, folder / "store")
    marker.write_text(json.dumps(names))
    return corpus


def variants(embedder: LocalEmbedder) -> dict[str, Callable[[], Variant]]:
    """Every variant this benchmark knows, by name."""
    hybrid = replace(RankerConfig(), embedder=embedder, dense_weight=4.0)
    out: dict[str, Callable[[], Variant]] = {}

    def add(name: str, make: Callable[[], Retriever], **window: object) -> None:
        out[name] = partial(_variant, name, make, window)

    for base, ranker in (("lexical", RankerConfig()), ("hybrid", hybrid)):
        add(base, partial(Retriever, ranker=ranker))
        for rule in ("interleave", "reserve"):
            for names in (True, False):
                label = f"{base}-{rule}" + ("" if names else "-nonames")
                add(label, partial(Retriever, ranker=ranker, parts=rule, part_names=names))
    for name, make, window in lexical_rules():
        add(name, make, **window)
    for slot in (1, 2):
        add(f"hybrid-slot{slot}", partial(Retriever, ranker=hybrid, dense_slot=slot))
    for lam in (0.25, 0.5, 1.0):
        add(f"hybrid-mmr{lam:g}", partial(Retriever, ranker=hybrid, diversity=lam))
    for share in (0.3,):
        add(f"hybrid-dctx{share:g}", partial(Retriever, ranker=replace(hybrid, dense_context=share)))
    for k in (20, 100):
        add(f"hybrid-k{k}", partial(Retriever, ranker=replace(hybrid, dense_top_k=k)))
    for w in (2.0, 6.0):
        add(f"hybrid-w{w:g}", partial(Retriever, ranker=replace(hybrid, dense_weight=w)))
    return out


def _variant(name: str, make: Callable[[], Retriever], window: dict[str, object]) -> Variant:
    return Variant(name, make(), **window)  # type: ignore[arg-type]


def lexical_rules() -> list[tuple[str, Callable[[], Retriever], dict[str, object]]]:
    """The lexical default with one rule or weight changed (``lex-…``): each idea of the ablation turned off, and
    each weight halved and doubled, so that a leave-one-conversation-out choice among them (group ``lexical`` plus
    these) tells whether the default's rules were chosen by what generalises or by the five files."""
    base = RankerConfig()
    rules: list[tuple[str, Callable[[], Retriever], dict[str, object]]] = [
        ("lex-nostem", partial(Retriever, index=IndexConfig(tokenizer=TokenizerConfig(stem=False))), {}),
        ("lex-nospeaker", partial(Retriever, index=IndexConfig(speaker=False)), {}),
        ("lex-bm25-k0.9-b0.4", partial(Retriever, ranker=replace(base, bm25=BM25Params(0.9, 0.4))), {}),
        ("lex-bm25-k1.5", partial(Retriever, ranker=replace(base, bm25=BM25Params(1.5, 0.75))), {}),
        ("lex-span2", partial(Retriever, ranker=replace(base, context_span=2)), {}),
        ("lex-window-fixed1", Retriever, {"window": "fixed", "before": 1, "after": 1}),
        ("lex-window-dialogue", Retriever, {"window": "dialogue"}),
        ("lex-window-none", Retriever, {"window": "fixed", "before": 0, "after": 0}),
    ]
    for name in ("context_weight", "thread_weight", "date_boost", "expansion_weight"):
        value = getattr(base, name)
        for factor, label in ((0.0, "0"), (0.5, "half"), (2.0, "double")):
            ranker = replace(base, **{name: value * factor})
            rules.append((f"lex-{name}-{label}", partial(Retriever, ranker=ranker), {}))
    return rules


def score(corpus: Corpus, variant: Variant, budget: int) -> tuple[Counts, float]:
    """Per conversation and category counts, and the p95 latency of the run."""
    out: Counts = {}
    p95 = []
    for entry in corpus.conversations:
        report = evaluate_locomo(Corpus(corpus.store, (entry,), 0.0), budget=budget, retriever=variant.retriever,
                                 variant=variant.name, window=variant.window, before=variant.before,
                                 after=variant.after)
        out[entry[0]] = {c: (s.questions, s.any_hits, s.all_hits) for c, s in report.per_category.items()}
        p95.append(report.latency_ms_p95)
    return out, max(p95)


def total(counts: Counts, convs: Sequence[str], category: int | None = None) -> tuple[int, int, int]:
    q = a = al = 0
    for conv in convs:
        for cat, (n, x, y) in counts[conv].items():
            if category is None or cat == category:
                q, a, al = q + n, a + x, al + y
    return q, a, al


def row(label: str, counts: Counts) -> str:
    convs = sorted(counts)
    q, a, al = total(counts, convs)
    cells = [f"{a / q:.3f}", f"{al / q:.3f}"]
    for cat in sorted(CATEGORY_NAMES):
        n, x, y = total(counts, convs, cat)
        cells.append(f"{x / n:.3f} / {y / n:.3f}" if n else "-")
    return f"| {label} | " + " | ".join(cells) + " |"


def loo(results: dict[str, Counts], group: Sequence[str]) -> tuple[Counts, dict[str, str]]:
    """For each conversation, the counts of the variant of ``group`` best on the other conversations."""
    convs = sorted(next(iter(results.values())))
    chosen: Counts = {}
    picks = {}
    for held in convs:
        others = [c for c in convs if c != held]

        def fit(name: str) -> tuple[int, int]:
            _, a, al = total(results[name], others)
            return al, a

        best = max(group, key=fit)  # ties: the first listed (list the simpler rule first)
        picks[held] = best
        chosen[held] = results[best][held]
    return chosen, picks


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--variants", default="lexical,hybrid")
    parser.add_argument("--groups", default="", help="name=v1,v2;name2=v3,v4 (LOO choice inside each group)")
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--redo", action="store_true", help="score again the variants kept in --folder's results")
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    corpus = corpus_in(args.folder, args.files)
    embedder = MemoEmbedder(args.folder / "queries.npz")
    known = variants(embedder)
    cache = args.folder / f"results-b{args.budget}.json"
    stored: dict[str, dict[str, dict[str, list[int]]]] = json.loads(cache.read_text()) if cache.is_file() else {}
    results: dict[str, Counts] = {}
    names = [n for n in args.variants.split(",") if n]
    groups = {g.split("=")[0]: g.split("=")[1].split(",") for g in args.groups.split(";") if g}
    for name in dict.fromkeys(names + [v for g in groups.values() for v in g]):
        if name not in known:
            raise SystemExit(f"unknown variant {name!r}: one of {', '.join(known)}")
        if name in stored and not args.redo:  # scored by an earlier run of the same code: reused
            results[name] = {conv: {int(c): (v[0], v[1], v[2]) for c, v in cats.items()}
                             for conv, cats in stored[name].items()}
            continue
        counts, p95 = score(corpus, known[name](), args.budget)
        embedder.save()
        results[name] = counts
        stored[name] = {conv: {str(c): list(v) for c, v in cats.items()} for conv, cats in counts.items()}
        cache.write_text(json.dumps(stored))
        print(json.dumps({"variant": name, "p95_ms": round(p95, 1)}), flush=True)
    header = "| variant | any@10 | all@10 | " + " | ".join(f"{c} {n} any / all" for c, n in
                                                         sorted(CATEGORY_NAMES.items())) + " |"
    print(header)
    print("|" + "---|" * (3 + len(CATEGORY_NAMES)))
    for name in results:
        print(row(name, results[name]))
    for label, group in groups.items():
        chosen, picks = loo(results, group)
        print(row(f"LOO {label} ({', '.join(f'{k}:{v}' for k, v in picks.items())})", chosen))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
