"""The one search of a user's memory, :func:`search`, and its ranked path.

* :func:`search` — what every caller runs (the agent's tools, the inspector, the CLI, the evaluation): a single
  keyword keeps the original exact (substring) semantics; several words, or a keyword with no exact match, go
  ranked. It takes one :class:`~agentmem_nb.retrieval.hits.Scope` and a budget and returns explained hits.
  The rule that chooses between the two modes lives here and nowhere else (:func:`is_keyword`).
* :func:`retrieve` — the ranked path: anchors expanded with their neighbours under a budget of N messages in total.
* :func:`rank_hits` — the ranked anchors alone, each with its explanation.

The exact path is the store's primitive (:meth:`~agentmem_nb.store.MessageFile.search`, through ``UserMemory``);
this module only chooses the files a scope covers and merges their hits. A redacted message is never returned, as a
hit or as a neighbour (:mod:`agentmem_nb.store.redactions`).

A :class:`Retriever` holds the index and ranking configuration; the agent gets one as a constructor argument
(``ChatService(store, retriever=...)``), the module functions use a shared default instance.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import Message
from agentmem_nb.retrieval.dense import DenseIndex
from agentmem_nb.retrieval.hits import (
    Hit,
    RetrievedMessage,
    Scope,
    SearchResult,
    Signal,
    TermMatch,
)
from agentmem_nb.retrieval.index import (
    FileFollower,
    IndexConfig,
    ScopeView,
    UserIndex,
    user_index,
)
from agentmem_nb.retrieval.parts import MERGE_RULES, MergeRule, question_parts
from agentmem_nb.retrieval.ranker import Candidate, RankerConfig, match_count, rank
from agentmem_nb.store import MAX_SEARCH_LIMIT, MAX_WINDOW_SIDE, UserMemory
from agentmem_nb.store.redactions import redacted_items

__all__ = [
    "Retriever",
    "merge_ranked",
    "rank_hits",
    "retrieve",
    "search",
    "is_keyword",
    "DEFAULT_BEFORE",
    "DEFAULT_AFTER",
    "DEFAULT_WINDOW",
    "WINDOW_MODES",
    "WindowMode",
]

WindowMode = Literal["dialogue", "replies", "fixed"]
"""How an anchor's window opens (``before``/``after`` are the most it may take on each side):

* ``"dialogue"`` — along the question/answer structure of a conversation: the turn after an anchor that asks a
  question (its answer), the turn before an anchor that answers one (its question). Other anchors come alone, which
  leaves the budget for more anchors.
