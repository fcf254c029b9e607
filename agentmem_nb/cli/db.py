"""The PostgreSQL backend's commands: ``agentmem-nb db upgrade URL`` creates or upgrades the schema (the versioned
migrations of :mod:`agentmem_nb.store.postgres.migrations`, never by hand); ``agentmem-nb migrate FOLDER URL`` copies
a memory folder into the database (resumable: run it again to finish or to add what is new) and
``agentmem-nb export URL FOLDER`` writes the database back as a memory folder.

The URL may also come from ``AGENTMEM_DATABASE_URL`` (a password on a command line is visible to other users of the
machine in the process list). Output and errors never show the password.
"""

from __future__ import annotations

import argparse
import os

from agentmem_nb.errors import AgentMemError

__all__ = ["add_parser"]


def _url(args: argparse.Namespace, usage: str) -> str:
    url: str = args.url or os.environ.get("AGENTMEM_DATABASE_URL", "")
    if not url:
        raise AgentMemError(f"no database: give the URL ({usage}) or set AGENTMEM_DATABASE_URL")
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise AgentMemError(f"the PostgreSQL backend is not installed ({exc.name} missing): "
                            "pip install 'agentmem_nb[postgres]'") from None
    return url


def _cmd_upgrade(args: argparse.Namespace) -> int:
    url = _url(args, "agentmem-nb db upgrade postgresql://user@host/db")
    from agentmem_nb.redact import redact, redact_url, url_secrets
    from agentmem_nb.store.postgres import LATEST, upgrade_database

    applied = upgrade_database(url)
    where = redact(redact_url(url), secrets=url_secrets(url))  # userinfo and ?password=… alike
    if applied:
        print(f"{where}: applied schema migration(s) {', '.join(map(str, applied))}; now at version {LATEST}")
    else:
        print(f"{where}: schema already at version {LATEST}, nothing to do")
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    url = _url(args, "agentmem-nb migrate memory/ postgresql://user@host/db")
    from agentmem_nb.store.postgres import PostgresStore
    from agentmem_nb.store.postgres.transfer import migrate_folder

    with PostgresStore(url, zone=args.zone, upgrade=True) as target:
        report = migrate_folder(args.folder, target)
    print(f"{args.folder} -> {target.db.display}: copied {report}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    url = _url(args, "agentmem-nb export postgresql://user@host/db out/")
    from agentmem_nb.store.postgres import PostgresStore
    from agentmem_nb.store.postgres.transfer import export_database

    with PostgresStore(url, zone=args.zone) as source:
        report = export_database(source, args.folder)
    print(f"{source.db.display} -> {args.folder}: wrote {report}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``db`` and its subcommands."""
    db = sub.add_parser("db", help="manage the PostgreSQL database of the PostgreSQL backend")
    commands = db.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)
    p = commands.add_parser("upgrade", help="create or upgrade the schema (versioned migrations)")
    p.add_argument("url", nargs="?", help="postgresql://user:password@host:port/dbname (default: "
                                          "$AGENTMEM_DATABASE_URL)")
    p.set_defaults(func=_cmd_upgrade)

    p = sub.add_parser("migrate", help="copy a memory folder into PostgreSQL (resumable, idempotent)")
    p.add_argument("folder", help="the memory folder (the original demo's layout too)")
    p.add_argument("url", nargs="?", help="postgresql://… (default: $AGENTMEM_DATABASE_URL); the schema is "
                                          "created or upgraded first")
    p.set_defaults(func=_cmd_migrate)

    p = sub.add_parser("export", help="write a PostgreSQL memory back as a memory folder")
    p.add_argument("url", help="postgresql://… (or '' for $AGENTMEM_DATABASE_URL)")
    p.add_argument("folder", help="where to write the users' folders (must not hold them yet)")
    p.set_defaults(func=_cmd_export)
