"""Subprocess entry: one process per (peer, N) for workloads 1-3, one per sample for workload 4, one per
(kind, N) for workload 5.

A process per case keeps peers from sharing caches, imports or heap, and makes each peak-RSS figure belong to one
case. The figures go to ``--out`` as JSON; progress goes to stderr.

    python -m benchmarks.peers.worker run  --peer sqlite --n 10000 --workdir /tmp/x --out fig.json
    python -m benchmarks.peers.worker cold --peer sqlite --n 10000 --workdir /tmp/x --out cold.json
    python -m benchmarks.peers.worker turn --peer saver  --n 10000 --workdir /tmp/x --out turn.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from benchmarks.peers.adapters import peer_class
from benchmarks.peers.figures import Figure
from benchmarks.peers.workloads import cold_open, measure_append, measure_keyword, measure_window, rss_mb

__all__ = ["main"]


def _run(args: argparse.Namespace) -> list[dict[str, object]]:
    cls = peer_class(args.peer)
    workdir = Path(args.workdir)
    figures: list[Figure] = []
    append, peer = measure_append(cls, args.n, workdir, repeats=args.repeats, budget_s=args.append_budget,
                                  sample_budget_s=args.budget)
    _, peak = rss_mb()
    append.metrics["peak_rss_mb"] = peak
    if "append" in cls.workloads:
        figures.append(append)
    print(f"  {cls.label} n={args.n}: append {append.status}", file=sys.stderr, flush=True)
    try:
        if "window" in cls.workloads:
            figures.append(measure_window(peer, args.n, calls=args.calls, budget_s=args.budget))
        if "keyword" in cls.workloads:
            figures += measure_keyword(peer, args.n, repeats=args.repeats_read, budget_s=args.budget)
    finally:
        peer.close()
    return [f.to_dict() for f in figures]


def _cold(args: argparse.Namespace) -> dict[str, float]:
    return cold_open(peer_class(args.peer), args.n, Path(args.workdir) / "data", first=args.first)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run one case; exit status 0 when the figures were written."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers.worker")
    parser.add_argument("mode", choices=("run", "cold", "turn"))
    parser.add_argument("--peer", required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--first", choices=("window", "keyword"), default="window", help="cold mode: first query")
    parser.add_argument("--repeats", type=int, default=3, help="full append runs (median)")
    parser.add_argument("--repeats-read", type=int, default=20, help="keyword lookups (median)")
    parser.add_argument("--calls", type=int, default=200, help="window calls (median)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per read measurement before repeats stop")
    parser.add_argument("--append-budget", type=float, default=600.0, help="seconds of append runs before repeats stop")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community's sunset notice is not a result
    if args.mode == "turn":
        from benchmarks.peers.turn import measure_turns

        figures = measure_turns(args.peer, args.n, Path(args.workdir), repeats=args.repeats_read, budget_s=args.budget)
        result: object = [f.to_dict() for f in figures]
    else:
        result = _run(args) if args.mode == "run" else _cold(args)
    Path(args.out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
