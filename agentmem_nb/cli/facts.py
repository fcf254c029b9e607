"""``agentmem-nb facts --user U [--json] [--current] [--key subject.attribute]``: every fact a user's events made.

One line (or JSON object) per fact: key, value, status, source (thread#message), valid-from and valid-to, who
extracted it. Reads through the store only (no pandas), like the other store commands.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the store is imported when the command runs (see agentmem_nb.cli)
    from agentmem_nb.store.facts import Fact

__all__ = ["add_parser", "run", "fact_row"]


def fact_row(fact: Fact) -> dict[str, Any]:
    """The printed shape of one fact (the ``--json`` object): :meth:`Fact.as_row`."""
    return fact.as_row()


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``facts`` to the CLI."""
    parser = subparsers.add_parser("facts", help="a user's facts: key, value, status, source, valid from/to")
    parser.add_argument("--user", required=True)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--current", action="store_true", help="only active facts and open conflicts")
    parser.add_argument("--key", help="one key's timeline, e.g. user.lives_in")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the facts; 0."""
    from agentmem_nb.cli import _json_text, _out, _store
    from agentmem_nb.store.facts import fact_key

    facts = _store(args).user(args.user).facts
    if args.key:
        subject, _, attribute = args.key.partition(".")
        wanted = fact_key(subject, attribute)
        rows = facts.history(wanted.subject, wanted.attribute)
    else:
        rows = facts.all()
    if args.current:
        rows = [f for f in rows if f.status in ("active", "conflict")]
    if args.json:
        _out(_json_text([fact_row(f) for f in rows]))
        return 0
    for fact in rows:
        row = fact_row(fact)
        _out(f"#{row['fact_id']} {row['key']} = {row['value']!r}  [{row['status']}]  source {row['source'] or '-'}  "
             f"from {row['valid_from'] or '-'} to {row['valid_to'] or '-'}  by {row['extracted_by']}")
    return 0
