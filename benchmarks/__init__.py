"""Benchmarks of agentmem_nb, run as ``python -m benchmarks`` (or ``agentmem-nb bench``).

The peer comparison lives in :mod:`benchmarks.peers`; :func:`add_parser` and :func:`run` let another command line
mount it as a subcommand::

    subparsers = parser.add_subparsers()
    benchmarks.add_parser(subparsers)      # adds "bench", with set_defaults(func=benchmarks.run)
"""

from benchmarks.peers.cli import add_parser, run

__all__ = ["add_parser", "run"]