* ``"replies"`` — only the answer after a question.
* ``"fixed"`` — always ``before`` turns before and ``after`` turns after.
"""
WINDOW_MODES: tuple[str, ...] = ("dialogue", "replies", "fixed")
DEFAULT_WINDOW: WindowMode = "replies"
DEFAULT_BEFORE = 1
DEFAULT_AFTER = 1
"""The most neighbours a ranked hit brings on each side (see :data:`WindowMode`), in :func:`search` and so in the
agent's tools and the evaluation. Any window is also held to the store's cap, ``store.MAX_WINDOW_SIDE``."""

SearchHow = Literal["auto", "exact", "ranked"]
"""Which mode :func:`search` runs: ``auto`` applies :func:`is_keyword`; ``exact`` and ``ranked`` force one."""
_HOWS: tuple[str, ...] = ("auto", "exact", "ranked")


def is_keyword(query: str) -> bool:
    """True if ``query`` is a single keyword (no whitespace inside): it gets exact substring search first.

    THE rule of :func:`search` (one keyword: exact, several words: ranked); no other module applies it.
    """
    return len(query.split()) == 1


@dataclass(frozen=True, slots=True)
class _Slot:
    layer: int
    position: int
    anchor_rank: int  # rank of the anchor that brought it (for thread ordering)
    anchor_position: int


class Retriever:
    """Ranked retrieval over users' memories with one index and ranking configuration.

    The module functions (:func:`search`, :func:`retrieve`, …) use a shared default instance; build your own
    to change the configuration (e.g. to plug in an embedder), and hand it to whoever searches::

        retriever = Retriever(ranker=RankerConfig(embedder=my_embedder, dense_weight=2.0))
        retriever.search(user, "where did we go?", budget=10)
        ChatService(store, retriever=retriever)   # the agent's search tools use it

    Options measured in ``benchmarks/DENSE.md`` (each off by default: none raised the cross-validated figure on
    LoCoMo): ``parts`` — a question about several things is also ranked part by part and the lists merged
    (:mod:`agentmem_nb.retrieval.parts`; ``part_names=False`` leaves out the rule of uncoordinated names);
    ``dense_slot`` — that many nearest messages by the embedding alone take the anchors after the fused best;
    ``diversity`` — maximal marginal relevance on the stored vectors (each next anchor's score, as a share of the
    best, minus ``diversity`` times its cosine with the nearest anchor already chosen). The last two need a dense
    signal and do nothing without one.
    """

    def __init__(self, *, index: IndexConfig | None = None, ranker: RankerConfig | None = None,
                 parts: MergeRule = "whole", part_names: bool = True, dense_slot: int = 0,
                 diversity: float = 0.0) -> None:
        if parts not in MERGE_RULES:
            raise InvalidArgument(f"unknown merge rule parts={parts!r}: use one of {', '.join(MERGE_RULES)}")
        self.index_config = index or IndexConfig()
        self.ranker = ranker or RankerConfig()
        self.parts: MergeRule = parts
        self.part_names = part_names
        self.dense_slot = max(0, int(dense_slot))
        if diversity < 0:
            raise InvalidArgument(f"diversity must be >= 0, got {diversity!r}")
        self.diversity = float(diversity)
        self._dense = (
            DenseIndex(self.ranker.embedder, top_k=self.ranker.dense_top_k)
            if self.ranker.embedder is not None and self.ranker.dense_weight else None
        )

    def __repr__(self) -> str:
        return (f"Retriever(index={self.index_config!r}, ranker={self.ranker!r}, parts={self.parts!r}, "
                f"dense_slot={self.dense_slot}, diversity={self.diversity})")

    # ------------------------------------------------------------------ plumbing

    def user_index(self, user: UserMemory) -> UserIndex:
        """The (shared, incrementally maintained) index of ``user``."""
        return user_index(user, self.index_config)

    def view(self, user: UserMemory, scope: Scope) -> ScopeView:
        """The up-to-date part of the user's index that ``scope`` covers (reads only what was appended)."""
        ui = self.user_index(user)
        return ui.view(scope.layer, None if scope.kind == "all" else scope.key)

    def _candidates(
        self, user: UserMemory, query: str, scope: Scope, limit: int, exclude: Collection[ItemKey] = ()
    ) -> tuple[tuple[FileFollower, ...], list[Candidate]]:
        parts = question_parts(query, names=self.part_names) if self.parts != "whole" else ()
        if self._dense is not None:
            # The question (and its parts, one batch) embedded in a worker while the index is brought up to date
            # and the lexical ranking runs: started first, before the view (~3 ms at 10k messages).
            self._dense.start([query, *parts])
        view = self.view(user, scope)
        ui = self.user_index(user)
        if self._dense is not None:
            # Vectors for every message before ranking: read back from the user's folder, only new ones embedded.
            self._dense.prepare(view.index, user)
        gids = [view.followers[li].gids[pos] for li, pos in _positions(view.followers, exclude)] if exclude else []
        whole = rank(view, query, ui.tokenizer, self.ranker, limit=limit, dense=self._dense, exclude=gids)
        if self.diversity and self._dense is not None and len(whole) > 1:
            whole = self._diversified(view, whole)
        merged = whole
        if parts:
            lists = [whole]
            for part in parts:
                found = rank(view, part, ui.tokenizer, self.ranker, limit=limit, dense=self._dense, exclude=gids)
                for candidate in found:
                    candidate.part = part
                lists.append(found)
            merged = merge_ranked(self.parts, lists, limit)
        if self.dense_slot and self._dense is not None and merged:
            # The nearest messages by the embedding alone take the anchors after the first (moved up if the fused
            # ranking had them lower): a paraphrase the words miss entirely still reaches the budget.
            first = (merged[0].layer, merged[0].position)
            extra = [c for c in self._dense_only(view, query, set(gids)) if (c.layer, c.position) != first]
            extra = extra[: self.dense_slot]
            moved = {(c.layer, c.position) for c in extra}
            merged = [merged[0], *extra, *(c for c in merged[1:] if (c.layer, c.position) not in moved)][:limit]
        return view.followers, merged

    def _diversified(self, view: ScopeView, ranked: list[Candidate]) -> list[Candidate]:
        """``ranked`` re-ordered by maximal marginal relevance: each next anchor is the one whose score (as a share of
        the best) minus ``diversity`` times its cosine with the nearest anchor already chosen is highest. Turns that
        say the same thing again give their place to turns about something else the question may also need."""
        import numpy as np

        assert self._dense is not None
        gids = [view.followers[c.layer].gids[c.position] for c in ranked]
        vectors = self._dense.vectors(view.index, gids)
        if vectors is None:
            return ranked
        relevance = np.array([c.score for c in ranked]) / max(ranked[0].score, 1e-12)
        similar = np.einsum("ik,jk->ij", vectors, vectors)  # not `@`: see DenseIndex.similarities
        nearest = np.full(len(ranked), -np.inf)
        left = np.ones(len(ranked), dtype=bool)
        order = []
        for _ in range(len(ranked)):
            value = relevance - self.diversity * np.where(np.isfinite(nearest), nearest, 0.0)
            pick = int(np.flatnonzero(left)[np.argmax(value[left])])
            order.append(pick)
            left[pick] = False
            np.maximum(nearest, similar[pick], out=nearest)
        return [ranked[i] for i in order]

    def _dense_only(self, view: ScopeView, query: str, exclude: set[int]) -> list[Candidate]:
        """The scope's messages ranked by the dense signal alone (its question vector is memoised: no new embedding)."""
        assert self._dense is not None
        arrays = view.index.arrays()
        total = len(arrays.lengths)
        local = {f.file_id: i for i, f in enumerate(view.followers)}
        sims = self._dense.similarities(view, query)
        out = []
        for gid, sim in sorted(sims.items(), key=lambda kv: (-kv[1], -kv[0])):
            if sim <= 0 or gid >= total or gid in exclude:
                continue
            value = self.ranker.dense_weight * sim
            out.append(Candidate(local[arrays.file_of.item(gid)], arrays.position_of.item(gid), value,
                                 {"dense": value}))
        return out

    # ------------------------------------------------------------------ public

    def embed_pending(self, user: UserMemory, *, scope: Scope | None = None) -> int:
        """Embed (in batches) the messages of ``scope``'s kind index that have no vector yet, and keep them beside
        the data; returns how many were embedded (0 without a dense signal). Call it off the hot path — after
        appending, or before serving — so that no query pays for it; a query does it otherwise."""
        if self._dense is None:
            return 0
        before = self._dense.embedded
        self._dense.prepare(self.view(user, scope or Scope.everything()).index, user)
        return self._dense.embedded - before

    def count_matches(self, user: UserMemory, query: str, *, scope: Scope | None = None) -> int:
        """How many messages of ``scope`` (default: everything) a ranked search for ``query`` draws from: those
        holding at least one of its terms, redacted ones left out. :meth:`search` returns at most ``budget`` of them;
        this is the "of N"."""
        scope = scope or Scope.everything()
        view = self.view(user, scope)
        redacted = _hiding_redacted(user, ())  # a redacted message is never a hit, so it is not counted either
        gids = [view.followers[li].gids[pos] for li, pos in _positions(view.followers, redacted)] if redacted else []
        return match_count(view, query, self.user_index(user).tokenizer, self.ranker, exclude=gids)

    def rank_hits(
        self,
        user: UserMemory,
        query: str,
        *,
        scope: Scope | None = None,
        limit: int = 20,
        exclude: Collection[ItemKey] = (),
    ) -> list[Hit]:
        """The ``limit`` best messages for ``query`` in ``scope`` (default: everything), best first.

        ``exclude`` lists ``(layer, key, message_id)`` items never to return (e.g. the question being asked, which
        was persisted before the agent searched).
        """
        scope = scope or Scope.everything()
        limit = max(0, min(int(limit), MAX_SEARCH_LIMIT))
        exclude = _hiding_redacted(user, exclude)
        layers, chosen = self._candidates(user, query, scope, limit + len(exclude), exclude)
        if exclude:
            chosen = [c for c in chosen if _item(layers, c.layer, c.position) not in exclude][:limit]
        loaded = _load(layers, [(c.layer, c.position) for c in chosen])
        return [_hit(layers, c, rank_no, loaded[(c.layer, c.position)]) for rank_no, c in enumerate(chosen, start=1)]

    def retrieve(
        self,
        user: UserMemory,
        query: str,
        *,
        scope: Scope | None = None,
        budget: int = 10,
        before: int = DEFAULT_BEFORE,
        after: int = DEFAULT_AFTER,
        window: WindowMode = DEFAULT_WINDOW,
        exclude: Collection[ItemKey] = (),
    ) -> SearchResult:
        """The ranked path of :meth:`search`: anchors in rank order, each brought with up to ``before``/``after`` neighbours, until ``budget`` messages.

        The budget counts every message returned (anchors and neighbours); a message reached twice is returned once.
        ``window`` says which neighbours an anchor brings (see :data:`WindowMode`). A window is filled anchor
        first, then the turns after it, then those before it; the last window may be cut short by the budget.
        The result is grouped by thread, the thread of the best anchor first, chronological within a thread.
        """
        scope = scope or Scope.everything()
        budget = max(0, min(int(budget), MAX_SEARCH_LIMIT))
        before = max(0, min(int(before), MAX_WINDOW_SIDE))
        after = max(0, min(int(after), MAX_WINDOW_SIDE))
        if window not in WINDOW_MODES:
            raise InvalidArgument(f"unknown window mode {window!r}: use one of {', '.join(WINDOW_MODES)}")
        exclude = _hiding_redacted(user, exclude)
        # An anchor already inside an earlier window adds no message, so rank a few more than the budget.
        layers, candidates = self._candidates(user, query, scope, 2 * budget + 10 + len(exclude), exclude)
        skip = {(li, pos) for li, pos in _positions(layers, exclude)} if exclude else set()
        slots: dict[tuple[int, int], _Slot] = {}
        anchors: list[Candidate] = []
        for candidate in candidates:
            if len(slots) >= budget:
                break
            if (candidate.layer, candidate.position) in skip:
                continue
            anchors.append(candidate)
            li, pos = candidate.layer, candidate.position
            size = len(layers[li])
            if window == "dialogue":
                asks = layers[li].asks
                # A question's answer is the next turn; an answer's question is the turn before it.
                nb = before if pos > 0 and asks[pos - 1] else 0
                na = after if asks[pos] else 0
            elif window == "replies":
                nb, na = 0, (after if layers[li].asks[pos] else 0)
            else:
                nb, na = before, after
            order = [pos, *range(pos + 1, min(size, pos + na + 1)), *range(pos - 1, max(-1, pos - nb - 1), -1)]
            earlier = slots.get((li, pos))
            if earlier is not None:
                # Already here as a neighbour: it is a hit in its own right, so it becomes its own anchor.
                slots[(li, pos)] = _Slot(li, pos, earlier.anchor_rank, pos)
            for other in order:
                if len(slots) >= budget:
                    break
                if (li, other) not in slots and (li, other) not in skip:
                    slots[(li, other)] = _Slot(li, other, len(anchors), pos)
        loaded = _load(layers, list(slots))
        hits = [_hit(layers, c, n, loaded[(c.layer, c.position)]) for n, c in enumerate(anchors, start=1)]
        hit_at = {(c.layer, c.position): h for c, h in zip(anchors, hits, strict=True)}
        thread_rank: dict[int, int] = {}
        for slot in slots.values():
            thread_rank[slot.layer] = min(thread_rank.get(slot.layer, slot.anchor_rank), slot.anchor_rank)
        ordered = sorted(slots.values(), key=lambda s: (thread_rank[s.layer], s.layer, s.position))
        messages = tuple(
            RetrievedMessage(
                message=loaded[(s.layer, s.position)],
                layer=layers[s.layer].kind,
                key=layers[s.layer].key,
                anchor_id=layers[s.layer].message_ids[s.anchor_position],
                hit=hit_at.get((s.layer, s.position)),
            )
            for s in ordered
        )
        return SearchResult(query, scope, "ranked", budget, tuple(hits), messages)

    def search(
        self,
        user: UserMemory,
        query: str,
        *,
        scope: Scope | None = None,
        budget: int = 20,
        before: int = DEFAULT_BEFORE,
        after: int = DEFAULT_AFTER,
        window: WindowMode = DEFAULT_WINDOW,
        exclude: Collection[ItemKey] = (),
        how: SearchHow = "auto",
    ) -> SearchResult:
        """Search ``scope`` (default: every day file) for ``query``; at most ``budget`` messages come back.

        A single keyword (:func:`is_keyword`) keeps the original semantics — casefolded substring, the last
        ``budget`` hits in chronological order, no window (``mode="exact"``). Several words, or a keyword that
        occurs nowhere, are ranked and expanded into windows of up to ``before``/``after`` neighbours under a budget
        of ``budget`` messages (``mode="ranked"``; ``before=after=0`` gives the ranked anchors alone). ``how``
        forces one mode (the CLI's ``search`` command is exact only). ``exclude`` lists items never to return, e.g.
        the question being answered, which was persisted before the agent searched.

        >>> # search(user, "lyon", scope=Scope.session("s1")).mode       -> 'exact'
        >>> # search(user, "which city did I move to").hits[0].explain() -> 'score 7.31 = bm25 5.20 + ...'
        """
        if how not in _HOWS:
            raise InvalidArgument(f"unknown search mode {how!r}: use one of {', '.join(_HOWS)}")
        scope = scope or Scope.everything()
        budget = max(0, min(int(budget), MAX_SEARCH_LIMIT))
        if how == "exact" or (how == "auto" and is_keyword(query)):
            keyword = query.strip()
            found = _exact(user, keyword, scope, budget + len(exclude))
            if exclude:
                found = [m for m in found if ItemKey.of(m, scope.layer) not in exclude]
            found = found[-budget:] if budget > 0 else []
            if found or how == "exact":
                hits = tuple(
                    Hit(message=m, layer=scope.layer, key=ItemKey.of(m, scope.layer).key, rank=n, score=1.0,
                        signals=(Signal("keyword", 1.0),), matched_terms=(TermMatch(keyword, 1.0, "keyword"),),
                        mode="exact")
                    for n, m in enumerate(found, start=1)
                )
                messages = tuple(RetrievedMessage(h.message, h.layer, h.key, h.message.message_id, h) for h in hits)
                return SearchResult(query, scope, "exact", budget, hits, messages)
        return self.retrieve(user, query, scope=scope, budget=budget, before=before, after=after, window=window,
                             exclude=exclude)


