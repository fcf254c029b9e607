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
    score_docs,
)
from agentmem_nb.retrieval.dates import DateRange, extract_dates
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
        dense_top_k: how many nearest messages of the scope get the dense signal (rescaled over them).
        dense_context: share of the best neighbour's dense signal a turn receives, in its ``context`` (0: off).
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
    dense_top_k: int = 50
    dense_context: float = 0.0
    embedder: Embedder | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in ("context_weight", "context_span", "thread_weight", "date_boost", "expansion_docs",
                     "expansion_terms", "expansion_weight", "dense_weight", "dense_top_k", "dense_context"):
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
    part: str = ""  # the part of the question that ranked it (retrieval part by part), "" for the whole

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

    Every signal is a few numpy expressions over the candidates (the query terms' postings in scope, the dense
    hits, and those of their neighbours that can still reach the top ``limit``), so the cost and the memory grow
    with the postings of the query terms, not with the number of messages or files; the per-signal and per-term
    breakdown is computed for the returned candidates only. The answer is exactly that of scoring every message
    (``tests/retrieval/full_array_ranker.py``). ``Candidate.layer`` indexes ``view.followers``.
    """
    ranges, words = extract_dates(query) if config.date_boost else ([], query)
    query_terms = Counter(tokenizer.terms(words))
    if limit <= 0 or not view.followers or not (query_terms or (dense is not None and config.dense_weight)):
        return []
    ix = view.index.terms
    arrays = view.index.arrays()  # views of the index's arrays (the mapped persisted index): nothing copied
    total = len(arrays.lengths)
    local = {f.file_id: i for i, f in enumerate(view.followers)}
    in_scope = _in_scope(view, exclude)
    weights = {t: float(n) for t, n in query_terms.items()}
    stats = _stats(ix, weights, arrays, in_scope)
    # Only candidates are scored (the query terms' postings in scope, the dense hits, and those of their neighbours
    # that can still reach the top `limit`): arrays the size of the candidates, not of the index (at 1M messages
    # each full-length score array was 8 MB, ~110 MiB in all). The values are those the full-length expressions
    # give, element for element.
    first = _postings(ix, weights, total, in_scope)
    bm25 = score_docs(first, ix, weights, stats, config.bm25, lengths=arrays.lengths)

    extra: dict[str, float] = {}
    extra_stats = stats
    docs = first
    lexical = bm25
    if config.expansion_docs and config.expansion_terms and config.expansion_weight and bm25.any():
        extra = _feedback_terms(ix, first, bm25, arrays, in_scope, query_terms, config)
        if extra:
            extra_stats = _stats(ix, extra, arrays, in_scope)
            docs = _union(total, first, _postings(ix, extra, total, in_scope))
            bm25 = _spread(first, bm25, docs)
            lexical = score_docs(docs, ix, extra, extra_stats, config.bm25, lengths=arrays.lengths)
            lexical += bm25  # bm25 + expansion, as the full-length ranking adds them
    lexical_at = _Lookup(docs, lexical)

    dense_sims: dict[int, float] = {}
    if dense is not None and config.dense_weight:
        dense_sims = {gid: sim for gid, sim in dense.similarities(view, query).items() if sim > 0 and gid < total}
    per_file = None
    if config.thread_weight and len(view.followers) > 1:
        per_file = _thread_scores(ix, weights, arrays, list(local), config)
    signals = _Signals(arrays, config, lexical_at, per_file, dense_sims, ranges)

    # First the messages that match or are dense hits, scored in full (their context looks the neighbours' lexical
    # scores up; it needs no neighbour to be scored).
    sure = docs
    if dense_sims:
        sure = _union(total, docs, np.fromiter(dense_sims, dtype=np.int64, count=len(dense_sims)))
    parts = [signals.score(sure, _spread(docs, bm25, sure) if sure is not docs else bm25,
                           _spread(docs, lexical, sure) if sure is not docs else lexical)]
    # Then the neighbours that match nothing themselves. Such a turn's score is its context (the context weight
    # times its best neighbour's lexical score, date boost included), so one can only reach the current top `limit`
    # if a neighbour's lexical score can lift it there: the neighbours of every other matching message are never
    # materialised. Exact (the same float expressions bound the score from above), so the answer is unchanged; for
    # a broad query at 1M messages it leaves out hundreds of thousands of candidates.
    if config.context_weight and config.context_span:
        threshold = _kth_best(parts[0].score, limit)
        matched = lexical > 0
        bound = config.context_weight * lexical[matched]
        if ranges:
            bound += config.date_boost * bound
        sources = docs[matched][bound >= threshold]
        if config.dense_context and dense_sims:  # the neighbours of the (few) dense hits may score by them alone
            sources = _union(total, sources, np.fromiter(dense_sims, dtype=np.int64, count=len(dense_sims)))
        near = _neighbours(sources, arrays, config.context_span)
        near = near[~_Lookup(sure, sure).contains(near)]
        if len(near):
            none = np.zeros(len(near))
            parts.append(signals.score(near, none, none))
    scored = parts[0] if len(parts) == 1 else _Scored.joined(parts)

    positive = np.flatnonzero(scored.score > 0)
    if not len(positive):
        return []
    # Best first; ties go to the message indexed last (in a memory, the latest statement is the one that holds).
    # Only the scores that can be among the `limit` best (ties included) are sorted.
    cut = _kth_best(scored.score[positive], limit)
    positive = positive[scored.score[positive] >= cut]
    order = np.lexsort((-scored.docs[positive], -scored.score[positive]))[:limit]
    best = positive[order]

    def explainer(g: int) -> Callable[[], dict[tuple[str, str], float]]:
        def explain() -> dict[tuple[str, str], float]:
            terms = {("bm25", t): c for t, c in explain_terms(ix, g, weights, stats, config.bm25).items()}
            if extra:
                more = explain_terms(ix, g, extra, extra_stats, config.bm25)
                terms.update({("expansion", t): c for t, c in more.items()})
            return terms

        return explain

    out = []
    for i in best.tolist():
        g = int(scored.docs[i])
        named: dict[str, float] = {}
        for name, value in (("bm25", scored.bm25[i]), ("expansion", scored.lexical[i] - scored.bm25[i]),
                            ("context", 0.0 if scored.context is None else scored.context[i]),
                            ("thread", 0.0 if scored.thread is None else scored.thread[i]),
                            ("dense", 0.0 if scored.dense is None else scored.dense[i])):
            if value > 0:
                named[name] = float(value)
        if scored.in_range is not None and scored.in_range[i]:
            named["date"] = config.date_boost * sum(named.values())
        out.append(Candidate(local[arrays.file_of.item(g)], arrays.position_of.item(g), sum(named.values()),
                             named, explainer(g)))
    return out


class _Lookup:
    """Values by global id for a few ids at a time: ``docs`` ascending, ``values`` per doc, 0 for any other id
    (a binary search per id, instead of a table the size of the index)."""

    __slots__ = ("docs", "values")

    def __init__(self, docs: np.ndarray, values: np.ndarray) -> None:
        self.docs, self.values = docs, values

    def _where(self, gids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = np.searchsorted(self.docs, gids)
        np.minimum(at, len(self.docs) - 1, out=at)
        return at, self.docs[at] == gids

    def contains(self, gids: np.ndarray) -> np.ndarray:
        """Per id, whether it is one of ``docs``."""
        if not len(self.docs):
            return np.zeros(len(gids), dtype=bool)
        return self._where(gids)[1]

    def __call__(self, gids: np.ndarray) -> np.ndarray:
        if not len(self.docs):
            return np.zeros(len(gids))
        at, found = self._where(gids)
        return np.where(found, self.values[at], 0.0)


@dataclass(slots=True)
class _Scored:
    """Candidates (global ids) with their score and the signals it sums (``None``: a signal that is off)."""

    docs: np.ndarray
    bm25: np.ndarray
    lexical: np.ndarray
    context: np.ndarray | None
    thread: np.ndarray | None
    dense: np.ndarray | None
    in_range: np.ndarray | None
    score: np.ndarray

    @classmethod
    def joined(cls, parts: list[_Scored]) -> _Scored:
        """The candidates of ``parts`` (disjoint) one after the other."""

        def join(name: str) -> np.ndarray | None:
            arrays = [getattr(p, name) for p in parts]
            return None if arrays[0] is None else np.concatenate(arrays)

        return cls(*(join(name) for name in ("docs", "bm25", "lexical", "context", "thread", "dense", "in_range",
                                             "score")))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _Signals:
    """What scores a set of candidates: the same expressions, in the same order, as the full-length ranking."""

    arrays: IndexArrays
    config: RankerConfig
    lexical_at: _Lookup
    per_file: np.ndarray | None
    dense_sims: dict[int, float]
    ranges: list[DateRange]

    def score(self, docs: np.ndarray, bm25: np.ndarray, lexical: np.ndarray) -> _Scored:
        """Every signal of ``docs`` (ascending global ids) whose own ``bm25`` and ``lexical`` scores are given."""
        config = self.config
        score = lexical.copy()
        context = None
        if config.context_weight and config.context_span:
            context = _context(docs, self.lexical_at, self.arrays, config, config.context_weight)
            if config.dense_context and self.dense_sims:
                ids = np.fromiter(sorted(self.dense_sims), dtype=np.int64, count=len(self.dense_sims))
                values = np.array([config.dense_weight * self.dense_sims[int(g)] for g in ids])
                np.maximum(context, _context(docs, _Lookup(ids, values), self.arrays, config, config.dense_context),
                           out=context)
            score += context
        thread = None
        if self.per_file is not None:
            thread = config.thread_weight * self.per_file[self.arrays.file_of.take(docs)] * (lexical > 0)
            score += thread
        dense_part = None
        if self.dense_sims:
            dense_part = np.zeros(len(docs))
            for gid, sim in self.dense_sims.items():
                at = int(np.searchsorted(docs, gid))
                if at < len(docs) and docs[at] == gid:  # a dense hit among these candidates
                    dense_part[at] = config.dense_weight * sim
            score += dense_part
        in_range = None
        if self.ranges:
            in_range = np.zeros(len(docs), dtype=bool)
            days = self.arrays.days.take(docs)
            for r in self.ranges:
                in_range |= (days >= r.first.toordinal()) & (days <= r.last.toordinal())
            score += config.date_boost * score * in_range
        return _Scored(docs, bm25, lexical, context, thread, dense_part, in_range, score)


def _kth_best(scores: np.ndarray, k: int) -> float:
    """The ``k``-th highest of ``scores`` if there are that many positive ones, else 0 (every positive one counts)."""
    positive = scores[scores > 0]
    if len(positive) < k:
        return 0.0
    return float(np.partition(positive, len(positive) - k)[len(positive) - k])


def _neighbours(sources: np.ndarray, arrays: IndexArrays, span: int) -> np.ndarray:
    """The distinct messages within ``span`` turns of ``sources`` in their file, ascending (``sources`` included only
    where one is another's neighbour)."""
    near = []
    for links in (arrays.prev, arrays.next):
        hop = sources
        for _ in range(span):
            hop = links.take(hop)
            hop = hop[hop >= 0]
            near.append(hop)
    return np.unique(np.concatenate(near)) if near else np.zeros(0, dtype=np.int64)


def match_count(view: ScopeView, query: str, tokenizer: Tokenizer, config: RankerConfig = RankerConfig(), *,
                exclude: Sequence[int] = ()) -> int:
    """How many messages of ``view`` (global ids in ``exclude`` left out) hold at least one of ``query``'s terms:
    the messages a ranked search draws its hits from (before expansion and context), the "of N" a person sees beside
    the hits shown."""
    words = extract_dates(query)[1] if config.date_boost else query
    query_terms = Counter(tokenizer.terms(words))
    if not view.followers or not query_terms:
        return 0
    total = len(view.index.arrays().lengths)
    weights = {t: float(n) for t, n in query_terms.items()}
    return int(len(_postings(view.index.terms, weights, total, _in_scope(view, exclude))))


def _in_scope(view: ScopeView, exclude: Sequence[int]) -> np.ndarray | None:
    """Which global ids are in the view's files and not excluded (``None``: every one)."""
    arrays = view.index.arrays()
    total = len(arrays.lengths)
    in_scope: np.ndarray | None = None
    if not view.whole:
        in_files = np.zeros(arrays.files, dtype=bool)
        in_files[[f.file_id for f in view.followers]] = True
        in_scope = in_files[arrays.file_of.whole()]
    if len(exclude):
        if in_scope is None:
            in_scope = np.ones(total, dtype=bool)
        in_scope[[g for g in exclude if 0 <= g < total]] = False
    return in_scope


def _postings(ix: TermIndex, weights: dict[str, float], total: int, in_scope: np.ndarray | None) -> np.ndarray:
    """The documents (ascending global ids below ``total``, in scope) holding a term of ``weights`` with a weight."""
    docs = _union(total, *(ix.arrays(term)[0] for term, weight in weights.items() if weight))
    return docs if in_scope is None else docs[in_scope[docs]]


def _union(total: int, *parts: np.ndarray) -> np.ndarray:
    """The distinct global ids below ``total`` of ``parts``, ascending (a byte per message: faster than a sort of
    the concatenated postings, which can hold hundreds of thousands of ids)."""
    seen = np.zeros(total, dtype=bool)
    for part in parts:
        seen[part[part < total]] = True
    return np.flatnonzero(seen)


def _spread(docs: np.ndarray, values: np.ndarray, onto: np.ndarray) -> np.ndarray:
    """``values`` (one per ``docs``) placed on ``onto`` (a superset of ``docs``, ascending), 0 elsewhere."""
    out = np.zeros(len(onto))
    out[np.searchsorted(onto, docs)] = values
    return out


def _stats(ix: TermIndex, weights: dict[str, float], arrays: IndexArrays, in_scope: np.ndarray | None) -> CorpusStats:
    """BM25 statistics of the scope: all of the kind index, or the masked part of it."""
    if in_scope is None:
        n_docs = len(arrays.lengths)
        # The mean of the lengths without reading them: their sum is kept (an integer, so this is the very float
        # that lengths.mean() gives: every partial sum of integers below 2**53 is exact).
        return CorpusStats(n_docs, arrays.total_length / n_docs if n_docs else 0.0, {t: ix.df(t) for t in weights})
    n_docs = int(in_scope.sum())
    avg = float(arrays.lengths.whole()[in_scope].mean()) if n_docs else 0.0
    df = {}
    for term in weights:
        positions = ix.arrays(term)[0]
        positions = positions[positions < len(in_scope)]
        df[term] = int(in_scope[positions].sum())
    return CorpusStats(n_docs, avg, df)


def _context(docs: np.ndarray, lexical_at: _Lookup, arrays: IndexArrays, config: RankerConfig,
             weight: float) -> np.ndarray:
    """Each turn receives a share of its best neighbour's lexical score (a max, not a sum, so a run of weak turns
    does not add up to a false hit). Neighbours are turns of the same file; ``lexical_at`` gives any message's
    lexical score (0 for one that matches nothing)."""
    best = np.zeros(len(docs))
    for links in (arrays.prev, arrays.next):
        hop = links.take(docs)
        for step in range(config.context_span):
            has = hop >= 0
            np.maximum(best, np.where(has, lexical_at(np.where(has, hop, 0)), 0.0), out=best)
            if step + 1 < config.context_span:
                hop = np.where(has, links.take(np.where(has, hop, 0)), -1)
    best *= weight
    return best


def _thread_scores(
    ix: TermIndex, weights: dict[str, float], arrays: IndexArrays, files: list[int], config: RankerConfig
) -> np.ndarray:
    """BM25 of the query against each file taken as one document (a session or a day); 0 outside ``files``."""
    out = np.zeros(arrays.files)
    n = len(files)
    file_of = arrays.file_of.whole()  # the index's own array (a copy only of what was appended since it was kept)
    file_lengths = np.bincount(file_of, weights=arrays.lengths.whole(), minlength=arrays.files)
    avg = float(file_lengths[files].sum()) / n if n else 0.0
    if not avg:
        return out
    k1, b = config.bm25.k1, config.bm25.b
    norm = k1 * (1 - b + b * file_lengths / avg)
    in_files = np.zeros(arrays.files, dtype=bool)
    in_files[files] = True
    for term, weight in weights.items():
        positions, tf = ix.arrays(term)
        keep = positions < len(file_of)
        cf = np.bincount(file_of[positions[keep]], weights=tf[keep], minlength=arrays.files) * in_files
        df = int(np.count_nonzero(cf))
        if df:
            out += weight * math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * cf * (k1 + 1) / (cf + norm)
    return out


def _feedback_terms(
    ix: TermIndex,
    docs: np.ndarray,
    bm25: np.ndarray,
    arrays: IndexArrays,
    in_scope: np.ndarray | None,
    query_terms: Counter[str],
    config: RankerConfig,
) -> dict[str, float]:
    """RM3-style expansion terms and their query weights from the best first-pass documents (``bm25`` is per
    ``docs``, ascending global ids, so a stable sort breaks ties by global id as over the whole index)."""
    k = min(config.expansion_docs, int((bm25 > 0).sum()))
    if k <= 0:
        return {}
    # The k best, ties to the lower id, as a stable sort of all of them gives them: only the scores from the k-th
    # best up are sorted (a broad query's first pass holds hundreds of thousands).
    at_least = np.partition(bm25, len(bm25) - k)[len(bm25) - k]
    among = np.flatnonzero(bm25 >= at_least)
    picked = among[np.argsort(-bm25[among], kind="stable")[:k]]
    total_score = float(bm25[picked].sum())
    top = docs[picked]
    relevance: defaultdict[str, float] = defaultdict(float)  # shares are fractions (a Counter holds ints)
    for g, value in zip(top.tolist(), bm25[picked].tolist(), strict=True):
        share = float(value) / total_score
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
