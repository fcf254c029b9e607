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

    Every signal is a few numpy expressions over the candidates (the query terms' postings in scope, their
    neighbours, the dense hits), so the cost and the memory grow with the postings of the query terms, not with the
    number of messages or files; the per-signal and per-term breakdown is
    computed for the returned candidates only. ``Candidate.layer`` indexes ``view.followers``.
    """
    ranges, words = extract_dates(query) if config.date_boost else ([], query)
    query_terms = Counter(tokenizer.terms(words))
    if not view.followers or not (query_terms or (dense is not None and config.dense_weight)):
        return []
    ix = view.index.terms
    arrays = view.index.arrays()
    total = len(arrays.lengths)
    local = {f.file_id: i for i, f in enumerate(view.followers)}
    in_scope = _in_scope(view, exclude)
    weights = {t: float(n) for t, n in query_terms.items()}
    stats = _stats(ix, weights, arrays, in_scope)
    # Only candidates are scored (the query terms' postings in scope, their neighbours, the dense hits): arrays the
    # size of the candidates, not of the index (at 1M messages each full-length score array was 8 MB, ~110 MiB in
    # all). The values are those the full-length expressions give, element for element.
    first = _postings(ix, weights, total, in_scope)
    bm25 = score_docs(first, ix, weights, stats, config.bm25, lengths=arrays.lengths)

    extra: dict[str, float] = {}
    extra_stats = stats
    docs = first
    expansion = np.zeros(len(first))
    if config.expansion_docs and config.expansion_terms and config.expansion_weight and bm25.any():
        extra = _feedback_terms(ix, first, bm25, arrays, in_scope, query_terms, config)
        if extra:
            extra_stats = _stats(ix, extra, arrays, in_scope)
            docs = _union(total, first, _postings(ix, extra, total, in_scope))
            bm25 = _spread(first, bm25, docs)
            expansion = score_docs(docs, ix, extra, extra_stats, config.bm25, lengths=arrays.lengths)
    lexical_docs = docs
    matched_docs = docs[(bm25 + expansion) > 0] if extra else docs[bm25 > 0]

    dense_sims: dict[int, float] = {}
    if dense is not None and config.dense_weight:
        dense_sims = {gid: sim for gid, sim in dense.similarities(view, query).items() if sim > 0 and gid < total}
    near = [matched_docs]
    if config.context_weight and config.context_span:
        for links in (arrays.prev, arrays.next):
            hop = matched_docs
            for _ in range(config.context_span):
                hop = links[hop]
                hop = hop[hop >= 0]
                near.append(hop)
    docs = _union(total, lexical_docs, *near, np.fromiter(dense_sims, dtype=np.int64, count=len(dense_sims)))
    if not len(docs):
        return []
    bm25 = _spread(lexical_docs, bm25, docs)
    lexical = bm25
    if extra:
        lexical = bm25 + _spread(lexical_docs, expansion, docs)
    matched = lexical > 0
    score = lexical.copy()

    # A signal that is off (or has nothing to give) gets no array at all: None below.
    context: np.ndarray | None = None
    if config.context_weight and config.context_span:
        context = _context(docs, lexical, arrays, config)
        score += context
    thread: np.ndarray | None = None
    if config.thread_weight and len(view.followers) > 1:
        per_file = _thread_scores(ix, weights, arrays, list(local), config)
        thread = config.thread_weight * per_file[arrays.file_of[docs]] * matched
        score += thread
    dense_part: np.ndarray | None = None
    if dense_sims:
        dense_part = np.zeros(len(docs))
        for gid, sim in dense_sims.items():
            dense_part[np.searchsorted(docs, gid)] = config.dense_weight * sim
        score += dense_part
    in_range: np.ndarray | None = None
    if ranges:
        in_range = np.zeros(len(docs), dtype=bool)
        days = arrays.days[docs]
        for r in ranges:
            in_range |= (days >= r.first.toordinal()) & (days <= r.last.toordinal())
        score += config.date_boost * score * in_range

    positive = np.flatnonzero(score > 0)
    if not len(positive):
        return []
    found = docs[positive]
    # Best first; ties go to the message indexed last (in a memory, the latest statement is the one that holds).
    order = np.lexsort((-found, -score[positive]))[:limit]
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
        g = int(docs[i])
        signals: dict[str, float] = {}
        for name, value in (("bm25", bm25[i]), ("expansion", lexical[i] - bm25[i]),
                            ("context", 0.0 if context is None else context[i]),
                            ("thread", 0.0 if thread is None else thread[i]),
                            ("dense", 0.0 if dense_part is None else dense_part[i])):
            if value > 0:
                signals[name] = float(value)
        if in_range is not None and in_range[i]:
            signals["date"] = config.date_boost * sum(signals.values())
        out.append(Candidate(local[int(arrays.file_of[g])], int(arrays.position_of[g]), sum(signals.values()),
                             signals, explainer(g)))
    return out


def match_count(view: ScopeView, query: str, tokenizer: Tokenizer, config: RankerConfig = RankerConfig()) -> int:
    """How many messages of ``view`` hold at least one of ``query``'s terms: the messages a ranked search draws its
    hits from (before expansion and context), the "of N" a person sees beside the hits shown."""
    words = extract_dates(query)[1] if config.date_boost else query
    query_terms = Counter(tokenizer.terms(words))
    if not view.followers or not query_terms:
        return 0
    total = len(view.index.arrays().lengths)
    weights = {t: float(n) for t, n in query_terms.items()}
    return int(len(_postings(view.index.terms, weights, total, _in_scope(view, ()))))


def _in_scope(view: ScopeView, exclude: Sequence[int]) -> np.ndarray | None:
    """Which global ids are in the view's files and not excluded (``None``: every one)."""
    arrays = view.index.arrays()
    total = len(arrays.lengths)
    in_scope: np.ndarray | None = None
    if not view.whole:
        in_scope = np.zeros(arrays.files, dtype=bool)
        in_scope[[f.file_id for f in view.followers]] = True
        in_scope = in_scope[arrays.file_of]
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
        return CorpusStats(n_docs, float(arrays.lengths.mean()) if n_docs else 0.0, {t: ix.df(t) for t in weights})
    n_docs = int(in_scope.sum())
    avg = float(arrays.lengths[in_scope].mean()) if n_docs else 0.0
    df = {}
    for term in weights:
        positions = ix.arrays(term)[0]
        positions = positions[positions < len(in_scope)]
        df[term] = int(in_scope[positions].sum())
    return CorpusStats(n_docs, avg, df)


