"""The PostgreSQL backend: the same memory for many processes on many hosts.

``MemoryStore("postgresql://user:password@host/db")`` (or :class:`PostgresStore` with its options) gives the API of
the file store — the store contract of :mod:`agentmem_nb.store.contract` — kept in one database. The schema is
created and upgraded by versioned migrations (``agentmem-nb db upgrade URL``, or ``upgrade=True`` on open).

One concept per module: ``connection`` (pool, transactions, errors without secrets), ``migrations`` (the versioned
SQL), ``records`` (how a JSON record is kept in a row), ``layer`` (sessions and days: ids, windows, exact search,
scan), ``longterm``, ``conversations``, ``dialogue`` (the log, JSONB), ``redactions`` (hidden messages' events),
``user`` and ``store``.

Needs the ``postgres`` extra (``pip install 'agentmem_nb[postgres]'``): psycopg 3 and psycopg-pool. Importing
:mod:`agentmem_nb.store` does not import this package.
"""

from agentmem_nb.store.postgres.connection import is_database_url
from agentmem_nb.store.postgres.migrations import LATEST
from agentmem_nb.store.postgres.store import PostgresStore, upgrade_database
from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["PostgresStore", "PostgresUser", "upgrade_database", "LATEST", "is_database_url"]
