"""The read endpoints beyond the original: health, search, windows, long-term memory and its history, facts,
problems. Each is one call of the store's public API or of the one search (:func:`agentmem_nb.retrieval.search`, through
the service's :class:`~agentmem_nb.retrieval.Retriever`, so the API ranks as the agent's tools do),
turned into its shape in :mod:`agentmem_nb.api.schemas`.

=====================================================  ==========================================================
``GET /api/health``                                     no token needed; the model's name and whether it is offline
``GET /api/search?user_id&q[&session_id|&day][&how]``   exact (one keyword) or ranked (several words), explained
``GET /api/window?user_id&message_id[&session_id|&day]`` the messages around an anchor (``before``/``after``)
``GET /api/memory?user_id``                             ``memory.md`` now and its version
``GET /api/memory/history?user_id[&limit]``             the newest changes of ``memory.md``
``GET /api/facts?user_id``                              structured facts, when the server has a facts layer
``GET /api/problems?user_id``                           what is wrong in the user's files
=====================================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Query

from agentmem_nb.agent import ChatService
from agentmem_nb.api.errors import ApiError, documented
from agentmem_nb.api.routes import USER_ID
from agentmem_nb.api.schemas import (
    FactsResponse,
    HealthResponse,
    LongTermHistoryResponse,
    LongTermResponse,
    LongTermVersionItem,
    MessageItem,
    ProblemItem,
    ProblemsResponse,
    RetrievedItem,
    SearchHitItem,
    SearchResponse,
    SignalItem,
    TermItem,
    WindowResponse,
    jsonable_items,
    message_item,
    relative_path,
)
from agentmem_nb.retrieval import Scope, SearchResult
from agentmem_nb.store import MAX_SEARCH_LIMIT, MAX_WINDOW_SIDE, MemoryStore, UserMemory
from agentmem_nb.store.contract import KeepsFacts

__all__ = ["read_routes", "FactsProvider", "search_response"]

FactsProvider = Callable[[UserMemory], Sequence[Mapping[str, Any]]]
"""What ``create_app(facts=…)`` takes: the current facts of a user as JSON-ready rows (default: the store's own
facts layer, where its users keep facts)."""

MAX_HISTORY = 1000


def _scope(session_id: str | None, day: str | None) -> Scope:
    if session_id is not None and day is not None:
        raise ApiError(400, "give session_id (one thread) or day (one day file), not both", field="day")
    if session_id is not None:
        return Scope.session(session_id)
    return Scope.day(day) if day is not None else Scope.everything()


def search_response(result: SearchResult) -> SearchResponse:
    """The API shape of a search result."""
    scope = result.scope
    return SearchResponse(
        query=result.query, mode=result.mode, budget=result.budget,
        scope=scope.kind if scope.key is None else f"{scope.kind}:{scope.key}",
        hits=[SearchHitItem(rank=h.rank, score=h.score, mode=h.mode, layer=h.layer, key=h.key, explain=h.explain(),
                            signals=[SignalItem(name=s.name, value=s.value) for s in h.signals],
                            terms=[TermItem(term=t.term, contribution=t.contribution, signal=t.signal)
                                   for t in h.matched_terms],
                            message=MessageItem(**message_item(h.message)))
              for h in result.hits],
        messages=[RetrievedItem(layer=m.layer, key=m.key, anchor_id=m.anchor_id, is_anchor=m.is_anchor,
                                message=MessageItem(**message_item(m.message)))
                  for m in result.messages])


def read_routes(store: MemoryStore, service: ChatService, *, facts: FactsProvider | None,
                auth: bool, version: str) -> APIRouter:
    """The router of the read endpoints, bound to ``store`` (and ``service`` for health and its retriever)."""
    router = APIRouter(prefix="/api", tags=["memory"])

    @router.get("/health", response_model=HealthResponse, tags=["server"])
    async def health() -> HealthResponse:  # async: answers even while every pool thread waits on a busy session
        """The server answers (no token needed): its version, the model's name, whether it is the offline one."""
        return HealthResponse(version=version, model=service.model_name, offline=service.offline, auth=auth)

    @router.get("/search", response_model=SearchResponse, responses=documented(400, 401))
    def search_memory(
        user_id: str = USER_ID,
        q: str = Query(max_length=2000, description="one keyword (exact substring) or several words (ranked)"),
        session_id: str | None = Query(None, max_length=1024, description="search this thread only"),
        day: str | None = Query(None, max_length=64, description="search this day only (YYYY-MM-DD)"),
        how: Literal["auto", "exact", "ranked"] = Query("auto", description="force one mode (auto: by the query)"),
        budget: int = Query(20, ge=0, le=MAX_SEARCH_LIMIT, description="at most this many messages"),
    ) -> SearchResponse:
        """The one search of the package (the agent's tools, the inspector and the CLI run it too), with the
        explanation of every hit. Default scope: every day file."""
        # The service's retriever: the same index and ranking configuration the agent's search tools use.
        result = service.retriever.search(store.user(user_id), q, scope=_scope(session_id, day), budget=budget, how=how)
        return search_response(result)

    @router.get("/window", response_model=WindowResponse, responses=documented(400, 401))
    def window(
        user_id: str = USER_ID,
        message_id: int = Query(ge=1, le=2**53, description="the anchor"),
        session_id: str | None = Query(None, max_length=1024, description="a thread"),
        day: str | None = Query(None, max_length=64, description="or a day file (YYYY-MM-DD)"),
        before: int = Query(2, ge=0, le=MAX_WINDOW_SIDE),
        after: int = Query(2, ge=0, le=MAX_WINDOW_SIDE),
    ) -> WindowResponse:
        """The messages around ``message_id`` in one thread or one day, anchor included; an unknown anchor gives
        an empty list and the ``reason``."""
        if (session_id is None) == (day is None):
            raise ApiError(400, "give exactly one of session_id (a thread) or day (a day file, YYYY-MM-DD)",
                           field="session_id")
        user = store.user(user_id)
        found = (user.session_window(session_id, message_id, before, after) if session_id is not None
                 else user.daily_window(day or "", message_id, before, after))
        return WindowResponse(anchor_id=found.anchor_id, before=found.before, after=found.after, reason=found.reason,
                              items=[MessageItem(**message_item(m)) for m in found.messages])

    @router.get("/memory", response_model=LongTermResponse, responses=documented(400, 401))
    def long_term(user_id: str = USER_ID) -> LongTermResponse:
        """The user's long-term memory (``memory.md``) and the version that names this text."""
        snapshot = store.user(user_id).long_term.current()
        return LongTermResponse(version=snapshot.version, text=snapshot.text)

    @router.get("/memory/history", response_model=LongTermHistoryResponse, responses=documented(400, 401))
    def long_term_history(
        user_id: str = USER_ID,
        limit: int = Query(50, ge=0, le=MAX_HISTORY, description="the newest this many changes"),
    ) -> LongTermHistoryResponse:
        """The newest ``limit`` changes of ``memory.md``, oldest first, each with its text before and after."""
        history = store.user(user_id).long_term.history()
        newest = history[max(0, len(history) - limit):] if limit else []
        return LongTermHistoryResponse(total=len(history), items=[
            LongTermVersionItem(version=v.version, ts=v.ts.isoformat() if v.ts else None, source=v.source,
                                before=v.before, after=v.after)
            for v in newest])

    @router.get("/facts", response_model=FactsResponse, responses=documented(400, 401))
    def user_facts(user_id: str = USER_ID) -> FactsResponse:
        """The user's structured facts, when this server has a facts layer (``available`` says whether it does)."""
        user = store.user(user_id)
        if facts is not None:
            return FactsResponse(available=True, items=jsonable_items(facts(user)))
        if isinstance(user, KeepsFacts):  # the store's own facts layer: current facts and open conflicts
            return FactsResponse(available=True, items=jsonable_items([f.as_row() for f in user.facts.current()]))
        return FactsResponse(available=False, items=[])

    @router.get("/problems", response_model=ProblemsResponse, responses=documented(400, 401))
    def problems(user_id: str = USER_ID) -> ProblemsResponse:
        """What is wrong in the user's files (malformed lines, torn tails, legacy rows …); empty when nothing is."""
        root: Path | None = getattr(store, "root", None)  # a database store names its layers, not paths
        return ProblemsResponse(items=[
            ProblemItem(path=relative_path(p.path, root) if root is not None else p.path, kind=p.kind.value,
                        line=p.line, detail=p.detail.replace(str(root), ".") if root is not None else p.detail,
                        count=p.count)
            for p in store.user(user_id).problems()])

    return router
