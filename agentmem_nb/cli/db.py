"""``agentmem-nb db upgrade URL``: create or upgrade the PostgreSQL schema (the versioned migrations of
:mod:`agentmem_nb.store.postgres.migrations`), never by hand.

The URL may also come from ``AGENTMEM_DATABASE_URL`` (a password on a command line is visible to other users of the
machine in the process list). Output and errors never show the password.
"""

from __future__ import annotations

import argparse
import os

from agentmem_nb.errors import AgentMemError

__all__ = ["add_parser"]


def _cmd_upgrade(args: argparse.Namespace) -> int:
    url = args.url or os.environ.get("AGENTMEM_DATABASE_URL", "")
    if not url:
        raise AgentMemError("no database: give the URL (agentmem-nb db upgrade postgresql://user@host/db) or set "
                            "AGENTMEM_DATABASE_URL")
    try:
        from agentmem_nb.store.postgres import LATEST, upgrade_database
    except ImportError as exc:
        raise AgentMemError(f"the PostgreSQL backend is not installed ({exc.name} missing): "
                            "pip install 'agentmem_nb[postgres]'") from None
    from agentmem_nb.redact import redact_url

    applied = upgrade_database(url)
    where = redact_url(url)
    if applied:
        print(f"{where}: applied schema migration(s) {', '.join(map(str, applied))}; now at version {LATEST}")
    else:
        print(f"{where}: schema already at version {LATEST}, nothing to do")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``db`` and its subcommands."""
    db = sub.add_parser("db", help="manage the PostgreSQL database of the PostgreSQL backend")
    commands = db.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)
    p = commands.add_parser("upgrade", help="create or upgrade the schema (versioned migrations)")
    p.add_argument("url", nargs="?", help="postgresql://user:password@host:port/dbname (default: "
                                          "$AGENTMEM_DATABASE_URL)")
    p.set_defaults(func=_cmd_upgrade)
