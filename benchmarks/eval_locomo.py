"""Retrieval benchmark: LoCoMo recall (with the ablation table) and index costs at a larger scale.

    .venv/bin/python benchmarks/eval_locomo.py                       # ../shared/data/locomo/conv-*.json
    .venv/bin/python benchmarks/eval_locomo.py FILE... --ablation --scale 20000

Prints, for the given LoCoMo files, the evaluation report of ``agentmem-nb eval locomo`` (and the ablation table with
``--ablation``); then, on a synthetic user of ``--scale`` messages spread over 100 days, the cost of a cold index
build (what a restart pays), of one query over every day, and of appending one message and querying again (what
the incremental index pays). A script that prints figures; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import Retriever, Scope, UserIndex
from agentmem_nb.evaluation.retrieval import run as run_eval

DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
_WORDS = ("garden hike pottery bowl beagle puppy race marathon coffee book novel guitar concert museum lake "
          "mountain recipe risotto train ticket doctor vacation camera photo painting sunrise family friend "
          "job interview promotion office project deadline weekend birthday gift scarf 杭州 西湖 旅行 程序员 "
          "吉他 跑步 猫 狗 医院 生日").split()


def _scale(n: int, queries: int) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(tmp, zone="UTC")
        user = store.user("bench")
        start = _dt.datetime(2025, 1, 1, 8, tzinfo=_dt.timezone.utc)
        began = time.perf_counter()
        for i in range(n):
            words = rng.choices(_WORDS, k=rng.randint(4, 30))
            user.append(f"s{i * 100 // n}", "user" if i % 2 else "assistant", " ".join(words),
                        ts=start + _dt.timedelta(days=i * 100 // n, seconds=i))
        written = time.perf_counter() - began
        print(f"\nsynthetic user: {n} messages over 100 days (written in {written:.1f} s)")
        retriever = Retriever()
        UserIndex(user).view("daily")  # warm imports and the OS page cache, not timed below
        cold = time.perf_counter()
        view = UserIndex(user).view("daily")
        build = time.perf_counter() - cold
        print(f"cold index build (restart): {build:.2f} s for {view.size} messages "
              f"({build / n * 1e6:.0f} µs per message)")
        retriever.view(user, Scope.everything())
        times = []
        for _ in range(queries):
            query = " ".join(rng.choices(_WORDS, k=rng.randint(2, 6)))
            t = time.perf_counter()
            retriever.search(user, query, budget=10)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(f"query over every day, budget 10: p50 {statistics.median(times):.1f} ms, "
              f"p95 {times[int(0.95 * (len(times) - 1))]:.1f} ms")
        appends = []
        for i in range(20):
            user.append("s99", "user", f"a fresh note about zephyrine number {i}",
                        ts=start + _dt.timedelta(days=99, hours=12, seconds=i))
            t = time.perf_counter()
            result = retriever.search(user, f"zephyrine number {i}", budget=3)
            appends.append((time.perf_counter() - t) * 1000)
            assert result.messages, "the appended message must be found"
        print(f"append one message then query (incremental index): median {statistics.median(appends):.1f} ms")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="LoCoMo files (default: the development split in ../shared)")
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--ablation", action="store_true", help="also print the ablation table")
    parser.add_argument("--scale", type=int, default=10000, help="messages of the synthetic user (0: skip)")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    files = args.files or [str(p) for p in sorted(DEV.glob("conv-*.json"))]
    if files:
        run_eval(argparse.Namespace(files=files, budget=args.budget, json=False, ablation=False))
        if args.ablation:
            print()
            run_eval(argparse.Namespace(files=files, budget=args.budget, json=False, ablation=True))
    else:
        print(f"no LoCoMo files given and none at {DEV}: skipping recall", file=sys.stderr)
    if args.scale:
        _scale(args.scale, args.queries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
