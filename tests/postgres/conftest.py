"""The PostgreSQL backend's own tests: every test here is marked ``postgres`` (``pytest -m postgres`` runs them
alone) and gets a fresh database on the test process's throwaway server (see ``tests/pg_server.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import PgServer, shared_server

from agentmem_nb import MemoryStore
from agentmem_nb.store.postgres import PostgresStore, upgrade_database
from twin import TWIN_NOW, fill_twin


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/postgres/" in item.nodeid:
            item.add_marker(pytest.mark.postgres)


@pytest.fixture
def pg() -> PgServer:
    """The running throwaway server (skips, or fails under CI, when there is none)."""
    return shared_server()


@pytest.fixture
def pg_url(pg: PgServer) -> str:
    """The URL (with its password) of a fresh, empty database."""
    return pg.new_database()


@pytest.fixture
def twin(pg_url: str, tmp_path: Path) -> Iterator[tuple[MemoryStore, PostgresStore]]:
    """The same conversation (:data:`TWIN_TURNS`) in a file store and in a PostgreSQL store."""
    upgrade_database(pg_url)
    # one instant for every write the stores stamp themselves (conversations, long-term): equal on both
    files = MemoryStore(tmp_path / "memory", zone="Asia/Shanghai", clock=lambda: TWIN_NOW)
    pg = MemoryStore(pg_url, zone="Asia/Shanghai", clock=lambda: TWIN_NOW)
    assert isinstance(pg, PostgresStore)
    fill_twin(files)
    fill_twin(pg)
    yield files, pg
    pg.close()
