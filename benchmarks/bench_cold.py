"""Cold-start benchmark (issue 12, "Persisted indexes"): a fresh process's first window, first keyword search and
first ranked query on a 1M-message user, with and without the persisted index cache (``{user}/.index/``).

The user is built once (``bench_store.build_layers``: a session file and a day file of N messages each, written in
the store's own format) and kept under ``--root`` for later runs. Then each query runs in a **fresh subprocess** —
its own interpreter, nothing warm but the OS page cache — which reports its wall time (from before
``MemoryStore(...)`` to the answer; the package import is reported apart) and its CPU time over the same span (less
sensitive to other processes on a shared machine), its peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss``) and the bytes it read from the data file:

* **before**: ``.index/`` deleted first, so the process builds every index from the file (and then writes the cache);
* **after**: the cache written by an earlier process is present and valid.

Usage::

    .venv/bin/python benchmarks/bench_cold.py                       # N = 1,000,000 (builds ~0.5 GB once)
    .venv/bin/python benchmarks/bench_cold.py --n 100000 --repeat 3 --json cold.json

Figures are medians on whatever machine runs this (noisy on a shared one; see README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
if str(_REPO) not in sys.path:
    sys.path.insert(0, str(_REPO))

QUERIES = ("window", "keyword", "ranked")
TARGET_SECONDS = 1.0
TARGET_RSS_MIB = 150.0
RANKED_QUERY = "coffee budget meeting in Lyon"


def _child(query: str, root: Path) -> dict[str, Any]:
    """One query in this (fresh) process; the figures as a dict."""
    started = time.perf_counter()
    from agentmem_nb import MemoryStore
    from benchmarks.bench_store import RARE_TERM, SESSION, USER, ZONE

    imported = time.perf_counter()
    cpu_imported = time.process_time()  # CPU time too: on a shared machine it varies far less with load than wall
    user = MemoryStore(root, zone=ZONE).user(USER)
    session = user.session(SESSION)
    extra: dict[str, Any] = {}
    first_done = 0.0
    if query == "window":
        window = session.window(500_000 if session.path.stat().st_size > 1 << 28 else 1000, 5, 5)
        extra["messages"] = len(window.messages)
    elif query == "keyword":
        hits = session.search(RARE_TERM, limit=20)
        extra["hits"] = len(hits)
    else:
        from agentmem_nb.retrieval import retrieve

        extra["retrieval_import_s"] = round(time.perf_counter() - imported, 3)
        result = retrieve(user, RANKED_QUERY, budget=10)
        extra["messages"] = len(result.messages)
        from agentmem_nb.retrieval import user_index

        extra["records_tokenised"] = sum(f.records_read for k in user_index(user).kinds.values() for f in k.files)
        first_done = time.perf_counter()
        extra["cpu_s"] = round(time.process_time() - cpu_imported, 3)
        extra["peak_rss_first_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # The same query again in this process: the ranker's own cost, which no cache removes.
        again = time.perf_counter()
        retrieve(user, RANKED_QUERY, budget=10)
        extra["warm_repeat_s"] = round(time.perf_counter() - again, 3)
    done = first_done if query == "ranked" else time.perf_counter()
    extra.setdefault("cpu_s", round(time.process_time() - cpu_imported, 3))
    return {
        "query": query,
        "import_s": imported - started,
        "seconds": done - imported,
        "peak_rss_mib": extra.pop("peak_rss_first_mib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "session_bytes_read": session.stats.bytes_read,
        "session_lines_parsed": session.stats.lines_indexed,
        **extra,
    }


def _run_child(query: str, root: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(_REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", query, "--root", str(root)],
                         capture_output=True, text=True, env=env, check=True, cwd=_REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _build(root: Path, n: int) -> None:
    from benchmarks.bench_store import USER, Corpus, build_layers

    user_dir = root / USER
    marker = user_dir / f".built-{n}"
    if marker.exists():
        return
    shutil.rmtree(user_dir, ignore_errors=True)
    print(f"building a {n:,}-message user under {root} ...", file=sys.stderr, flush=True)
    built = build_layers(user_dir, n, Corpus(seed=12), random.Random(12))
    print(f"  {built.session_bytes / 1e6:.0f} MB session + {built.daily_bytes / 1e6:.0f} MB day file in "
          f"{built.seconds:.1f} s", file=sys.stderr, flush=True)
    marker.write_text("built\n")


def _drop_cache(root: Path) -> None:
    from benchmarks.bench_store import USER

    shutil.rmtree(root / USER / ".index", ignore_errors=True)


def measure(root: Path, n: int, repeat: int, queries: tuple[str, ...] = QUERIES) -> dict[str, Any]:
    """Before/after figures of every query (medians over ``repeat`` fresh processes)."""
    _build(root, n)
    results: dict[str, Any] = {"n": n, "repeat": repeat, "queries": {}}
    for query in queries:
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for _ in range(repeat):
            _drop_cache(root)
            runs["before"].append(_run_child(query, root))
            # The cache the query needs, as any earlier process of that user would have left it.
            for warm in queries:
                _run_child(warm, root)
            runs["after"].append(_run_child(query, root))
        results["queries"][query] = {
            when: {
                "seconds": statistics.median(r["seconds"] for r in rs),
                "cpu_s": statistics.median(r["cpu_s"] for r in rs),
                "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in rs),
                "import_s": statistics.median(r["import_s"] for r in rs),
                "session_bytes_read": rs[-1]["session_bytes_read"],
                "session_lines_parsed": rs[-1]["session_lines_parsed"],
                "runs": rs,
            }
            for when, rs in runs.items()
        }
        for when in ("before", "after"):
            r = results["queries"][query][when]
            print(f"N={n:,} {query:8s} {when:6s}: {r['seconds'] * 1000:8.0f} ms (CPU {r['cpu_s'] * 1000:.0f} ms)"
                  f"  peak RSS {r['peak_rss_mib']:6.0f} MiB"
                  f"  (import {r['import_s'] * 1000:.0f} ms; read {r['session_bytes_read']:,} B of the session file, "
                  f"parsed {r['session_lines_parsed']:,} lines)", flush=True)
    return results


def table(results: dict[str, Any]) -> str:
    """A markdown table of ``results`` for RESULTS.md."""
    lines = ["| first query in a fresh process | cache absent | cache present | target |", "|---|---|---|---|"]
    for query, data in results["queries"].items():
        cells = []
        for when in ("before", "after"):
            r = data[when]
            cells.append(f"{r['seconds'] * 1000:.0f} ms, {r['peak_rss_mib']:.0f} MiB")
        after = data["after"]
        met = after["seconds"] <= TARGET_SECONDS and after["peak_rss_mib"] <= TARGET_RSS_MIB
        lines.append(f"| {query} | {cells[0]} | {cells[1]} | ≤ 1 s, ≤ 150 MiB: {'**met**' if met else 'not met'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="messages in the user's session (and day) file")
    parser.add_argument("--root", type=Path, default=None, help="where the user is built (kept for later runs)")
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per figure (median)")
    parser.add_argument("--queries", default=",".join(QUERIES), help="which first queries (comma-separated)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", choices=QUERIES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = args.root or Path(tempfile.gettempdir()) / f"agentmem-bench-cold-{args.n}"
    if args.child:
        print(json.dumps(_child(args.child, root)))
        return 0
    queries = tuple(q for q in args.queries.split(",") if q)
    if not set(queries) <= set(QUERIES):
        parser.error(f"--queries takes {', '.join(QUERIES)}; got {args.queries!r}")
    results = measure(root, args.n, args.repeat, queries)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
