"""LangGraph checkpointers and stores of each kind the tests run on: one place makes them (in memory, a SQLite
file, a database on the suite's throwaway PostgreSQL server), so every LangGraph test sets them up the same way."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

KINDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
"""The kinds, for ``@pytest.fixture(params=KINDS)`` (PostgreSQL only where the ``postgres`` tests run)."""


def make_saver(kind: str, tmp_path: Path, serde: Any = None) -> Iterator[Any]:
    """Yield one checkpointer of ``kind`` (``serde``: the serializer it uses, LangGraph's default if ``None``)."""
    if kind == "memory":
        yield InMemorySaver(serde=serde)
    elif kind == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver
        from pg_server import shared_server  # the suite's throwaway server (skips, or fails under CI, without one)

        with PostgresSaver.from_conn_string(shared_server().new_database()) as pg_saver:
            if serde is not None:
                pg_saver.serde = serde
            pg_saver.setup()
            yield pg_saver
    else:
        # check_same_thread=False: a graph (and the chat widget) reads the thread from worker threads too
        name = "checkpoints.db" if serde is None else f"checkpoints-{id(serde)}.db"  # one file per serializer
        conn = sqlite3.connect(tmp_path / name, check_same_thread=False)
        yield SqliteSaver(conn, serde=serde)
        conn.close()


def make_store(kind: str, tmp_path: Path) -> Iterator[Any]:
    """Yield one empty ``BaseStore`` of ``kind``."""
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "postgres":
        from langgraph.store.postgres import PostgresStore
        from pg_server import shared_server

        with PostgresStore.from_conn_string(shared_server().new_database()) as pg_store:
            pg_store.setup()
            yield pg_store
    else:
        conn = sqlite3.connect(tmp_path / "store.db", check_same_thread=False, isolation_level=None)
        store = SqliteStore(conn)
        store.setup()
        yield store
        conn.close()