def merge_ranked(rule: MergeRule, lists: Sequence[Sequence[Candidate]], limit: int) -> list[Candidate]:
    """The anchors of a question ranked as a whole (``lists[0]``) and part by part (the others), merged by ``rule``
    (:data:`~agentmem_nb.retrieval.parts.MergeRule`), each message once, at most ``limit``. A message keeps the
    ``part`` of the list that brought it in first."""
    seen: set[tuple[int, int]] = set()
    out: list[Candidate] = []

    def take(candidate: Candidate) -> bool:
        key = (candidate.layer, candidate.position)
        if key in seen:
            return False
        seen.add(key)
        out.append(candidate)
        return True

    whole, rest = (lists[0], lists[1:]) if lists else ([], [])
    if rule == "interleave":
        for row in zip_longest(*lists):
            for candidate in row:
                if candidate is not None:
                    take(candidate)
    else:
        head = whole[:1] if rule == "reserve" else []
        for candidate in head:
            take(candidate)
        if rule == "reserve":
            for found in rest:  # one reserved anchor per part: its best not yet taken
                next((c for c in found if take(c)), None)
        for candidate in whole:
            take(candidate)
    return out[:limit]


def _hiding_redacted(user: UserMemory, exclude: Collection[ItemKey]) -> Collection[ItemKey]:
    """``exclude`` and every redacted message: a search never returns one, as a hit or as a neighbour (the rule of
    :mod:`agentmem_nb.store.redactions`; the exact path gets it from ``UserMemory.search_*``)."""
    redacted = redacted_items(user)
    return {*exclude, *redacted} if redacted else exclude


