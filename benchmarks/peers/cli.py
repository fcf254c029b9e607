"""Command line of the peer comparison: ``python -m benchmarks`` and ``agentmem-nb bench``.

``add_parser(subparsers)`` registers a ``bench`` subcommand on another program's parser; ``run(args)`` runs it.
``main(argv)`` is the stand-alone program.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from benchmarks.peers.adapters import PEERS

__all__ = ["add_parser", "configure", "run", "main", "DEFAULT_OUTPUT"]

DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "RESULTS.md"

_DESCRIPTION = (
    "Run the same workloads (append, window, keyword, cold open, chat turn) on agentmem_nb and on "
    "FileChatMessageHistory, LangGraph InMemoryStore and SqliteStore; print one Markdown table and write it to "
    "benchmarks/RESULTS.md. The full run takes tens of minutes; --quick takes well under a minute."
)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes must be comma-separated integers, e.g. 1000,10000 (got {text!r})")
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"sizes must be positive integers (got {text!r})")
    return values


def _peers(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [name for name in names if name not in PEERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown peer(s) {unknown or text!r}: choose from {', '.join(PEERS)}")
    return names


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the benchmark's options to ``parser``."""
    parser.add_argument("--quick", action="store_true",
                        help="small N and few repeats (under a minute); writes a file only with --output")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the Markdown table")
    parser.add_argument("--output", type=Path, default=None,
                        help=f"where to write the Markdown (default: {DEFAULT_OUTPUT} in full mode)")
    parser.add_argument("--sizes", type=_sizes, default=None, help="conversation lengths, e.g. 1000,10000")
    parser.add_argument("--peers", type=_peers, default=None, help=f"stores to run (default: {','.join(PEERS)})")
    parser.add_argument("--peer-max-n", type=int, default=None,
                        help="largest N for stores other than agentmem_nb (default 100000)")
    parser.add_argument("--repeats", type=int, default=None, help="full append runs per case (median)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds a read measurement may take before its repeats stop")
    parser.add_argument("--append-budget", type=float, default=None,
                        help="seconds of append runs per case before repeats stop (and the extrapolation threshold)")
    parser.add_argument("--turn-sizes", type=_sizes, default=None, help="thread lengths for the chat-turn workload")
    parser.add_argument("--from-json", type=Path, default=None, metavar="PATH",
                        help="measure nothing: re-render the Markdown (and JSON) of a run saved with --json")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="folder for the temporary data (default: the system temp dir; it must be on disk)")
    return parser


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``bench`` on an ``add_subparsers()`` object; the subcommand's handler is :func:`run`."""
    parser = subparsers.add_parser("bench", help="compare agentmem_nb with the stores users would otherwise pick",
                                   description=_DESCRIPTION)
    configure(parser)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the benchmark described by ``args``; print Markdown (or JSON) and write the Markdown file.

    Returns 1 when any figure is an error (a store answered wrongly or a worker failed), else 0.
    """
    # Imported here so that mounting the subcommand (every `agentmem-nb` start) stays cheap.
    from benchmarks.peers.report import render_json, render_markdown
    from benchmarks.peers.runner import FULL, QUICK, Results, run_plan

    plan = (QUICK if args.quick else FULL).with_overrides(
        sizes=args.sizes, peers=args.peers, peer_max_n=args.peer_max_n, repeats=args.repeats,
        budget_s=args.budget, append_budget_s=args.append_budget, turn_sizes=args.turn_sizes, workdir=args.workdir)

    def progress(line: str) -> None:
        print(f"[bench] {line}", file=sys.stderr, flush=True)

    if args.from_json is not None:
        import json

        try:
            raw = json.loads(args.from_json.read_text(encoding="utf-8"))
            results = Results.from_dict(raw, source=str(args.from_json))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"benchmarks: cannot read a run from {args.from_json}: {exc} (give the output of a --json run)",
                  file=sys.stderr)
            return 2
        plan = results.plan
    else:
        results = run_plan(plan, progress=progress)
    markdown = render_markdown(results)
    output = args.output if args.output is not None else (None if plan.quick else DEFAULT_OUTPUT)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(markdown, encoding="utf-8")
        progress(f"wrote {output}")
    print(render_json(results) if args.json else markdown)
    errors = [f for f in results.figures if f.status == "error"]
    for f in errors:
        progress(f"ERROR {f.workload} / {f.peer} / N={f.n}: {f.note}")
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks [options]``."""
    parser = configure(argparse.ArgumentParser(prog="python -m benchmarks", description=_DESCRIPTION))
    return run(parser.parse_args(argv))
