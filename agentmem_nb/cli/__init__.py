"""The ``agentmem-nb`` command line.

Each subcommand imports what it needs when it runs, so ``agentmem-nb --help`` is instant and the store commands work
without loading langchain. Errors are reported as one line on stderr (exit status 2), never a traceback; exit status 1
is kept for ``problems`` finding some, so a script can tell "the data has problems" from "the command was wrong".

What is printed is printable: stored text keeps any lone surrogate it was given, which has no UTF-8 form, so text
output shows U+FFFD in its place (:func:`~agentmem_nb.textutil.displayable`, the widgets' rule) and ``--json`` writes
it as a ``\\udXXX`` escape (valid JSON that reads back as the stored string). Error text is redacted
(:func:`~agentmem_nb.redact.redact`).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from agentmem_nb.errors import AgentMemError, ConfigError
from agentmem_nb.redact import redact, redact_url
from agentmem_nb.textutil import LONE_SURROGATE, displayable
from agentmem_nb.timeutil import resolve_zone

if TYPE_CHECKING:  # the store is imported when a command runs (see the module docstring)
    from collections.abc import Iterable

    from agentmem_nb.messages import Message
    from agentmem_nb.store import MemoryStore, UserMemory

__all__ = ["main", "build_parser", "whole_number", "zone_name"]

DEFAULT_ROOT = os.environ.get("AGENTMEM_ROOT", "memory")


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number in ``[minimum, maximum]``: ``--limit -5`` is refused with a message
    that names the value and the range, instead of running with it."""
    bounds = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (give one {bounds})") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a whole number {bounds}")
        return value

    return parse