def _context(docs: np.ndarray, lexical: np.ndarray, arrays: IndexArrays, config: RankerConfig) -> np.ndarray:
    """Each turn receives a share of its best neighbour's lexical score (a max, not a sum, so a run of weak turns
    does not add up to a false hit). Neighbours are turns of the same file. ``docs`` (ascending) holds every
    document with a lexical score and every neighbour within ``context_span`` of one; ``lexical`` is per ``docs``."""

    slot = np.full(len(arrays.prev), len(docs), dtype=np.int32 if len(docs) < 2**31 - 1 else np.int64)
    slot[docs] = np.arange(len(docs))  # global id -> its place in docs; len(docs) (a 0 appended below) elsewhere
    padded = np.append(lexical, 0.0)

    best = np.zeros(len(docs))
    for links in (arrays.prev, arrays.next):
        hop = links[docs]
        for _ in range(config.context_span):
            has = hop >= 0
            best = np.maximum(best, np.where(has, padded[slot[np.where(has, hop, 0)]], 0.0))
            hop = np.where(has, links[np.where(has, hop, 0)], -1)
    return config.context_weight * best


def _thread_scores(
    ix: TermIndex, weights: dict[str, float], arrays: IndexArrays, files: list[int], config: RankerConfig
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
    picked = np.argsort(-bm25, kind="stable")[:k]
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
