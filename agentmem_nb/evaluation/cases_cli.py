"""``agentmem-nb eval cases FILE... [--json] [--snapshot PATH] [--update-snapshot] [--offline]``.

Runs recall case files (:mod:`~agentmem_nb.evaluation.casefile`) and prints ``PASS``/``FAIL`` per case with the
reasons and a summary line, or with ``--json`` ``{"cases": [{"name", "passed", ...}], "passed": N, "failed": M}``.
Exit status: 0 when every case passed (and the snapshot, if any, matched), 1 when a case failed or the snapshot
differs, 2 when a file could not be read (the CLI's usual "the command was wrong").

``--snapshot PATH`` compares what each case retrieved and replied with a snapshot recorded earlier
(:mod:`~agentmem_nb.evaluation.snapshot`) and lists what moved; a missing snapshot is recorded, and
``--update-snapshot`` records the current run over it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add ``cases`` to the ``eval`` command's subparsers."""
    parser = commands.add_parser("cases", help="run recall case files (*.memcases.yaml): pass/fail per case",
                                 description=__doc__.split("\n\n")[1] if __doc__ else None)
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="recall case files (*.memcases.yaml), or folders to search for them")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--snapshot", metavar="PATH", help="diff against this snapshot (recorded when missing)")
    parser.add_argument("--update-snapshot", action="store_true", help="record this run as the snapshot")
    parser.add_argument("--offline", action="store_true",
                        help="use the offline model for agent cases, whatever model is configured")
    parser.set_defaults(func=run)
    return parser


def _case_files(given: list[str]) -> list[Path]:
    """The files named, with each folder replaced by the case files under it (sorted)."""
    from agentmem_nb.errors import InvalidArgument
    from agentmem_nb.evaluation.casefile import CASE_FILE_SUFFIXES

    out: list[Path] = []
    for name in given:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for suffix in CASE_FILE_SUFFIXES for p in path.rglob(f"*{suffix}"))
            if not found:
                raise InvalidArgument(f"no *.memcases.yaml file under {name!r}")
            out += found
        else:
            out.append(path)
    return out


def run(args: argparse.Namespace) -> int:
    """Run the cases of ``args.files``; prints the report and returns the exit status."""
    from agentmem_nb.cli import _json_text  # the CLI's one JSON rule (lone surrogates as escapes)
    from agentmem_nb.errors import InvalidArgument
    from agentmem_nb.evaluation.cases import run_case_files
    from agentmem_nb.evaluation.snapshot import Snapshot, SnapshotDiff

    if args.update_snapshot and not args.snapshot:
        raise InvalidArgument("--update-snapshot needs --snapshot PATH (where to record it)")
    report = run_case_files(_case_files(args.files), offline=args.offline)
    diff: SnapshotDiff | None = None
    note = ""
    if args.snapshot:
        path = Path(args.snapshot)
        current = Snapshot.of(report)
        if args.update_snapshot or not path.exists():
            current.save(path)
            note = f"snapshot recorded in {path} ({len(current.cases)} case(s))"
        else:
            diff = Snapshot.load(path).diff(current)
    if args.json:
        payload: dict[str, Any] = report.to_dict()
        if diff is not None:
            payload["snapshot"] = diff.to_dict()
        print(_json_text(payload))
    else:
        print(report.format())
        if diff is not None:
            print(diff.format())
    if note:
        print(note, file=sys.stderr)
    return 0 if report.ok and (diff is None or not diff.changed) else 1
