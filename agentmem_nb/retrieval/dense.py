"""An optional dense (embedding) signal, fused additively with the lexical one.

An :class:`Embedder` is anything with ``embed(texts) -> list[list[float]]``. :class:`OpenAIEmbedder` calls an
OpenAI-compatible ``/v1/embeddings`` endpoint (configure ``base_url``, ``model``, ``api_key``). There is no offline
default: the static embeddings available offline (wordllama) score below BM25 on LoCoMo and their fusion with BM25
lowered recall (see ``../shared/data/locomo/README.md`` and the ablation in the evaluation report), so none is
switched on by default.

:class:`DenseIndex` keeps one vector per indexed message, embedding only messages added since the last query.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agentmem_nb.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np  # imported when a dense index is made, not with the module

    from agentmem_nb.retrieval.index import KindIndex, ScopeView

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
            raise ConfigError(f"embedding base_url {base_url!r} must start with http:// or https://")
        if not model:
            raise ConfigError("embedding model name is empty: set the model the server serves, "
                              "e.g. 'text-embedding-3-small'")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
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
    """Unit-normalised vectors of every message of the kind indexes it has seen, grown incrementally."""

    def __init__(self, embedder: Embedder, *, top_k: int = 50) -> None:
        import numpy as np

        self._np = np
        self.embedder = embedder
        self.top_k = top_k
        self._vectors: weakref.WeakKeyDictionary[KindIndex, np.ndarray] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def _matrix(self, index: KindIndex) -> np.ndarray | None:
        np = self._np
        with self._lock:
            current = self._vectors.get(index)
            have = 0 if current is None else current.shape[0]
            if have > len(index):  # the kind index started over
                current, have = None, 0
            if have < len(index):
                fresh = np.asarray(self.embedder.embed(index.texts(range(have, len(index)))), dtype=np.float32)
                norms = np.linalg.norm(fresh, axis=1, keepdims=True)
                fresh = fresh / np.where(norms == 0, 1.0, norms)
                current = fresh if current is None else np.vstack([current, fresh])
                self._vectors[index] = current
            return current

    def similarities(self, view: ScopeView, query: str) -> dict[int, float]:
        """Cosine of the query with the ``top_k`` most similar messages of the scope: ``{global id: cos}``."""
        np = self._np
        vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        matrix = self._matrix(view.index)
        if norm == 0 or matrix is None or not len(matrix):
            return {}
        sims = matrix @ (vector / norm)
        if not view.whole:
            scope = np.zeros(len(sims), dtype=bool)
            for follower in view.followers:
                gids = np.asarray(follower.gids, dtype=np.int64)
                scope[gids[gids < len(sims)]] = True
            sims = np.where(scope, sims, -np.inf)
        k = min(self.top_k, len(sims))
        best = np.argpartition(-sims, k - 1)[:k]
        return {int(i): float(sims[i]) for i in best if np.isfinite(sims[i])}