def _item(layers: Sequence[FileFollower], li: int, pos: int) -> ItemKey:
    return ItemKey(layers[li].kind, layers[li].key, layers[li].message_ids[pos])


def _positions(layers: Sequence[FileFollower], items: Collection[ItemKey]) -> list[tuple[int, int]]:
    """``(layer, position)`` of the given items that lie in ``layers``."""
    where = {(layer.kind, layer.key): li for li, layer in enumerate(layers)}
    out = []
    for kind, key, message_id in items:
        li = where.get((kind, key))
        if li is not None:
            pos = layers[li].layer.position_of(message_id)
            if pos is not None:
                out.append((li, pos))
    return out


def _exact(user: UserMemory, keyword: str, scope: Scope, limit: int) -> list[Message]:
    """The last ``limit`` messages of ``scope`` containing ``keyword``, oldest first (the store's exact search)."""
    if scope.kind == "session":
        return user.search_session(scope.key or "", keyword, limit=limit)
    if scope.kind == "day":
        return user.search_daily(keyword, day=scope.key, limit=limit)
    if scope.layer == "daily":
        return user.search_daily(keyword, limit=limit)
    found: list[Message] = []
    for session_id in user.session_ids():
        found += user.search_session(session_id, keyword, limit=limit)
    found.sort(key=lambda m: m.ts)
    return found[-limit:] if limit else []


