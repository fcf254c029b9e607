"""Ranked, CJK-aware retrieval over a user's memory, with explainable scores.

::

    from agentmem_nb.retrieval import search, Scope
    search(user, "lyon")                                     # one keyword: exact substring search (original semantics)
    r = search(user, "where did we hike in May?", budget=10)  # several words: ranked, anchors + windows, ≤ 10 messages
    for m in r.messages:
        print(m.message.anchor_line(), "<-", m.hit.explain() if m.hit else f"near #{m.anchor_id}")
    search(user, "lyon", scope=Scope.session("s1"))          # or Scope.day("2026-04-08"); default: every day file

:func:`search` is the one search every caller uses (the agent's tools, the inspector, the CLI, the evaluation);
:func:`retrieve` and :func:`rank_hits` are its ranked path, for experiments. The store does not import this package;
this package reads the store only through its public API.
"""

from agentmem_nb.retrieval.bm25 import BM25Params
from agentmem_nb.retrieval.dense import DenseIndex, Embedder, OpenAIEmbedder
from agentmem_nb.retrieval.embed import HYBRID_DENSE_WEIGHT, LocalEmbedder, dense_available, hybrid_retriever
from agentmem_nb.retrieval.hits import (
    Hit,
    RetrievedMessage,
    Scope,
    SearchResult,
    Signal,
    TermMatch,
)
from agentmem_nb.retrieval.index import (
    IndexConfig,
    KindIndex,
    ScopeView,
    UserIndex,
    user_index,
)
from agentmem_nb.retrieval.ranker import RankerConfig
from agentmem_nb.retrieval.retriever import (
    DEFAULT_AFTER,
    DEFAULT_BEFORE,
    Retriever,
    is_keyword,
    rank_hits,
    retrieve,
    search,
)
from agentmem_nb.retrieval.tokenize import Tokenizer, TokenizerConfig

__all__ = [
    "search",
    "retrieve",
    "rank_hits",
    "is_keyword",
    "Retriever",
    "Scope",
    "Hit",
    "Signal",
    "TermMatch",
    "SearchResult",
    "RetrievedMessage",
    "IndexConfig",
    "RankerConfig",
    "BM25Params",
    "Tokenizer",
    "TokenizerConfig",
    "Embedder",
    "OpenAIEmbedder",
    "LocalEmbedder",
    "hybrid_retriever",
    "dense_available",
    "HYBRID_DENSE_WEIGHT",
    "DenseIndex",
    "KindIndex",
    "ScopeView",
    "UserIndex",
    "user_index",
    "DEFAULT_BEFORE",
    "DEFAULT_AFTER",
]
