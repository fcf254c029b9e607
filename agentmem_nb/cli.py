"""The ``agentmem-nb`` command line.

Each subcommand imports what it needs when it runs, so ``agentmem-nb --help`` is instant and the store commands work
without loading langchain. Errors are reported as one line on stderr (exit status 2), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence

from agentmem_nb.errors import AgentMemError

__all__ = ["main", "build_parser"]

DEFAULT_ROOT = os.environ.get("AGENTMEM_ROOT", "memory")


def _store(args: argparse.Namespace):  # noqa: ANN202 - MemoryStore, imported lazily
    from agentmem_nb.store import MemoryStore

    return MemoryStore(args.root, zone=args.zone)


def _print_messages(messages, *, with_day: bool) -> None:  # noqa: ANN001
    for message in messages:
        print(message.anchor_line(with_day=with_day))


# ---------------------------------------------------------------------- store commands


def _cmd_search(args: argparse.Namespace) -> int:
    user = _store(args).user(args.user)
    if args.session and args.day:
        raise AgentMemError("give --session SESSION_ID (one thread) or --day YYYY-MM-DD (one day), not both")
    if args.session:
        hits = user.search_session(args.session, args.keyword, limit=args.limit)
    else:
        hits = user.search_daily(args.keyword, day=args.day, limit=args.limit)
    if args.json:
        print(json.dumps([{**m.to_record(), "session_id": m.session_id, "day": m.day} for m in hits],
                         ensure_ascii=False, indent=2))
    else:
        _print_messages(hits, with_day=not args.session)
        if not hits:
            print(f"no message contains {args.keyword!r}", file=sys.stderr)
    return 0


def _cmd_window(args: argparse.Namespace) -> int:
    user = _store(args).user(args.user)
    if bool(args.session) == bool(args.day):
        raise AgentMemError("give exactly one of --session SESSION_ID or --day YYYY-MM-DD")
    if args.session:
        window = user.session_window(args.session, args.message_id, args.before, args.after)
    else:
        window = user.daily_window(args.day, args.message_id, args.before, args.after)
    if not window:
        raise AgentMemError(window.reason)
    for message in window.messages:
        marker = ">" if message.message_id == args.message_id else " "
        print(marker, message.anchor_line())
    return 0


def _cmd_problems(args: argparse.Namespace) -> int:
    user = _store(args).user(args.user)
    found = user.problems()
    for problem in found:
        print(problem)
    if not found:
        print(f"no problems in {user.directory}")
    return 1 if any(p.kind.skips_data for p in found) else 0


def _cmd_users(args: argparse.Namespace) -> int:
    store = _store(args)
    for user_id in store.users():
        user = store.user(user_id)
        print(f"{user_id}\t{len(user.session_ids())} sessions\t{len(user.days())} days")
    return 0


# ---------------------------------------------------------------------- optional parts


def _optional(module: str) -> Callable[[argparse._SubParsersAction], None] | None:
    """The ``add_parser`` of an optional module, or None when that part is not installed in this checkout."""
    import importlib

    try:
        # getattr: a same-named folder elsewhere on sys.path (e.g. tests/benchmarks) is not the part we mean.
        return getattr(importlib.import_module(module), "add_parser", None)
    except ModuleNotFoundError as exc:
        if exc.name and (exc.name == module or module.startswith(exc.name + ".")):
            return None
        raise


def _find_checkout_benchmarks() -> None:
    """Make ``benchmarks`` importable when this package runs from a source checkout (an editable install).

    The benchmarks are not part of the installed package (they need the dev extra's peers), and the console script
    does not have the checkout on ``sys.path``; a checkout's root is the folder above this package's folder.
    """
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    if (root / "benchmarks" / "peers" / "cli.py").is_file() and str(root) not in sys.path:
        sys.path.append(str(root))  # appended: anything the user put on the path first still wins


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="agentmem-nb",
        description="Layered agent memory you can see: store, agent, notebooks.",
    )
    parser.add_argument("--root", default=DEFAULT_ROOT,
                        help="memory folder (default: $AGENTMEM_ROOT or ./memory)")
    parser.add_argument("--zone", default=None,
                        help="IANA time zone for day files, e.g. Asia/Shanghai (default: this machine's zone)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("users", help="list the users in the memory folder")
    p.set_defaults(func=_cmd_users)

    p = sub.add_parser("search", help="keyword search in a session or across days")
    p.add_argument("--user", required=True)
    p.add_argument("--session", help="search this session (default: every day file)")
    p.add_argument("--day", help="search only this day (YYYY-MM-DD)")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true", help="print JSON instead of anchor lines")
    p.add_argument("keyword")
    p.set_defaults(func=_cmd_search)

    p = sub.add_parser("window", help="the messages around an anchor message_id")
    p.add_argument("--user", required=True)
    p.add_argument("--session")
    p.add_argument("--day")
    p.add_argument("--before", type=int, default=2)
    p.add_argument("--after", type=int, default=2)
    p.add_argument("message_id", type=int)
    p.set_defaults(func=_cmd_window)

    p = sub.add_parser("problems", help="check a user's files: malformed lines, torn tails, legacy rows")
    p.add_argument("--user", required=True)
    p.set_defaults(func=_cmd_problems)

    # Subcommands that live beside the parts they drive (chat/seed with the agent, eval with retrieval, bench in
    # the benchmarks folder of a source checkout); each is listed only where its module is importable.
    _find_checkout_benchmarks()
    for module in ("agentmem_nb.cli_agent", "agentmem_nb.cli_lab", "agentmem_nb.retrieval.evaluate", "benchmarks"):
        add = _optional(module)
        if add is not None:
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AgentMemError as exc:
        print(f"agentmem-nb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        print(f"agentmem-nb: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

