"""The connection to PostgreSQL: one psycopg pool per store, the transaction rule, and errors without secrets.

Why it looks like this:

* **One pool; dead connections are found without a round trip.** Every store object holds a
  :class:`psycopg_pool.ConnectionPool`. The pool's usual check (``SELECT 1`` as a connection is taken) costs a round
  trip per call — half of a window's time. But a server that ends a connection (a restart, ``pg_terminate_backend``,
  an idle timeout) says so first: it sends the client a FATAL message and closes the socket, so an idle connection
  whose socket has something to read is dead. :func:`_alive` looks (a zero-timeout ``select``, no I/O) as each
  connection is taken, and the pool replaces the dead ones. A connection that dies silently (the network) is met by
  the call itself: a read, which changes nothing, runs once more on a fresh connection; a write that fails at its
  ``BEGIN`` (nothing of it reached the server) too; any other write fails with a
  :class:`~agentmem_nb.errors.StoreError` saying nothing of it was kept — the caller decides whether to try again.
* **A write of one statement is one round trip.** An append (both layer rows and both messages), a log entry, a
  conversation's update are each one statement, atomic by themselves: outside ``with user.transaction():`` they run
  on an autocommit connection (no ``BEGIN``/``COMMIT`` round trips: an append 3x faster); inside, in the turn's.
* **One transaction per write, one per turn if asked.** Pool connections are in autocommit: a read is one statement.
  Every write runs in :meth:`Database.transaction`; an open transaction pins its connection to the thread, so the
  writes inside ``with user.transaction():`` (a chat turn's) share it and commit or vanish together, and reads
  inside it see them.
* **The password never leaves.** The URL's credentials are registered with :mod:`agentmem_nb.redact` when the store
  is made (so every text the process shows hides them), the store's ``repr`` shows the URL without them, and every
  psycopg error becomes a :class:`~agentmem_nb.errors.StoreError` whose text went through ``redact``.
"""

from __future__ import annotations

import select
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from agentmem_nb.errors import ConfigError, StoreError
from agentmem_nb.store.memory_store import is_database_url
from agentmem_nb.redact import redact, redact_url, register_secret, url_secrets

__all__ = ["Database", "is_database_url", "literal_limit"]


_ALL_ROWS = 2**63 - 1  # the largest LIMIT PostgreSQL takes (a bigint)


def literal_limit(count: int) -> str:
    """A row count written into a statement as a literal, not sent as a parameter. A prepared statement is planned
    for its first five runs with their parameters, then once for any (a generic plan) if that plan is not costlier
    than theirs; the generic plan of a ``LIMIT $n`` counts on a tenth of the rows, so the server never chose it and
    planned the statement on every run: a window's statement took 0.74 ms in a 100k thread, 0.21 with its sides
    as literals (benchmarks/POSTGRES.md, run N). One prepared statement per count asked for (psycopg keeps 100).
    A count past PostgreSQL's bigint is all rows, as on files (``tail(2**63)``: "bigint out of range" before)."""
    return str(min(max(0, int(count)), _ALL_ROWS))



