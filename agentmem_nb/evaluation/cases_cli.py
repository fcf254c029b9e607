"""``agentmem-nb eval cases FILE... [--json] [--snapshot PATH] [--update-snapshot] [--offline]`` and
``agentmem-nb eval replay --user U [--turn N]... [--offline] [--rules FILE] [--export FILE]``.

Runs recall case files (:mod:`~agentmem_nb.evaluation.casefile`) and prints ``PASS``/``FAIL`` per case with the
reasons and a summary line, or with ``--json`` ``{"cases": [{"name", "passed", ...}], "passed": N, "failed": M}``.
Exit status: 0 when every case passed (and the snapshot, if any, matched), 1 when a case failed or the snapshot
differs, 2 when a file could not be read (the CLI's usual "the command was wrong").

``--snapshot PATH`` compares what each case retrieved and replied with a snapshot recorded earlier
(:mod:`~agentmem_nb.evaluation.snapshot`) and lists what moved; a missing snapshot is recorded, and
``--update-snapshot`` records the current run over it.

``eval replay`` lists the logged turns of a user (``logs/llm_dialogue.jsonl``); with ``--turn N`` it replays that
turn on the memory as it was then and prints both sides (:mod:`~agentmem_nb.evaluation.replay`), exit status 1 when
the replay called other tools; with ``--export FILE`` it writes the chosen turns as recall cases instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run", "run_replay"]


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
    replay = commands.add_parser("replay", help="replay a logged turn on the memory as it was; export turns as cases",
                                 description=__doc__.split("\n\n")[3] if __doc__ else None)
    replay.add_argument("--user", required=True)
    replay.add_argument("--turn", type=int, action="append", default=[], metavar="N",
                        help="the logged turn to replay (its number in the list); repeat with --export")
    replay.add_argument("--offline", action="store_true", help="replay with the offline model")
    replay.add_argument("--rules", metavar="FILE", help="a text file of rules to use instead of the system prompt's")
    replay.add_argument("--export", metavar="FILE", help="write the --turn turns (default: all) as recall cases")
    replay.set_defaults(func=run_replay)
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


def run_replay(args: argparse.Namespace) -> int:
    """List, replay or export logged turns (see the module docstring); returns the exit status."""
    from agentmem_nb.cli import _existing_user, _out  # the CLI's user lookup and its printable output
    from agentmem_nb.errors import InvalidArgument
    from agentmem_nb.evaluation.cases import tool_line
    from agentmem_nb.evaluation.replay import export_cases, logged_turns, replay_turn

    user = _existing_user(args)
    turns = logged_turns(user)
    if args.export:
        path = Path(args.export)
        chosen = [t for t in turns if t.entry_id in args.turn] if args.turn else turns
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(export_cases(user, chosen, path=path, offline=args.offline), encoding="utf-8")
        _out(f"{len(chosen)} turn(s) written as recall cases to {path}")
        return 0
    if not args.turn:
        for t in turns:
            tools = ", ".join(tool_line(c) for c in t.tool_calls) or "no tool"
            _out(f"{t.entry_id}\t{t.session_id}\t{t.user_message[:60]!r}\t{tools[:80]}")
        if not turns:
            _out(f"user {user.user_id!r} has no logged turn", file=sys.stderr)
        return 0
    if len(args.turn) > 1:
        raise InvalidArgument("give one --turn to replay (several only with --export)")
    rules = Path(args.rules).read_text(encoding="utf-8") if args.rules else None
    replay = replay_turn(user, args.turn[0], offline=args.offline, system_prompt=rules)
    _out(replay.format())
    return 0 if replay.same_tool_calls else 1