def _load(layers: Sequence[FileFollower], wanted: list[tuple[int, int]]) -> dict[tuple[int, int], Message]:
    """Read the messages at ``(layer, position)``: one read per contiguous run, through the public window API."""
    out: dict[tuple[int, int], Message] = {}
    by_layer: dict[int, list[int]] = {}
    for li, pos in wanted:
        by_layer.setdefault(li, []).append(pos)
    for li, positions in by_layer.items():
        layer = layers[li]
        positions = sorted(set(positions))
        runs: list[list[int]] = []
        for pos in positions:
            if runs and pos == runs[-1][-1] + 1 and len(runs[-1]) <= MAX_WINDOW_SIDE:
                runs[-1].append(pos)
            else:
                runs.append([pos])
        for run in runs:
            window = layer.layer.window(layer.message_ids[run[0]], 0, len(run) - 1)
            expected = [layer.message_ids[p] for p in run]
            got: list[Message | None] = list(window.messages)
            if [m.message_id for m in window.messages] != expected:
                # Legacy files may repeat an id, so the window opened elsewhere: fetch one by one instead.
                got = [layer.layer.get(mid) for mid in expected]
            for pos, message in zip(run, got, strict=True):
                if message is not None:
                    out[(li, pos)] = message
    return out


def _hit(layers: Sequence[FileFollower], candidate: Candidate, rank_no: int, message: Message) -> Hit:
    layer = layers[candidate.layer]
    order = ("bm25", "expansion", "context", "thread", "dense", "date")
    signals = tuple(Signal(name, candidate.signals[name]) for name in order if name in candidate.signals)
    terms = tuple(
        TermMatch(term, value, signal)
        for (signal, term), value in sorted(candidate.terms.items(), key=lambda kv: -kv[1])
    )
    return Hit(
        message=message,
        layer=layer.kind,
        key=layer.key,
        rank=rank_no,
        score=sum(s.value for s in signals),
        signals=signals,
        matched_terms=terms,
        part=candidate.part,
    )


