"""Ranked, CJK-aware retrieval over a user's memory, with explainable scores.

::

    from agentmem_nb.retrieval import retrieve, search_messages, Scope
    r = retrieve(store.user("alice"), "where did we hike in May?", budget=10)   # anchors + windows, ≤ 10 messages
    for m in r.messages:
        print(m.message.anchor_line(), "<-", m.hit.explain() if m.hit else f"near #{m.anchor_id}")

    search_messages(user, "lyon")             # one keyword: exact substring search (the original semantics)
    search_messages(user, "moved to which city")  # several words: ranked, with windows

The store does not import this package; this package reads the store only through its public API.
"""

from agentmem_nb.retrieval.bm25 import BM25Params
from agentmem_nb.retrieval.dense import DenseIndex, Embedder, OpenAIEmbedder
from agentmem_nb.retrieval.hits import (
    Hit,
    Retrieval,
    RetrievedMessage,
    Scope,
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
    search_messages,
)
from agentmem_nb.retrieval.tokenize import Tokenizer, TokenizerConfig

__all__ = [
    "retrieve",
    "search_messages",
    "rank_hits",
    "is_keyword",
    "Retriever",
    "Scope",
    "Hit",
    "Signal",
    "TermMatch",
    "Retrieval",
    "RetrievedMessage",
    "IndexConfig",
    "RankerConfig",
    "BM25Params",
    "Tokenizer",
    "TokenizerConfig",
    "Embedder",
    "OpenAIEmbedder",
    "DenseIndex",
    "KindIndex",
    "ScopeView",
    "UserIndex",
    "user_index",
    "DEFAULT_BEFORE",
    "DEFAULT_AFTER",
]
