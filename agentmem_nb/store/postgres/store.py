"""The entry object of the PostgreSQL backend: :class:`PostgresStore` (what ``MemoryStore("postgresql://…")`` gives)."""

from __future__ import annotations

import atexit
import datetime as _dt
import threading
from types import TracebackType
from typing import Any

import psycopg

from agentmem_nb.errors import StoreError
from agentmem_nb.identifiers import check_user_id
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.store.facts import MergePolicy
from agentmem_nb.store.postgres.connection import Database
from agentmem_nb.store.postgres.migrations import LATEST, schema_version, upgrade as apply_migrations
from agentmem_nb.store.postgres.user import PostgresUser
from agentmem_nb.timeutil import Clock, resolve_zone, system_clock

__all__ = ["PostgresStore", "upgrade_database"]


def upgrade_database(url: str) -> list[int]:
    """Apply the schema migrations the database at ``url`` lacks; returns the versions applied (empty: it was up
    to date). What ``agentmem-nb db upgrade URL`` runs."""
    db = Database(url, min_size=1, max_size=1)
    try:
        with db.reading("upgrade the schema") as conn:
            return _upgrade(db, conn)
    finally:
        db.close()


def _upgrade(db: Database, conn: psycopg.Connection[Any]) -> list[int]:
    try:
        applied = [migration.version for migration in apply_migrations(conn)]
        if applied:
            # Statistics for the columns and indexes just made: until autovacuum gets to it (after a tenth of the
            # table changed) the planner guesses, and an upgraded day's search walked every old row (27-58 ms
            # against 5 at 60k rows, measured). Outside the migrations' transactions: it blocks no writer.
            conn.execute("ANALYZE am_messages")
        return applied
    except psycopg.Error as exc:
        raise StoreError(str(db.error(exc, "upgrade the schema")) + "; if the error is about an extension, a "
                         "superuser must run CREATE EXTENSION pg_trgm; CREATE EXTENSION btree_gin; in that "
                         "database once") from None


class PostgresStore:
    """Users' memories in one PostgreSQL database, with the same API as the file store.

    Args:
        url: ``postgresql://user:password@host:port/dbname``. Its credentials never appear in a repr, a log line or
            an error (they are registered with :mod:`agentmem_nb.redact`).
        zone: IANA zone name or tzinfo that decides days; ``None`` means the machine's local zone.
        clock: zero-argument callable giving the current aware time.
        upgrade: apply the schema migrations the database lacks on open (else a database behind this version is
            refused with the command that upgrades it: ``agentmem-nb db upgrade URL``).
        min_size, max_size: the connection pool's bounds for this process.
        fact_policy: how a new value of a single-valued fact is merged (as for the file store,
            :mod:`agentmem_nb.store.facts`).

    >>> # store = PostgresStore("postgresql://app:secret@db.internal/agentmem", zone="Asia/Shanghai", upgrade=True)
    >>> # store.user("alice").append("s1", "user", "hello")
    """

    def __init__(self, url: str, *, zone: str | _dt.tzinfo | None = None, clock: Clock = system_clock,
                 upgrade: bool = False, min_size: int = 1, max_size: int = 10, timeout: float = 30.0,
                 fact_policy: MergePolicy = "supersede") -> None:
        if fact_policy not in ("supersede", "review", "latest"):
            raise InvalidArgument(f"fact_policy {fact_policy!r}: use 'supersede', 'review' or 'latest'")
        self.fact_policy: MergePolicy = fact_policy
        self.zone = resolve_zone(zone)
        self.clock = clock
        self.db = Database(url, min_size=min_size, max_size=max_size, timeout=timeout)
        self._users: dict[str, PostgresUser] = {}
        self._lock = threading.Lock()
        try:
            self._check_schema(upgrade)
        except BaseException:
            self.db.close()
            raise
        # Closed at exit if not before, in the main thread: a pool left to the garbage collector may be collected
        # in one of its own worker threads, which cannot join themselves (psycopg_pool then reports an error).
        atexit.register(self.close)

    def _check_schema(self, upgrade: bool) -> None:
        with self.db.reading("check the schema version") as conn:
            found = schema_version(conn)
            if found < LATEST and upgrade:
                _upgrade(self.db, conn)
                return
        if found < LATEST:
            raise StoreError(f"PostgreSQL {self.db.display}: the agentmem_nb schema is at version {found}, this "
                             f"agentmem_nb needs {LATEST}: run `agentmem-nb db upgrade URL` (or open the store with "
                             "upgrade=True)")
        if found > LATEST:
            raise StoreError(f"PostgreSQL {self.db.display}: the agentmem_nb schema is at version {found}, newer "
                             f"than this agentmem_nb knows ({LATEST}): upgrade agentmem_nb")

    def __repr__(self) -> str:
        return f"PostgresStore(url={self.db.display!r}, zone={self.zone!s})"

    def close(self) -> None:
        """Close the connection pool (done at exit for a store that is still open)."""
        atexit.unregister(self.close)
        self.db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def user(self, user_id: str) -> PostgresUser:
        """The memory of ``user_id`` (validated; the same object on every call)."""
        user_id = check_user_id(user_id)
        with self._lock:
            found = self._users.get(user_id)
            if found is None:
                found = self._users[user_id] = PostgresUser(self, user_id)
            return found

    __getitem__ = user

    def users(self) -> list[str]:
        """Every user with something stored, in Python's order."""
        return sorted(str(user_id) for (user_id,) in self.db.fetch("SELECT user_id FROM am_users"))