def zone_name(text: str) -> str:
    """An argparse ``type`` for an IANA zone name, checked by :func:`~agentmem_nb.timeutil.resolve_zone` (the one
    rule for zone names), so ``--zone America`` is refused at once with a suggestion."""
    try:
        resolve_zone(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _out(text: object, *, file: TextIO | None = None) -> None:
    """Print one line of text that may hold stored content (lone surrogates shown as U+FFFD)."""
    print(displayable(text), file=file if file is not None else sys.stdout)


def _json_text(value: object) -> str:
    """Indented JSON with every lone surrogate written as its ``\\udXXX`` escape: printable, and exact on reading
    back (surrogates occur only inside strings, where the escape is valid JSON)."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _store(args: argparse.Namespace) -> MemoryStore:
    from agentmem_nb.store import MemoryStore

    return MemoryStore(args.root, zone=args.zone)


def _existing_user(args: argparse.Namespace) -> UserMemory:
    """The user named by ``--user``, refused when the memory folder has no such user: reading commands would
    otherwise answer "nothing found" / "no problems" for a typo."""
    from agentmem_nb.store.memory_store import is_database_url

    store = _store(args)
    user = store.user(args.user)
    if is_database_url(args.root):  # a PostgreSQL store (--root postgresql://…): its users are rows, not folders
        known = store.users()
        if args.user in known:
            return user
        raise AgentMemError(f"no user {args.user!r} in {redact_url(args.root)} ({len(known)} user(s): "
                            f"{', '.join(repr(u) for u in known[:10])}{' ...' if len(known) > 10 else ''})")
    if user.directory.is_dir():
        return user
    if not store.root.is_dir():
        raise AgentMemError(f"memory folder {str(store.root)!r} does not exist: give --root FOLDER or set "
                            "AGENTMEM_ROOT to the folder that holds the users")
    known = store.users()
    listed = (f"it holds {len(known)} user(s): {', '.join(repr(u) for u in known[:10])}"
              f"{' ...' if len(known) > 10 else ''}") if known else "it holds no user yet"
    raise AgentMemError(f"no user {args.user!r} in {str(store.root)!r} ({listed}); "
                        f"`agentmem-nb --root {shlex.quote(str(store.root))} users` lists them")


def _existing_layer(user: UserMemory, session_id: str | None, day: str | None) -> None:
    """Refuse a session or day the user has no file for: "no message contains …" would hide a typo in the id."""
    if session_id and session_id not in user.session_ids():
        known = user.session_ids()
        raise AgentMemError(f"user {user.user_id!r} has no session {session_id!r} ({len(known)} session(s): "
                            f"{', '.join(repr(k) for k in known[:10])}{' ...' if len(known) > 10 else ''})")
    if day and day not in user.days():
        known = user.days()
        raise AgentMemError(f"user {user.user_id!r} has no messages on {day!r} (days with messages: "
                            f"{', '.join(known[-10:]) or 'none'})")


def _print_messages(messages: Iterable[Message], *, with_day: bool) -> None:
    for message in messages:
        _out(message.anchor_line(with_day=with_day))


# ---------------------------------------------------------------------- store commands


def _cmd_search(args: argparse.Namespace) -> int:
    """The one search (:func:`agentmem_nb.retrieval.search`), exact: the keyword is a substring, whatever it holds."""
    from agentmem_nb.retrieval import Scope, search

    user = _existing_user(args)
    if args.session and args.day:
        raise AgentMemError("give --session SESSION_ID (one thread) or --day YYYY-MM-DD (one day), not both")
    if args.session:
        scope = Scope.session(args.session)
    else:
        scope = Scope.day(args.day) if args.day is not None else Scope.everything()
    _existing_layer(user, args.session, args.day)
    hits = [hit.message for hit in search(user, args.keyword, scope=scope, budget=args.limit, how="exact").hits]
    if args.json:
        print(_json_text([{**m.to_record(), "session_id": m.session_id, "day": m.day} for m in hits]))
    else:
        _print_messages(hits, with_day=not args.session)
        if not hits:
            _out(f"no message contains {args.keyword!r}", file=sys.stderr)
    return 0


def _cmd_window(args: argparse.Namespace) -> int:
    user = _existing_user(args)
    if bool(args.session) == bool(args.day):
        raise AgentMemError("give exactly one of --session SESSION_ID or --day YYYY-MM-DD")
    _existing_layer(user, args.session, args.day)
    if args.session:
        window = user.session_window(args.session, args.message_id, args.before, args.after)
    else:
        window = user.daily_window(args.day, args.message_id, args.before, args.after)
    if not window:
        raise AgentMemError(window.reason)
    for message in window.messages:
        marker = ">" if message.message_id == args.message_id else " "
        _out(f"{marker} {message.anchor_line()}")
    return 0


def _cmd_problems(args: argparse.Namespace) -> int:
    """Exit status 1 when anything is reported (a script or CI step should look), 0 when nothing is."""
    user = _existing_user(args)
    found = user.problems()
    for problem in found:
        _out(problem)
    if not found:
        from agentmem_nb.store.memory_store import is_database_url

        _out(f"no problems in {redact_url(args.root) if is_database_url(args.root) else user.directory}")
    return 1 if found else 0


def _cmd_users(args: argparse.Namespace) -> int:
    store = _store(args)
    for user_id in store.users():
        user = store.user(user_id)
        _out(f"{user_id}\t{len(user.session_ids())} sessions\t{len(user.days())} days")
    return 0


# ---------------------------------------------------------------------- optional parts


def _optional(module: str) -> Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None] | None:
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

    # this file is agentmem_nb/cli/__init__.py: the checkout is two folders up
    root = Path(__file__).resolve().parents[2]
    if (root / "benchmarks" / "peers" / "cli.py").is_file() and str(root) not in sys.path:
        sys.path.append(str(root))  # appended: anything the user put on the path first still wins


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="agentmem-nb",
        description="Layered agent memory you can see: store, agent, notebooks.",
    )
    parser.add_argument("--root", default=DEFAULT_ROOT,
                        help="memory folder, or a postgresql:// URL (default: $AGENTMEM_ROOT or ./memory)")
    parser.add_argument("--zone", default=None, type=zone_name,
                        help="IANA time zone for day files, e.g. Asia/Shanghai (default: this machine's zone)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("users", help="list the users in the memory folder")
    p.set_defaults(func=_cmd_users)

    p = sub.add_parser("search", help="keyword search in a session or across days")
    p.add_argument("--user", required=True)
    p.add_argument("--session", help="search this session (default: every day file)")
    p.add_argument("--day", help="search only this day (YYYY-MM-DD)")
    p.add_argument("--limit", type=whole_number(1), default=20, help="at most this many hits (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON instead of anchor lines")
    p.add_argument("keyword")
    p.set_defaults(func=_cmd_search)

    p = sub.add_parser("window", help="the messages around an anchor message_id")
    p.add_argument("--user", required=True)
    p.add_argument("--session")
    p.add_argument("--day")
    p.add_argument("--before", type=whole_number(0), default=2)
    p.add_argument("--after", type=whole_number(0), default=2)
    p.add_argument("message_id", type=whole_number(1))
    p.set_defaults(func=_cmd_window)

    p = sub.add_parser("problems", help="check a user's files: malformed lines, torn tails, legacy rows")
    p.add_argument("--user", required=True)
    p.set_defaults(func=_cmd_problems)

    # Subcommands that live beside the parts they drive (chat/seed/serve with the agent, eval with retrieval, bench in
    # the benchmarks folder of a source checkout); each is listed only where its module is importable.
    _find_checkout_benchmarks()
    for module in ("agentmem_nb.cli.chat", "agentmem_nb.cli.lab", "agentmem_nb.cli.serve", "agentmem_nb.cli.db",
                   "agentmem_nb.cli.facts", "agentmem_nb.evaluation.retrieval", "benchmarks"):
        add = _optional(module)
        if add is not None:
            add(sub)
    evaluation = sub.choices.get("eval")
    if evaluation is not None:  # `eval cases` (recall case files) joins the benchmarks under `eval`
        from agentmem_nb.evaluation import cases_cli

        cases_cli.add_parser(_subcommands(evaluation))
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The subcommands of ``parser`` (argparse keeps no public handle on them once added)."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AgentMemError as exc:
        _out(f"agentmem-nb: error: {redact(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        _out(redact(f"agentmem-nb: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")), file=sys.stderr)
        return 2
