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

from agentmem_nb.retrieval.bm25 import BM25Params, CorpusStats, TermIndex, explain_terms, score_query
from agentmem_nb.retrieval.dates import DateRange, extract_dates
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

    Scores of every matching message are plain floats; the per-signal and per-term breakdown is computed for the
    returned candidates only (that keeps a query on a name said in half the turns cheap).
    """
    ranges, words = extract_dates(query) if config.date_boost else ([], query)
    query_terms = Counter(tokenizer.terms(words))
    indexes = [layer.terms for layer in layers]
    weights = {t: float(n) for t, n in query_terms.items()}
    stats = CorpusStats.of(indexes, weights)
    first = [score_query(ix, weights, stats, config.bm25) for ix in indexes]

    extra: dict[str, float] = {}
    extra_stats = stats
    expansion: list[dict[int, float]] = [{} for _ in layers]
    if config.expansion_docs and config.expansion_terms and config.expansion_weight and any(first):
        extra = _feedback_terms(indexes, first, query_terms, config)
        if extra:
            extra_stats = CorpusStats.of(indexes, extra)
            expansion = [score_query(ix, extra, extra_stats, config.bm25) for ix in indexes]

    dense_scores: list[dict[int, float]] = [{} for _ in layers]
    if dense is not None and config.dense_weight:
        dense_scores = dense.similarities(layers, query)

    thread = _thread_scores(indexes, weights, config) if config.thread_weight and len(layers) > 1 else None

    totals: list[tuple[float, int, int]] = []  # (score, layer, position)
    parts: list[tuple[dict[int, float], dict[int, float], dict[int, float]]] = []
    for li, layer in enumerate(layers):
        lexical = dict(first[li])
        for pos, value in expansion[li].items():
            lexical[pos] = lexical.get(pos, 0.0) + value
        context = _context(lexical, len(layer), config) if config.context_weight and config.context_span else {}
        dense_part = {pos: config.dense_weight * sim for pos, sim in dense_scores[li].items() if sim > 0}
        parts.append((lexical, context, dense_part))
        thread_part = config.thread_weight * thread[li] if thread is not None else 0.0
        in_range = _in_range(layer, ranges) if ranges else None
        for pos in set(lexical) | set(context) | set(dense_part):
            score = lexical.get(pos, 0.0) + context.get(pos, 0.0) + dense_part.get(pos, 0.0)
            if pos in lexical:
                score += thread_part
            if in_range is not None and in_range(pos):
                score += config.date_boost * score
            if score > 0:
                totals.append((score, li, pos))
    # Newer first on ties: in a memory, the latest statement of a fact is the one that holds.
    best = heapq.nlargest(limit, totals)  # (score, layer, position): ties go to the later file, then the later turn

    out = []
    for _, li, pos in best:
        lexical, context, dense_part = parts[li]
        terms = {("bm25", t): c for t, c in explain_terms(indexes[li], pos, weights, stats, config.bm25).items()}
        signals: dict[str, float] = {}
        if terms:
            signals["bm25"] = sum(terms.values())
        if extra:
            more = explain_terms(indexes[li], pos, extra, extra_stats, config.bm25)
            if more:
                terms.update({("expansion", t): c for t, c in more.items()})
                signals["expansion"] = sum(more.values())
        if context.get(pos):
            signals["context"] = context[pos]
        if thread is not None and pos in lexical and thread[li]:
            signals["thread"] = config.thread_weight * thread[li]
        if dense_part.get(pos):
            signals["dense"] = dense_part[pos]
        if ranges and _in_range(layers[li], ranges)(pos):
            signals["date"] = config.date_boost * sum(signals.values())
        out.append(Candidate(li, pos, sum(signals.values()), signals, terms))
    return out


def _context(lexical: dict[int, float], size: int, config: RankerConfig) -> dict[int, float]:
    """Each turn passes a share of its lexical score to its neighbours; the best neighbour decides (a max, not a
    sum, so a run of weak turns does not add up to a false hit)."""
    out: dict[int, float] = {}
    span, weight = config.context_span, config.context_weight
    for pos, value in lexical.items():
        share = weight * value
        for other in range(max(0, pos - span), min(size, pos + span + 1)):
            if other != pos and share > out.get(other, 0.0):
                out[other] = share
    return out


def _in_range(layer: LayerIndex, ranges: Sequence[DateRange]):  # type: ignore[no-untyped-def]
    bounds = [(r.first.toordinal(), r.last.toordinal()) for r in ranges]
    days = layer.days
    return lambda pos: any(lo <= days[pos] <= hi for lo, hi in bounds)


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
    first: Sequence[dict[int, float]],
    query_terms: Counter[str],
    config: RankerConfig,
) -> dict[str, float]:
    """RM3-style expansion terms and their query weights from the best first-pass documents."""
    scored = ((s, li, pos) for li, per in enumerate(first) for pos, s in per.items())
    top = heapq.nlargest(config.expansion_docs, scored)
    total_score = sum(s for s, _, _ in top)
    if not top or total_score <= 0:
        return {}
    relevance: Counter[str] = Counter()
    for s, li, pos in top:
        length = indexes[li].length(pos) or 1
        for term, tf in indexes[li].doc_terms(pos).items():
            if term not in query_terms:
                relevance[term] += (s / total_score) * tf / length
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
