"""agentmem_nb against the stores users would otherwise pick: the same workloads, side by side, in one run.

Modules: :mod:`~benchmarks.peers.data` (the synthetic conversation), :mod:`~benchmarks.peers.adapters` (one adapter
per store, each used the natural way), :mod:`~benchmarks.peers.workloads` (timing of workloads 1-4),
:mod:`~benchmarks.peers.turn` (workload 5), :mod:`~benchmarks.peers.worker` (one subprocess per case),
:mod:`~benchmarks.peers.runner` (the plan), :mod:`~benchmarks.peers.report` (Markdown and JSON),
:mod:`~benchmarks.peers.cli` (the command line).
"""

from benchmarks.peers.cli import add_parser, main, run

__all__ = ["add_parser", "run", "main"]
