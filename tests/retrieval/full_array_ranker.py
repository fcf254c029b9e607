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
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agentmem_nb.retrieval.bm25 import (
    BM25Params,
    CorpusStats,
    TermIndex,
    explain_terms,
    score_into,
)
from agentmem_nb.retrieval.dates import extract_dates
from agentmem_nb.retrieval.dense import DenseIndex, Embedder
from agentmem_nb.retrieval.index import IndexArrays, ScopeView
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
    """A scored message position before it is read from disk (shared by ranking and retrieval).

    The per-term breakdown is computed on first access of :attr:`terms` (only hits that are shown need it).
    """

    layer: int  # index into ScopeView.followers
    position: int
    score: float
    signals: dict[str, float]
    _explain: Callable[[], dict[tuple[str, str], float]] | None = None
    _terms: dict[tuple[str, str], float] | None = None

    @property
    def terms(self) -> dict[tuple[str, str], float]:
        """``{(signal, term): contribution}`` for the ``bm25`` and ``expansion`` signals."""
        if self._terms is None:
            self._terms = self._explain() if self._explain is not None else {}
        return self._terms


def rank(
    view: ScopeView,
    query: str,
    tokenizer: Tokenizer,
    config: RankerConfig = RankerConfig(),
    *,
    limit: int = 100,
    dense: DenseIndex | None = None,
    exclude: Sequence[int] = (),
) -> list[Candidate]:
    """The ``limit`` best messages of ``view`` with a positive score, best first (ties: newer first).

    ``exclude`` lists global ids treated as outside the scope: they are not returned, and — just as important —
    their words lend nothing to their neighbours or to feedback terms (the question being asked must not make its
    own neighbours look relevant).

    Every signal is a few numpy expressions over the whole kind index (masked to the scope), so the cost grows with
    the postings of the query terms, not with the number of files; the per-signal and per-term breakdown is
    computed for the returned candidates only. ``Candidate.layer`` indexes ``view.followers``.
    """
    ranges, words = extract_dates(query) if config.date_boost else ([], query)
    query_terms = Counter(tokenizer.terms(words))
    if not view.followers or not (query_terms or (dense is not None and config.dense_weight)):
        return []
    ix = view.index.terms
    arrays = _whole(view.index.arrays())
    total = len(arrays.lengths)
    local = {f.file_id: i for i, f in enumerate(view.followers)}
    in_scope: np.ndarray | None = None
    if not view.whole:
        in_scope = np.zeros(arrays.files, dtype=bool)
        in_scope[list(local)] = True
        in_scope = in_scope[arrays.file_of]
    if len(exclude):
        if in_scope is None:
            in_scope = np.ones(total, dtype=bool)
        in_scope[[g for g in exclude if 0 <= g < total]] = False
    weights = {t: float(n) for t, n in query_terms.items()}
    stats = _stats(ix, weights, arrays, in_scope)
    bm25 = np.zeros(total)
    score_into(bm25, ix, weights, stats, config.bm25, lengths=arrays.lengths)
    if in_scope is not None:
        bm25 *= in_scope

    extra: dict[str, float] = {}
    extra_stats = stats
    lexical = bm25
    if config.expansion_docs and config.expansion_terms and config.expansion_weight and bm25.any():
        extra = _feedback_terms(ix, bm25, arrays, in_scope, query_terms, config)
        if extra:
            extra_stats = _stats(ix, extra, arrays, in_scope)
            expansion = np.zeros(total)
            score_into(expansion, ix, extra, extra_stats, config.bm25, lengths=arrays.lengths)
            if in_scope is not None:
                expansion *= in_scope
            lexical = bm25 + expansion
    matched = lexical > 0
    score = lexical.copy()

    context = np.zeros(total)
    if config.context_weight and config.context_span:
        context = _context(lexical, arrays, config)
        score += context
    thread = np.zeros(total)
    if config.thread_weight and len(view.followers) > 1:
        per_file = _thread_scores(ix, weights, arrays, list(local), config)
        thread = config.thread_weight * per_file[arrays.file_of] * matched
        score += thread
    dense_part = np.zeros(total)
    if dense is not None and config.dense_weight:
        for gid, sim in dense.similarities(view, query).items():
            if sim > 0 and gid < total:
                dense_part[gid] = config.dense_weight * sim
        score += dense_part
    in_range = np.zeros(total, dtype=bool)
    if ranges:
        for r in ranges:
            in_range |= (arrays.days >= r.first.toordinal()) & (arrays.days <= r.last.toordinal())
        score += config.date_boost * score * in_range

    found = np.flatnonzero(score > 0)
    if not len(found):
        return []
    # Best first; ties go to the message indexed last (in a memory, the latest statement is the one that holds).
    best = found[np.lexsort((-found, -score[found]))[:limit]]

    def explainer(g: int) -> Callable[[], dict[tuple[str, str], float]]:
        def explain() -> dict[tuple[str, str], float]:
            terms = {("bm25", t): c for t, c in explain_terms(ix, g, weights, stats, config.bm25).items()}
            if extra:
                more = explain_terms(ix, g, extra, extra_stats, config.bm25)
                terms.update({("expansion", t): c for t, c in more.items()})
            return terms

        return explain

    out = []
    for g in best.tolist():
        signals: dict[str, float] = {}
        for name, values in (("bm25", bm25), ("expansion", lexical - bm25), ("context", context),
                             ("thread", thread), ("dense", dense_part)):
            if values[g] > 0:
                signals[name] = float(values[g])
        if in_range[g]:
            signals["date"] = config.date_boost * sum(signals.values())
        out.append(Candidate(local[int(arrays.file_of[g])], int(arrays.position_of[g]), sum(signals.values()),
                             signals, explainer(g)))
    return out