_DEFAULT = Retriever()


def rank_hits(
    user: UserMemory,
    query: str,
    *,
    scope: Scope | None = None,
    limit: int = 20,
    exclude: Collection[ItemKey] = (),
) -> list[Hit]:
    """The ``limit`` best messages for ``query`` (see :meth:`Retriever.rank_hits`)."""
    return _DEFAULT.rank_hits(user, query, scope=scope, limit=limit, exclude=exclude)


def retrieve(
    user: UserMemory,
    query: str,
    *,
    scope: Scope | None = None,
    budget: int = 10,
    before: int = DEFAULT_BEFORE,
    after: int = DEFAULT_AFTER,
    window: WindowMode = DEFAULT_WINDOW,
    exclude: Collection[ItemKey] = (),
) -> SearchResult:
    """Anchors plus windows under a budget of messages, always ranked (see :meth:`Retriever.retrieve`).

    >>> # r = retrieve(store.user("alice"), "where did we hike in May?", budget=10)
    >>> # [m.message.anchor_line() for m in r.messages]
    """
    return _DEFAULT.retrieve(user, query, scope=scope, budget=budget, before=before, after=after, window=window,
                             exclude=exclude)


def search(
    user: UserMemory,
    query: str,
    *,
    scope: Scope | None = None,
    budget: int = 20,
    before: int = DEFAULT_BEFORE,
    after: int = DEFAULT_AFTER,
    window: WindowMode = DEFAULT_WINDOW,
    exclude: Collection[ItemKey] = (),
    how: SearchHow = "auto",
) -> SearchResult:
    """THE search of a user's memory, with the default :class:`Retriever` (see :meth:`Retriever.search`).

    >>> # search(store.user("alice"), "lyon", scope=Scope.session("s1"), budget=10)
    """
    return _DEFAULT.search(user, query, scope=scope, budget=budget, before=before, after=after, window=window,
                           exclude=exclude, how=how)
