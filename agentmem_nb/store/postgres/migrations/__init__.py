"""The schema, as versioned SQL files: ``NNNN_name.sql`` in this folder, applied in order, each exactly once.

``am_schema`` records what was applied. :func:`upgrade` applies what is missing, each file in its own transaction
under an advisory lock, so two processes upgrading at once apply each file once (the second waits, then finds it
done). ``agentmem-nb db upgrade URL`` runs it; ``PostgresStore(url, upgrade=True)`` does on open. A store opened on
an older schema refuses with the command to run; on a newer one (written by a later agentmem_nb) too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg

from agentmem_nb.errors import StoreError

__all__ = ["Migration", "MIGRATIONS", "LATEST", "upgrade", "schema_version"]

# pg_advisory_xact_lock key: any constant no other program is likely to pick ("agentmem" in ASCII, as an int8)
_LOCK_KEY = 0x6167656E746D656D


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its number, its name and its SQL."""

    version: int
    name: str
    sql: str


def _load() -> tuple[Migration, ...]:
    found = []
    for entry in resources.files(__name__).iterdir():
        match = re.fullmatch(r"(\d{4})_(\w+)\.sql", entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise RuntimeError(f"schema migrations must be numbered 1..n without gaps, found {[m.version for m in found]}")
    return tuple(found)


MIGRATIONS: tuple[Migration, ...] = _load()
LATEST: int = MIGRATIONS[-1].version
"""The schema version this agentmem_nb reads and writes."""


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The highest migration applied to the database (0: none, the schema is not there)."""
    exists = conn.execute("SELECT to_regclass('am_schema') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return 0
    row = conn.execute("SELECT coalesce(max(version), 0) FROM am_schema").fetchone()
    return int(row[0]) if row else 0


def upgrade(conn: psycopg.Connection[Any]) -> list[Migration]:
    """Apply every migration the database lacks, in order; returns those applied (empty: it was up to date).
    ``conn`` must be in autocommit mode (each migration is its own transaction)."""
    applied = []
    for migration in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute("CREATE TABLE IF NOT EXISTS am_schema (version int PRIMARY KEY, name text NOT NULL, "
                         "applied_at timestamptz NOT NULL DEFAULT now())")
            found = conn.execute("SELECT name FROM am_schema WHERE version = %s", (migration.version,)).fetchone()
            if found is not None:
                if found[0] != migration.name:  # another schema's version n (a development build): never guess
                    raise StoreError(
                        f"the database's schema version {migration.version} is {found[0]!r}, but this agentmem_nb's "
                        f"is {migration.name!r}: the database was made by another build of agentmem_nb. Export it "
                        "with that build (`agentmem-nb export URL out/`), then migrate the folder into a new database")
                continue
            conn.execute(migration.sql.encode("utf-8"))  # several statements: sent as one simple query
            conn.execute("INSERT INTO am_schema (version, name) VALUES (%s, %s)", (migration.version, migration.name))
            applied.append(migration)
    return applied