def _alive(conn: psycopg.Connection[Any]) -> None:
    """The pool's check as a connection is taken: raise if the server has ended it (see the module docstring). An
    idle connection has nothing to read; a FATAL message or the end of the stream means it is gone."""
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    if readable:
        conn.close()  # closed, the pool discards it (an open one it would take back as good) and opens another
        raise psycopg.OperationalError("the server ended the connection while it was idle in the pool")


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Set up a new pool connection: JIT and parallel plans off. The store's statements are short indexed reads and
    writes of many users at once: a plan whose estimated cost passes ``jit_above_cost`` (a day search's, whose
    costliest branch usually does not run) paid 60 ms compiling it, and a parallel plan costs more than it saves
    (workers were launched for a search branch a one-time filter never ran: 10 to 25 ms, and cores other users'
    statements need)."""
    conn.execute("SET jit = off")
    conn.execute("SET max_parallel_workers_per_gather = 0")


class Database:
    """A pool of connections to one database, with the store's transaction and error rules.

    Args:
        url: ``postgresql://user:password@host:port/dbname`` (any libpq URL).
        min_size, max_size: pool bounds (connections kept open / opened at most by this process).
        timeout: seconds to wait for a connection before the call fails.
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0) -> None:
        if not is_database_url(url):
            raise ConfigError(f"{redact(redact_url(str(url)), secrets=url_secrets(str(url)))!r} is not a PostgreSQL "
                              "URL: give postgresql://user:password@"
                              "host:port/dbname")
        self._secrets = url_secrets(url)
        for secret in self._secrets:
            register_secret(secret)
        # userinfo and any credential in the query string (?password=…) hidden: display goes into reprs and problems
        self.display = redact(redact_url(url), secrets=self._secrets)
        self._timeout = timeout
        self._local = threading.local()
        # A first connection made directly: a wrong password or an unknown host fails here with the server's reason,
        # where the pool would only report a timeout.
        try:
            psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True).close()
        except psycopg.Error as exc:
            raise self.error(exc, "cannot connect", fix="check the URL's host, port, database name, user and "
                             "password, and that the server accepts connections from here") from None
        self.pool = ConnectionPool(url, min_size=min_size, max_size=max_size, timeout=timeout, open=True,
                                   kwargs={"autocommit": True}, check=_alive, configure=_configure, name="agentmem_nb")

    def __repr__(self) -> str:
        return f"Database({self.display!r})"

    def close(self) -> None:
        """Close every connection of the pool (the store is unusable afterwards)."""
        self.pool.close()

    # ------------------------------------------------------------------ errors

    def error(self, exc: BaseException, doing: str, *, writing: bool = True, fix: str = "") -> StoreError:
        """A :class:`StoreError` for a psycopg failure while ``doing``: redacted, naming the database and the fix."""
        reason = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, UnicodeEncodeError) and not fix:
            fix = "a value holds a lone surrogate, which has no UTF-8 form to send: remove it"
        if not fix and isinstance(exc, (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled)):
            # OperationalErrors too, but the connection is fine: a server timeout (lock_timeout, statement_timeout)
            # or a cancel ended the statement, usually while it waited for another transaction's row lock
            fix = ("a timeout or cancel of the server ended the statement" + ("; nothing of the write was kept"
                   if writing else "") + ": try again, or raise the server's lock_timeout/statement_timeout")
        elif not fix and isinstance(exc, (psycopg.OperationalError, PoolTimeout)):
            fix = ("the connection to the server failed or was cut (a restart, a terminated backend, the network)"
                   + ("; nothing of an unfinished write was kept" if writing else "") + ": try again")
        elif not fix and writing:
            fix = "nothing of the write was kept"
        elif not fix:
            fix = "is the schema at this agentmem_nb's version? `agentmem-nb db upgrade URL`"
        return StoreError(redact(f"PostgreSQL {self.display}: {doing}: {type(exc).__name__}: {reason} ({fix})",
                                 secrets=self._secrets))

    # ------------------------------------------------------------------ connections and transactions

    @property
    def _pinned(self) -> psycopg.Connection[Any] | None:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        return conn

    @contextmanager
    def transaction(self, doing: str = "write") -> Iterator[psycopg.Connection[Any]]:
        """A connection inside a transaction: committed when the block ends, rolled back if it raises. Inside an
        open transaction of this thread, the block joins it (its writes commit or vanish with the outer ones)."""
        pinned = self._pinned
        if pinned is not None:
            yield pinned
            return
        try:
            stack, conn = self._begin()
            with stack:  # commit (or roll back) and give the connection back
                self._local.conn = conn
                try:
                    yield conn
                finally:
                    self._local.conn = None
        except (psycopg.Error, PoolTimeout, UnicodeEncodeError) as exc:  # the last: a lone surrogate in a value
            raise self.error(exc, doing) from None

    def _begin(self) -> tuple[ExitStack, psycopg.Connection[Any]]:
        """A pool connection with a transaction begun on it; a connection found dead at ``BEGIN`` (nothing sent
        yet) is replaced once (see the module docstring)."""
        for attempt in (1, 2):
            stack = ExitStack()
            try:
                conn = stack.enter_context(self.pool.connection())
                stack.enter_context(conn.transaction())  # sends BEGIN: a dead connection fails here
                return stack, conn
            except psycopg.OperationalError:
                stack.close()  # the broken connection goes back to the pool, which discards it
                if attempt == 2:
                    raise
                self.pool.check()
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    @contextmanager
    def reading(self, doing: str = "read") -> Iterator[psycopg.Connection[Any]]:
        """A connection for reads: this thread's open transaction if there is one, else one from the pool."""
        pinned = self._pinned
        if pinned is not None:
            yield pinned
            return
        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout, UnicodeEncodeError) as exc:  # the last: a lone surrogate in a value
            raise self.error(exc, doing, writing=False) from None

    def write(self, sql: str, params: Any, *, doing: str) -> list[tuple[Any, ...]]:
        """Run one writing statement (atomic by itself) and return its rows: in this thread's open transaction if
        there is one, else on its own (autocommit: one round trip). A statement cut by a lost connection is not
        retried (it may have been applied): the :class:`StoreError` says so."""
        pinned = self._pinned
        try:
            if pinned is not None:
                return pinned.execute(sql, params).fetchall()
            with self.pool.connection() as conn:
                return conn.execute(sql, params).fetchall()
        except (psycopg.Error, PoolTimeout, UnicodeEncodeError) as exc:  # the last: a lone surrogate in a value
            raise self.error(exc, doing) from None

    def fetch(self, sql: str, params: Any = None, *, doing: str = "read", prepare: bool | None = None
              ) -> list[tuple[Any, ...]]:
        """Rows of one read statement (retried once on a fresh connection when the server dropped the first)."""
        for attempt in (1, 2):
            try:
                with self.reading(doing) as conn:
                    return conn.execute(sql, params, prepare=prepare).fetchall()
            except StoreError as exc:
                retry = attempt == 1 and self._pinned is None and isinstance(exc.__context__, psycopg.OperationalError)
                if not retry:
                    raise
                self.pool.check()  # replace every dead idle connection (after a restart, all of them are)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
