"""Ranking the messages of a scope for a natural-language query.

The score of a message is a sum of named signals, each visible in the hit's explanation:

``bm25``
    Okapi BM25 of the query's own terms (stemmed, stop words removed, CJK n-grams), document = one message.
``context``
    A share of the best neighbouring turn's lexical score. Chat turns are short and lean on their neighbours
    ("Wow, where was that?" / "At the lake!"), so a turn next to a strong match is itself likely relevant.
``thread``
    BM25 of the query against the message's whole file (its session or day) taken as one document, for messages that
    match on their own. A conversation stays on a topic for a while, so a turn in the session that is *about* the
    query beats an equally scored turn in a session that mentions it in passing.
``date``
    When the query names a date ("on 25 May, 2022", "in August 2023"), messages of that day/month/year get their
    score again (``date_boost`` times it): what was said then is what the question is about.
``expansion``
    Pseudo-relevance feedback (RM3-style): the terms of the three best first-pass hits that the query lacks, weighted
    by IDF (names and topics, not filler), searched with a small weight. A conversation names one thing several
    ways, and the turn that matches the question often carries the words the next one needs. It adds about a point
    of all@10 on the development data for a few milliseconds (see the ablation table in
    ``agentmem_nb/retrieval/README.md``).
``dense``
    Optional: cosine similarity of embeddings (see :mod:`agentmem_nb.retrieval.dense`), scaled by ``dense_weight``.

The constants were set by reasoning about chat text (textbook BM25, a third of a neighbour, half a thread), then
checked by ablation; none was fitted per question or per conversation.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from agentmem_nb.retrieval.bm25 import BM25Params, CorpusStats, TermIndex, explain_terms, score_into
from agentmem_nb.retrieval.dates import extract_dates
from agentmem_nb.retrieval.dense import DenseIndex, Embedder
from agentmem_nb.retrieval.index import LayerIndex
from agentmem_nb.retrieval.tokenize import Tokenizer

__all__ = ["RankerConfig", "Candidate", "rank", "SIGNAL_ORDER"]

SIGNAL_ORDER = ("bm25", "expansion", "context", "thread", "dense", "date")


@dataclass(frozen=True, slots=True)
class RankerConfig:
    """Which signals are on, and their weights (0 turns a signal off).

    Attributes:
        bm25: BM25 parameters.
        context_weight: share of the best neighbour's lexical score a turn receives.
        context_span: how many turns on each side count as neighbours.
        thread_weight: weight of the whole-file (session/day) BM25 score; no effect when the scope is one file.
        date_boost: extra share of its score a message gets when it falls in a date the query names.
        expansion_docs / expansion_terms / expansion_weight: pseudo-relevance feedback (off by default).
        dense_weight / embedder: embedding similarity (off unless an embedder is given).
    """

    bm25: BM25Params = BM25Params()
    context_weight: float = 0.3
    context_span: int = 1
    thread_weight: float = 0.5
    date_boost: float = 1.0
    expansion_docs: int = 3
    expansion_terms: int = 10
    expansion_weight: float = 0.3
    dense_weight: float = 0.0
    embedder: Embedder | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in ("context_weight", "context_span", "thread_weight", "date_boost", "expansion_docs",
                     "expansion_terms", "expansion_weight", "dense_weight"):
            if getattr(self, name) < 0:
                raise ValueError(f"RankerConfig.{name} must be >= 0, got {getattr(self, name)!r}")


@dataclass(slots=True)
class Candidate:
    """A scored message position before it is read from disk (shared by ranking and retrieval)."""

    layer: int  # index into the scope's layer list
    position: int
    score: float
    signals: dict[str, float]
    terms: dict[tuple[str, str], float]  # (signal, term) -> contribution


def rank(
    layers: Sequence[LayerIndex],
    query: str,
    tokenizer: Tokenizer,
    config: RankerConfig = RankerConfig(),
    *,
    limit: int = 100,
    dense: DenseIndex | None = None,
) -> list[Candidate]:
    """The ``limit`` best messages of ``layers`` with a positive score, best first (ties: newer first).

    The scope's files are laid end to end in one score vector, so each signal is a handful of numpy expressions
    whatever the number of messages; the per-signal and per-term breakdown is computed for the returned candidates
    only.
    """
    ranges, words = extract_dates(query) if config.date_boost else ([], query)
    query_terms = Counter(tokenizer.terms(words))
    indexes = [layer.terms for layer in layers]
    snapshots = [layer.snapshot() for layer in layers]
    sizes = [len(lengths) for lengths, _ in snapshots]
    starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    total = int(starts[-1])
    if not total or not (query_terms or (dense is not None and config.dense_weight)):
        return []
    weights = {t: float(n) for t, n in query_terms.items()}
    stats = CorpusStats.of(indexes, weights)
    bm25 = np.zeros(total)
    for li, ix in enumerate(indexes):
        score_into(bm25, ix, weights, stats, config.bm25, offset=int(starts[li]), lengths=snapshots[li][0])

    extra: dict[str, float] = {}
    extra_stats = stats
    lexical = bm25
    if config.expansion_docs and config.expansion_terms and config.expansion_weight and bm25.any():
        extra = _feedback_terms(indexes, bm25, starts, query_terms, config)
        if extra:
            extra_stats = CorpusStats.of(indexes, extra)
            expansion = np.zeros(total)
            for li, ix in enumerate(indexes):
                score_into(expansion, ix, extra, extra_stats, config.bm25, offset=int(starts[li]),
                           lengths=snapshots[li][0])
            lexical = bm25 + expansion
    matched = lexical > 0
    score = lexical.copy()

    context = np.zeros(total)
    if config.context_weight and config.context_span:
        context = _context(lexical, starts, config)
        score += context
    thread = np.zeros(total)
    if config.thread_weight and len(layers) > 1:
        per_file = _thread_scores(indexes, weights, config)
        thread = np.repeat(config.thread_weight * np.asarray(per_file), sizes) * matched
        score += thread
    dense_part = np.zeros(total)
    if dense is not None and config.dense_weight:
        for li, sims in enumerate(dense.similarities(layers, query)):
            for pos, sim in sims.items():
                if sim > 0 and pos < sizes[li]:
                    dense_part[starts[li] + pos] = config.dense_weight * sim
        score += dense_part
    in_range = np.zeros(total, dtype=bool)
    if ranges:
        days = np.concatenate([d for _, d in snapshots])
        for r in ranges:
            in_range |= (days >= r.first.toordinal()) & (days <= r.last.toordinal())
        score += config.date_boost * score * in_range

    found = np.flatnonzero(score > 0)
    if not len(found):
        return []
    # Best first; ties go to the later file, then the later turn (in a memory, the latest statement holds).
    order = np.lexsort((-found, -score[found]))[:limit]
    best = found[order]
    layer_of = np.searchsorted(starts, best, side="right") - 1

    out = []
    for g, li in zip(best.tolist(), layer_of.tolist(), strict=True):
        pos = g - int(starts[li])
        terms = {("bm25", t): c for t, c in explain_terms(indexes[li], pos, weights, stats, config.bm25).items()}
        signals: dict[str, float] = {}
        if terms:
            signals["bm25"] = sum(terms.values())
        if extra:
            more = explain_terms(indexes[li], pos, extra, extra_stats, config.bm25)
            if more:
                terms.update({("expansion", t): c for t, c in more.items()})
                signals["expansion"] = sum(more.values())
        for name, values in (("context", context), ("thread", thread), ("dense", dense_part)):
            if values[g] > 0:
                signals[name] = float(values[g])
        if in_range[g]:
            signals["date"] = config.date_boost * sum(signals.values())
        out.append(Candidate(li, pos, sum(signals.values()), signals, terms))
    return out


def _context(lexical: np.ndarray, starts: np.ndarray, config: RankerConfig) -> np.ndarray:
    """Each turn receives a share of its best neighbour's lexical score (a max, not a sum, so a run of weak turns
    does not add up to a false hit). Neighbours never reach across from one file into the next."""
    n = len(lexical)
    sizes = np.diff(starts)
    index_in_file = np.arange(n) - np.repeat(starts[:-1], sizes)
    size_of_file = np.repeat(sizes, sizes)
    best = np.zeros(n)
    for shift in range(1, config.context_span + 1):
        from_before = np.zeros(n)
        from_before[shift:] = lexical[:-shift]
        from_before[index_in_file < shift] = 0
        from_after = np.zeros(n)
        from_after[:-shift] = lexical[shift:]
        from_after[index_in_file >= size_of_file - shift] = 0
        best = np.maximum(best, np.maximum(from_before, from_after))
    return config.context_weight * best


def _thread_scores(indexes: Sequence[TermIndex], weights: dict[str, float], config: RankerConfig) -> list[float]:
    """BM25 of the query against each file taken as one document (a session or a day)."""
    n = len(indexes)
    avg = sum(ix.total_length for ix in indexes) / n if n else 0.0
    if not avg:
        return [0.0] * n
    k1, b = config.bm25.k1, config.bm25.b
    df = {t: sum(1 for ix in indexes if ix.cf(t)) for t in weights}
    out = []
    for ix in indexes:
        score = 0.0
        norm = k1 * (1 - b + b * ix.total_length / avg)
        for term, weight in weights.items():
            f = ix.cf(term)
            if f:
                score += weight * math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5)) * f * (k1 + 1) / (f + norm)
        out.append(score)
    return out


def _feedback_terms(
    indexes: Sequence[TermIndex],
    bm25: np.ndarray,
    starts: np.ndarray,
    query_terms: Counter[str],
    config: RankerConfig,
) -> dict[str, float]:
    """RM3-style expansion terms and their query weights from the best first-pass documents."""
    k = min(config.expansion_docs, int((bm25 > 0).sum()))
    if k <= 0:
        return {}
    top = np.argsort(-bm25, kind="stable")[:k]
    total_score = float(bm25[top].sum())
    relevance: Counter[str] = Counter()
    for g in top.tolist():
        li = int(np.searchsorted(starts, g, side="right") - 1)
        pos = g - int(starts[li])
        share = float(bm25[g]) / total_score
        length = indexes[li].length(pos) or 1
        for term, tf in indexes[li].doc_terms(pos).items():
            if term not in query_terms:
                relevance[term] += share * tf / length
    n_docs = sum(len(ix) for ix in indexes)
    weighted = {}
    for term, p in relevance.items():
        df = sum(ix.df(term) for ix in indexes)
        if df >= 2:  # a term only the hit itself contains cannot lead to any other message
            weighted[term] = p * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    best = heapq.nlargest(config.expansion_terms, weighted.items(), key=lambda kv: kv[1])
    if not best:
        return {}
    top_weight = best[0][1]
    return {term: config.expansion_weight * w / top_weight for term, w in best}