@dataclass(frozen=True, slots=True)
class WholeArrays:
    """The per-message arrays as whole numpy arrays, lengths as float64: what ``KindIndex.arrays()`` returned when
    this ranking was the ranker (copies, test-only)."""

    lengths: np.ndarray
    file_of: np.ndarray
    position_of: np.ndarray
    days: np.ndarray
    prev: np.ndarray
    next: np.ndarray
    files: int


def _whole(arrays: IndexArrays) -> WholeArrays:
    return WholeArrays(arrays.lengths.whole().astype(np.float64), arrays.file_of.whole(), arrays.position_of.whole(),
                       arrays.days.whole(), arrays.prev.whole(), arrays.next.whole(), arrays.files)


def _stats(ix: TermIndex, weights: dict[str, float], arrays: WholeArrays, in_scope: np.ndarray | None) -> CorpusStats:
    """BM25 statistics of the scope: all of the kind index, or the masked part of it."""
    if in_scope is None:
        n_docs = len(arrays.lengths)
        return CorpusStats(n_docs, float(arrays.lengths.mean()) if n_docs else 0.0, {t: ix.df(t) for t in weights})
    n_docs = int(in_scope.sum())
    avg = float(arrays.lengths[in_scope].mean()) if n_docs else 0.0
    df = {}
    for term in weights:
        positions = ix.arrays(term)[0]
        positions = positions[positions < len(in_scope)]
        df[term] = int(in_scope[positions].sum())
    return CorpusStats(n_docs, avg, df)


def _context(lexical: np.ndarray, arrays: WholeArrays, config: RankerConfig) -> np.ndarray:
    """Each turn receives a share of its best neighbour's lexical score (a max, not a sum, so a run of weak turns
    does not add up to a false hit). Neighbours are turns of the same file."""
    best = np.zeros(len(lexical))
    for links in (arrays.prev, arrays.next):
        hop = links
        for _ in range(config.context_span):
            has = hop >= 0
            best = np.maximum(best, np.where(has, lexical[np.where(has, hop, 0)], 0.0))
            hop = np.where(has, links[np.where(has, hop, 0)], -1)
    return config.context_weight * best


def _thread_scores(
    ix: TermIndex, weights: dict[str, float], arrays: WholeArrays, files: list[int], config: RankerConfig
) -> np.ndarray:
    """BM25 of the query against each file taken as one document (a session or a day); 0 outside ``files``."""
    out = np.zeros(arrays.files)
    n = len(files)
    file_lengths = np.bincount(arrays.file_of, weights=arrays.lengths, minlength=arrays.files)
    avg = float(file_lengths[files].sum()) / n if n else 0.0
    if not avg:
        return out
    k1, b = config.bm25.k1, config.bm25.b
    norm = k1 * (1 - b + b * file_lengths / avg)
    in_files = np.zeros(arrays.files, dtype=bool)
    in_files[files] = True
    for term, weight in weights.items():
        positions, tf = ix.arrays(term)
        keep = positions < len(arrays.file_of)
        cf = np.bincount(arrays.file_of[positions[keep]], weights=tf[keep], minlength=arrays.files) * in_files
        df = int(np.count_nonzero(cf))
        if df:
            out += weight * math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * cf * (k1 + 1) / (cf + norm)
    return out


def _feedback_terms(
    ix: TermIndex,
    bm25: np.ndarray,
    arrays: WholeArrays,
    in_scope: np.ndarray | None,
    query_terms: Counter[str],
    config: RankerConfig,
) -> dict[str, float]:
    """RM3-style expansion terms and their query weights from the best first-pass documents."""
    k = min(config.expansion_docs, int((bm25 > 0).sum()))
    if k <= 0:
        return {}
    top = np.argsort(-bm25, kind="stable")[:k]
    total_score = float(bm25[top].sum())
    relevance: defaultdict[str, float] = defaultdict(float)  # shares are fractions (a Counter holds ints)
    for g in top.tolist():
        share = float(bm25[g]) / total_score
        length = ix.length(g) or 1
        for term, tf in ix.doc_terms(g).items():
            if term not in query_terms:
                relevance[term] += share * tf / length
    stats = _stats(ix, dict.fromkeys(relevance, 1.0), arrays, in_scope)
    weighted = {}
    for term, p in relevance.items():
        if stats.df.get(term, 0) >= 2:  # a term only the hit itself contains cannot lead to any other message
            weighted[term] = p * stats.idf(term)
    best = heapq.nlargest(config.expansion_terms, weighted.items(), key=lambda kv: kv[1])
    if not best:
        return {}
    top_weight = best[0][1]
    return {term: config.expansion_weight * w / top_weight for term, w in best}
