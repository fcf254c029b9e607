"""A fresh process's first ranked query over a persisted index: what it copies, and the columns that make it cheap.

Issue 12's cold-start target is ≤ 150 MiB at 1M messages (``benchmarks/COLD.md``). The per-message arrays of a
restored index were copied out of the cache file (53 MB at 1M) and copied again for every query (45 MiB); now they
are numpy views of the mapped file (:class:`~agentmem_nb.retrieval.bm25.Column`), appends kept in a small tail on
top. Asserted in bytes allocated (``tracemalloc``, numpy's allocations included, in a fresh subprocess so nothing
else of the test session counts), never in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb.retrieval import bm25

REPO = Path(__file__).resolve().parents[2]
N = 100_000  # messages of the user's day file: large enough that 10 bytes a message is 1 MB

_BUILD = r"""
import random, sys
from pathlib import Path
from benchmarks.bench_store import Corpus, USER, ZONE, build_layers
from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import user_index
root = Path(sys.argv[1])
build_layers(root / USER, int(sys.argv[2]), Corpus(seed=5), random.Random(5))
user = MemoryStore(root, zone=ZONE).user(USER)
user_index(user).view("daily")  # builds the day index from the file and persists it for the next process
"""

_MEASURE = r"""
import json, sys, tracemalloc
from pathlib import Path
from benchmarks.bench_store import DAY, USER, ZONE
from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import user_index
from agentmem_nb.retrieval.ranker import rank
user = MemoryStore(Path(sys.argv[1]), zone=ZONE).user(USER)
len(user.daily(DAY.isoformat()))  # the store's own line index of the day file, loaded before measuring
index = user_index(user)
tracemalloc.start()
view = index.view("daily")  # restores the persisted index: nothing to tokenise
restored = tracemalloc.get_traced_memory()[0]
tracemalloc.reset_peak()
arrays = index.kinds["daily"].arrays()  # what every query takes of the per-message arrays
taken = tracemalloc.get_traced_memory()[1] - restored
hits = rank(view, "zephyrine", index.tokenizer, limit=5)
[h.terms for h in hits]
read = sum(f.records_read for f in index.kinds["daily"].files)
print(json.dumps({"restored": restored, "taken": taken, "hits": len(hits), "read": read}))
"""


@pytest.fixture(scope="module")
def day_user(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cold") / "mem"
    _python(_BUILD, str(root), str(N))
    return root


def _python(code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=600, check=True)
    return done.stdout


def test_a_restored_index_copies_no_per_message_array(day_user: Path) -> None:
    """The per-message arrays are 53 bytes a message in the cache (lengths, file, position, day, neighbours, ids,
    questions); restoring them copied every byte (68 bytes a message allocated in all, measured), and each query
    copied most of them again (40 bytes a message, measured). Now restoring allocates the vocabulary (about 1.5 MB
    here, whatever the number of messages) and a query's view of the arrays nothing that grows with the messages."""
    seen = json.loads(_python(_MEASURE, str(day_user)).strip().splitlines()[-1])
    assert seen["read"] == 0 and seen["hits"] > 0  # the persisted index was used, and it answers
    assert seen["restored"] < 30 * N, seen
    assert seen["taken"] < 64 * 1024, seen


@settings(max_examples=60, deadline=None)
@given(base=st.lists(st.integers(-2**40, 2**40), max_size=12),
       ops=st.lists(st.one_of(st.tuples(st.just("extend"), st.lists(st.integers(-2**40, 2**40), max_size=9)),
                              st.tuples(st.just("set"), st.integers(0, 40), st.integers(-2**40, 2**40)),
                              st.tuples(st.just("snapshot"), st.just(0))), max_size=25))
def test_a_column_reads_as_the_list_it_was_built_from(base: list[int], ops: list[tuple[object, ...]]) -> None:
    """Base, appended tail, changed base values and folds (a low fold size here, so they happen): every read —
    by index, whole, ``take``, ``item`` — gives the plain list's values, and a snapshot keeps the values it saw."""
    fold_min = bm25._FOLD_MIN
    bm25._FOLD_MIN = 3
    try:
        mapped = np.array(base, dtype=np.int64)
        mapped.flags.writeable = False  # as a mapped cache is
        column, plain = bm25.Column("q", mapped), list(base)
        snapshots: list[tuple[bm25.ColumnView, list[int]]] = []
        for op in ops:
            if op[0] == "extend":
                column.extend(op[1])
                plain.extend(op[1])
            elif op[0] == "set" and plain:
                column[op[1] % len(plain)] = op[2]
                plain[op[1] % len(plain)] = op[2]
            elif op[0] == "snapshot":
                snapshots.append((column.snapshot(), list(plain)))
        assert len(column) == len(plain) and list(column) == plain
        assert [column[i] for i in range(-len(plain), len(plain))] == plain + plain if plain else True
        for view, values in [*snapshots, (column.snapshot(), plain)]:
            assert view.whole().tolist() == values
            positions = np.arange(len(values))[::-1].copy()
            assert view.take(positions).tolist() == values[::-1]
            assert [view.item(i) for i in range(len(values))] == values
    finally:
        bm25._FOLD_MIN = fold_min
